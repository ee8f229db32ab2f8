"""``write_report``: everything ``masbench report`` writes into one folder."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from . import data, html, plots, tables
from .data import TraceLinks
from .html import Section
from .verdict import AXIS_NOTE, BASELINE, RULE, Verdict, verdicts

CSV = "marginal_utility.csv"
CSV_AXIS = "marginal_utility_by_axis.csv"
MD = "marginal_utility.md"
MAX_GROUP_FIGURES = 12
"""A run with more task groups draws no per-group cost/accuracy figure (their tables and verdicts
stay); a run of one group draws none either (it would be the pooled figure again)."""


@dataclass
class ReportResult:
    info: data.RunInfo
    out: Path
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _md_section(sec: Section, heading: str) -> list[str]:
    out = [f"{heading} {sec.title}", "", tables.markdown(sec.rows) if len(sec.rows) else "_no design results_", ""]
    if sec.verdicts:
        out += [f"- {v.line}" for v in sec.verdicts] + [""]
    return out


def _markdown(info: data.RunInfo, groups: list[Section], pooled: Section, costs: Sequence[str] = ()) -> str:
    head = [f"# Marginal utility — {info.suite} ({info.run_id})", ""]
    if info.label:
        head += [f"**{info.label}**", ""]
    head += [f"models: {info.models_text}  ", f"date: {info.created_at}  ",
             f"CoT-SC curve: {'k = 1..' + str(info.k_max) if info.k_max else 'none'}  ", *[f"{c}  " for c in costs], ""]
    if groups:
        head += ["## By task group", ""]
        for g in groups:
            head += _md_section(g, "###")
        head += [f"_{AXIS_NOTE}_", ""]
    head += _md_section(pooled, "##")
    head += [tables.CHEAPER_NOTE, ""]
    if any(tables.any_same_cost(s.rows) for s in [*groups, pooled]):
        head += [tables.SAME_COST_NOTE, ""]
    if any(s.verdicts for s in [*groups, pooled]):
        head += [f"_{RULE}_", ""]
    head += ["Formulas and the verdict rule: docs/metrics.md. Accuracies in the CSV are fractions "
             "(0–1), exactly as the `design_comparison` view has them.", ""]
    return "\n".join(head)


def _svgs(out: Path, stems: list[str]) -> dict[str, str]:
    """``{stem}.png`` → the text of ``{stem}.svg`` for the figures drawn with links."""
    return {f"{s}.png": (out / f"{s}.svg").read_text(encoding="utf-8") for s in stems if (out / f"{s}.svg").exists()}


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "group"


def _shown(df: pd.DataFrame) -> list[Verdict]:
    """The verdicts of a group's rows, baselines left out (they get none)."""
    return [v for v in verdicts(df) if v.verdict != BASELINE]


def write_report(store_path: str | Path, out: str | Path, run_id: str | None = None,
                 links: Callable[[str], TraceLinks | None] | None = None) -> ReportResult:
    """Write figures, tables and ``index.html`` for one run (default: the latest) into ``out``:
    per task group (as ``masbench compare --axis`` prints them) and all tasks pooled.

    ``links``: run id → where its traces are (:class:`~.data.TraceLinks`, hrefs relative to
    ``out`` or absolute): design names in the tables and the design's point in the cost/accuracy
    plots (then drawn inline as SVG) link to the design's traces."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with data.open_store(store_path) as st:
        info = data.run_info(st, run_id)
        rid = info.run_id
        comp = data.comparison(st, rid, "all")
        groups = data.comparison(st, rid, None)
        by_axis = groups[groups["axis"] != "all"].reset_index(drop=True) if len(groups) else groups
        keys = list(tables.task_groups(by_axis)) if len(by_axis) else []
        draw = 1 < len(keys) <= MAX_GROUP_FIGURES  # one group: its figure would be the pooled one again
        curve = data.curve(st, rid)
        frontier = data.curve_frontier(st, rid)
        group_curves = {label: (data.curve(st, rid, ax, _value(v)), data.curve_frontier(st, rid, ax, _value(v)))
                        for ax, v, label, _g in keys} if draw else {}
        curve_axis = data.curve_by_axis(st, rid)
        costs = data.cost_lines(st, rid) + data.tool_lines(st, rid) + data.judge_lines(st, rid)
    res = ReportResult(info, out)
    if len(keys) > MAX_GROUP_FIGURES:
        res.notes.append(f"{len(keys)} task groups: no cost/accuracy figure per group (at most {MAX_GROUP_FIGURES}); "
                         "their tables and verdicts are all there")
    tl = links(rid) if links else None
    colors = plots.design_colors(comp)
    sections: list[Section] = []
    for _ax, _v, label, g in keys:
        stem = f"cost_accuracy_{_slug(label)}"
        image = None
        if draw:
            cv, fr = group_curves[label]
            files, notes = plots.cost_accuracy(g, cv, fr, info, out, tl.designs if tl else None, stem,
                                               f"Cost vs accuracy: {label}")
            res.files += files
            res.notes += [f"{label}: {n}" for n in notes]
            image = f"{stem}.png"
        sections.append(Section(_slug(label), label, g, _shown(g), image))
    pooled_title = (f"All tasks, pooled over the {len(keys)} task groups" if len(keys) > 1 else "All tasks")
    f1, n1 = plots.cost_accuracy(comp, curve, frontier, info, out, tl.designs if tl else None,
                                 what="Cost vs accuracy, all tasks pooled" if len(keys) > 1 else "Cost vs accuracy")
    f2, n2 = plots.accuracy_by_axis(by_axis, curve_axis, info, out, colors)
    res.files += f1 + f2
    res.notes += n1 + n2
    if comp.empty:
        res.notes.append("the run has no design results yet")
    pooled = Section("pooled", pooled_title, comp, _shown(comp), "cost_accuracy.png")
    tables.raw_table(comp).to_csv(out / CSV, index=False)
    tables.raw_table(by_axis, by_axis=True).to_csv(out / CSV_AXIS, index=False)
    (out / MD).write_text(_markdown(info, sections, pooled, costs), encoding="utf-8")
    res.files += [out / CSV, out / CSV_AXIS, out / MD]
    stems = ["cost_accuracy"] + [s.image.removesuffix(".png") for s in sections if s.image]
    page = html.page(info, sections, pooled, ["accuracy_by_axis.png"],
                     [CSV, CSV_AXIS, MD, *[f"{s}.svg" for s in stems], "accuracy_by_axis.svg"], costs + res.notes, tl,
                     _svgs(out, stems) if tl else None)
    (out / "index.html").write_text(page, encoding="utf-8")
    res.files.append(out / "index.html")
    return res


def _value(v: float) -> int | None:
    """A group's axis value as the store has it (a float NaN from pandas is NULL)."""
    return None if pd.isna(v) else int(v)
