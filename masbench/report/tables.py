"""The marginal-utility table: raw columns for CSV (values exactly as ``design_comparison`` has
them: accuracies and gaps as fractions), formatted columns for Markdown, HTML and the terminal."""

from __future__ import annotations

import math
from typing import Any, Iterator, cast

import pandas as pd

from .verdict import verdicts

RAW_COLUMNS = [
    "design", "design_name", "baseline", "n", "accuracy", "ci_lo", "ci_hi", "tokens", "calls", "cost_usd",
    "x_cot_tokens", "x_cot_usd", "x_sc5_tokens", "x_sc5_usd", "iso_gap_tokens", "iso_gap_calls", "iso_gap_usd",
    "cost_vs_curve", "gap_vs_kmax", "iso_acc_cost_ratio_tokens", "iso_acc_cost_ratio_usd",
    "mu_pp_per_1k_tokens", "mu_pp_per_usd", "same_cost_tokens", "same_cost_usd", "cost_diff_tokens",
    "cost_diff_tokens_ci_lo", "cost_diff_tokens_ci_hi", "pareto", "n_failed", "n_budget_exhausted", "n_degraded", "simulated",
    "budget_basis", "budget_spent", "iso_gap_budget",
    "paired_unit", "paired_position", "paired_k_match", "paired_n_tasks", "paired_diff", "paired_ci_lo",
    "paired_ci_hi", "paired_p", "paired_family", "paired_p_holm", "paired_ci_lo_holm", "paired_ci_hi_holm",
    "paired_n_needed",
]
"""CSV columns, named as in ``design_comparison`` (plus ``verdict``)."""

HEADERS = ["design", "n", "accuracy [95% CI]", "tokens/task", "calls/task", "USD/task", "× CoT", "× CoT-SC@5",
           "iso-cost gap (tokens)", "paired Δ [Holm CI]", "cost vs curve", "iso-acc cost ratio", "MU pp/1k tok", "MU pp/$", "Pareto",
           "failed / budget-exh."]


def _missing(v: Any) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    try:
        return math.isnan(float(v))
    except (TypeError, ValueError):
        return False


def _number(v: Any) -> float | None:
    """``float(v)``, or None for a missing value (None, NA, NaT, NaN)."""
    return None if _missing(v) else float(v)


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows as dicts keyed by column name (the frames here come from SQL: the names are strings)."""
    return cast(list[dict[str, Any]], df.to_dict("records"))


def task_groups(df: pd.DataFrame) -> Iterator[tuple[str, float, str, pd.DataFrame]]:
    """``(axis, axis_value, title, rows)`` per task group, sorted; ``title`` is ``axis`` or
    ``axis = value`` (a group without a value, such as ``all``, has a NaN ``axis_value``)."""
    for key, g in df.groupby(["axis", "axis_value"], dropna=False, sort=True):
        axis, value = cast(tuple[str, float], key)  # axis: VARCHAR, axis_value: INTEGER or NULL → float
        yield axis, value, f"{axis}" + (f" = {int(value)}" if pd.notna(value) else ""), g


def pct(v: Any) -> str:
    return "–" if _missing(v) else f"{100 * float(v):.1f}%"


def pp(v: Any, scale: float = 100.0) -> str:
    return "–" if _missing(v) else f"{scale * float(v):+.1f} pp"


def num(v: Any, digits: int = 0) -> str:
    return "–" if _missing(v) else f"{float(v):,.{digits}f}"


def usd(v: Any) -> str:
    if _missing(v):
        return "–"
    f = float(v)
    return "$0" if f == 0 else (f"${f:.4f}" if abs(f) >= 1e-4 else f"${f:.2e}")


def signed(v: Any, digits: int = 1) -> str:
    return "–" if _missing(v) else f"{float(v):+,.{digits}f}"


def is_true(v: Any) -> bool:
    return not _missing(v) and bool(v)


def mult(v: Any) -> str:
    return "–" if _missing(v) else f"{float(v):.2f}×"


def raw_table(df: pd.DataFrame, by_axis: bool = False) -> pd.DataFrame:
    """The CSV table: the view's columns, one row per design (and group if ``by_axis``)."""
    cols = (["axis", "axis_value"] if by_axis else []) + [c for c in RAW_COLUMNS if c in df.columns]
    out = df[cols].copy()
    out["verdict"] = [v.verdict for v in verdicts(df)] if len(df) else []
    return out


CHEAPER_NOTE = ("* cheaper than CoT: the marginal utility is then the accuracy lost (−) or gained (+) per 1k tokens "
                "(per $) saved, so its sign reads the other way.")


SAME_COST = "same cost"
SAME_COST_NOTE = ("same cost: the design's cost is within noise of CoT's (the paired 95% interval of the per-task "
                  "cost difference holds 0, or the difference is under 10% of CoT's cost), so no marginal utility "
                  "is shown: the iso-cost gap and the verdict compare it (docs/metrics.md).")


def any_same_cost(df: pd.DataFrame) -> bool:
    """Whether a row of the table shows "same cost" (its note is printed then)."""
    return any(is_true(r.get(c)) for r in records(df) for c in ("same_cost_tokens", "same_cost_usd"))


def _mu(r: dict[str, Any], value: str, same: str, digits: int) -> str:
    """A marginal-utility cell: the ratio (``*`` if cheaper than CoT), or "same cost" when the
    view says the cost difference is within noise (it then has no ratio)."""
    if is_true(r.get(same)):
        return SAME_COST
    return signed(r.get(value), digits) + ("*" if _cheaper(r) else "")


def _cheaper(r: dict[str, Any]) -> bool:
    t, c = _number(r.get("tokens")), _number(r.get("cot_tokens"))
    return t is not None and c is not None and t < c


def significance(r: dict[str, Any]) -> int:
    """+1 / −1 if the paired test against the curve is significant after Holm (p_holm < α and the
    Holm-level CI excludes 0) in that direction, else 0."""
    p, lo, hi = (_number(r.get(k)) for k in ("paired_p_holm", "paired_ci_lo_holm", "paired_ci_hi_holm"))
    if p is None or lo is None or hi is None or is_true(r.get("baseline")):
        return 0
    alpha = _number(r.get("paired_alpha"))
    if p >= (0.05 if alpha is None else alpha):
        return 0
    return 1 if lo > 0 else -1 if hi < 0 else 0


def paired_cell(r: dict[str, Any]) -> str:
    """The paired mean difference against the curve with its Holm-level CI, in points; a
    significant one (the verdict's test) is marked ▲ (better) or ▼ (worse)."""
    d, lo, hi = (_number(r.get(k)) for k in ("paired_diff", "paired_ci_lo_holm", "paired_ci_hi_holm"))
    if d is None or lo is None or hi is None:
        return "–"
    mark = {1: " ▲", -1: " ▼"}.get(significance(r), "")
    return f"{100 * d:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]{mark}"


def formatted_row(r: dict[str, Any]) -> list[str]:
    ci = "" if _missing(r.get("ci_lo")) else f" [{100 * r['ci_lo']:.1f}, {100 * r['ci_hi']:.1f}]"
    return [
        str(r["design"]), str(int(r["n"])), pct(r["accuracy"]) + ci, num(r["tokens"]), num(r["calls"], 2),
        usd(r["cost_usd"]), mult(r.get("x_cot_tokens")), mult(r.get("x_sc5_tokens")), pp(r.get("iso_gap_tokens")),
        paired_cell(r),
        str(r.get("cost_vs_curve") or "–") if not _missing(r.get("k_max")) else "no curve",
        mult(r.get("iso_acc_cost_ratio_tokens")), _mu(r, "mu_pp_per_1k_tokens", "same_cost_tokens", 2),
        _mu(r, "mu_pp_per_usd", "same_cost_usd", 1), "★" if is_true(r.get("pareto")) else "",
        f"{int(r.get('n_failed') or 0)} / {int(r.get('n_budget_exhausted') or 0)}",
    ]


def formatted(df: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame([formatted_row(r) for r in records(df)], columns=HEADERS)


def markdown(df: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table (no tabulate dependency)."""
    f = formatted(df)
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "|".join("---" if i == 0 else "--:" for i in range(len(HEADERS))) + "|"]
    lines += ["| " + " | ".join(esc(x) for x in row) + " |" for row in f.itertuples(index=False)]
    return "\n".join(lines)
