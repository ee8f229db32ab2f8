"""Can the embedded model (SmolLM2-135M, llama.cpp) drive tools through the text ReAct protocol?

Issue 27 item 7: the quickstart gains a tool story on the embedded model only if the text fallback
works there. This measures the first thing it needs — a reply with a parseable ``Action:`` line —
on the search benchmark's smallest level (2 hops, 60 documents), for prompt forms from the
protocol's own instructions to a one-line request, and then runs the bundled ``react-tiny`` design
(the text protocol with a worked example) end to end through the harness beside ``cot-tiny``.

Run (a real model: slow; about 1 minute at --n 10 on 2 idle cores)::

    python benchmarks/embedded_react_probe.py [--n 10] [--store DIR]

Prints, per prompt form, how many replies contain an action the parser reads, three sample
replies, and the end-to-end accuracy, calls and tool calls per task of both designs.
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

from masbench.bench import GENERATORS  # noqa: E402
from masbench.harness import RunOptions, run_suite  # noqa: E402
from masbench.llm import Gateway, models_from  # noqa: E402
from masbench.tools import resolve  # noqa: E402
from masbench.tools.protocol import instructions, parse  # noqa: E402

EXAMPLE = ("Question: Who founded the company that makes the Lorp lamp?\nAction: search[Lorp lamp made by]\n"
           "Observation: [d7] Lorp lamp — The Lorp lamp is made by Tesk Works.\n"
           "Action: search[Tesk Works founded by]\n"
           "Observation: [d3] Tesk Works — Tesk Works was founded by Ana Mol.\nFinal Answer: Ana Mol")

FORMS = {
    "protocol instructions (system)": lambda q: [
        {"role": "system", "content": "You answer questions by searching documents.\n\n"
                                      + instructions(resolve(["search"]))},
        {"role": "user", "content": q}],
    "worked example (system)": lambda q: [
        {"role": "system", "content": "You find facts by searching documents. Example:\n" + EXAMPLE},
        {"role": "user", "content": f"Question: {q}"}],
    "worked example + open action (user)": lambda q: [
        {"role": "user", "content": "Search documents to answer. Example:\n" + EXAMPLE
                                    + f"\n\nQuestion: {q}\nAction: search["}],
    "one-line request (user)": lambda q: [
        {"role": "user", "content": f"Write a search query for this question.\nQuestion: {q}\n"
                                    "Reply as: Action: search[query]"}],
}

SUITE = """name: embedded-react-probe
models: {{default: embedded/smollm2}}
tasks:
  - {{generator: search, name: search-2hop, values: [2], n: {n}, seed: 0, params: {{corpus_size: 60, distractors: 1}}}}
designs:
  - {{design: cot-tiny, label: cot}}
  - react-tiny
cot_sc: {{enabled: false}}
budget: {{per_task_tokens: 8000}}
concurrency: 1
store: {store}
"""


async def probe(n: int) -> None:
    tasks = GENERATORS["search"]([2], n, 0, "test", corpus_size=60, distractors=1)
    gw = Gateway(models_from({"default": "embedded/smollm2"}))
    for name, build in FORMS.items():
        hits, samples = 0, []
        for t in tasks:
            q = t.question.splitlines()[0]
            r = await gw.complete("default", build(q), max_tokens=40, temperature=0.2,
                                  params={"stop": ["\n\n", "\nObservation:"]})
            hits += bool(parse(r.text, {"search"}).calls)
            samples.append(r.text.replace("\n", " | ")[:100])
        print(f"{name:<38} {hits:>3} / {len(tasks)} replies with a parseable action")
        for s in samples[:3]:
            print(f"    {s!r}")


async def end_to_end(n: int, base: Path) -> None:
    (base / "tasks").mkdir(parents=True, exist_ok=True)
    store = base / "probe.duckdb"
    suite = base / "tasks" / "embedded-react-probe.yaml"
    suite.write_text(SUITE.format(n=n, store=store))
    t0 = time.perf_counter()
    s = await run_suite(RunOptions(suite=str(suite), new=True))
    print(f"\nend to end ({time.perf_counter() - t0:.0f} s, run {s.run_id}):")
    con = duckdb.connect(str(s.store), read_only=True)
    try:
        for d, acc, calls, n_ok, n_all in con.execute(
                "SELECT design, avg(correct::int), avg(calls), count(*) FILTER (status = 'ok'), count(*) "
                "FROM results WHERE run_id = ? GROUP BY 1 ORDER BY 1", [s.run_id]).fetchall():
            tools = con.execute("SELECT count(*) FROM tool_calls WHERE run_id = ? AND design = ?",
                                [s.run_id, d]).fetchall()[0][0]
            print(f"  {d:<12} accuracy {100 * acc:5.1f}%  calls/task {calls:4.1f}  tool calls/task {tools / n_all:4.1f}"
                  f"  ok cells {n_ok}/{n_all}")
    finally:
        con.close()


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10, help="tasks (2-hop questions)")
    ap.add_argument("--store", default=None, help="directory for the end-to-end suite and store (default: temp)")
    a = ap.parse_args()
    print("embedded/smollm2 (SmolLM2-135M-Instruct, llama.cpp) on 2-hop search questions, text ReAct protocol")
    await probe(a.n)
    await end_to_end(a.n, Path(a.store or tempfile.mkdtemp(prefix="react-probe-")))


if __name__ == "__main__":
    asyncio.run(main())
