"""Write a run's paired tests and verdicts (``paired_tests``) from the store's paired views.

Every test reads *per-task* differences (``paired_task_diffs``: seeds averaged per task, so a
task's seeds count once). Per group (all tasks, each axis value / source) the harness tests:

- every design against the CoT-SC curve at its cost, for each cost unit the run recorded
  (``against = 'curve'``): the suite's fixed-n test (``stats.test``, default sign-flip:
  :mod:`.stats.tests`) on the per-task differences with the matched cost's uncertainty folded in
  (:mod:`.stats.matched`); Holm across the non-baseline designs of the family (per unit); the
  verdict (:mod:`.stats.decide`) on the suite's matching unit (``is_verdict``);
- every design against CoT (``against = 'cot'``): against the ``cot`` design the exact sign-flip
  test of the 0/1 pairs (McNemar clustered by task), else the suite's test against the curve's
  maj@1; Holm across the family's designs;
- every pair of designs (``against = <label>``): McNemar clustered by task (exact); Holm across
  the family's pairs.

Holm families: for ``axis = 'all'`` the designs of the group (``family = 'group'``); for a per-axis
group, every design at *every value* of that axis (``family = 'axis'``), so a per-axis table is
corrected across the values it shows. Ties in p are ranked by the larger |t| = |mean|/se first,
then the label (:func:`.stats.paired.holm_tiebreak`). The resample count is raised so the smallest
Holm level of a family is resolved: B ≥ 20·m/α (capped at :data:`MAX_RESAMPLES`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ..spec import StatsSpec
from ..store import Store, StoreWriter
from ..store.paired import UNITS, design_pair_diffs, paired_task_diffs
from ..store.rows import PairedTestRow
from .paired_reads import (COT_READ, CURVE_READ, PAIR_READ, PAIRED_CHUNK_TASKS, Cells, _by_value,
                           MATCHED_TABLE, _first_key, _lean_reads, _read_cells, slice_condition, task_slices)
from .stats.clustered import clustered_mcnemar, comparison_seed
from .stats.decide import decide
from .stats.matched import cost_adjusted
from .stats.paired import holm, holm_tiebreak
from .stats.power import n_range
from .stats.tests import TestResult, get_test

if TYPE_CHECKING:  # pandas is imported where frames are made (Store.df): a worker process never needs it
    import pandas as pd

BASELINES = ("cot", "cot-sc")
MAX_RESAMPLES = 200_000
"""The cap of the automatic resample count (at α = 0.05: families of up to 500 comparisons)."""
NEED_LEVEL = 0.5
"""The effect interval "needs n" is read from: the test's central 50% interval."""


def _f(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def resamples_for(m: int, spec: StatsSpec) -> int:
    """B for a family of m comparisons: at least ``stats.bootstrap`` and 20·m/α, at most the cap."""
    return max(spec.bootstrap, min(MAX_RESAMPLES, math.ceil(20 * max(m, 1) / spec.alpha)))


def family_of(axis: str) -> str:
    return "group" if axis == "all" else "axis"


def _apply_holm(rows: list[PairedTestRow], spec: StatsSpec, results: list[TestResult]) -> None:
    """Fill Holm columns of ``rows`` (one family) in place; ``results`` align with rows."""
    ties = [holm_tiebreak(r.t, f"{row.design}|{row.against}|{row.axis_value}") for row, r in zip(rows, results)]
    ps = [p for p in (row.p_value for row in rows) if p is not None]
    assert len(ps) == len(rows)  # every test row has its p-value (_base)
    adj, levels = holm(ps, spec.alpha, ties=ties)
    for row, r, pa, lv in zip(rows, results, adj, levels):
        row.ci_lo_holm, row.ci_hi_holm = r.ci(1 - lv)
        row.family_size, row.p_holm, row.level_holm, row.family = len(rows), pa, lv, family_of(row.axis)


def _base(run_id, axis, value, design, against, unit, spec: StatsSpec, res: TestResult, method: str,
          resamples: int, **kw) -> PairedTestRow:
    lo, hi = res.ci(0.95)
    import pandas as pd  # deferred: the frames this reads imported it; a worker's imports stay without it

    cols: dict[str, Any] = dict(method=method, **kw)
    return PairedTestRow(run_id=run_id, axis=axis, axis_value=None if pd.isna(value) else int(value), design=design,
                         against=against, unit=unit, n_tasks=res.n, mean_diff=res.mean,
                         sd_task=None if math.isnan(res.sd) else res.sd, ci_lo=lo, ci_hi=hi, p_value=res.p_value,
                         family_size=1, p_holm=res.p_value, level_holm=spec.alpha, ci_lo_holm=lo, ci_hi_holm=hi,
                         is_verdict=False, bootstrap=resamples, alpha=spec.alpha, power=spec.power, **cols)


def verdict_unit(tasks: pd.DataFrame, spec: StatsSpec) -> str:
    """The unit whose rows carry the verdict: ``stats.match``; ``budget`` falls back to tokens for
    a run that recorded no budget spend (an older store)."""
    if spec.match == "budget" and not (tasks["unit"] == "budget").any():
        return "tokens"
    return spec.match


def task_diffs(d: pd.DataFrame) -> np.ndarray:
    """A design's per-task differences against the curve with the matched cost's uncertainty."""
    return cost_adjusted(d["diff"].to_numpy(float), d["cost"].to_numpy(float), d["sample_cost"].to_numpy(float),
                         float(d["slope"].iloc[0]) if d["slope"].notna().all() else 0.0)


def _families(df: pd.DataFrame, extra: list[str]):
    """(axis, axis_value or None for an axis family, *extra) → rows: one Holm family each."""
    for axis, g in df.groupby("axis", sort=True):
        keys = ["axis_value", *extra] if axis == "all" else extra
        for key, f in (g.groupby(keys, dropna=False, sort=True) if keys else [((), g)]):
            yield axis, f


def curve_rows(run_id: str, tasks: pd.DataFrame, names: dict[str, str], spec: StatsSpec,
               unit_v: str | None = None) -> list[PairedTestRow]:
    """The rows against the curve (every unit) with Holm and the verdicts, under ``spec``'s test;
    ``unit_v``: the verdict's unit when ``tasks`` holds only part of the run (else read from it)."""
    unit_v = unit_v or verdict_unit(tasks, spec)
    out: list[PairedTestRow] = []
    for axis, fam in _families(tasks, ["unit"]):
        out += _curve_family(run_id, str(axis), *_frame_cells(fam, ["axis_value", "design"]), names, spec, unit_v)
    return out


def _frame_cells(fam: pd.DataFrame, keys: list[str]) -> Cells:
    """The cells of a family held in one frame."""
    return [k for k, _ in fam.groupby(keys, dropna=False, sort=True)], (
        d for _, d in fam.groupby(keys, dropna=False, sort=True))


def _curve_family(run_id: str, axis: str, keys: list[tuple], cells: Iterator[pd.DataFrame], names: dict[str, str],
                  spec: StatsSpec, unit_v: str) -> list[PairedTestRow]:
    """One family's rows against the curve (cells keyed (axis value, design)), Holm and verdicts."""
    test = get_test(spec.test)
    m = sum(names.get(str(design), str(design)) not in BASELINES for _, design in keys)
    b_f = resamples_for(m, spec)
    family: list[PairedTestRow] = []
    rest: list[PairedTestRow] = []
    fres: list[TestResult] = []
    k_max: list[int] = []
    for (value, design), d in zip(keys, cells):
        design, unit = str(design), str(d["unit"].iloc[0])
        res = test.run(task_diffs(d), resamples=b_f, seed=comparison_seed(spec.seed, axis, value, unit, design))
        row = _base(run_id, axis, value, design, "curve", unit, spec, res, test.method, b_f,
                    position=d["position"].iloc[0], k_match=_f(d["k_match"].iloc[0]),
                    n_cells=int(d["seeds"].sum()))
        if names.get(design, design) in BASELINES:
            rest.append(row)
        else:
            family.append(row)
            fres.append(res)
            k_max.append(int(d["k_max"].iloc[0]))
        del d  # let a cell's frame go before the next is read (a read family's cells come one by one)
    if family:
        _apply_holm(family, spec, fres)
    for r, res, k in zip(family, fres, k_max):
        lo, hi = r.ci_lo_holm, r.ci_hi_holm
        assert lo is not None and hi is not None and r.level_holm is not None and r.p_holm is not None \
            and r.n_tasks is not None  # set by _base and _apply_holm
        need = n_range(res.ci(NEED_LEVEL), res.sd, r.level_holm, spec.power) if res.n > 1 else None
        r.n_needed, r.n_needed_hi = need if need is not None else (None, None)
        r.verdict, r.reason = decide(str(r.position), res.mean, (lo, hi), r.p_holm,
                                     spec.alpha, r.n_needed, r.n_tasks, k, n_needed_hi=r.n_needed_hi,
                                     unbounded=r.n_needed is not None and r.n_needed_hi is None)
        r.is_verdict = r.unit == unit_v
    return family + rest


def _cot_rows(run_id: str, tasks: pd.DataFrame, spec: StatsSpec) -> list[PairedTestRow]:
    out: list[PairedTestRow] = []
    one_unit = tasks[tasks["unit"] == tasks["unit"].iloc[0]] if len(tasks) else tasks
    for axis, fam in _families(one_unit[one_unit["design"] != "cot"], []):
        out += _cot_family(run_id, str(axis), *_frame_cells(fam, ["axis_value", "design"]), spec)
    return out


def _cot_family(run_id: str, axis: str, keys: list[tuple], cells: Iterator[pd.DataFrame],
                spec: StatsSpec) -> list[PairedTestRow]:
    """One family's rows against CoT (cells keyed (axis value, design)), Holm applied."""
    test = get_test(spec.test)
    b_f = resamples_for(len(keys), spec)
    rows: list[PairedTestRow] = []
    results: list[TestResult] = []
    for (value, design), d in zip(keys, cells):
        diffs, sd = d["diff_cot"].to_numpy(float), comparison_seed(spec.seed, axis, value, "cot", design)
        kw: dict[str, Any]
        if bool(d["cot_is_design"].all()):
            res, counts = clustered_mcnemar(diffs, d["seeds"].to_numpy(), b_f, sd)
            kw = dict(counts)
        else:
            res, kw = test.run(diffs, resamples=b_f, seed=sd), dict(method=test.method)
        rows.append(_base(run_id, axis, value, str(design), "cot", "-", spec, res, resamples=b_f,
                          n_cells=int(d["seeds"].sum()), **kw))
        results.append(res)
        del d  # as in _curve_family
    if rows:
        _apply_holm(rows, spec, results)
    return rows


def _pair_rows(run_id: str, pairs: pd.DataFrame, spec: StatsSpec) -> list[PairedTestRow]:
    out: list[PairedTestRow] = []
    pairs = pairs[pairs["design_a"] < pairs["design_b"]]
    for axis, fam in _families(pairs, []):
        out += _pair_family(run_id, str(axis), *_frame_cells(fam, ["axis_value", "design_a", "design_b"]), spec)
    return out


def _pair_family(run_id: str, axis: str, keys: list[tuple], cells: Iterator[pd.DataFrame],
                 spec: StatsSpec) -> list[PairedTestRow]:
    """One family's design-vs-design rows (cells keyed (axis value, design a, design b)), Holm applied."""
    b_f = resamples_for(len(keys), spec)
    rows: list[PairedTestRow] = []
    results: list[TestResult] = []
    for (value, a, b_), d in zip(keys, cells):
        per_task = d.groupby("task_id")["diff"].agg(["mean", "count"])
        res, kw = clustered_mcnemar(per_task["mean"].to_numpy(float), per_task["count"].to_numpy(), b_f,
                                    comparison_seed(spec.seed, axis, value, a, b_))
        rows.append(_base(run_id, axis, value, a, b_, "-", spec, res, resamples=b_f, n_cells=len(d), **kw))
        results.append(res)
        del d, per_task  # as in _curve_family
    _apply_holm(rows, spec, results)
    return rows


def compute_paired(store: Store, run_id: str, spec: StatsSpec | None = None) -> int:
    """(Re)write the run's ``paired_tests`` rows. Returns the number of rows.

    Read one Holm family at a time — (group axis, unit) against the curve, a group axis against
    CoT and between designs — so the driver holds one family's per-task numbers (≈ designs ×
    tasks × 40 bytes against the curve: :func:`_read_cells`) and one cell's frame, never the
    whole run's; DuckDB computes each from the views a slice of tasks at a time under its memory
    limit. On a 100,000-task store (10,000 replicated ×10, 128 MB DuckDB limit) the phase's peak
    RSS fell from 447 MB (whole family frames) to 364 MB, the same rows written."""
    spec = spec or StatsSpec()
    with _lean_reads(store, run_id):
        rows = _paired_rows(store, run_id, spec)
    store.sql("DELETE FROM paired_tests WHERE run_id = ?", [run_id])
    if rows:
        w = StoreWriter(store)
        for r in rows:
            w.put(_finite(r))
        w.flush()
    return len(rows)


def _paired_rows(store: Store, run_id: str, spec: StatsSpec) -> list[PairedTestRow]:
    """Every paired-test row of the run, one Holm family read at a time."""
    names = dict(store.sql("SELECT design, any_value(design_name) FROM results WHERE run_id = ? GROUP BY ALL",
                           [run_id]))
    axes = ["all", *(a for (a,) in store.sql("SELECT DISTINCT coalesce(axis, source) FROM results WHERE run_id = ? "
                                             "ORDER BY 1", [run_id]) if a != "all")]
    # each cell's rows in task order: the tests draw signs by position, so the same data must give the same order
    slices = task_slices(store, run_id)
    rows: list[PairedTestRow] = []
    units: set[str] = set()
    first = None
    for axis in sorted(axes):  # one family at a time, its cells tested one by one
        for unit in sorted(UNITS):
            cells = _read_cells(store, _task_diffs, CURVE_READ, "axis = $axis AND unit = $unit",
                                {"run_id": run_id, "axis": axis, "unit": unit}, slices)
            if cells[0]:
                units.add(unit)
                first = _first_key(axis, unit, cells[0], first)
                for keys, frames in _by_value(axis, cells):
                    rows += _curve_family(run_id, axis, keys, frames, names, spec, spec.match)
    if units:
        unit_v = "tokens" if spec.match == "budget" and "budget" not in units else spec.match  # as verdict_unit
        for r in rows:  # the verdict's unit is known once every family is read (the baselines have none)
            if names.get(r.design, r.design) not in BASELINES:
                r.is_verdict = r.unit == unit_v
        assert first is not None  # a non-empty family has a first row
        first_unit = first[-1]  # the tests against CoT read one unit's rows: the first in ORDER BY ALL
        for axis in sorted(axes):
            cells = _read_cells(store, _task_diffs, COT_READ, "axis = $axis AND unit = $unit AND design <> 'cot'",
                                {"run_id": run_id, "axis": axis, "unit": first_unit}, slices)
            for keys, frames in _by_value(axis, cells):
                rows += _cot_family(run_id, axis, keys, frames, spec)
    for axis in sorted(axes):
        cells = _read_cells(store, design_pair_diffs, PAIR_READ, "axis = $axis AND design_a < design_b",
                            {"run_id": run_id, "axis": axis}, slices)
        for keys, frames in _by_value(axis, cells):
            rows += _pair_family(run_id, axis, keys, frames, spec)
    return rows


def _task_diffs(cells: str) -> str:
    """``paired_task_diffs`` of a slice of cells, on the matched points the reads computed once."""
    return paired_task_diffs(cells, MATCHED_TABLE)


def _finite(row: PairedTestRow) -> PairedTestRow:
    """``row`` with its infinite numbers NULL (a Holm level or interval end can be ±inf)."""
    for c in row.columns():
        v = getattr(row, c)
        if isinstance(v, float) and math.isinf(v):
            setattr(row, c, None)
    return row


def stats_spec_of(config: dict | None) -> StatsSpec:
    """The suite's stats settings from a run's stored config (defaults if absent)."""
    return StatsSpec.model_validate((config or {}).get("stats") or {})
