"""The generated-design views (``store/design_views.py``) over hand-built rows, every expectation
worked by hand from the rows below.

- ``design_validity``: run ``r``'s holistic designer wrote 5 candidates (2 valid, one of them
  repaired; an invalid one carries repairs too, which must not count as "repaired"), its meta
  designer 1; run ``q``'s holistic designer 1 (repaired twice).
- ``design_search_cost`` / ``design_cost_search``: in run ``r``, ``h1`` is a suite-level generated
  design (its latest search session ``S1``: 2 candidates, 150 tokens, $1.5, 3 calls; an older
  session ``S0`` must not be read) run on t1, t2 (source ``src``) and t3 (axis ``depth`` = 2);
  ``m`` is a per-task designer whose search calls are in ``calls`` for t1 (2 calls, 40 tokens,
  $0.30) and t2 (1 call, 10 tokens, $0.05) — t3 has none, so it is not a searched row; ``m2`` is
  another per-task designer's design, searched on t1; ``plain`` has no search at all. In run ``q``,
  ``alias`` is ``h1`` run under another name (``design_name``) and ``h1`` runs once more; in ``q2``,
  ``m`` runs without search. Rows the look-ups must pass over are commented where they are built.
"""

from __future__ import annotations

import pytest

DESIGNS = [
    # run r, holistic: d1 valid + repaired, d2 valid with an empty repair list, d3..d5 invalid (d4 "repaired")
    dict(design_id="d1", run_id="r", name="d1", designer="holistic", valid=True, repairs='["closed a loop"]',
         tokens=100, calls=1, cost_usd=0.10, ts=1.0),
    dict(design_id="d2", run_id="r", name="d2", designer="holistic", valid=True, repairs="[]", tokens=50, calls=1,
         cost_usd=0.05, ts=2.0),
    dict(design_id="d3", run_id="r", name="d3", designer="holistic", valid=False, tokens=30, calls=2, cost_usd=0.03,
         ts=3.0),
    dict(design_id="d4", run_id="r", name="d4", designer="holistic", valid=False, repairs='["x"]', tokens=20,
         calls=1, cost_usd=0.02, ts=4.0),
    dict(design_id="d5", run_id="r", name="d5", designer="holistic", valid=False, tokens=7, calls=3, cost_usd=0.07,
         ts=5.0),
    dict(design_id="e1", run_id="r", name="e1", designer="meta", valid=True, tokens=10, calls=1, cost_usd=0.01,
         ts=6.0),
    dict(design_id="f1", run_id="q", name="f1", designer="holistic", valid=True, repairs='["a", "b"]', tokens=5,
         calls=1, cost_usd=0.5, ts=7.0),
]


def test_design_validity_counts_candidates_valid_rejected_and_repaired(view_db) -> None:
    con = view_db.make("design_validity")
    view_db.insert(con, "designs", *DESIGNS)
    got = {(r["run_id"], r["designer"]): r for r in view_db.rows(con, "SELECT * FROM design_validity")}
    assert set(got) == {("r", "holistic"), ("r", "meta"), ("q", "holistic")}
    h = got[("r", "holistic")]
    assert (h["candidates"], h["valid"], h["rejected"], h["repaired"]) == (5, 2, 3, 1)
    assert h["rejection_rate"] == pytest.approx(3 / 5)
    assert (h["tokens"], h["calls"], h["cost_usd"]) == (207, 8, pytest.approx(0.27))
    m = got[("r", "meta")]
    assert (m["candidates"], m["valid"], m["rejected"], m["repaired"], m["rejection_rate"]) == (1, 1, 0, 0, 0.0)
    assert (m["tokens"], m["calls"], m["cost_usd"]) == (10, 1, pytest.approx(0.01))
    q = got[("q", "holistic")]
    assert (q["candidates"], q["valid"], q["rejected"], q["repaired"], q["rejection_rate"]) == (1, 1, 0, 1, 0.0)
    assert (q["tokens"], q["calls"], q["cost_usd"]) == (5, 1, pytest.approx(0.5))


SESSIONS = [
    # the suite-level search sessions behind h1 (task_id NULL): S0 is older, S1 the latest
    dict(design_id="s0", run_id="S0", name="h1", designer="old-designer", valid=True, tokens=999, calls=9,
         cost_usd=9.0, ts=0.5),
    dict(design_id="s1a", run_id="S1", name="h1", designer="holistic", valid=True, tokens=100, calls=2, cost_usd=1.0,
         ts=10.0),
    dict(design_id="s1b", run_id="S1", name="h1-draft", designer="holistic", valid=False, tokens=50, calls=1,
         cost_usd=0.5, ts=11.0),
    # the per-task designer's candidates in run r: 2 for t1 (1 valid), 1 for t2
    dict(design_id="m1", run_id="r", name="m-t1", designer="meta-v2", task_id="t1", valid=True, tokens=1, calls=1,
         cost_usd=0.0, ts=12.0),
    dict(design_id="m2", run_id="r", name="m-t1b", designer="meta-v2", task_id="t1", valid=False, tokens=1, calls=1,
         cost_usd=0.0, ts=13.0),
    dict(design_id="m3", run_id="r", name="m-t2", designer="meta-v2", task_id="t2", valid=True, tokens=1, calls=1,
         cost_usd=0.0, ts=14.0),
    # rows the session and name look-ups must pass over: a per-task design inside session S1's run, a
    # later failed re-search of h1 (S2), a later valid per-task design named h1 in another run (z), and a
    # suite-level design named like the per-task designer's design m2 (S3)
    dict(design_id="x1", run_id="S1", name="x-task", designer="meta-v2", task_id="tX", valid=True, tokens=1000,
         calls=10, cost_usd=10.0, ts=0.1),
    dict(design_id="s2", run_id="S2", name="h1", designer="holistic", valid=False, tokens=70, calls=1, cost_usd=0.7,
         ts=20.0),
    dict(design_id="z1", run_id="z", name="h1", designer="meta-v2", task_id="t1", valid=True, tokens=3, calls=1,
         cost_usd=0.03, ts=30.0),
    dict(design_id="s3", run_id="S3", name="m2", designer="holistic", valid=True, tokens=9, calls=1, cost_usd=0.09,
         ts=40.0),
]
# (task, source, axis, axis_value): t1 and t2 in group 'src' (no axis), t3 at depth 2
TASKS = [("t1", "src", None, None), ("t2", "src", None, None), ("t3", "src", "depth", 2)]
RESULT = dict(run_id="r", seed=0, status="ok", correct=True, calls=2, budget_spent=0.0)


def _results() -> list[dict]:
    rows = []
    for design, tokens, usd in (("h1", 300, 0.3), ("m", 120, 0.6), ("plain", 60, 0.06)):
        rows += [RESULT | dict(design=design, task_id=t, source=s, axis=a, axis_value=v, tokens=tokens, cost_usd=usd)
                 for t, s, a, v in TASKS]
    rows += [RESULT | dict(design="m2", task_id="t1", source="src", tokens=80, cost_usd=0.08),
             RESULT | dict(run_id="q", design="alias", design_name="h1", task_id="t1", source="src", tokens=40,
                           cost_usd=0.04),
             RESULT | dict(run_id="q", design="h1", task_id="t1", source="src", tokens=30, cost_usd=0.03),
             # m in another run, without search calls there: r's search calls are not its
             RESULT | dict(run_id="q2", design="m", task_id="t1", source="src", tokens=10, cost_usd=0.01)]
    return rows


SEARCH = dict(run_id="r", design="m", seed=0, status="ok", cache_hit=False, attempts=1)
CALLS = [
    SEARCH | dict(call_id="c1", purpose="search", task_id="t1", prompt_tokens=10, completion_tokens=5, cost_usd=0.1),
    SEARCH | dict(call_id="c2", purpose="search", task_id="t1", prompt_tokens=20, completion_tokens=5, cost_usd=0.2),
    SEARCH | dict(call_id="c3", purpose="search", task_id="t2", prompt_tokens=7, completion_tokens=3, cost_usd=0.05),
    # not search cost: a design call of m's cell, and a search call with no task (a suite-level designer's)
    SEARCH | dict(call_id="c4", purpose="design", task_id="t3", prompt_tokens=500, completion_tokens=5, cost_usd=5.0),
    SEARCH | dict(call_id="c5", purpose="search", task_id=None, prompt_tokens=400, completion_tokens=4, cost_usd=4.0),
    # a search call of a cell with no result row (seed 1 of t2): no row of the view reads it
    SEARCH | dict(call_id="c6", purpose="search", task_id="t2", seed=1, prompt_tokens=100, completion_tokens=0,
                  cost_usd=1.0),
    # m2, a per-task designer's design on t1 only (its name is also a suite-level design's: S3)
    SEARCH | dict(call_id="c7", design="m2", purpose="search", task_id="t1", prompt_tokens=4, completion_tokens=1,
                  cost_usd=0.01),
]


@pytest.fixture
def con(view_db):
    c = view_db.make("design_cost_search")
    view_db.insert(c, "designs", *SESSIONS)
    view_db.insert(c, "results", *_results())
    view_db.insert(c, "calls", *CALLS)
    return c


def _by_key(view_db, con, view: str) -> dict[tuple, dict]:
    return {(r["run_id"], r["design"], r["axis"], r["axis_value"]): r for r in view_db.rows(con, f"SELECT * FROM {view}")}


def test_design_search_cost_suite_scope_amortizes_the_latest_session_over_the_run(con, view_db) -> None:
    got = _by_key(view_db, con, "design_search_cost")
    # plain has no search; m's t3 has no search call, so it is no searched row (m has 2 rows)
    assert {k[:2] for k in got} == {("r", "h1"), ("r", "m"), ("r", "m2"), ("q", "alias"), ("q", "h1")}
    assert {k[2:] for k in got if k[:2] == ("r", "h1")} == {("all", None), ("src", None), ("depth", 2)}
    for key, n_tasks in ((("r", "h1", "all", None), 3), (("r", "h1", "src", None), 2), (("r", "h1", "depth", 2), 1)):
        h = got[key]
        assert (h["scope"], h["designer"], h["n_tasks"], h["n_run_tasks"]) == ("suite", "holistic", n_tasks, 3)
        # S1 in whole (both candidates were paid for): 100 + 50 tokens, $1.0 + $0.5, 2 + 1 calls
        assert (h["search_tokens"], h["search_usd"], h["search_calls"]) == (150, pytest.approx(1.5), 3)
        # amortized over the design's 3 result rows in the run, whatever the group
        assert h["search_tokens_per_task"] == pytest.approx(50.0)
        assert h["search_usd_per_task"] == pytest.approx(0.5)
        assert h["search_calls_per_task"] == pytest.approx(1.0)
        assert (h["n_candidates"], h["n_valid"]) == (2, 1)
    a = got[("q", "alias", "all", None)]  # matched through design_name, amortized over its one row
    assert (a["scope"], a["n_tasks"], a["n_run_tasks"], a["search_tokens"]) == ("suite", 1, 1, 150)
    assert a["search_tokens_per_task"] == pytest.approx(150.0) and a["search_usd_per_task"] == pytest.approx(1.5)
    qh = got[("q", "h1", "all", None)]  # h1 in another run: amortized over that run's 1 row, not r's 3
    assert (qh["scope"], qh["n_tasks"], qh["n_run_tasks"], qh["search_tokens"]) == ("suite", 1, 1, 150)
    assert qh["search_tokens_per_task"] == pytest.approx(150.0) and qh["n_candidates"] == 2


def test_design_search_cost_task_scope_sums_the_cells_search_calls(con, view_db) -> None:
    got = _by_key(view_db, con, "design_search_cost")
    assert {k[2:] for k in got if k[:2] == ("r", "m")} == {("all", None), ("src", None)}
    for group in ("all", "src"):
        m = got[("r", "m", group, None)]
        assert (m["scope"], m["designer"], m["n_tasks"], m["n_run_tasks"]) == ("task", "meta-v2", 2, 2)
        # t1: (10 + 5) + (20 + 5) = 40 tokens, $0.3, 2 calls; t2: 10 tokens, $0.05, 1 call
        assert (m["search_tokens"], m["search_usd"], m["search_calls"]) == (50, pytest.approx(0.35), 3)
        assert m["search_tokens_per_task"] == pytest.approx(25.0)
        assert m["search_usd_per_task"] == pytest.approx(0.175)
        assert m["search_calls_per_task"] == pytest.approx(1.5)
        assert m["n_candidates"] in (2, 1)  # any_value over t1's 2 and t2's 1 candidates
        assert m["n_valid"] == 1
    # m2: one searched cell (t1: 4 + 1 tokens); its designer and candidates are t1's per-task ones, not
    # those of the suite-level design S3 that shares its name
    m2 = got[("r", "m2", "all", None)]
    assert (m2["scope"], m2["designer"], m2["n_tasks"], m2["n_run_tasks"]) == ("task", "meta-v2", 1, 1)
    assert (m2["search_tokens"], m2["search_usd"], m2["search_calls"]) == (5, pytest.approx(0.01), 1)
    assert (m2["n_candidates"], m2["n_valid"]) == (2, 1)


def test_design_cost_search_adds_search_cost_both_ways(con, view_db) -> None:
    got = _by_key(view_db, con, "design_cost_search")
    h = got[("r", "h1", "all", None)]  # suite scope: results exclude the search; amortized adds 50 tokens a task
    assert (h["search_scope"], h["designer"], h["tokens"]) == ("suite", "holistic", pytest.approx(300))
    assert (h["search_tokens"], h["search_usd"]) == (150, pytest.approx(1.5))
    assert (h["search_tokens_per_task"], h["search_usd_per_task"]) == (pytest.approx(50), pytest.approx(0.5))
    assert h["tokens_search_excluded"] == pytest.approx(300) and h["tokens_search_amortized"] == pytest.approx(350)
    assert h["usd_search_excluded"] == pytest.approx(0.3) and h["usd_search_amortized"] == pytest.approx(0.8)
    assert h["calls_search_excluded"] == pytest.approx(2) and h["calls_search_amortized"] == pytest.approx(3)
    d = got[("r", "h1", "depth", 2)]  # one task in the group, still 50 a task (amortized over the run's 3)
    assert d["tokens_search_amortized"] == pytest.approx(350) and d["usd_search_amortized"] == pytest.approx(0.8)
    # task scope: m's results (mean over its 3 rows: 120 tokens, $0.6, 2 calls) already hold the search calls
    m = got[("r", "m", "all", None)]
    assert (m["search_scope"], m["tokens"], m["cost_usd"]) == ("task", pytest.approx(120), pytest.approx(0.6))
    assert m["tokens_search_amortized"] == pytest.approx(120) and m["tokens_search_excluded"] == pytest.approx(95)
    assert m["usd_search_amortized"] == pytest.approx(0.6) and m["usd_search_excluded"] == pytest.approx(0.425)
    assert m["calls_search_amortized"] == pytest.approx(2) and m["calls_search_excluded"] == pytest.approx(0.5)
    # m's depth group has no searched row: no search cost there (0, not NULL), both ways its plain cost
    md = got[("r", "m", "depth", 2)]
    assert (md["search_scope"], md["search_tokens"], md["search_usd"]) == (None, 0, 0)
    assert (md["search_tokens_per_task"], md["search_usd_per_task"]) == (0, 0)
    assert md["tokens_search_excluded"] == md["tokens_search_amortized"] == pytest.approx(120)
    assert md["usd_search_excluded"] == md["usd_search_amortized"] == pytest.approx(0.6)
    assert md["calls_search_excluded"] == md["calls_search_amortized"] == pytest.approx(2)
    p = got[("r", "plain", "all", None)]  # no search at all
    assert (p["search_scope"], p["designer"], p["search_tokens"], p["search_usd"]) == (None, None, 0, 0)
    assert p["tokens_search_excluded"] == p["tokens_search_amortized"] == pytest.approx(60)
    assert p["usd_search_excluded"] == p["usd_search_amortized"] == pytest.approx(0.06)
    # every design_comparison row is kept (LEFT JOIN): h1, m, plain x 3 groups and m2 x 2 in r; 2 groups
    # each for q's alias and h1 and for q2's m
    n = view_db.rows(con, "SELECT count(*) AS n FROM design_cost_search")[0]["n"]
    assert n == len(got) == 3 * 3 + 2 + 2 + 2 + 2  # one row per key (no search-cost row of another group)
    assert got[("q2", "m", "all", None)]["search_scope"] is None
    assert got[("q", "alias", "all", None)]["tokens_search_amortized"] == pytest.approx(40 + 150)
