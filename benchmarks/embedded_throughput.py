"""Embedded model throughput: (A) tokens/s through masbench (gateway -> litellm CustomLLM ->
llama.cpp) vs a bare ``llama_cpp.Llama`` on the same prompts with the same seeds (target >= 0.95x);
(B) k = 8 samples of one prompt decoded in ONE batch (8 KV sequences sharing the prompt) vs one
after another (prompt prefix reused), both with the same sampler: temperature + top-p in numpy,
sample i seeded with ``seed + i`` (distinct per sample index, reproducible).

Figures are ratios measured back to back in this one process, alternating rounds, because the
machine may be shared: the absolute tokens/s depend on the load (printed with ``uptime``).

    python benchmarks/embedded_throughput.py [--rounds 3] [--max-tokens 48] [--k 8]
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import os
import statistics
import time

import numpy as np

QUESTIONS = [
    "What is 4 plus 3?",
    "Tom has 3 apples. Then Tom gets 4 more apples. How many apples does Tom have now?",
    "What is 6 times 2?",
    "Sara has 9 cards. She gives 4 away. How many cards does Sara have now?",
]
SYSTEM = "You are a careful problem solver."


def messages(q: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f'{q}\n\nThink step by step, briefly. End with "Answer: <final answer>".'}]


def load_avg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# --------------------------------------------------------------------------- (A) gateway vs bare
def bare_round(llm, prompts: list[list[int]], max_tokens: int, seed: int) -> tuple[int, float]:
    tokens, secs = 0, 0.0
    for i, p in enumerate(prompts):
        llm.reset()  # both paths start each call cold: the comparison is per call, not prefix reuse
        t0 = time.perf_counter()
        out = llm.create_completion(prompt=p, max_tokens=max_tokens, temperature=0.8, top_p=0.95,
                                    stop=["<|im_end|>"], seed=seed + i)
        secs += time.perf_counter() - t0
        tokens += out["usage"]["completion_tokens"]
    return tokens, secs


async def gateway_round(gw, llm, qs: list[str], max_tokens: int, seed: int) -> tuple[int, float]:
    tokens, secs = 0, 0.0
    for i, q in enumerate(qs):
        llm.reset()
        t0 = time.perf_counter()
        res = await gw.complete("default", messages(q), temperature=0.8, max_tokens=max_tokens,
                                params={"seed": seed + i, "top_p": 0.95})
        secs += time.perf_counter() - t0
        assert res.error is None, res.error
        tokens += res.completion_tokens
    return tokens, secs


# --------------------------------------------------------------------------- (B) batched vs sequential
class Sampler:
    """Temperature + top-p over the full vocabulary, one numpy generator per sample index."""

    def __init__(self, seed: int, temperature: float = 0.8, top_p: float = 0.95):
        self.rng = np.random.default_rng(seed)
        self.t, self.p = temperature, top_p

    def __call__(self, logits: np.ndarray) -> int:
        z = logits.astype(np.float64) / self.t
        z -= z.max()
        pr = np.exp(z)
        pr /= pr.sum()
        order = np.argsort(-pr)
        cum = np.cumsum(pr[order])
        keep = order[: int(np.searchsorted(cum, self.p)) + 1]
        q = pr[keep] / pr[keep].sum()
        return int(keep[self.rng.choice(len(keep), p=q)])


def _batch_add(batch, i: int, tok: int, pos: int, seq: int, logits: bool) -> None:
    batch.token[i] = tok
    batch.pos[i] = pos
    batch.n_seq_id[i] = 1
    batch.seq_id[i][0] = seq
    batch.logits[i] = logits


def make_ctx(llm, n_seq: int, n_ctx: int, threads: int):
    import llama_cpp

    p = llama_cpp.llama_context_default_params()
    p.n_ctx, p.n_batch, p.n_seq_max = n_ctx, 512, n_seq
    p.n_threads = p.n_threads_batch = threads
    ctx = llama_cpp.llama_init_from_model(llm.model, p)
    assert ctx, "could not create a llama.cpp context"
    return ctx


def generate(ctx, n_vocab: int, prompt: list[int], k: int, max_tokens: int, seed: int, stops: set[int],
             batched: bool) -> tuple[list[list[int]], float]:
    """k samples of one prompt; batched: all k sequences step together in one llama_decode."""
    import llama_cpp

    mem = llama_cpp.llama_get_memory(ctx)
    llama_cpp.llama_memory_clear(mem, True)
    batch = llama_cpp.llama_batch_init(max(len(prompt), k), 0, k)
    t0 = time.perf_counter()
    try:
        batch.n_tokens = len(prompt)
        for j, tok in enumerate(prompt):
            _batch_add(batch, j, tok, j, 0, j == len(prompt) - 1)
        assert llama_cpp.llama_decode(ctx, batch) == 0
        first = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx, len(prompt) - 1), shape=(n_vocab,)).copy()
        samplers = [Sampler(seed + i) for i in range(k)]
        outs: list[list[int]] = [[] for _ in range(k)]
        n0 = len(prompt)
        if batched:
            for s in range(1, k):
                llama_cpp.llama_memory_seq_cp(mem, 0, s, -1, -1)
            live = list(range(k))
            logits = {s: first for s in live}
            for step in range(max_tokens):
                nxt = []
                for s in live:
                    tok = samplers[s](logits[s])
                    outs[s].append(tok)
                    if tok not in stops and step + 1 < max_tokens:
                        nxt.append((s, tok))
                if not nxt:
                    break
                batch.n_tokens = len(nxt)
                for j, (s, tok) in enumerate(nxt):
                    _batch_add(batch, j, tok, n0 + step, s, True)
                assert llama_cpp.llama_decode(ctx, batch) == 0
                live = [s for s, _ in nxt]
                logits = {s: np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx, j), shape=(n_vocab,))
                          for j, s in enumerate(live)}
        else:
            for s in range(k):
                llama_cpp.llama_memory_seq_rm(mem, 0, n0, -1)  # keep the prompt: prefix reuse
                lg = first
                for step in range(max_tokens):
                    tok = samplers[s](lg)
                    outs[s].append(tok)
                    if tok in stops or step + 1 == max_tokens:
                        break
                    batch.n_tokens = 1
                    _batch_add(batch, 0, tok, n0 + step, 0, True)
                    assert llama_cpp.llama_decode(ctx, batch) == 0
                    lg = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx, 0), shape=(n_vocab,))
    finally:
        llama_cpp.llama_batch_free(batch)
    return outs, time.perf_counter() - t0


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--k", type=int, default=8)
    a = ap.parse_args()

    import llama_cpp

    from masbench.llm.embedded import format_chatml, get_embedded_llm, register_embedded
    from masbench.llm.embedded.engine import _ENGINE, engine_threads
    from masbench.llm.gateway import Gateway
    from masbench.spec import ModelSpec

    register_embedded()
    threads = engine_threads()
    print(f"embedded throughput · threads {threads} (sched_getaffinity: {len(os.sched_getaffinity(0))} cores) · "
          f"load {load_avg()} · max_tokens {a.max_tokens}")
    llm = _ENGINE.executor.submit(get_embedded_llm).result()
    prompts = [llm.tokenize(format_chatml(messages(q)).encode(), add_bos=False, special=True) for q in QUESTIONS]
    gw = Gateway({"default": ModelSpec(id="embedded/smollm2")})

    # (A) alternate bare and gateway rounds; the bare calls run on the engine's own thread too.
    await gateway_round(gw, llm, QUESTIONS[:1], 8, 0)  # warm-up
    ratios, bare_tps, gw_tps = [], [], []
    for r in range(a.rounds):
        bt, bs = _ENGINE.executor.submit(bare_round, llm, prompts, a.max_tokens, 100 * r).result()
        gt, gs = await gateway_round(gw, llm, QUESTIONS, a.max_tokens, 100 * r)
        bare_tps.append(bt / bs)
        gw_tps.append(gt / gs)
        ratios.append((gt / gs) / (bt / bs))
    print(f"(A) bare llama_cpp.Llama {statistics.median(bare_tps):.0f} tok/s · through masbench "
          f"{statistics.median(gw_tps):.0f} tok/s · ratio median {statistics.median(ratios):.2f}x "
          f"(rounds: {', '.join(f'{x:.2f}' for x in ratios)}; target >= 0.95x)")

    # (B) k samples of one prompt: batched vs sequential, same sampler, alternating rounds.
    vocab = llama_cpp.llama_vocab_n_tokens(llama_cpp.llama_model_get_vocab(llm.model))
    stops = {llm.token_eos(), *llm.tokenize(b"<|im_end|>", add_bos=False, special=True)}
    ctx = make_ctx(llm, a.k, 2048, threads)
    try:
        speed, same, toks = [], 0, 0
        for r in range(a.rounds):
            p = prompts[r % len(prompts)]
            seq, ts = generate(ctx, vocab, p, a.k, a.max_tokens, 1000 + r, stops, batched=False)
            bat, tb = generate(ctx, vocab, p, a.k, a.max_tokens, 1000 + r, stops, batched=True)
            speed.append(ts / tb)
            same += sum(x == y for x, y in zip(seq, bat))
            toks += sum(map(len, bat))
        print(f"(B) k={a.k} samples of one prompt: batched is {statistics.median(speed):.2f}x faster than sequential "
              f"(rounds: {', '.join(f'{x:.2f}' for x in speed)}); {same}/{a.k * a.rounds} samples token-identical "
              f"between the two (same seeds; batched logits differ in float rounding); {toks} tokens sampled")
    finally:
        llama_cpp.llama_free(ctx)
    print(f"load after: {load_avg()} (2 cores, shared, noisy: read the ratios)")


if __name__ == "__main__":
    asyncio.run(main())
