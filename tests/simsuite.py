"""A small simulated suite written into a test's tmp folder, and the row counts of a run: shared by
the harness, live-store and other end-to-end tests (importable because pytest puts tests/ on the
path for its conftest)."""

from __future__ import annotations

from pathlib import Path

import duckdb

SUITE = """name: {name}
models:
  default: {model}
tasks:
  - {{generator: masbench.depth, values: [1, 2], n: {n}, seed: 3}}
designs: {designs}
seeds: {seeds}
cot_sc: {{k_max: {k_max}, bootstrap: 200}}
budget: {{per_task_tokens: {budget}}}
concurrency: 8
store: {store}
"""


def write_suite(tmp_path: Path, name="simsuite", model="sim/p60", n=4, designs="[cot, {design: cot-sc, params: {k: 3}}, debate]",
                seeds="[0]", k_max=5, budget=20000) -> Path:
    d = tmp_path / "tasks"
    d.mkdir(exist_ok=True)
    p = d / f"{name}.yaml"
    p.write_text(SUITE.format(name=name, model=model, n=n, designs=designs, seeds=seeds, k_max=k_max, budget=budget,
                              store=tmp_path / "runs" / f"{name}.duckdb"))
    return p


def counts(store: Path, run_id: str) -> dict[str, int]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        q = lambda s: con.execute(s, [run_id]).fetchall()[0][0]  # noqa: E731
        return {
            "results": q("SELECT count(*) FROM results WHERE run_id = ?"),
            "distinct_results": q("SELECT count(DISTINCT (design, task_id, seed)) FROM results WHERE run_id = ?"),
            "pool": q("SELECT count(*) FROM pool WHERE run_id = ?"),
            "distinct_pool": q("SELECT count(DISTINCT (task_id, seed, sample_index)) FROM pool WHERE run_id = ?"),
            "calls": q("SELECT count(*) FROM calls WHERE run_id = ?"),
            "distinct_calls": q("SELECT count(DISTINCT call_id) FROM calls WHERE run_id = ?"),
            "result_calls": q("SELECT coalesce(sum(calls), 0) FROM results WHERE run_id = ?"),
            "design_calls": q("SELECT count(*) FROM calls WHERE run_id = ? AND purpose = 'design'"),
            "pool_calls": q("SELECT count(*) FROM calls WHERE run_id = ? AND purpose = 'pool'"),
            "curve": q("SELECT count(*) FROM cot_sc_curve WHERE run_id = ?"),
        }
    finally:
        con.close()


def q(store: Path, sql: str, params: list | None = None) -> list[tuple]:
    """The rows of one query on a store file, opened read-only and closed again."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def _one(store: Path, sql: str):
    con = duckdb.connect(str(store), read_only=True)
    try:
        return con.execute(sql).fetchall()[0][0]
    finally:
        con.close()


def assert_transcripts_consistent(store: Path) -> None:
    """No orphan or duplicate transcript rows: every message's call and text exist, every text is
    referenced, no (call, direction, position) twice, and each call's inputs are 0..n-1."""
    assert _one(store, "SELECT count(*) FROM call_messages m WHERE NOT EXISTS "
                      "(SELECT 1 FROM calls c WHERE c.call_id = m.call_id)") == 0
    assert _one(store, "SELECT count(*) FROM call_messages_superseded m WHERE NOT EXISTS "
                      "(SELECT 1 FROM calls_superseded c WHERE c.call_id = m.call_id)") == 0
    assert _one(store, "SELECT count(*) FROM (SELECT text_hash FROM call_messages UNION ALL "
                      "SELECT text_hash FROM call_messages_superseded) m "
                      "WHERE text_hash NOT IN (SELECT text_hash FROM texts)") == 0
    assert _one(store, "SELECT count(*) FROM texts WHERE text_hash NOT IN (SELECT text_hash FROM call_messages "
                      "UNION ALL SELECT text_hash FROM call_messages_superseded)") == 0
    assert _one(store, "SELECT count(*) FROM (SELECT call_id, direction, position FROM call_messages "
                      "GROUP BY ALL HAVING count(*) > 1)") == 0
    assert _one(store, "SELECT count(*) FROM (SELECT call_id FROM call_messages WHERE direction = 'input' "
                      "GROUP BY call_id HAVING max(position) <> count(*) - 1 OR min(position) <> 0)") == 0
    assert _one(store, "SELECT count(*) FROM (SELECT call_id FROM call_messages WHERE direction = 'output' "
                      "GROUP BY call_id HAVING count(*) > 1)") == 0


def write_sequential_suite(tmp_path: Path, name="seq", n=60, model="sim/p40", strong="sim/p95") -> Path:
    """A suite for ``--until-decided`` runs (``lib=[tmp_path]``): ``oracle``, one call of a far
    stronger model than the pool's (far better than CoT-SC), ``solo``, one call of the pool's own
    agent (equal to CoT-SC), and the ``cot`` baseline; 2·n tasks (depth 1 and 2)."""
    (tmp_path / "agents").mkdir(exist_ok=True)
    (tmp_path / "agents" / "strong-solver.yaml").write_text(
        "name: strong-solver\nmodel: strong\nprompt: |\n  {question}\n  End with \"Answer: <final answer>\".\n"
        "max_tokens: 256\n")
    (tmp_path / "orchestrators").mkdir(exist_ok=True)
    (tmp_path / "orchestrators" / "oracle.yaml").write_text(
        "name: oracle\nkind: expert\nnodes:\n  solve: {agent: strong-solver}\noutput: solve\n")
    (tmp_path / "orchestrators" / "solo.yaml").write_text(
        "name: solo\nkind: expert\nnodes:\n  solve: {agent: cot-solver}\noutput: solve\n")
    suite = write_suite(tmp_path, name=name, model=model, n=n, designs="[cot, oracle, solo]", k_max=4)
    suite.write_text(suite.read_text().replace(f"  default: {model}\n",
                                               f"  default: {model}\n  strong: {strong}\n"))
    return suite
