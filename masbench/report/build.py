"""``write_report``: everything ``masbench report`` writes into one folder."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from . import data, html, plots, tables
from .data import TraceLinks
from .verdict import AXIS_NOTE, RULE, verdicts

CSV = "marginal_utility.csv"
CSV_AXIS = "marginal_utility_by_axis.csv"
MD = "marginal_utility.md"


@dataclass
class ReportResult:
    info: data.RunInfo
    out: Path
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _markdown(info: data.RunInfo, comp: pd.DataFrame, by_axis: pd.DataFrame, lines: list[str],
              costs: Sequence[str] = ()) -> str:
    head = [f"# Marginal utility — {info.suite} ({info.run_id})", ""]
    if info.label:
        head += [f"**{info.label}**", ""]
    head += [f"models: {info.models_text}  ", f"date: {info.created_at}  ",
             f"CoT-SC curve: {'k = 1..' + str(info.k_max) if info.k_max else 'none'}  ", *[f"{c}  " for c in costs], "",
             "## All tasks", "", tables.markdown(comp) if len(comp) else "_no design results_", "",
             tables.CHEAPER_NOTE, ""]
    if lines:
        head += ["## Verdicts", ""] + [f"- {v}" for v in lines] + ["", f"_{RULE}_", ""]
    if len(by_axis):
        head += ["## By task group", ""]
        for _axis, _value, title, g in tables.task_groups(by_axis):
            head += [f"### {title}", "", tables.markdown(g), ""]
        head += [f"_{AXIS_NOTE}_", ""]
    head += ["Formulas and the verdict rule: docs/metrics.md. Accuracies in the CSV are fractions "
             "(0–1), exactly as the `design_comparison` view has them.", ""]
    return "\n".join(head)


def _svgs(out: Path, stems: list[str]) -> dict[str, str]:
    """``{stem}.png`` → the text of ``{stem}.svg`` for the figures drawn with links."""
    return {f"{s}.png": (out / f"{s}.svg").read_text(encoding="utf-8") for s in stems if (out / f"{s}.svg").exists()}


def write_report(store_path: str | Path, out: str | Path, run_id: str | None = None,
                 links: Callable[[str], TraceLinks | None] | None = None) -> ReportResult:
    """Write figures, tables and ``index.html`` for one run (default: the latest) into ``out``.

    ``links``: run id → where its traces are (:class:`~.data.TraceLinks`, hrefs relative to
    ``out`` or absolute): design names in the tables and the design's point in the cost/accuracy
    plot (then drawn inline as SVG) link to the design's traces."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with data.open_store(store_path) as st:
        info = data.run_info(st, run_id)
        rid = info.run_id
        comp = data.comparison(st, rid, "all")
        groups = data.comparison(st, rid, None)
        by_axis = groups[groups["axis"] != "all"].reset_index(drop=True) if len(groups) else groups
        curve = data.curve(st, rid)
        frontier = data.curve_frontier(st, rid)
        curve_axis = data.curve_by_axis(st, rid)
        costs = data.cost_lines(st, rid) + data.tool_lines(st, rid)
    res = ReportResult(info, out)
    tl = links(rid) if links else None
    f1, n1 = plots.cost_accuracy(comp, curve, frontier, info, out, tl.designs if tl else None)
    f2, n2 = plots.accuracy_by_axis(by_axis, curve_axis, info, out, plots.design_colors(comp))
    res.files += f1 + f2
    res.notes += n1 + n2
    if comp.empty:
        res.notes.append("the run has no design results yet")
    tables.raw_table(comp).to_csv(out / CSV, index=False)
    tables.raw_table(by_axis, by_axis=True).to_csv(out / CSV_AXIS, index=False)
    vs = [v for v in verdicts(comp) if v.verdict != "baseline"]
    (out / MD).write_text(_markdown(info, comp, by_axis, [v.line for v in vs], costs), encoding="utf-8")
    res.files += [out / CSV, out / CSV_AXIS, out / MD]
    page = html.page(info, comp, by_axis, vs, ["cost_accuracy.png", "accuracy_by_axis.png"],
                     [CSV, CSV_AXIS, MD, "cost_accuracy.svg", "accuracy_by_axis.svg"], costs + res.notes, tl,
                     _svgs(out, ["cost_accuracy"]) if tl else None)
    (out / "index.html").write_text(page, encoding="utf-8")
    res.files.append(out / "index.html")
    return res
