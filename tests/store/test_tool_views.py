"""``tool_usage`` (store/tool_views.py) over hand-built ``tool_calls`` rows, counts worked by hand.

Run ``r``: design ``react`` made 21 tool calls over 3 cells (t1 seed 0, t1 seed 1, t2 seed 0): 2
``ok`` (one result cut to its cap) and a different number of each failed status; the CoT-SC pool's 1 call stays
apart (purpose ``pool``); design ``other`` 1 call without bytes or latency. Run ``q``: 1 call.
"""

from __future__ import annotations

import pytest

TOOL = dict(run_id="r", purpose="design", design="react", tool="search", seed=0)
# react's failed calls, a different count per status (so no two status columns can trade places unseen)
FAILED = {"invalid_args": 1, "unknown_tool": 3, "not_allowed": 4, "error": 5, "refused": 6}
ROWS = [
    TOOL | dict(task_id="t1", status="ok", latency_s=0.01, bytes_out=100, truncated=False),
    TOOL | dict(task_id="t1", seed=1, status="ok", latency_s=0.03, bytes_out=250, truncated=True),
    *[TOOL | dict(task_id="t2", status=status, latency_s=0.0, bytes_out=1, truncated=False)
      for status, n in FAILED.items() for _ in range(n)],
    TOOL | dict(purpose="pool", design="__cot_pool__", task_id="t1", status="ok", latency_s=0.5, bytes_out=7,
                truncated=False),
    TOOL | dict(design="other", task_id="t9", status="error"),
    TOOL | dict(run_id="q", task_id="t1", status="refused", latency_s=1.0, bytes_out=3, truncated=True),
]


def test_tool_usage_counts_each_status_per_run_purpose_and_design(view_db) -> None:
    con = view_db.make("tool_usage")
    view_db.insert(con, "tool_calls", *ROWS)
    # rows in the superseded table are not this run's tool use any more
    view_db.insert(con, "tool_calls_superseded", TOOL | dict(task_id="t1", status="ok", bytes_out=10**6))
    got = {(r["run_id"], r["purpose"], r["design"]): r for r in view_db.rows(con, "SELECT * FROM tool_usage")}
    assert set(got) == {("r", "design", "react"), ("r", "pool", "__cot_pool__"), ("r", "design", "other"),
                        ("q", "design", "react")}
    r = got[("r", "design", "react")]
    assert (r["tool_calls"], r["cells"]) == (2 + 19, 3)  # cells: (t1, 0), (t1, 1), (t2, 0)
    assert (r["ok"], r["invalid_args"], r["unknown_tool"], r["not_allowed"], r["error"], r["refused"]) == \
        (2, 1, 3, 4, 5, 6)
    assert r["truncated"] == 1 and r["bytes_out"] == 100 + 250 + 19
    assert r["mean_latency_s"] == pytest.approx(0.04 / 21)
    p = got[("r", "pool", "__cot_pool__")]
    assert (p["tool_calls"], p["cells"], p["ok"], p["refused"], p["truncated"], p["bytes_out"]) == (1, 1, 1, 0, 0, 7)
    assert p["mean_latency_s"] == pytest.approx(0.5)
    o = got[("r", "design", "other")]  # no bytes recorded: 0, not NULL; no latency: NULL mean
    assert (o["tool_calls"], o["error"], o["ok"], o["truncated"], o["bytes_out"]) == (1, 1, 0, 0, 0)
    assert o["mean_latency_s"] is None
    q = got[("q", "design", "react")]
    assert (q["tool_calls"], q["cells"], q["refused"], q["ok"], q["truncated"], q["bytes_out"]) == (1, 1, 1, 0, 1, 3)
