"""Write a run's paired tests and verdicts (``paired_tests``) from the store's paired views.

Per group (all tasks, each axis value / source) the harness tests:

- every design against the CoT-SC curve at its cost, for each cost unit the run recorded
  (``against = 'curve'``): paired bootstrap CI and p-value of the mean per-task difference; Holm
  across the group's non-baseline designs (per unit); the verdict (:mod:`.stats.decide`) on the
  suite's matching unit (``is_verdict``);
- every design against CoT (``against = 'cot'``): exact McNemar if the suite ran a ``cot`` design,
  else the bootstrap against the curve's maj@1 per cell; Holm across the group's designs;
- every pair of designs (``against = <label>``): exact McNemar on the shared cells, the paired
  bootstrap CI of the mean difference; Holm across all pairs of the group.

Only resampling happens here (numpy); counts, means and SDs come from the SQL views.
"""

from __future__ import annotations

import math
import zlib
from typing import Any

import pandas as pd

from ..spec import StatsSpec
from ..store import Store, StoreWriter
from .stats.decide import decide
from .stats.paired import holm, mcnemar_exact, paired_bootstrap
from .stats.power import n_needed

BASELINES = ("cot", "cot-sc")


def _seed(base: int, *parts: Any) -> int:
    return base * 1_000_003 + zlib.crc32("|".join(map(str, parts)).encode())


def _f(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _apply_holm(rows: list[dict], spec: StatsSpec, boots: list) -> None:
    """Fill Holm columns of ``rows`` (one family) in place; ``boots`` align with rows."""
    adj, levels = holm([r["p_value"] for r in rows], spec.alpha)
    for r, b, pa, lv in zip(rows, boots, adj, levels):
        lo, hi = b.ci(1 - lv)
        r.update(family_size=len(rows), p_holm=pa, level_holm=lv, ci_lo_holm=lo, ci_hi_holm=hi)


def _base(run_id, axis, value, design, against, unit, spec: StatsSpec, boot, **kw) -> dict:
    lo, hi = boot.ci(0.95)
    row = dict(run_id=run_id, axis=axis, axis_value=None if pd.isna(value) else int(value), design=design,
               against=against, unit=unit, position=None, k_match=None, n_tasks=boot.n, n_cells=None,
               mean_diff=boot.mean, sd_task=None if math.isnan(boot.sd) else boot.sd, ci_lo=lo, ci_hi=hi,
               p_value=boot.p_value, method="paired bootstrap", n_discordant_plus=None, n_discordant_minus=None,
               family_size=1, p_holm=boot.p_value, level_holm=spec.alpha, ci_lo_holm=lo, ci_hi_holm=hi,
               n_needed=None, verdict=None, reason=None, is_verdict=False, bootstrap=spec.bootstrap,
               alpha=spec.alpha, power=spec.power)
    row.update(kw)
    return row


def _curve_rows(run_id: str, tasks: pd.DataFrame, names: dict[str, str], spec: StatsSpec) -> list[dict]:
    out: list[dict] = []
    for (axis, value, unit), g in tasks.groupby(["axis", "axis_value", "unit"], dropna=False, sort=True):
        family, fboots, rest, rboots = [], [], [], []
        for key, d in g.groupby("design", sort=True):
            design = str(key)
            b = paired_bootstrap(d["diff"].to_numpy(), spec.bootstrap, _seed(spec.seed, axis, value, unit, design))
            row = _base(run_id, axis, value, design, "curve", unit, spec, b, position=d["position"].iloc[0],
                        k_match=_f(d["k_match"].iloc[0]), n_cells=int(d["seeds"].sum()),
                        k_max=int(d["k_max"].iloc[0]))
            if names.get(design, design) in BASELINES:
                rest.append(row), rboots.append(b)
            else:
                family.append(row), fboots.append(b)
        if family:
            _apply_holm(family, spec, fboots)
        for r, b in zip(family, fboots):
            r["n_needed"] = n_needed(r["mean_diff"], b.sd_adj, r["level_holm"], spec.power)
            r["verdict"], r["reason"] = decide(r["position"], r["mean_diff"], (r["ci_lo_holm"], r["ci_hi_holm"]),
                                               r["p_holm"], spec.alpha, r["n_needed"], r["n_tasks"], r["k_max"])
            r["is_verdict"] = unit == spec.match
        out += family + rest
    for r in out:
        r.pop("k_max", None)
    return out


def _mcnemar(cells: pd.DataFrame, a: str, b: str) -> tuple[int, int]:
    plus = int(((cells[a] > 0.5) & (cells[b] < 0.5)).sum())
    minus = int(((cells[a] < 0.5) & (cells[b] > 0.5)).sum())
    return plus, minus


def _cot_rows(run_id: str, cells: pd.DataFrame, spec: StatsSpec) -> list[dict]:
    out: list[dict] = []
    one_unit = cells[cells["unit"] == cells["unit"].iloc[0]] if len(cells) else cells
    for (axis, value), g in one_unit.groupby(["axis", "axis_value"], dropna=False, sort=True):
        rows, boots = [], []
        for design, d in g.groupby("design", sort=True):
            if design == "cot":
                continue
            per_task = d.groupby("task_id")["diff_cot"].mean().to_numpy()
            b = paired_bootstrap(per_task, spec.bootstrap, _seed(spec.seed, axis, value, "cot", design))
            row = _base(run_id, axis, value, design, "cot", "-", spec, b, n_cells=len(d))
            if bool(d["cot_is_design"].all()):
                plus, minus = _mcnemar(d, "y", "cot_y")
                row.update(method="exact McNemar", p_value=mcnemar_exact(plus, minus), n_discordant_plus=plus,
                           n_discordant_minus=minus)
            rows.append(row), boots.append(b)
        if rows:
            _apply_holm(rows, spec, boots)
        out += rows
    return out


def _pair_rows(run_id: str, pairs: pd.DataFrame, spec: StatsSpec) -> list[dict]:
    out: list[dict] = []
    pairs = pairs[pairs["design_a"] < pairs["design_b"]]
    for (axis, value), g in pairs.groupby(["axis", "axis_value"], dropna=False, sort=True):
        rows, boots = [], []
        for (a, b_), d in g.groupby(["design_a", "design_b"], sort=True):
            per_task = d.groupby("task_id")["diff"].mean().to_numpy()
            b = paired_bootstrap(per_task, spec.bootstrap, _seed(spec.seed, axis, value, a, b_))
            plus, minus = _mcnemar(d, "y_a", "y_b")
            rows.append(_base(run_id, axis, value, a, b_, "-", spec, b, n_cells=len(d), method="exact McNemar",
                              p_value=mcnemar_exact(plus, minus), n_discordant_plus=plus, n_discordant_minus=minus))
            boots.append(b)
        _apply_holm(rows, spec, boots)
        out += rows
    return out


def compute_paired(store: Store, run_id: str, spec: StatsSpec | None = None) -> int:
    """(Re)write the run's ``paired_tests`` rows. Returns the number of rows."""
    spec = spec or StatsSpec()
    names = dict(store.sql("SELECT design, any_value(design_name) FROM results WHERE run_id = ? GROUP BY ALL",
                           [run_id]))
    # ordered: the bootstrap resamples positions, so the same data must give the same order
    tasks = store.df("SELECT * FROM paired_task_diffs WHERE run_id = ? ORDER BY ALL", [run_id])
    cells = store.df("SELECT * FROM paired_diffs WHERE run_id = ? ORDER BY ALL", [run_id])
    pairs = store.df("SELECT * FROM design_pair_diffs WHERE run_id = ? ORDER BY ALL", [run_id])
    rows = _curve_rows(run_id, tasks, names, spec) if len(tasks) else []
    rows += _cot_rows(run_id, cells, spec) if len(cells) else []
    rows += _pair_rows(run_id, pairs, spec) if len(pairs) else []
    store.sql("DELETE FROM paired_tests WHERE run_id = ?", [run_id])
    if rows:
        w = StoreWriter(store)
        for r in rows:
            w.add("paired_tests", {k: (None if isinstance(v, float) and math.isinf(v) else v) for k, v in r.items()})
        w.flush()
    return len(rows)


def stats_spec_of(config: dict | None) -> StatsSpec:
    """The suite's stats settings from a run's stored config (defaults if absent)."""
    return StatsSpec.model_validate((config or {}).get("stats") or {})

