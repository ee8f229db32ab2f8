"""One decode of the embedded GGUF with llama-cpp-python, in its own process (setup runs it).

Exit 0 if llama.cpp loads SmolLM2 and decodes a token. A build for the wrong CPU flags dies here
with a signal instead of in the middle of a run (setup then rebuilds it)."""

from __future__ import annotations

import llama_cpp

from masbench.llm.embedded import find_gguf

llm = llama_cpp.Llama(model_path=find_gguf(), n_ctx=64, n_threads=1, verbose=False)
out = llm.create_completion("1 + 1 =", max_tokens=1, temperature=0.0)
assert out["choices"][0]["text"] is not None
