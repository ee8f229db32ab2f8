"""The static ``index.html``: header (run, suite, models, date, provenance), figures by relative
path, the marginal-utility tables and the verdicts. No JavaScript, no external assets."""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from . import tables
from .data import RunInfo, TraceLinks
from .tables import HEADERS, formatted
from .verdict import AXIS_NOTE, RULE, Verdict

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em} h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
.banner{background:#fff3cd;border:1px solid #e0c060;padding:.5em .8em;font-weight:bold;margin:.6em 0}
.meta td{padding:.1em .8em .1em 0;vertical-align:top} .meta td:first-child{color:#666}
table.mu{border-collapse:collapse;font-size:.85em;margin:.5em 0} table.mu th,table.mu td{border:1px solid #ddd;padding:.25em .5em;text-align:right}
table.mu th{background:#f4f4f4} table.mu td:first-child,table.mu th:first-child{text-align:left}
.fig svg{max-width:100%;height:auto} .pos{color:#137333} .neg{color:#b3261e} img{max-width:100%;border:1px solid #eee} .note{color:#666;font-size:.9em}
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


def page(info: RunInfo, comp: pd.DataFrame, by_axis: pd.DataFrame, verdicts: list[Verdict], images: list[str],
         csvs: list[str], notes: list[str], links: TraceLinks | None = None,
         inline_svgs: dict[str, str] | None = None) -> str:
    """The report page. ``links``: where each design's traces are (design names in the tables
    link there) and the viewer's run page; ``inline_svgs``: image name → SVG text drawn inline
    instead of the ``<img>`` (so the plotted points' links work)."""
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
    parts.append("<h2>Cost vs accuracy</h2>")
    for img in images:
        svg = (inline_svgs or {}).get(img)
        if svg:
            parts.append(f"<div class='fig'>{_inline_svg(svg)}</div>")
        else:
            parts.append(f"<p><img src='{_e(img)}' alt='{_e(img)}'></p>")
    parts.append("<h2>Marginal utility (all tasks)</h2>")
    parts.append(_table(comp, designs))
    parts.append("<p class='note'>Accuracy with Wilson 95% CI; iso-cost gap = accuracy minus the CoT-SC curve "
                 "interpolated at the design's tokens (– outside the curve: see 'cost vs curve'); MU = marginal "
                 "utility against CoT in accuracy points per 1k tokens / per USD; ★ = Pareto-optimal on "
                 "(tokens, accuracy). Formulas: docs/metrics.md.</p>")
    parts.append(f"<p class='note'>{_e(tables.CHEAPER_NOTE)}</p>")
    if verdicts:
        parts.append("<h2>Verdicts</h2><ul>" + "".join(f"<li>{_e(v.line)}</li>" for v in verdicts) + "</ul>")
        parts.append(f"<p class='note'>{_e(RULE)}. Paired Δ = mean over tasks of (design − CoT-SC curve at its "
                     "cost) with the Holm-level paired CI; ▲/▼ significant after Holm.</p>")
    if not by_axis.empty:
        parts.append("<h2>By task group</h2>")
        for _axis, _value, label, g in tables.task_groups(by_axis):
            parts.append(f"<h3>{_e(label)}</h3>" + _table(g, designs))
        parts.append(f"<p class='note'>{_e(AXIS_NOTE)}</p>")
    if csvs:
        parts.append("<h2>Data</h2><ul>" + "".join(f"<li><a href='{_e(c)}'>{_e(c)}</a></li>" for c in csvs) + "</ul>")
    if notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>")
    parts.append("</body></html>")
    return "\n".join(parts)
