"""paired_tests' row builders called directly on hand-built view frames (no store): a recording
stand-in for the suite's test, for the McNemar sign-flip, for needs-n and for the verdict, so every
argument the module passes (the differences, the resample count, the documented seed key, the Holm
level, the interval) and every column it writes is checked against values worked by hand.

Fast on purpose (milliseconds a test): these are the tests the mutation run of
``masbench/harness/paired_tests.py`` uses (benchmarks/mutation.py)."""

from __future__ import annotations

import itertools
import math
import threading
import zlib
from dataclasses import dataclass
from typing import Any, cast

import duckdb
import numpy as np
import pandas as pd
import pytest

import masbench.harness.paired_reads as paired_reads
import masbench.harness.paired_tests as pt
import masbench.harness.stats.clustered as clustered
from masbench.harness.stats.clustered import CLUSTERED_MCNEMAR, clustered_mcnemar, comparison_seed
from masbench.store.rows import PairedTestRow
from masbench.harness.stats.tests import TestResult
from masbench.harness.stats.tests.sign_flip import SignFlip
from masbench.spec import StatsSpec

SPEC = StatsSpec(bootstrap=100, alpha=0.05, power=0.8, seed=7, match="tokens")


def _key(*parts: str) -> int:
    """The documented seed of a comparison: stats.seed · 1 000 003 + CRC-32 of its parts joined by '|'."""
    return 7 * 1_000_003 + zlib.crc32("|".join(parts).encode())


@dataclass(frozen=True)
class Fake(TestResult):
    """A result whose p is given and whose interval at level L is mean ± L (so the level shows)."""

    p: float = 1.0

    @property
    def p_value(self) -> float:
        return self.p

    def ci(self, level: float = 0.95) -> tuple[float, float]:
        return self.mean - level, self.mean + level


class Recorder:
    """Stands in for a registered test (and for SignFlip): records every call; p by the mean."""

    name, method = "fake", "fake method"

    def __init__(self, p_of: dict[float, float]):
        self.p_of, self.calls = p_of, []

    def __call__(self):  # used as the SignFlip class: SignFlip() gives this recorder
        return self

    def run(self, diffs, *, resamples=2000, seed=0, lattice="none"):
        d = np.asarray(diffs, float)
        self.calls.append(dict(diffs=d.tolist(), resamples=resamples, seed=seed, lattice=lattice))
        sd = float(d.std(ddof=1)) if len(d) > 1 else math.nan
        return Fake(float(d.mean()), sd, len(d), self.p_of[round(float(d.mean()), 9)])


@pytest.fixture
def spies(monkeypatch):
    """The suite's test, SignFlip, n_range and decide replaced by recorders (p by mean: see each test)."""
    test, flip = Recorder({}), Recorder({})
    need_calls, decide_calls = [], []
    need_out: dict = {}

    def n_range(interval, sd, alpha, power):
        need_calls.append((interval, sd, alpha, power))
        return need_out.get(round(interval[0] + 0.5, 9), (11, 22))

    def decide(*args, **kw):
        decide_calls.append((args, kw))
        return f"v{len(decide_calls)}", f"r{len(decide_calls)}"

    monkeypatch.setattr(pt, "get_test", lambda name: test if name == SPEC.test else None)
    monkeypatch.setattr(clustered, "SignFlip", flip)
    monkeypatch.setattr(pt, "n_range", n_range)
    monkeypatch.setattr(pt, "decide", decide)
    return dict(test=test, flip=flip, need=need_calls, need_out=need_out, decide=decide_calls)


def _tasks(cells: list[dict]) -> pd.DataFrame:
    """paired_task_diffs rows: one per task of each cell (axis, axis_value, unit, design, diff, ...)."""
    rows = []
    for c in cells:
        n = len(c["diff"])
        for t in range(n):
            rows.append(dict(run_id="r", axis=c.get("axis", "all"), axis_value=c.get("value"), design=c["design"],
                             unit=c.get("unit", "tokens"), task_id=f"t{t}", position=c.get("position", "within"),
                             k_match=c.get("k_match", 2.0), k_max=c.get("k_max", 4),
                             seeds=c.get("seeds", [1] * n)[t], diff=c["diff"][t],
                             diff_cot=c.get("diff_cot", c["diff"])[t], cot_is_design=c.get("cot_is_design", False),
                             cost=c.get("cost", [1.0] * n)[t], sample_cost=c.get("sample_cost", [1.0] * n)[t],
                             slope=c.get("slope", 0.0)))
    df = pd.DataFrame(rows)
    df["axis_value"] = df["axis_value"].astype("Int32")
    return df


# --- the small helpers ---------------------------------------------------------------------------

def test_seed_key_is_the_suite_seed_and_the_parts():
    assert comparison_seed(7, "all", pd.NA, "tokens", "x") == _key("all", "<NA>", "tokens", "x")
    assert comparison_seed(0) == zlib.crc32(b"") == 0 and comparison_seed(1) == 1_000_003
    assert comparison_seed(2, 3) == 2_000_006 + zlib.crc32(b"3")


def test_f_reads_numbers_only():
    assert pt._f(3) == 3.0 and pt._f("0.25") == 0.25 and pt._f(pd.NA) is None and pt._f(None) is None
    assert pt._f(float("nan")) is None and pt._f("k") is None and pt._f(np.float64(1.5)) == 1.5


def test_resamples_for_by_hand():
    assert pt.resamples_for(0, SPEC) == 400 == pt.resamples_for(1, SPEC)  # 20·1/0.05
    assert pt.resamples_for(2, SPEC) == 800 and pt.resamples_for(3, StatsSpec(bootstrap=100, alpha=0.07)) == 858
    assert pt.resamples_for(2, StatsSpec(bootstrap=5000)) == 5000  # stats.bootstrap is the floor
    assert pt.resamples_for(501, SPEC) == 200_000 and pt.resamples_for(499, SPEC) == 199_600  # the cap: 200 000


def test_verdict_unit():
    spec = StatsSpec(match="budget")
    assert pt.verdict_unit(pd.DataFrame({"unit": ["tokens", "calls"]}), spec) == "tokens"
    assert pt.verdict_unit(pd.DataFrame({"unit": ["tokens", "budget"]}), spec) == "budget"
    assert pt.verdict_unit(pd.DataFrame({"unit": ["tokens"]}), StatsSpec(match="calls")) == "calls"


def test_task_diffs_fold_in_the_matched_costs_uncertainty():
    # c = (1, 3), s = (2, 2): c̄ = s̄ = 2; influence = (c − c̄)/s̄ − c̄/s̄²·(s − s̄) = (−½, ½); slope 0.2
    d = pd.DataFrame({"diff": [0.5, -0.5], "cost": [1.0, 3.0], "sample_cost": [2.0, 2.0], "slope": [0.2, 0.2]})
    assert pt.task_diffs(d).tolist() == pytest.approx([0.6, -0.6])
    # sample costs varying: c = (2, 2), s = (1, 3): influence = 0 − ½·(−1, 1) = (½, −½)
    d2 = d.assign(cost=[2.0, 2.0], sample_cost=[1.0, 3.0])
    assert pt.task_diffs(d2).tolist() == pytest.approx([0.4, -0.4])
    # a slope unknown for any row: no adjustment
    assert pt.task_diffs(d.assign(slope=[0.2, math.nan])).tolist() == [0.5, -0.5]


def test_families():
    df = _tasks([dict(design="x", diff=[1.0]), dict(design="x", diff=[1.0], unit="calls"),
                 dict(design="x", diff=[0.0], axis="depth", value=1), dict(design="x", diff=[0.0], axis="depth", value=2),
                 dict(design="x", diff=[0.0], axis="depth", value=2, unit="calls"),
                 dict(design="x", diff=[0.5], axis="all", value=3)])
    got = [(axis, sorted(set(zip(f["axis_value"].astype(object).where(f["axis_value"].notna(), None), f["unit"]))))
           for axis, f in pt._families(df, ["unit"])]
    # "all": one family per (axis value, unit), NA last; "depth": one per unit across the values
    assert got == [("all", [(3, "tokens")]), ("all", [(None, "calls")]), ("all", [(None, "tokens")]),
                   ("depth", [(2, "calls")]), ("depth", [(1, "tokens"), (2, "tokens")])]
    # no extra keys: an axis family is every row of the axis
    got = [(axis, len(f)) for axis, f in pt._families(df, [])]
    assert got == [("all", 1), ("all", 2), ("depth", 3)]
    assert pt.family_of("all") == "group" and pt.family_of("depth") == "axis"
    # the axes come sorted whatever the input order (here "src" rows before "all" rows)
    df2 = _tasks([dict(design="x", diff=[0.0], axis="src"), dict(design="x", diff=[0.0], axis="all"),
                  dict(design="x", diff=[0.0], axis="depth", value=1)])
    assert [axis for axis, _ in pt._families(df2, ["unit"])] == ["all", "depth", "src"]


def test_base_row_every_column():
    res = Fake(0.25, 0.5, 8, p=0.03)
    row = pt._base("r", "depth", 3, "x", "curve", "tokens", SPEC, res, "m", 123, n_cells=9)
    assert row.as_dict() == dict(run_id="r", axis="depth", axis_value=3, design="x", against="curve", unit="tokens",
                       position=None, k_match=None, n_tasks=8, n_cells=9, mean_diff=0.25, sd_task=0.5,
                       ci_lo=0.25 - 0.95, ci_hi=0.25 + 0.95, p_value=0.03, method="m", n_discordant_plus=None,
                       n_discordant_minus=None, family_size=1, p_holm=0.03, level_holm=0.05, ci_lo_holm=0.25 - 0.95,
                       ci_hi_holm=0.25 + 0.95, n_needed=None, n_needed_hi=None, family=None, verdict=None,
                       reason=None, is_verdict=False, bootstrap=123, alpha=0.05, power=0.8)
    assert type(row["axis_value"]) is int
    row = pt._base("r", "all", pd.NA, "x", "cot", "-", SPEC, Fake(0.0, math.nan, 1, p=1.0), "m", 5)
    assert row["axis_value"] is None and row["sd_task"] is None and row["n_cells"] is None


def test_apply_holm_ranks_ties_by_t_then_label():
    spec = StatsSpec(alpha=0.06)
    rows = [PairedTestRow(run_id="r", design=d, against="curve", axis_value=None, axis="all", p_value=p) for d, p in
            [("a", 0.02), ("b", 0.01), ("c", 0.02), ("d", 0.02)]]
    # a, c, d tie at 0.02: c has the largest t (sd 0.1), a and d tie on t (sd 1) → label: a before d
    res: list[TestResult] = [Fake(0.5, 1.0, 4), Fake(0.5, 1.0, 4), Fake(0.5, 0.1, 4), Fake(0.5, 1.0, 4)]
    pt._apply_holm(rows, spec, res)
    # ranks: b 0 (0.06/4), c 1 (0.06/3), a 2 (0.06/2), d 3 (0.06/1); adjusted 4·0.01, 3·0.02, 2·0.02 → 0.06, 0.06
    lv = {"a": 0.03, "b": 0.015, "c": 0.02, "d": 0.06}
    for r in rows:
        assert r["level_holm"] == pytest.approx(lv[str(r["design"])])
        assert (r["ci_lo_holm"], r["ci_hi_holm"]) == pytest.approx((0.5 - (1 - lv[str(r["design"])]), 0.5 + 1 - lv[str(r["design"])]))
        assert r["family_size"] == 4 and r["family"] == "group"
    assert [r["p_holm"] for r in rows] == pytest.approx([0.06, 0.04, 0.06, 0.06])
    # the tie label is design|against|axis_value: against and the value rank equal-t rows too
    rows = [PairedTestRow(run_id="r", design="x", against=a, axis_value=v, axis="depth", p_value=0.5)
            for a, v in [("z", 1), ("b", 2), ("b", 1)]]
    pt._apply_holm(rows, spec, [Fake(0.5, 1.0, 4)] * 3)
    assert [r["level_holm"] for r in rows] == pytest.approx([0.06, 0.03, 0.02]) and rows[0]["family"] == "axis"
    # joined by '|' (124 > 'Y'): "xY|…" sorts before "x|…", so xY is tested first at α/2
    rows = [PairedTestRow(run_id="r", design=d, against="curve", axis_value=None, axis="all", p_value=0.5)
            for d in ("x", "xY")]
    pt._apply_holm(rows, spec, [Fake(0.5, 1.0, 4)] * 2)
    assert [r["level_holm"] for r in rows] == pytest.approx([0.06, 0.03])


# --- the rows against the curve ------------------------------------------------------------------

def _curve_frame() -> pd.DataFrame:
    return _tasks([
        dict(design="x", diff=[0.5, 0.3], position="within", k_match=1.5, k_max=4, seeds=[2, 1]),
        dict(design="y", diff=[0.1, 0.1], position="above", k_match="nan", k_max=8),
        dict(design="b", diff=[0.2, 0.4]),  # named cot-sc: a baseline, not in the family
        dict(design="x", diff=[0.2, 0.6], unit="calls", k_max=4,
             cost=[1.0, 3.0], sample_cost=[2.0, 2.0], slope=0.5),  # tested on (0.45, 0.35)
        dict(design="y", diff=[-0.3, -0.1], unit="calls"),
        dict(design="b", diff=[0.0, 0.0], unit="calls"),
    ])


def test_curve_rows_pass_the_documented_arguments(spies):
    spies["test"].p_of.update({0.4: 0.01, 0.1: 0.02, 0.3: 0.04, -0.2: 0.5, 0.0: 0.9})
    spies["need_out"][0.1] = (30, None)  # y tokens: n from its 50% interval (0.1 ± 0.5), unbounded above
    names = {"b": "cot-sc", "x": "X", "y": "Y"}
    rows = pt.curve_rows("r", _curve_frame(), names, SPEC)
    # two non-baseline designs a family: B = max(10, 20·2/0.05) = 800
    calls = spies["test"].calls
    assert [c["resamples"] for c in calls] == [800] * 6
    assert [c["seed"] for c in calls] == [_key("all", "<NA>", u, d) for u in ("calls", "tokens") for d in "bxy"]
    assert [c["diffs"] for c in calls] == [[0.0, 0.0], pytest.approx([0.45, 0.35]), [-0.3, -0.1],
                                           [0.2, 0.4], [0.5, 0.3], [0.1, 0.1]]
    assert [c["lattice"] for c in calls] == ["none"] * 6  # the suite's test is given no lattice
    # order: per family (unit calls, then tokens) the Holm family, then the baselines
    assert [(r["unit"], r["design"]) for r in rows] == [("calls", "x"), ("calls", "y"), ("calls", "b"),
                                                        ("tokens", "x"), ("tokens", "y"), ("tokens", "b")]
    by = {(r["unit"], r["design"]): r for r in rows}
    x = by[("tokens", "x")]
    assert x["position"] == "within" and x["k_match"] == 1.5 and x["n_cells"] == 3 and "k_max" not in x
    assert x["against"] == "curve" and x["method"] == "fake method" and x["bootstrap"] == 800 and x["run_id"] == "r"
    assert by[("tokens", "y")]["k_match"] is None and by[("tokens", "y")]["position"] == "above"
    # Holm in the tokens family: x (p 0.4→0.01) first at α/2, y (0.02) at α
    assert (x["p_holm"], x["level_holm"], x["family_size"], x["family"]) == (0.02, 0.025, 2, "group")
    y = by[("tokens", "y")]
    assert (y["p_holm"], y["level_holm"]) == (0.02, 0.05)
    # baselines untouched by Holm and undecided
    b = by[("tokens", "b")]
    assert (b["family_size"], b["p_holm"], b["level_holm"], b["verdict"], b["family"], b["is_verdict"]) == \
        (1, 0.04, 0.05, None, None, False)
    assert b["n_needed"] is None and "k_max" not in b
    # needs n: from the 50% interval, the sd, the design's Holm level and the power
    flat = [(*i, sd, a, pw) for i, sd, a, pw in spies["need"]]
    assert flat == [pytest.approx(v) for v in [(-0.1, 0.9, math.sqrt(0.005), 0.025, 0.8),
                                               (-0.7, 0.3, math.sqrt(0.02), 0.05, 0.8),
                                               (-0.1, 0.9, math.sqrt(0.02), 0.025, 0.8), (-0.4, 0.6, 0.0, 0.05, 0.8)]]
    assert (x["n_needed"], x["n_needed_hi"], y["n_needed"], y["n_needed_hi"]) == (11, 22, 30, None)
    # the verdict: decide(position, mean, Holm interval, p_holm, α, n_needed, n_tasks, k_max, n_needed_hi, unbounded)
    got = [(a[0], a[1], *a[2], *a[3:]) for a, _ in spies["decide"][2:]]
    assert [g[0] for g in got] == ["within", "above"]
    assert [g[1:] for g in got] == [pytest.approx((0.4, 0.4 - 0.975, 0.4 + 0.975, 0.02, 0.05, 11, 2, 4)),
                                    pytest.approx((0.1, 0.1 - 0.95, 0.1 + 0.95, 0.02, 0.05, 30, 2, 8))]
    assert [kw for _, kw in spies["decide"]] == [dict(n_needed_hi=22, unbounded=False)] * 3 + \
        [dict(n_needed_hi=None, unbounded=True)]
    assert [(r["verdict"], r["reason"]) for r in rows if r["design"] != "b"] == \
        [("v1", "r1"), ("v2", "r2"), ("v3", "r3"), ("v4", "r4")]
    # the verdict rows: the suite's match unit (tokens) only
    assert [r["is_verdict"] for r in rows] == [False, False, False, True, True, False]


def test_curve_rows_one_task_and_no_need(spies):
    spies["test"].p_of.update({0.5: 0.3, 0.0: 1.0})
    spies["need_out"][0.0] = None  # needs-n None: no n claimed (and not unbounded)
    df = _tasks([dict(design="x", diff=[0.5]), dict(design="z", diff=[0.0, 0.0])])
    rows = pt.curve_rows("r", df, {}, SPEC)
    assert len(spies["need"]) == 1  # one task: needs-n is not asked
    assert [(r["n_needed"], r["n_needed_hi"]) for r in rows] == [(None, None), (None, None)]
    assert [kw for _, kw in spies["decide"]] == [dict(n_needed_hi=None, unbounded=False)] * 2
    assert [r["is_verdict"] for r in rows] == [True, True] and rows[0]["k_match"] == 2.0


def test_curve_rows_only_baselines_and_the_budget_fallback(spies):
    spies["test"].p_of.update({0.5: 0.3})
    df = _tasks([dict(design="cot", diff=[0.5, 0.5]), dict(design="cot-sc", diff=[0.5, 0.5])])
    rows = pt.curve_rows("r", df, {}, StatsSpec(match="budget", bootstrap=100))
    assert [c["resamples"] for c in spies["test"].calls] == [400, 400]  # m = 0 counts as 1
    assert [r["verdict"] for r in rows] == [None, None] and spies["decide"] == []
    # a design labelled with a baseline's name counts as one; budget falls back to tokens without budget rows
    df = _tasks([dict(design="d", diff=[0.5, 0.5]), dict(design="e", diff=[0.5, 0.5])])
    spies["test"].calls.clear()
    rows = pt.curve_rows("r", df, {"d": "cot", "e": "mine"}, StatsSpec(match="budget", bootstrap=100))
    assert [c["resamples"] for c in spies["test"].calls] == [400, 400]
    assert [(r["design"], r["is_verdict"], r["verdict"]) for r in rows] == [("e", True, "v1"), ("d", False, None)]


def test_curve_rows_per_axis_family_spans_the_values(spies):
    spies["test"].p_of.update({0.5: 0.01, 0.25: 0.02, 0.0: 0.5})
    df = _tasks([dict(design="x", diff=[0.5, 0.5], axis="depth", value=1),
                 dict(design="x", diff=[0.25, 0.25], axis="depth", value=2),
                 dict(design="y", diff=[0.0, 0.0], axis="depth", value=2)])
    rows = pt.curve_rows("r", df, {}, SPEC)
    assert [c["resamples"] for c in spies["test"].calls] == [1200] * 3  # m = 3 across the values
    assert [c["seed"] for c in spies["test"].calls] == [_key("depth", "1", "tokens", "x"),
                                                        _key("depth", "2", "tokens", "x"),
                                                        _key("depth", "2", "tokens", "y")]
    assert [(r["axis_value"], r["design"], r["level_holm"], r["family_size"], r["family"]) for r in rows] == \
        [(1, "x", 0.05 / 3, 3, "axis"), (2, "x", 0.025, 3, "axis"), (2, "y", 0.05, 3, "axis")]


# --- against CoT and between designs --------------------------------------------------------------

def test_cot_rows(spies):
    spies["test"].p_of.update({0.25: 0.04})
    spies["flip"].p_of.update({0.5: 0.01, 0.25: 0.02})
    df = _tasks([
        # the first unit's rows only (calls); the cot design itself is not tested against cot
        # as the view orders them (design, unit, task): the first row's unit is calls, the second's tokens
        dict(design="cot", diff=[9.0], diff_cot=[0.0], unit="calls", cot_is_design=True),
        dict(design="cot", diff=[9.0], diff_cot=[0.0], unit="tokens", cot_is_design=True),
        dict(design="x", diff=[9.0, 9.0], diff_cot=[1.0, 0.0], unit="calls", cot_is_design=True, seeds=[2, 4]),
        dict(design="y", diff=[9.0, 9.0], diff_cot=[0.5, 0.0], unit="calls", cot_is_design=True, seeds=[2, 2]),
        dict(design="x", diff=[9.0, 9.0], diff_cot=[0.3, 0.3], unit="tokens"),
    ]).sort_values(["design", "unit", "task_id"], kind="stable")
    rows = pt._cot_rows("r", df, SPEC)
    flips = spies["flip"].calls
    assert [c["diffs"] for c in flips] == [[1.0, 0.0], [0.5, 0.0]] and spies["test"].calls == []
    assert [c["lattice"] for c in flips] == [4, 2] and [c["resamples"] for c in flips] == [800, 800]
    assert [c["seed"] for c in flips] == [_key("all", "<NA>", "cot", "x"), _key("all", "<NA>", "cot", "y")]
    assert [(r["design"], r["against"], r["unit"], r["n_cells"], r["method"], r["n_discordant_plus"],
             r["n_discordant_minus"], r["bootstrap"]) for r in rows] == \
        [("x", "cot", "-", 6, CLUSTERED_MCNEMAR, 1, 0, 800), ("y", "cot", "-", 4, CLUSTERED_MCNEMAR, 1, 0, 800)]
    assert [(r["p_holm"], r["level_holm"], r["family_size"]) for r in rows] == [(0.02, 0.025, 2), (0.02, 0.05, 2)]
    # no cot design (or not on every row): the suite's test on the differences against the curve's maj@1
    df = _tasks([dict(design="x", diff=[9.0, 9.0], diff_cot=[0.5, 0.0], cot_is_design=False),
                 dict(design="x", diff=[9.0, 9.0], diff_cot=[0.0, 0.5], axis="depth", value=1, seeds=[1, 3])])
    df.loc[3, "cot_is_design"] = True  # one row of the depth cell: not all
    spies["test"].p_of.update({0.25: 0.04})
    rows = pt._cot_rows("r", df, SPEC)
    assert [c["seed"] for c in spies["test"].calls] == [_key("all", "<NA>", "cot", "x"), _key("depth", "1", "cot", "x")]
    assert [c["resamples"] for c in spies["test"].calls] == [400, 400]
    assert [(r["method"], r["n_discordant_plus"], r["n_cells"], r["axis"], r["axis_value"]) for r in rows] == \
        [("fake method", None, 2, "all", None), ("fake method", None, 4, "depth", 1)]
    assert pt._cot_rows("r", df.iloc[:0], SPEC) == []


def test_cot_rows_family_counts_every_non_cot_design(spies):
    spies["test"].p_of.update({0.5: 0.01})
    df = _tasks([dict(design=d, diff=[0.0, 0.0], diff_cot=[0.5, 0.5]) for d in ("a", "cot-sc", "b")])
    rows = pt._cot_rows("r", df, SPEC)
    assert [c["resamples"] for c in spies["test"].calls] == [1200] * 3 and [r["family_size"] for r in rows] == [3] * 3


def _pairs(cells: list[tuple]) -> pd.DataFrame:
    """design_pair_diffs rows: (axis, axis_value, a, b, [(task, diff), ...])."""
    rows = [dict(run_id="r", axis=ax, axis_value=v, design_a=a, design_b=b, task_id=t, seed=i, diff=d)
            for ax, v, a, b, obs in cells for i, (t, d) in enumerate(obs)]
    df = pd.DataFrame(rows)
    df["axis_value"] = df["axis_value"].astype("Int32")
    return df


def test_pair_rows(spies):
    spies["flip"].p_of.update({0.75: 0.01, 0.5: 0.02, 0.25: 0.02})
    df = _pairs([
        ("all", None, "a", "b", [("t0", 1.0), ("t0", 0.0), ("t1", 1.0), ("t1", 1.0)]),  # per task ½, 1 (2 seeds)
        ("all", None, "b", "a", [("t0", -1.0), ("t1", -1.0)]),  # the mirror pair: left out
        ("all", None, "a", "c", [("t0", 1.0), ("t1", 0.0), ("t2", 0.0), ("t3", 1.0)]),
        ("depth", 2, "a", "b", [("t0", 1.0), ("t1", 0.0), ("t1", -1.0)]),  # per task 1, −½
    ])
    rows = pt._pair_rows("r", df, SPEC)
    flips = spies["flip"].calls
    assert [c["diffs"] for c in flips] == [[0.5, 1.0], [1.0, 0.0, 0.0, 1.0], [1.0, -0.5]]
    assert [c["lattice"] for c in flips] == [2, 1, 2]
    assert [c["resamples"] for c in flips] == [800, 800, 400]
    assert [c["seed"] for c in flips] == [_key("all", "<NA>", "a", "b"), _key("all", "<NA>", "a", "c"),
                                          _key("depth", "2", "a", "b")]
    assert [(r["design"], r["against"], r["unit"], r["n_cells"], r["n_tasks"], r["n_discordant_plus"],
             r["n_discordant_minus"], r["axis_value"]) for r in rows] == \
        [("a", "b", "-", 4, 2, 2, 0, None), ("a", "c", "-", 4, 4, 2, 0, None), ("a", "b", "-", 3, 2, 1, 1, 2)]
    assert [(r["p_holm"], r["level_holm"], r["family_size"], r["family"]) for r in rows] == \
        [(0.02, 0.025, 2, "group"), (0.02, 0.05, 2, "group"), (0.02, 0.05, 1, "axis")]
    assert rows[0]["method"] == CLUSTERED_MCNEMAR and rows[0]["bootstrap"] == 800


def test_clustered_mcnemar_is_the_exact_sign_flip_on_the_seed_lattice():
    d = np.array([1.0, 0.5, 0.5, -0.5, 0.0])
    res, kw = clustered_mcnemar(d, np.array([1, 2, 2, 2, 1]), 50, 3)
    assert kw == dict(method=CLUSTERED_MCNEMAR, n_discordant_plus=3, n_discordant_minus=1)
    # by enumeration of the 2^5 sign vectors (zeros flip to zero): sums ≥ 1.5 or ≤ −1.5 in 2·(#≥1.5)
    sums = [sum(s * x for s, x in zip(signs, d)) for signs in itertools.product([1, -1], repeat=5)]
    assert res.p_value == pytest.approx(min(1.0, 2 * sum(s >= 1.5 - 1e-12 for s in sums) / 32))


def test_the_monte_carlo_seed_key_is_the_documented_one():
    """Real SignFlip, B < 2^n (Monte-Carlo): the row's p is the one drawn with the documented key, and
    another key gives another p (so the key is pinned, not just any reproducible seed)."""
    rng = np.random.default_rng(0)
    d = rng.choice([0.6, -0.4, 0.6, 0.1], size=24)
    df = _tasks([dict(design="x", diff=list(d)), dict(design="x", diff=list(d), axis="depth", value=3)])
    rows = pt.curve_rows("r", df, {}, SPEC)
    for r, key in zip(rows, [_key("all", "<NA>", "tokens", "x"), _key("depth", "3", "tokens", "x")]):
        want = SignFlip().run(d, resamples=400, seed=key)
        assert r["p_value"] == want.p_value and (r["ci_lo"], r["ci_hi"]) == want.ci(0.95)
        assert SignFlip().run(d, resamples=400, seed=key + 1).ci(0.95) != want.ci(0.95)


class FrameStore:
    """A real DuckDB connection whose paired views are the test's frames (``tasks_view``,
    ``pairs_view``, under the run's id; the patched view functions read them a slice at a time) and
    whose ``results`` give the design names, the axes and the task ids. Records every statement
    (case-folded, whitespace collapsed), and each family's slice reads with their ORDER BY."""

    def __init__(self, tasks: pd.DataFrame, pairs: pd.DataFrame, names: list[tuple[str, str]], run_id: str = "run9"):
        self.con, self.lock = duckdb.connect(), threading.RLock()
        self.log: list[tuple[str, Any]] = []
        self.reads: list[tuple[str, dict]] = []
        """Each slice read of a family: the view and its parameters."""
        self.orders: list[str] = []
        """Each slice read's ORDER BY."""
        self.settings: list[str] = []
        """DuckDB settings read and set (kept apart from ``log``)."""
        for name, f in (("tasks_view", tasks), ("pairs_view", pairs)):
            self.con.register("frame", f.assign(run_id=run_id))
            self.con.execute(f"CREATE TABLE {name} AS SELECT * FROM frame")
            self.con.unregister("frame")
        self.con.execute("CREATE TABLE paired_tests (run_id VARCHAR)")  # the run's old rows: deleted
        self.con.execute("CREATE TABLE design_names (design VARCHAR, design_name VARCHAR)")
        self.con.executemany("INSERT INTO design_names VALUES (?, ?)", names or [("z", "z")])
        self.con.execute("CREATE TABLE results AS SELECT DISTINCT t.run_id, n.design, n.design_name, t.task_id, "
                         "nullif(t.axis, 'all') AS axis, 'all' AS source FROM (SELECT run_id, task_id, axis FROM "
                         "tasks_view UNION ALL SELECT run_id, task_id, axis FROM pairs_view) t, design_names n")
        self.names = names

    def sql(self, q, params=None):
        q = " ".join(q.casefold().split())
        if q.startswith(("set ", "select current_setting")):
            self.settings.append(q)
        else:
            self.log.append((q, params))
        if q.startswith("select design, any_value(design_name) from results") and not self.names:
            return []
        return self.con.execute(q, params or []).fetchall()

    def arrays(self, q, params=None):
        q = " ".join(q.casefold().split())
        for view in ("tasks_view", "pairs_view"):
            if f"from (select * from {view} where" in q:
                self.reads.append(("paired_task_diffs" if view == "tasks_view" else "design_pair_diffs", params))
                self.orders.append(q.rsplit(" order by ", 1)[1])
        return self.con.execute(q, params or []).fetchnumpy()


class Writer:
    added: list = []
    flushed = 0

    def __init__(self, store):
        Writer.added, Writer.flushed = [], 0

    def put(self, row):
        Writer.added.append((row.TABLE, row))

    def flush(self):
        Writer.flushed += 1


def test_compute_paired_reads_the_views_in_order_and_writes_every_row(spies, monkeypatch):
    monkeypatch.setattr(pt, "StoreWriter", Writer)
    spies["test"].p_of.update({0.5: 0.01, 0.25: 0.02})
    spies["flip"].p_of.update({0.5: 0.03})

    class Inf(Recorder):  # a registered test may give an unbounded interval: stored as NULL
        def run(self, diffs, **kw):
            r = super().run(diffs, **kw)
            return Fake(r.mean, r.sd, r.n, r.p_value) if r.mean != 0.25 else InfFake(r.mean, r.sd, r.n, r.p_value)

    @dataclass(frozen=True)
    class InfFake(Fake):
        def ci(self, level=0.95):
            return -math.inf, math.inf

    inf = Inf(spies["test"].p_of)
    monkeypatch.setattr(pt, "get_test", lambda name: inf)
    tasks = _tasks([dict(design="b", diff=[0.5, 0.5], diff_cot=[0.5, 0.5]),
                    dict(design="x", diff=[0.5, 0.5], diff_cot=[0.25, 0.25])])
    pairs = _pairs([("all", None, "x", "y", [("t0", 1.0), ("t1", 0.0)])])
    # the views are the frames, read a slice at a time; the matched points are computed once
    monkeypatch.setattr(pt, "_task_diffs", lambda cells: f"SELECT * FROM tasks_view WHERE {cells}")
    monkeypatch.setattr(pt, "design_pair_diffs", lambda cells: f"SELECT * FROM pairs_view WHERE {cells}")
    monkeypatch.setattr(paired_reads, "paired_matches", lambda: "SELECT 'run9' AS run_id, 1 AS k_lo")
    st = FrameStore(tasks, pairs, [("x", "X"), ("b", "cot-sc")])  # b: the CoT-SC baseline by its name
    assert pt.compute_paired(cast(Any, st), "run9", SPEC) == 5
    # the matched points first, then the names, the axes and the run's tasks cut in slices: here one
    assert st.log[0] == ("create or replace temp table paired_matched as select * from (select 'run9' as run_id, 1 as "
                         "k_lo) where run_id = ?", ["run9"])
    assert st.log[1] == ("select design, any_value(design_name) from results where run_id = ? group by all", ["run9"])
    assert st.log[3][1] == ["run9", paired_reads.PAIRED_CHUNK_TASKS]
    # one family at a time: (axis, unit) against the curve, then an axis against CoT (the first
    # unit's rows), then an axis's design pairs; each cell's rows by task
    one = {"run_id": "run9", "axis": "all", "lo": "t0"}
    assert st.reads == [*(("paired_task_diffs", {**one, "unit": u}) for u in ("budget", "calls", "tokens", "usd")),
                        ("paired_task_diffs", {**one, "unit": "tokens"}), ("design_pair_diffs", one)]
    assert st.log[-1] == ("delete from paired_tests where run_id = ?", ["run9"])
    # each slice's rows by cell, then task (a pair's seeds by their difference)
    assert st.orders == ["axis_value, design, task_id"] * 5 + ["axis_value, design_a, design_b, task_id, diff"]
    # the matched points dropped: nothing temporary left in DuckDB
    assert st.con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary").fetchone() == (0,)
    # a slice of one task: each family read task by task (t0, then t1), the same rows written
    whole = [{c: r[c] for c in r.columns()} for _, r in Writer.added]
    monkeypatch.setattr(paired_reads, "PAIRED_CHUNK_TASKS", 1)
    spies["decide"].clear()  # the fake verdicts count decide's calls
    st = FrameStore(tasks, pairs, [("x", "X"), ("b", "cot-sc")])
    assert pt.compute_paired(cast(Any, st), "run9", SPEC) == 5
    assert [(v, p["unit"] if "unit" in p else None, p["lo"], p.get("hi")) for v, p in st.reads[:4]] == \
        [("paired_task_diffs", "budget", "t0", "t1"), ("paired_task_diffs", "budget", "t1", None),
         ("paired_task_diffs", "calls", "t0", "t1"), ("paired_task_diffs", "calls", "t1", None)]
    assert [{c: r[c] for c in r.columns()} for _, r in Writer.added] == whole
    monkeypatch.setattr(paired_reads, "PAIRED_CHUNK_TASKS", 5_000)
    # the families were read on one thread without insertion order, and the settings put back
    threads = st.con.execute("SELECT current_setting('threads')").fetchone()[0]
    assert st.settings[1:] == ["set threads = 1", "set preserve_insertion_order = false", f"set threads = {threads}",
                               "set preserve_insertion_order = true"]
    assert Writer.flushed == 1 and [t for t, _ in Writer.added] == ["paired_tests"] * 5
    rows = [r for _, r in Writer.added]
    assert [(r["run_id"], r["design"], r["against"]) for r in rows] == \
        [("run9", "x", "curve"), ("run9", "b", "curve"), ("run9", "b", "cot"), ("run9", "x", "cot"), ("run9", "x", "y")]
    # one non-baseline design against the curve: B = 400 (b is cot-sc by its stored name), x decided, b not
    assert [r["bootstrap"] for r in rows] == [400, 400, 800, 800, 400] and [r["verdict"] for r in rows[:2]] == ["v1", None]
    # x's cot row had the interval (−∞, ∞): NULL, every finite value kept
    assert (rows[3]["ci_lo"], rows[3]["ci_hi"], rows[3]["ci_lo_holm"], rows[3]["ci_hi_holm"]) == (None,) * 4
    assert rows[3]["mean_diff"] == 0.25 and rows[0]["ci_lo"] == 0.5 - 0.95 and rows[0]["method"] == "fake method"
    # nothing to test: the run's old rows are deleted and nothing is written
    Writer.added, Writer.flushed = [], 0
    st = FrameStore(tasks.iloc[:0], pairs.iloc[:0], [])
    assert pt.compute_paired(cast(Any, st), "run9") == 0 and Writer.flushed == 0 and Writer.added == [] and st.reads == []
    assert st.log[-1] == ("delete from paired_tests where run_id = ?", ["run9"])
    # only pairs: only the pair row, under the default spec (B = max(2000, 400))
    st = FrameStore(tasks.iloc[:0], pairs, [])
    assert pt.compute_paired(cast(Any, st), "run9") == 1 and Writer.added[0][1]["bootstrap"] == 2000
    # only tasks: no pair rows
    st = FrameStore(tasks, pairs.iloc[:0], [])
    assert pt.compute_paired(cast(Any, st), "run9", SPEC) == 4


def test_rows_come_sorted_whatever_the_input_order(spies):
    """Cells are taken in (axis value, design) order even from an unsorted frame."""
    spies["test"].p_of.update({0.5: 0.01, 0.25: 0.02, 0.0: 0.5})
    spies["flip"].p_of.update({0.5: 0.01, 1.0: 0.02})
    df = _tasks([dict(design=d, diff=[x, x], diff_cot=[x, x], axis="depth", value=v)
                 for d, x, v in [("y", 0.0, 2), ("x", 0.5, 2), ("x", 0.25, 1)]])
    assert [(r["axis_value"], r["design"]) for r in pt.curve_rows("r", df, {}, SPEC)] == [(1, "x"), (2, "x"), (2, "y")]
    assert [(r["axis_value"], r["design"]) for r in pt._cot_rows("r", df, SPEC)] == [(1, "x"), (2, "x"), (2, "y")]
    pairs = _pairs([("depth", 2, "b", "c", [("t0", 1.0)]), ("depth", 2, "a", "c", [("t0", 0.5)]),
                    ("depth", 1, "a", "b", [("t0", 1.0)])])
    assert [(r["axis_value"], r["design"], r["against"]) for r in pt._pair_rows("r", pairs, SPEC)] == \
        [(1, "a", "b"), (2, "a", "c"), (2, "b", "c")]


def test_pair_rows_take_each_unordered_pair_once(spies):
    spies["flip"].p_of.update({1.0: 0.01, 0.0: 1.0})
    pairs = _pairs([("all", None, "a", "b", [("t0", 1.0)]), ("all", None, "b", "a", [("t0", -1.0)]),
                    ("all", None, "a", "a", [("t0", 0.0)])])  # a design against itself: not a pair
    rows = pt._pair_rows("r", pairs, SPEC)
    assert [(r["design"], r["against"], r["family_size"]) for r in rows] == [("a", "b", 1)]


def test_stats_spec_of_a_stored_config():
    assert pt.stats_spec_of(None) == StatsSpec() == pt.stats_spec_of({}) == pt.stats_spec_of({"stats": None})
    assert pt.stats_spec_of({"stats": {"alpha": 0.1, "test": "student-t"}}) == StatsSpec(alpha=0.1, test="student-t")
    assert pt.stats_spec_of({"other": 1, "stats": {"seed": 3}}).seed == 3
