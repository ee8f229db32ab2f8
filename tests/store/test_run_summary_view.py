"""``run_summary`` over hand-built rows: per run, its results, calls, tokens, cost and failed calls,
counted from that run's rows only, and zeros (not NULL) for a run with none. Worked by hand."""

from __future__ import annotations

import pytest


def test_run_summary_counts_each_run_s_own_rows(view_db) -> None:
    con = view_db.make("run_summary")
    view_db.insert(con, "runs",
                   dict(run_id="r", suite="s", status="finished", created_at="2026-01-01 00:00:00",
                        finished_at="2026-01-01 01:00:00", simulated=True),
                   dict(run_id="e", suite="t", status="running", simulated=False))
    view_db.insert(con, "calls",
                   dict(call_id="c1", run_id="r", prompt_tokens=100, completion_tokens=20, cost_usd=0.25),
                   dict(call_id="c2", run_id="r", prompt_tokens=7, completion_tokens=3, cost_usd=0.5, error="boom"),
                   dict(call_id="c3", run_id="r", cost_usd=0.0, error="no usage"),  # no tokens: adds nothing
                   dict(call_id="x1", run_id="other", prompt_tokens=1000, completion_tokens=1, cost_usd=9.0,
                        error="x"))
    view_db.insert(con, "results", *[dict(run_id="r", design="a", task_id=f"t{i}", seed=0) for i in range(4)],
                   dict(run_id="other", design="a", task_id="t0", seed=0))
    got = {x["run_id"]: x for x in view_db.rows(con, "SELECT * FROM run_summary")}
    assert set(got) == {"r", "e"}  # one row per run in runs, none for rows of an unknown run
    r = got["r"]
    assert (r["suite"], r["status"], r["simulated"]) == ("s", "finished", True)
    assert (str(r["created_at"]), str(r["finished_at"])) == ("2026-01-01 00:00:00", "2026-01-01 01:00:00")
    assert (r["results"], r["calls"], r["failed_calls"]) == (4, 3, 2)
    assert r["tokens"] == 100 + 20 + 7 + 3
    assert r["cost_usd"] == pytest.approx(0.25 + 0.5)
    e = got["e"]  # a run without rows: zeros
    assert (e["results"], e["calls"], e["tokens"], e["cost_usd"], e["failed_calls"]) == (0, 0, 0, 0, 0)
    assert (e["suite"], e["status"], e["simulated"], e["finished_at"]) == ("t", "running", False, None)
