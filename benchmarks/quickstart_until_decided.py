"""The quickstart fixed-n vs ``--until-decided``, on a SIMULATED stand-in of the embedded model.

The real command is ``masbench run quickstart --until-decided --batch 10 --store
runs/quickstart-seq.duckdb`` (the embedded SmolLM2 model). This script runs the quickstart's
designs, budget and CoT-SC pool on its bare-arithmetic level (40 tasks) with a simulated model of
the embedded model's measured shape there (tests/test_quickstart_suite.py: a CoT sample right 30%
of the time, the expression writer 93%, errors spread over many values) twice: fixed n, and
``--until-decided`` with a look every ``--batch`` tasks. It prints, per design, the verdict, the n
at which it was decided and the calls, and the run's calls against the fixed-n run's. SIMULATED.

Run (seconds)::

    python benchmarks/quickstart_until_decided.py [--batch 10] [--seed 0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import duckdb  # noqa: E402
import yaml  # noqa: E402

from masbench.bench import load_suite_tasks  # noqa: E402
from masbench.harness import RunOptions, run_suite  # noqa: E402
from masbench.spec import SuiteSpec  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHAPE = {"reasoning": 0.3, "arith.expression": 0.93}


def stand_in(d: Path, seed: int) -> Path:
    """The quickstart suite on its arithmetic level with the simulated model (SIMULATED)."""
    data = yaml.safe_load((ROOT / "tasks" / "quickstart.yaml").read_text(encoding="utf-8"))
    tasks = [t for t in load_suite_tasks(SuiteSpec.model_validate(data), ROOT / "tasks") if t.source == "arithmetic"]
    (d / "tasks.jsonl").write_text("".join(json.dumps({"id": t.id, "question": t.question,
                                                       "answer": f"#### {t.answers[0]}"}) + "\n" for t in tasks))
    data["tasks"] = [{"jsonl": str(d / "tasks.jsonl"), "name": "arithmetic", "n": len(tasks),
                      "params": {"skills": []}}]
    data["models"] = {"default": {"id": "sim/quickstart-arithmetic", "sim": {
        "accuracy": {"default": 0.0, **SHAPE}, "completion_tokens": {"mean": 12, "sd": 2},
        "errors": {"distractors": 20, "concentration": 50, "overlap": 0.0}, "difficulty": {"spread": 0.0}}}}
    data["stats"] = {"seed": seed}
    data["store"] = str(d / "q.duckdb")
    (d / "tasks").mkdir(exist_ok=True)
    p = d / "tasks" / "quickstart.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return p


def calls(store: Path, run_id: str) -> int:
    con = duckdb.connect(str(store), read_only=True)
    try:
        return int(con.execute("SELECT count(*) FROM calls WHERE run_id = ?", [run_id]).fetchall()[0][0])
    finally:
        con.close()


async def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0, help="stats.seed: the sequential run's task order")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        suite = stand_in(Path(tmp), a.seed)
        fixed = await run_suite(RunOptions(suite=str(suite), store=Path(tmp) / "fixed.duckdb"))
        seq = await run_suite(RunOptions(suite=str(suite), store=Path(tmp) / "seq.duckdb", until_decided=True,
                                         batch=a.batch))
        n_fixed, n_seq = calls(fixed.store, fixed.run_id), calls(seq.store, seq.run_id)
        print(f"SIMULATED quickstart stand-in (arithmetic level, 40 tasks), --until-decided --batch {a.batch}, "
              f"stats.seed {a.seed}:")
        for d in seq.decisions:
            state = (f"decided at n = {d['n_tasks']} (of {d['max_tasks']} allowed), saved "
                     f"{100 * d['saved_calls']:.0f}% of its calls" if d["decided"]
                     else f"undecided at n = {d['n_tasks']}")
            print(f"  {d['design']}: {d['verdict']} \u2014 {state}; {d['calls']} calls")
        print(f"  calls: fixed-n run {n_fixed}, sequential run {n_seq}: saved {100 * (1 - n_seq / n_fixed):.0f}% "
              "(SIMULATED)")


if __name__ == "__main__":
    asyncio.run(main())
