"""The static ``index.html``: header (run, suite, models, date, provenance); then one section per
task group (its cost/accuracy figure, marginal-utility table and verdicts: what ``masbench
compare --axis AXIS`` prints), then all tasks pooled (labelled so), then the accuracy-by-group
figure. Figures by relative path. No JavaScript, no external assets."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from . import tables
from .data import RunInfo, TraceLinks
from .tables import HEADERS, formatted
from .verdict import AXIS_NOTE, NOT_WORTH, RULE, WORTH, Verdict

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em} h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
.banner{background:#fff3cd;border:1px solid #e0c060;padding:.5em .8em;font-weight:bold;margin:.6em 0}
.meta td{padding:.1em .8em .1em 0;vertical-align:top} .meta td:first-child{color:#666}
table.mu{border-collapse:collapse;font-size:.85em;margin:.5em 0} table.mu th,table.mu td{border:1px solid #ddd;padding:.25em .5em;text-align:right}
table.mu th{background:#f4f4f4} table.mu td:first-child,table.mu th:first-child{text-align:left}
.fig svg{max-width:100%;height:auto} .pos{color:#137333} .neg{color:#b3261e} img{max-width:100%;border:1px solid #eee} .note{color:#666;font-size:.9em}
h3{font-size:1.05em;margin-top:1.4em} ul.verdicts li{margin:.2em 0} .worth{color:#137333} .notworth{color:#b3261e}
"""


def _e(x: Any) -> str:
    return html.escape(str(x))


def _table(df: pd.DataFrame, links: dict[str, str] | None = None) -> str:
    """The marginal-utility table; ``links`` (design label → href) links each design's name to its traces."""
    if df.empty:
        return "<p class='note'>no rows</p>"
    f = formatted(df)
    head = "".join(f"<th>{_e(h)}</th>" for h in HEADERS)
    body = []
    gap_col = HEADERS.index("iso-cost gap (tokens)")
    designs = [str(d) for d in df["design"]] if "design" in df else []
    for n, row in enumerate(f.itertuples(index=False)):
        cells = []
        href = (links or {}).get(designs[n]) if n < len(designs) else None
        for i, v in enumerate(row):
            if i == 0 and href:
                cells.append(f"<td><a href='{_e(href)}' title='traces of this design'>{_e(v)}</a></td>")
                continue
            cls = ""
            if i == gap_col and v.startswith("+") and v != "+0.0 pp":
                cls = " class='pos'"
            elif i == gap_col and v.startswith("-"):
                cls = " class='neg'"
            cells.append(f"<td{cls}>{_e(v)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table class='mu'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _inline_svg(svg: str) -> str:
    """A matplotlib SVG file's ``<svg>`` element, to embed in the page (links inside an ``<img>``
    cannot be clicked). The SVG is our own drawing; names in it were escaped by matplotlib."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else ""


@dataclass(frozen=True)
class Section:
    """One task group (or all tasks pooled) on the page: its figure, table and verdict lines."""

    key: str
    """The section's id (its anchor; the browser test finds it by this)."""
    title: str
    rows: pd.DataFrame
    verdicts: list[Verdict] = field(default_factory=list)
    """The group's non-baseline verdicts, worded as the terminal words them."""
    image: str | None = None
    """The group's cost/accuracy figure (a file in the report folder), if drawn."""


_VERDICT_CLASS = {WORTH: "worth", NOT_WORTH: "notworth"}


def _figure(img: str, inline_svgs: dict[str, str] | None) -> str:
    svg = (inline_svgs or {}).get(img)
    return f"<div class='fig'>{_inline_svg(svg)}</div>" if svg else f"<p><img src='{_e(img)}' alt='{_e(img)}'></p>"


def _section(sec: Section, heading: str, designs: dict[str, str] | None,
             inline_svgs: dict[str, str] | None) -> str:
    parts = [f"<section class='group' id='{_e(sec.key)}'><{heading}>{_e(sec.title)}</{heading}>"]
    if sec.image:
        parts.append(_figure(sec.image, inline_svgs))
    parts.append(_table(sec.rows, designs))
    if sec.verdicts:
        parts.append("<ul class='verdicts'>" + "".join(
            f"<li class='{_VERDICT_CLASS.get(v.verdict, 'other')}'>{_e(v.line)}</li>" for v in sec.verdicts) + "</ul>")
    return "\n".join(parts) + "</section>"


def page(info: RunInfo, groups: list[Section], pooled: Section, images: list[str], csvs: list[str],
         notes: list[str], links: TraceLinks | None = None, inline_svgs: dict[str, str] | None = None) -> str:
    """The report page: a section per task group (``groups``, as ``masbench compare --axis``
    prints them), then ``pooled`` (all tasks), then ``images`` (the accuracy-by-group figure).
    ``links``: where each design's traces are (design names in the tables link there) and the
    viewer's run page; ``inline_svgs``: image name → SVG text drawn inline instead of the
    ``<img>`` (so the plotted points' links work)."""
    designs = links.designs if links else None
    title = f"masbench report — {info.suite} — {info.run_id}"
    banner = f"<div class='banner'>{_e(info.label)}</div>" if info.label else ""
    meta = [("run", info.run_id), ("suite", info.suite), ("status", info.status), ("models", info.models_text),
            ("date", f"{info.created_at}" + (f" → {info.finished_at}" if info.finished_at else "")),
            ("CoT-SC curve", f"k = 1..{info.k_max}" if info.k_max else "none (cot_sc disabled or empty pool)")]
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>",
             f"<style>{_CSS}</style></head><body>",
             f"<h1>masbench report: {_e(info.suite)}{' — ' + _e(info.label) if info.label else ''}</h1>", banner,
             "<table class='meta'>" + "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in meta) + "</table>"]
    if links and links.run:
        parts.append(f"<p><a href='{_e(links.run)}'>Traces: every call's messages and reply, task by task</a> "
                     f"<span class='note'>(click a design's point or name to see its traces{'; ' + _e(links.note) if links.note else ''})</span></p>")
    if groups:
        parts.append("<h2>By task group</h2><p class='note'>One section per task group: its cost/accuracy figure, "
                     "table and verdicts, as <code>masbench compare --axis AXIS</code> prints them. All tasks pooled "
                     "follow.</p>")
        parts += [_section(g, "h3", designs, inline_svgs) for g in groups]
        parts.append(f"<p class='note'>{_e(AXIS_NOTE)}</p>")
    parts.append(_section(pooled, "h2", designs, inline_svgs))
    parts.append("<p class='note'>Accuracy with Wilson 95% CI; iso-cost gap = accuracy minus the CoT-SC curve "
                 "interpolated at the design's tokens (– outside the curve: see 'cost vs curve'); MU = marginal "
                 "utility against CoT in accuracy points per 1k tokens / per USD; ★ = Pareto-optimal on "
                 "(tokens, accuracy). Paired Δ = mean over tasks of (design − CoT-SC curve at its cost) with the "
                 "Holm-level paired CI; ▲/▼ significant after Holm. Formulas: docs/metrics.md.</p>")
    parts.append(f"<p class='note'>{_e(tables.CHEAPER_NOTE)}</p>")
    if any(tables.any_same_cost(s.rows) for s in [*groups, pooled]):
        parts.append(f"<p class='note'>{_e(tables.SAME_COST_NOTE)}</p>")
    if any(s.verdicts for s in [*groups, pooled]):
        parts.append(f"<p class='note'>{_e(RULE)}.</p>")
    if images:
        parts.append("<h2>Accuracy by task group</h2>")
        parts += [_figure(img, inline_svgs) for img in images]
    if csvs:
        parts.append("<h2>Data</h2><ul>" + "".join(f"<li><a href='{_e(c)}'>{_e(c)}</a></li>" for c in csvs) + "</ul>")
    if notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>")
    parts.append("</body></html>")
    return "\n".join(parts)
