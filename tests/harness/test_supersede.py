"""Superseding failed cells on resume: only status 'failed' (and pool cells with an errored
sample) are taken back; budget-exhausted and degraded cells are results and stay; the calls of
superseded cells move to calls_superseded and run_spend tells spent from counted (issue 13)."""

from __future__ import annotations

from masbench.harness.failures import failure_reasons, supersede_failed
from masbench.harness.resume import done_cells
from masbench.store import StoreWriter


def test_only_failed_cells_are_superseded_and_their_spend_stays_visible(store):
    w = StoreWriter(store)
    for i, status in enumerate(["ok", "failed", "budget_exhausted", "degraded", "failed"]):
        w.add("results", {"run_id": "r", "design": "cot", "task_id": f"t{i}", "seed": 0, "status": status,
                          "error": "boom" if status == "failed" else None})
        for j in range(2):
            w.add("calls", {"call_id": f"c{i}{j}", "run_id": "r", "purpose": "design", "design": "cot",
                            "task_id": f"t{i}", "seed": 0, "cost_usd": 0.5, "cache_hit": False,
                            "prompt_tokens": 3, "completion_tokens": 1})
        w.add("nodes", {"run_id": "r", "design": "cot", "task_id": f"t{i}", "seed": 0, "node": "n"})
    for j, err in enumerate([None, "pool boom"]):  # pool cell t9: one errored sample → the cell failed
        w.add("pool", {"run_id": "r", "task_id": "t9", "seed": 0, "sample_index": j, "error": err})
        w.add("calls", {"call_id": f"p{j}", "run_id": "r", "purpose": "pool", "design": "__cot_pool__",
                        "task_id": "t9", "seed": 0, "cost_usd": 0.25, "cache_hit": False,
                        "prompt_tokens": 3, "completion_tokens": 1})
    w.flush()
    assert failure_reasons(store, "r") == (3, [("boom", 2), ("pool boom", 1)])

    assert supersede_failed(store, "r") == {"design": 2, "pool": 1}
    kept = {t: s for t, s in store.sql("SELECT task_id, status FROM results WHERE run_id = 'r'")}
    assert kept == {"t0": "ok", "t2": "budget_exhausted", "t3": "degraded"}
    assert store.sql("SELECT count(*) FROM pool")[0][0] == 0
    assert sorted(r[0] for r in store.sql("SELECT call_id FROM calls_superseded")) == ["c10", "c11", "c40", "c41",
                                                                                      "p0", "p1"]
    assert store.sql("SELECT count(*) FROM calls")[0][0] == 6
    assert sorted(r[0] for r in store.sql("SELECT task_id FROM nodes")) == ["t0", "t2", "t3"]
    counted, superseded, spent, counted_usd, spent_usd = store.sql(
        "SELECT counted_calls, superseded_calls, spent_calls, counted_usd, spent_usd FROM run_spend")[0]
    assert (counted, superseded, spent) == (6, 6, 12)
    assert counted_usd == 3.0 and spent_usd == 3.0 + 2 * 1.0 + 0.5
    assert len(done_cells(store, "r", 2)) == 3  # the kept results; the failed ones run again
    assert supersede_failed(store, "r") == {"design": 0, "pool": 0}  # idempotent
