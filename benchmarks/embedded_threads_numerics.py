"""Does the embedded model's arithmetic depend on the llama.cpp thread count? The quickstart's
figures differ between machines (README, "What the quickstart's numbers mean"); this measures one
possible cause on this machine: the same prompts (the quickstart's bare-arithmetic questions in
the tiny-cot-solver prompt) evaluated with ``n_threads`` = 1 and 2, comparing the logits of the
first generated position (largest absolute difference) and the greedy 64-token completions.

Identical logits mean the thread count is not a source of spread here; a difference means sampled
runs can diverge. Measured on 2026-12-02 (2-core Xeon, AVX2 build, machine shared, load ~18, 3
prompts): largest |Δ logit| 0, greedy completions identical 3/3; 27 s with 1 thread, 364 s with 2
(ggml's threads spin on a busy machine). Wall time depends on the load (printed).

    python benchmarks/embedded_threads_numerics.py [--n 10] [--threads 1 2]
"""

from __future__ import annotations

import argparse
import os
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10, help="bare-arithmetic tasks (the quickstart's first n)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--max-tokens", type=int, default=64)
    args = ap.parse_args()

    import llama_cpp
    import numpy as np

    from masbench.bench import GENERATORS
    from masbench.library import Library
    from masbench.llm.embedded.chatml import format_chatml
    from masbench.llm.embedded.locate import _N_CTX, find_gguf

    agent = Library().agent("tiny-cot-solver")
    tasks = GENERATORS["masbench.arith"]([1], args.n, 0, "test")
    prompts = [format_chatml([{"role": "system", "content": agent.system or ""},
                              {"role": "user", "content": agent.prompt.replace("{question}", t.question)}])
               for t in tasks]
    print(f"load: {os.getloadavg()[0]:.1f} (1-min average); llama-cpp-python {llama_cpp.__version__}; "
          f"{len(prompts)} prompts, greedy, {args.max_tokens} tokens")
    runs: dict[int, tuple[list[np.ndarray], list[list[int]]]] = {}
    for th in args.threads:
        llm = llama_cpp.Llama(model_path=find_gguf(), n_ctx=_N_CTX, n_threads=th, n_threads_batch=th, verbose=False)
        logits, outs = [], []
        t0 = time.perf_counter()
        for p in prompts:
            toks = llm.tokenize(p.encode(), add_bos=False, special=True)
            llm.reset()
            llm.eval(toks)
            logits.append(np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32))
            gen = []
            for tok in llm.generate(toks, temp=0.0, reset=True):
                if tok == llm.token_eos() or len(gen) >= args.max_tokens:
                    break
                gen.append(tok)
            outs.append(gen)
        runs[th] = (logits, outs)
        print(f"n_threads={th}: {time.perf_counter() - t0:.1f} s")
        del llm
    base = args.threads[0]
    for th in args.threads[1:]:
        dl = max(float(np.max(np.abs(a - b))) for a, b in zip(runs[base][0], runs[th][0]))
        same = sum(a == b for a, b in zip(runs[base][1], runs[th][1]))
        print(f"n_threads {base} vs {th}: largest |Δ logit| at the first position {dl:.3g}; "
              f"greedy completions identical {same}/{len(prompts)}")


if __name__ == "__main__":
    main()
