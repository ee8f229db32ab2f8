"""Embedded model throughput: (A) tokens/s through masbench (gateway -> litellm CustomLLM ->
llama.cpp) vs a bare ``llama_cpp.Llama`` on the same prompts with the same seeds (target >= 0.95x);
(B) the CoT-SC pool's case, k = 8 samples of one prompt through masbench: gathered (the engine
decodes them in ONE batch, 8 KV sequences sharing the prompt's cells, ``masbench/llm/embedded/
decode.py``) vs awaited one after another; sample i is seeded with ``seed + i`` and must come out
identical either way (each request has its own seeded llama.cpp sampler chain); (C) 4 different
prompts at once (a design's parallel nodes): these are NOT batched (a prompt evaluated beside
another got different logits from llama.cpp), so expect ~1.0x and identical samples.

Figures are ratios measured back to back in this one process, alternating rounds, because the
machine may be shared: the absolute tokens/s depend on the load (printed with ``uptime``).

    python benchmarks/embedded_throughput.py [--rounds 3] [--max-tokens 48] [--k 8]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

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
    from masbench.llm.embedded.engine import _ENGINE

    tokens, secs = 0, 0.0
    for i, q in enumerate(qs):
        await asyncio.to_thread(_ENGINE.reset_cache)
        t0 = time.perf_counter()
        res = await gw.complete("default", messages(q), temperature=0.8, max_tokens=max_tokens,
                                params={"seed": seed + i, "top_p": 0.95})
        secs += time.perf_counter() - t0
        assert res.error is None, res.error
        tokens += res.completion_tokens
    return tokens, secs


# --------------------------------------------------------------------------- (B) the pool, batched vs sequential
async def pool_round(gw, qs: list[str], max_tokens: int, seed: int, together: bool) -> tuple[list[str], float, int]:
    """One call per question through the gateway (sample i seeded seed + i): awaited one by one,
    or gathered (the engine then decodes them in one batch). Each starts from the same cache."""
    from masbench.llm.embedded.engine import _ENGINE

    await asyncio.to_thread(_ENGINE.reset_cache)
    k = len(qs)

    async def one(i: int):
        res = await gw.complete("default", messages(qs[i]), temperature=0.8, max_tokens=max_tokens,
                                params={"seed": seed + i, "top_p": 0.95})
        assert res.error is None, res.error
        return res

    t0 = time.perf_counter()
    if together:
        out = await asyncio.gather(*[one(i) for i in range(k)])
    else:
        out = [await one(i) for i in range(k)]
    return [r.text for r in out], time.perf_counter() - t0, sum(r.completion_tokens for r in out)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--k", type=int, default=8)
    a = ap.parse_args()


    from masbench.llm.embedded import format_chatml, get_embedded_llm, register_embedded
    from masbench.llm.embedded.engine import _ENGINE, engine_threads
    from masbench.llm.gateway import Gateway
    from masbench.spec import ModelSpec

    register_embedded()
    threads = engine_threads()
    print(f"embedded throughput · threads {threads} (sched_getaffinity: {len(os.sched_getaffinity(0))} cores) · "
          f"load {load_avg()} · max_tokens {a.max_tokens}")
    llm = _ENGINE.call(get_embedded_llm)
    prompts = [llm.tokenize(format_chatml(messages(q)).encode(), add_bos=False, special=True) for q in QUESTIONS]
    gw = Gateway({"default": ModelSpec(id="embedded/smollm2")})

    # (A) alternate bare and gateway rounds; the bare calls run on the engine's own thread too.
    await gateway_round(gw, llm, QUESTIONS[:1], 8, 0)  # warm-up
    ratios, bare_tps, gw_tps = [], [], []
    for r in range(a.rounds):
        bt, bs = _ENGINE.call(lambda r=r: bare_round(llm, prompts, a.max_tokens, 100 * r))
        gt, gs = await gateway_round(gw, llm, QUESTIONS, a.max_tokens, 100 * r)
        bare_tps.append(bt / bs)
        gw_tps.append(gt / gs)
        ratios.append((gt / gs) / (bt / bs))
    print(f"(A) bare llama_cpp.Llama {statistics.median(bare_tps):.0f} tok/s · through masbench "
          f"{statistics.median(gw_tps):.0f} tok/s · ratio median {statistics.median(ratios):.2f}x "
          f"(rounds: {', '.join(f'{x:.2f}' for x in ratios)}; target >= 0.95x)")

    # (B) the CoT-SC pool: k samples of one prompt through the gateway, one by one vs gathered.
    speed, same, toks = [], 0, 0
    for r in range(a.rounds):
        q = QUESTIONS[r % len(QUESTIONS)]
        seq, ts, _ = await pool_round(gw, [q] * a.k, a.max_tokens, 1000 + r, together=False)
        bat, tb, n = await pool_round(gw, [q] * a.k, a.max_tokens, 1000 + r, together=True)
        speed.append(ts / tb)
        same += sum(x == y for x, y in zip(seq, bat))
        toks += n
    print(f"(B) k={a.k} samples of one prompt through masbench: gathered (one batch) is "
          f"{statistics.median(speed):.2f}x faster than one by one (rounds: {', '.join(f'{x:.2f}' for x in speed)}); "
          f"{same}/{a.k * a.rounds} samples identical between the two (same seeds); {toks} tokens per mode; "
          f"peak group {_ENGINE.stats.peak_group}")

    # (C) a design's parallel nodes: different prompts at once (the 4 questions), one by one vs gathered
    # (not batched by design: the check is that they come out identical).
    speed, same = [], 0
    for r in range(a.rounds):
        seq, ts, _ = await pool_round(gw, QUESTIONS, a.max_tokens, 2000 + r, together=False)
        bat, tb, _ = await pool_round(gw, QUESTIONS, a.max_tokens, 2000 + r, together=True)
        speed.append(ts / tb)
        same += sum(x == y for x, y in zip(seq, bat))
    print(f"(C) {len(QUESTIONS)} different prompts through masbench: gathered is {statistics.median(speed):.2f}x "
          f"faster than one by one (rounds: {', '.join(f'{x:.2f}' for x in speed)}); "
          f"{same}/{len(QUESTIONS) * a.rounds} identical")
    print(f"load after: {load_avg()} (2 cores, shared, noisy: read the ratios)")


if __name__ == "__main__":
    asyncio.run(main())
