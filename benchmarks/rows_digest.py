"""Rows digest (SIMULATED): run a quickstart-shaped suite on sim/ models and print one digest per
table of what it wrote, without the columns that differ from run to run (ids, clocks).

For "results unchanged" across a change to the harness: run it on the code before and after and
compare the printed digests (or ``--dump DIR`` both and ``diff -r`` the sorted rows)::

    .venv/bin/python benchmarks/rows_digest.py --dump /tmp/after
    git stash; .venv/bin/python benchmarks/rows_digest.py --dump /tmp/before; git stash pop
    diff -r /tmp/before /tmp/after

``--workers N`` runs the suite on the ``processes`` engine (N workers, parts merged by the driver);
``--store PATH`` digests a store another command wrote instead (e.g. ``harness_scale.py``'s, whose
``--json`` names it) — the same sorted rows, so two such stores compare with ``diff -r``.

The suite is the quickstart's shape (cot, the tool-computing expert, a one-round debate, the
CoT-SC pool and curve, paired tests) plus self-refine and cot-sc (``--designs all``: every bundled
design instead, each with its default params, multi-hop search tasks for the ReAct designs' tools,
and a per-task budget their parallel branches do not reach), on ``sim/medium`` with 5% of
attempts failing (a 500 retried once, a 400 failing the call: failed nodes, degraded cells), at 64 cells in flight so the scheduling differs from a one-at-a-time run. Compared
tables: results, pool, calls, nodes, call_messages (call ids replaced by the call's own columns),
texts, cot_sc_curve, cot_sc_task_curve, design_metrics, paired_tests, tool_calls and routing_decisions.
Dropped columns: run_id, call_id, decision_id, ts, t_start, t_end, latency_s, wall_s.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb

SUITE = """name: digest
description: SIMULATED rows digest (quickstart-shaped)
models: {{default: {{id: sim/medium, max_attempts: 2, sim: {{faults: {{rate: 0.05, kinds: [server_error, bad_request]}}}}}}}}
tasks:
  - {{generator: masbench.arith, name: arithmetic, values: [1], n: {n}, seed: 0}}
  - {{generator: masbench.depth, name: one-step, values: [1, 2], n: {n}, seed: 0}}
{extra_tasks}designs:
{designs}
cot_sc: {{k_max: 4, bootstrap: 200}}
budget: {{per_task_tokens: {budget}}}
concurrency: 64
cache: false
store: {store}
"""

QUICKSTART = """  - {design: cot, label: cot}
  - expression-calculator
  - {design: debate, params: {rounds: 1}, label: debate}
  - self-refine
  - {design: cot-sc, params: {k: 3}}"""
"""The quickstart-shaped design list (``--designs quickstart``)."""


SEARCH = "  - {generator: search, name: search, values: [2, 3], n: %d, seed: 0, params: {corpus_size: 200}}\n"
"""Multi-hop search tasks (their tools), added with ``--designs all`` so the ReAct designs call tools."""


def designs(which: str) -> str:
    """The suite's ``designs:`` entries: the quickstart's shape, or every bundled design."""
    if which == "quickstart":
        return QUICKSTART
    from masbench.library import Library

    return "\n".join(f"  - {name}" for name in Library().names("design"))


DROP = {"run_id", "call_id", "decision_id", "ts", "t_start", "t_end", "latency_s", "wall_s"}
CALL_KEY = "c.purpose, c.design, c.task_id, c.seed, c.node, c.agent, c.sample_index"
TABLES = ("results", "pool", "calls", "nodes", "texts", "cot_sc_curve", "cot_sc_task_curve", "design_metrics", "paired_tests",
          "tool_calls", "routing_decisions")


def table_rows(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    """The table's rows as sorted text lines, without the :data:`DROP` columns."""
    if table == "call_messages":
        sql = (f"SELECT {CALL_KEY}, m.direction, m.position, m.role, m.text_hash, m.content_type, m.extra "
               "FROM call_messages m JOIN calls c USING (call_id)")
    else:
        cols = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall() if r[0] not in DROP]
        sql = f"SELECT {', '.join(cols)} FROM {table}"
    return sorted(repr(r) for r in con.execute(sql).fetchall())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=40, help="tasks per level")
    ap.add_argument("--designs", choices=("quickstart", "all"), default="quickstart",
                    help="the quickstart's designs, or every bundled design (each with its default params)")
    ap.add_argument("--dump", type=Path, help="write each table's sorted rows to DIR/<table>.txt")
    ap.add_argument("--workers", type=int, default=1, help="run on the processes engine with this many workers")
    ap.add_argument("--store", type=Path, help="digest this store (written by another command) instead of a run")
    a = ap.parse_args()
    if a.store is not None:
        digest(a.store, f"SIMULATED store {a.store.name}", a.dump)
        return
    d = Path(tempfile.mkdtemp())
    (d / "tasks").mkdir()
    store = d / "digest.duckdb"
    extra = SEARCH % a.n if a.designs == "all" else ""
    # every design: a budget the parallel ReAct branches do not reach (which of two concurrent
    # branches a tight budget refuses depends on how their tool calls interleave)
    budget = 40_000 if a.designs == "all" else 4000
    (d / "tasks" / "digest.yaml").write_text(SUITE.format(n=a.n, store=store, designs=designs(a.designs),
                                                          extra_tasks=extra, budget=budget))
    workers = ["--workers", str(a.workers)] if a.workers > 1 else []
    proc = subprocess.run([sys.executable, "-m", "masbench.cli", "run", str(d / "tasks" / "digest.yaml"),
                           "--allow-failures", *workers],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"run failed:\n{proc.stderr[-3000:]}")
    digest(store, f"SIMULATED sim/medium, 5% faults, {a.designs} designs, n={a.n}, workers={a.workers}", a.dump)


def digest(store: Path, what: str, dump: Path | None) -> None:
    """Print each table's row count and digest; with ``dump``, write its sorted rows there."""
    con = duckdb.connect(str(store), read_only=True)
    print(f"rows digest ({what}): table, rows, sha256 of the sorted rows")
    if dump:
        dump.mkdir(parents=True, exist_ok=True)
    for t in (*TABLES, "call_messages"):
        lines = table_rows(con, t)
        print(f"  {t:15s} {len(lines):7d}  {hashlib.sha256(chr(10).join(lines).encode()).hexdigest()[:16]}")
        if dump:
            (dump / f"{t}.txt").write_text("\n".join(lines) + "\n")
    con.close()


if __name__ == "__main__":
    main()
