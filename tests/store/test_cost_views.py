"""The cost views over hand-built calls (masbench/store/cost_views.py): the token classes with their
fallbacks for rows written before the classes existed, the status counts, and the re-pricing per
class with a model's own row winning over the table's ``'*'`` row. Every expectation is worked by
hand from the rows below."""

from __future__ import annotations

import pytest

BASE = dict(run_id="r", purpose="design", design="a", node="n0", agent="ag", model_alias="al", seed=0)
CLASS_COLS = ("fresh_tokens", "cached_read_tokens", "cache_write_tokens", "visible_tokens", "reasoning_tokens")


def _classes_of(view_db, *calls: dict) -> dict[str, dict]:
    con = view_db.make("call_classes")
    view_db.insert(con, "calls", *calls)
    return {r["call_id"]: r for r in view_db.rows(con, "SELECT * FROM call_classes")}


def test_call_classes_take_the_recorded_classes_and_fall_back_per_column(view_db) -> None:
    got = _classes_of(
        view_db,
        # every class recorded: taken as is, even where prompt - cached would differ (100 - 20 = 80, not 70)
        BASE | dict(call_id="k1", task_id="t1", model="m", cache_hit=True, prompt_tokens=100, completion_tokens=35,
                    prompt_fresh_tokens=70, cached_tokens=20, cache_write_tokens=10, completion_visible_tokens=26,
                    reasoning_tokens=5, cost_usd=0.5, cost_source="provider-reported", usage_status="estimated",
                    status="truncated", error="cut"),
        # an old row: fresh = prompt - cached = 60 - 15, visible = completion - reasoning = 24 - 4, write 0
        BASE | dict(call_id="k2", task_id="t2", model="m", cache_hit=False, prompt_tokens=60, completion_tokens=24,
                    cached_tokens=15, reasoning_tokens=4),
        # an old row, nothing cached and no reasoning recorded: fresh = prompt, visible = completion
        BASE | dict(call_id="k3", task_id="t3", model="m", cache_hit=False, prompt_tokens=50, completion_tokens=20),
        # no prompt count: the prompt classes unknown (NULL, not 0); the completion ones still known
        BASE | dict(call_id="k4", task_id="t4", model="m", cache_hit=False, completion_tokens=8, error="boom"),
        # no completion count: the completion classes unknown; the prompt ones known
        BASE | dict(call_id="k5", task_id="t5", model="m", cache_hit=False, prompt_tokens=12, status="empty"),
    )
    classes = {k: tuple(r[c] for c in CLASS_COLS) for k, r in got.items()}
    assert classes == {"k1": (70, 20, 10, 26, 5), "k2": (45, 15, 0, 20, 4), "k3": (50, 0, 0, 20, 0),
                       "k4": (None, None, None, 8, 0), "k5": (12, 0, 0, None, None)}
    prov = {k: (r["cost_source"], r["usage_status"], r["status"]) for k, r in got.items()}
    assert prov == {"k1": ("provider-reported", "estimated", "truncated"),  # recorded status wins over error
                    "k2": ("unrecorded", "reported", "ok"), "k3": ("unrecorded", "reported", "ok"),
                    "k4": ("unrecorded", "reported", "error"),  # no status: an error makes it 'error'
                    "k5": ("unrecorded", "reported", "empty")}
    k1 = got["k1"]
    assert {c: k1[c] for c in ("run_id", "purpose", "design", "task_id", "seed", "node", "agent", "model_alias",
                               "model", "cache_hit", "prompt_tokens", "completion_tokens", "cost_usd")} == dict(
        run_id="r", purpose="design", design="a", task_id="t1", seed=0, node="n0", agent="ag", model_alias="al",
        model="m", cache_hit=True, prompt_tokens=100, completion_tokens=35, cost_usd=0.5)


def test_call_status_counts_count_each_status_per_run_purpose_and_design(view_db) -> None:
    con = view_db.make("call_status_counts")
    rows = [("ok", None, "yaml", None), (None, None, "yaml", None),  # no status, no error: ok
            ("error", None, "unpriced", None), (None, "boom", "unpriced", None),  # no status + error: error
            ("usage_missing", None, None, "estimated"), ("truncated", None, "provider-reported", "estimated"),
            ("truncated", None, "provider-reported", None), ("empty", None, "provider-reported", "reported")]
    view_db.insert(con, "calls", *[BASE | dict(call_id=f"c{i}", status=st, error=err, cost_source=src, usage_status=us)
                                   for i, (st, err, src, us) in enumerate(rows)])
    view_db.insert(con, "calls", BASE | dict(call_id="p1", purpose="pool", status="ok"),
                   BASE | dict(call_id="b1", design="b", status="empty", cost_source="unpriced"))
    got = {(r["purpose"], r["design"]): r for r in view_db.rows(con, "SELECT * FROM call_status_counts")}
    assert set(got) == {("design", "a"), ("pool", "a"), ("design", "b")}
    cols = ("calls", "ok", "error", "usage_missing", "truncated", "empty", "usage_estimated", "unpriced",
            "provider_reported")
    assert {k: tuple(r[c] for c in cols) for k, r in got.items()} == {
        ("design", "a"): (8, 2, 2, 1, 2, 1, 2, 2, 3),
        ("pool", "a"): (1, 1, 0, 0, 0, 0, 0, 0, 0),
        ("design", "b"): (1, 0, 0, 0, 0, 1, 0, 1, 0),
    }
    assert {r["run_id"] for r in got.values()} == {"r"}


# Three tables. t1: a '*' row and m2's own row, every class priced apart; t2: a '*' row only, the
# cached / cache-write / reasoning prices NULL (so the input / output price); t3: m2's own row only.
PRICES = [
    dict(price_table="t1", model="*", input_usd_per_mtok=1.0, cached_input_usd_per_mtok=0.5,
         cache_write_usd_per_mtok=1.25, output_usd_per_mtok=4.0, reasoning_usd_per_mtok=8.0),
    dict(price_table="t1", model="m2", input_usd_per_mtok=10.0, cached_input_usd_per_mtok=5.0,
         cache_write_usd_per_mtok=12.5, output_usd_per_mtok=40.0, reasoning_usd_per_mtok=80.0),
    dict(price_table="t2", model="*", input_usd_per_mtok=2.0, output_usd_per_mtok=6.0),
    dict(price_table="t3", model="m2", input_usd_per_mtok=3.0, cached_input_usd_per_mtok=1.0,
         cache_write_usd_per_mtok=2.0, output_usd_per_mtok=5.0, reasoning_usd_per_mtok=7.0),
]
_CLS = dict(prompt_tokens=1, completion_tokens=1)  # only their NULL-ness matters when the classes are recorded
# classes (fresh, cached, write, visible, reasoning): a1 (100, 20, 10, 30, 5), a2 (40, 10, 2, 6, 3)
REPRICE_CALLS = [
    BASE | _CLS | dict(call_id="a1", task_id="t1", model="m1", cache_hit=False, cost_usd=0.01, prompt_fresh_tokens=100,
                       cached_tokens=20, cache_write_tokens=10, completion_visible_tokens=30, reasoning_tokens=5),
    BASE | _CLS | dict(call_id="a2", task_id="t1", model="m2", cache_hit=True, cost_usd=0.02, prompt_fresh_tokens=40,
                       cached_tokens=10, cache_write_tokens=2, completion_visible_tokens=6, reasoning_tokens=3),
    BASE | dict(call_id="a3", task_id="t2", model="m1", cache_hit=False, cost_usd=0.0, status="usage_missing"),
]
# by hand, in $/Mtok · tokens:
# a1 t1 ('*'): 100·1 + 20·0.5 + 10·1.25 + 30·4 + 5·8 = 100 + 10 + 12.5 + 120 + 40 = 282.5
# a1 t2 ('*'): 100·2 + 20·2 + 10·2 + 30·6 + 5·6 = 200 + 40 + 20 + 180 + 30 = 470
# a1 t3: no '*' row and no m1 row: NULL
# a2 t1 (m2's own): 40·10 + 10·5 + 2·12.5 + 6·40 + 3·80 = 400 + 50 + 25 + 240 + 240 = 955
# a2 t2 ('*'): 40·2 + 10·2 + 2·2 + 6·6 + 3·6 = 80 + 20 + 4 + 36 + 18 = 158
# a2 t3 (m2's own): 40·3 + 10·1 + 2·2 + 6·5 + 3·7 = 120 + 10 + 4 + 30 + 21 = 185
# a3: no usage, NULL under every table
REPRICED = {("a1", "t1"): 282.5e-6, ("a1", "t2"): 470e-6, ("a1", "t3"): None, ("a2", "t1"): 955e-6,
            ("a2", "t2"): 158e-6, ("a2", "t3"): 185e-6, ("a3", "t1"): None, ("a3", "t2"): None, ("a3", "t3"): None}


@pytest.fixture
def reprice_con(view_db):
    con = view_db.make("call_reprice", "design_reprice")
    view_db.insert(con, "calls", *REPRICE_CALLS)
    view_db.insert(con, "price_table", *PRICES)
    return con


def test_call_reprice_prices_each_class_with_the_model_s_own_row_first(reprice_con, view_db) -> None:
    rows = view_db.rows(reprice_con, "SELECT * FROM call_reprice")
    assert len(rows) == 9  # 3 calls × 3 tables, one row each
    got = {(r["call_id"], r["price_table"]): r for r in rows}
    assert set(got) == set(REPRICED)
    for key, want in REPRICED.items():
        assert got[key]["repriced_usd"] == (None if want is None else pytest.approx(want)), key
    assert {k: r["priced_as"] for k, r in got.items()} == {
        ("a1", "t1"): "*", ("a1", "t2"): "*", ("a1", "t3"): None, ("a2", "t1"): "m2", ("a2", "t2"): "*",
        ("a2", "t3"): "m2", ("a3", "t1"): "*", ("a3", "t2"): "*", ("a3", "t3"): None}
    assert {c: got["a2", "t1"][c] for c in CLASS_COLS} == dict(zip(CLASS_COLS, (40, 10, 2, 6, 3)))
    assert not any(c.startswith("p_") for c in rows[0])  # the picked prices are not columns


def test_design_reprice_counts_tasks_and_calls_not_repriced(reprice_con, view_db) -> None:
    view_db.insert(reprice_con, "calls", BASE | _CLS | dict(
        call_id="a4", task_id="t1", seed=1, model="m1", cache_hit=False, cost_usd=0.04, prompt_fresh_tokens=1000,
        cached_tokens=0, cache_write_tokens=0, completion_visible_tokens=0, reasoning_tokens=0))
    got = {r["price_table"]: r for r in view_db.rows(reprice_con, "SELECT * FROM design_reprice")}
    assert set(got) == {"t1", "t2", "t3"}
    # a4 re-prices to 1000·1 = 1000 (t1), 1000·2 = 2000 (t2), NULL (t3); cells (t1, 0), (t2, 0), (t1, 1): 3 tasks
    # (a1 and a2 share a cell), 4 calls
    t1, t2, t3 = got["t1"], got["t2"], got["t3"]
    assert (t1["calls"], t1["tasks"], t1["calls_not_repriced"]) == (4, 3, 1)  # a3
    assert (t3["calls"], t3["tasks"], t3["calls_not_repriced"]) == (4, 3, 3)  # a1, a3, a4
    assert t1["recorded_usd"] == pytest.approx(0.01 + 0.02 + 0.0 + 0.04)
    assert t1["recorded_spent_usd"] == pytest.approx(0.01 + 0.04)  # a2 is a cache hit
    assert t1["repriced_usd"] == pytest.approx((282.5 + 955 + 1000) * 1e-6)
    assert t1["repriced_spent_usd"] == pytest.approx((282.5 + 1000) * 1e-6)
    assert t1["repriced_usd_per_task"] == pytest.approx((282.5 + 955 + 1000) * 1e-6 / 3)
    assert t2["repriced_usd_per_task"] == pytest.approx((470 + 158 + 2000) * 1e-6 / 3)
    assert t3["repriced_usd"] == pytest.approx(185e-6)  # only a2 re-prices under t3
    assert t3["repriced_usd_per_task"] == pytest.approx(185e-6 / 3)
    assert (t1["purpose"], t1["design"], t1["run_id"]) == ("design", "a", "r")
