"""The simulated study of tool-using designs on the search benchmark. EVERY NUMBER HERE IS SIMULATED.

Question (issue 27): does the single ReAct agent's context limit bind as the number of hops grows,
and does a multi-agent design pay off beyond some hop count — or not? Each hop count 2..6 is its
own task source, so every paired verdict (design vs the reference curve at equal tokens, Holm
across the designs) is per hop count. The reference is Self-Consistency over ReAct: the suite's
CoT-SC pool draws k_max ReAct runs of the same searcher with the same context (``cot_sc.kind:
react``), so "worth it" means "better than voting over single ReAct agents at the same tokens".

Designs (all with the same simulated searcher, ``sim/searcher``: answer skill 0.9, retrieval
competence ``--search``):
- ``react``            one ReAct agent, context ``--context`` prompt tokens (oldest steps dropped)
- ``react-big``        the same with a context that never binds (the control: what forgetting costs)
- ``react-sc``         3 ReAct runs, majority vote
- ``planner-searchers`` a planner, one ReAct searcher per sub-question in parallel, a synthesizer
- ``hop-chain``        a chain of fresh-context searchers handing on ``[doc] fact`` notes

Run::

    python benchmarks/react_hops_study.py [--n 100] [--context 700] [--search 0.7] [--store DIR]

It prints, per hop count, each design's accuracy, calls per task, retrieval recall and its paired
difference against the curve with the Holm-corrected CI and verdict, then per design the hop count
from which its verdict is "worth it" (and stays so), or that it never is.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import duckdb  # noqa: E402

from masbench.harness import RunOptions, run_suite  # noqa: E402

BANNER = "SIMULATED — seeded sim/ models on the generated search benchmark; not measurements of real models"

SUITE = """name: react-hops-study
description: SIMULATED study of tool-using designs as hops grow (benchmarks/react_hops_study.py).
models:
  default: {{id: sim/searcher, sim: {{accuracy: {{default: 0.9}}, tools: {{search: {search}}}}}}}
tasks:
{sources}
designs:
  - {{design: react, params: {{context: {context}}}, label: react}}
  - {{design: react, params: {{context: 100000}}, label: react-big}}
  - {{design: react-sc, params: {{k: 3, context: {context}}}, label: react-sc}}
  - {{design: planner-searchers, params: {{context: {context}}}, label: planner-searchers}}
  - {{design: hop-chain, params: {{context: {context}, rounds: 6, steps: 3}}, label: hop-chain}}
cot_sc: {{k_max: 4, agent: searcher, kind: react, params: {{max_steps: 8, context_tokens: {context}}}, bootstrap: 500}}
budget: {{per_task_tokens: 1000000}}
concurrency: 16
store: {store}
"""

DESIGNS = ("react", "react-big", "react-sc", "planner-searchers", "hop-chain")


def suite_text(n: int, hops: list[int], context: int, search: float, store: Path, corpus: int,
               distractors: int, seed: int = 0) -> str:
    sources = "\n".join(
        f"  - {{generator: search, name: hops-{h}, values: [{h}], n: {n}, seed: {seed}, "
        f"params: {{corpus_size: {corpus}, distractors: {distractors}}}}}" for h in hops)
    return SUITE.format(sources=sources, context=context, search=search, store=store)


def report(store: Path, run_id: str, hops: list[int]) -> None:
    con = duckdb.connect(str(store), read_only=True)
    try:
        acc = {(r[0], r[1]): r[2:] for r in con.execute(
            "SELECT source, design, avg(correct::int), avg(calls), count(*) FROM results WHERE run_id = ? "
            "GROUP BY 1, 2", [run_id]).fetchall()}
        rec = {(r[0], r[1]): r[2] for r in con.execute(
            "SELECT axis_value, design, recall FROM retrieval_recall WHERE run_id = ? AND axis = 'hops'",
            [run_id]).fetchall()}
        tests = {(int(r[0]), r[1]): r[2:] for r in con.execute(
            "SELECT axis_value, design, mean_diff, ci_lo_holm, ci_hi_holm, p_holm, k_match, verdict "
            "FROM paired_tests WHERE run_id = ? AND against = 'curve' AND is_verdict AND axis = 'hops'",
            [run_id]).fetchall()}
    finally:
        con.close()
    print(f"{'hops':>4} {'design':<18} {'acc':>6} {'calls':>6} {'recall':>6}  {'Δ vs curve pp [Holm CI]':<26} "
          f"{'k':>4}  verdict")
    streak: dict[str, int | None] = {d: None for d in DESIGNS}
    for h in hops:
        for d in DESIGNS:
            a = acc.get((f"hops-{h}", d))
            t = tests.get((h, d))
            if a is None:
                continue
            diff = (f"{100 * t[0]:+6.1f} [{100 * t[1]:+6.1f}, {100 * t[2]:+6.1f}]" if t and t[1] is not None
                    else "-")
            k = f"{t[4]:.1f}" if t and t[4] is not None else "-"
            verdict = t[5] if t else "-"
            r = rec.get((h, d))
            print(f"{h:>4} {d:<18} {100 * a[0]:5.1f}% {a[1]:6.1f} {100 * r if r is not None else float('nan'):5.1f}%"
                  f"  {diff:<26} {k:>4}  {verdict}")
            worth = verdict == "worth it"
            if worth and streak[d] is None:
                streak[d] = h
            elif not worth:
                streak[d] = None
        print()
    print("hop count from which the verdict is 'worth it' and stays so (vs Self-Consistency over ReAct at equal tokens):")
    for d, h in streak.items():
        print(f"  {d:<18} {('from ' + str(h) + ' hops') if h is not None else 'never in ' + str(hops[0]) + '..' + str(hops[-1])}")


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100, help="tasks per hop count")
    ap.add_argument("--hops", default="2,3,4,5,6")
    ap.add_argument("--context", type=int, default=700, help="the searchers' context limit in prompt tokens")
    ap.add_argument("--search", type=float, default=0.7, help="retrieval competence: P(an ideal query)")
    ap.add_argument("--corpus", type=int, default=2000, help="documents per corpus")
    ap.add_argument("--distractors", type=int, default=1, help="confusable twins per entity")
    ap.add_argument("--seed", type=int, default=0, help="seed of the generated corpus and questions")
    ap.add_argument("--store", default=None, help="directory for the suite and store (default: a temp dir)")
    a = ap.parse_args()
    hops = [int(x) for x in a.hops.split(",")]
    base = Path(a.store or tempfile.mkdtemp(prefix="react-hops-"))
    (base / "tasks").mkdir(parents=True, exist_ok=True)
    store = base / "study.duckdb"
    suite = base / "tasks" / "react-hops-study.yaml"
    suite.write_text(suite_text(a.n, hops, a.context, a.search, store, a.corpus, a.distractors, a.seed))
    print(BANNER)
    print(f"n = {a.n} tasks per hop count, hops {hops}, context {a.context} tokens, retrieval competence {a.search}, "
          f"corpus {a.corpus} docs, {a.distractors} twin(s) per entity, seed {a.seed}; suite {suite}")
    t0 = time.perf_counter()
    s = await run_suite(RunOptions(suite=str(suite), transcripts="none"))
    print(f"ran in {time.perf_counter() - t0:.0f} s; store {s.store} (run {s.run_id})\n")
    report(Path(s.store), s.run_id, hops)
    print("\n" + BANNER)


if __name__ == "__main__":
    asyncio.run(main())
