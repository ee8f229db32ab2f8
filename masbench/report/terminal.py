"""``masbench compare``: the marginal-utility table in the terminal, with verdicts."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import pandas as pd
from rich.console import Console
from rich.table import Table
from rich.text import Text

from . import data, tables
from .verdict import AXIS_NOTE, BASELINE, NOT_WORTH, RULE, WORTH, verdicts

_VERDICT_STYLE = {WORTH: "green", NOT_WORTH: "red"}


# columns dropped first when the terminal is too narrow (the report files always have all of them)
_DROP_ORDER = ["Pareto", "calls/task", "MU pp/$", "USD/task", "iso-acc cost ratio", "× CoT-SC@5",
               "failed / budget-exh.", "iso-cost gap (tokens)", "cost vs curve", "× CoT", "MU pp/1k tok"]


_SHORT = {"accuracy [95% CI]": "accuracy\n[95% CI]", "tokens/task": "tokens\n/task", "calls/task": "calls\n/task",
          "USD/task": "USD\n/task", "× CoT-SC@5": "×\nCoT-SC@5", "iso-cost gap (tokens)": "iso-cost gap\n(tokens)",
          "cost vs curve": "cost vs\ncurve", "iso-acc cost ratio": "iso-acc\ncost ratio", "MU pp/1k tok": "MU pp\n/1k tok",
          "failed / budget-exh.": "failed /\nbudget-exh.", "paired Δ [Holm CI]": "paired Δ pp\n[Holm CI]"}


def _table(df: pd.DataFrame, title: str, width: int) -> tuple[Table, list[str]]:
    rows = [tables.formatted_row(r) for r in tables.records(df)]
    for row, r in zip(rows, tables.records(df)):
        if tables.is_true(r.get("pareto")):
            row[0] += " ★"
    widths = {h: max([len(x) for x in _SHORT.get(h, h).split("\n")] + [len(row[i]) for row in rows]) + 3
              for i, h in enumerate(tables.HEADERS)}
    shown = list(tables.HEADERS)
    hidden = []
    for h in _DROP_ORDER:
        if sum(widths[c] for c in shown) + 1 <= width:
            break
        shown.remove(h)
        hidden.append(h)
    t = Table(title=title, title_justify="left", pad_edge=False)
    for h in shown:
        t.add_column(_SHORT.get(h, h), justify="left" if h == "design" else "right", no_wrap=True)
    gap_col = tables.HEADERS.index("iso-cost gap (tokens)")
    for row, r in zip(rows, tables.records(df)):
        cells = {h: Text(row[i]) for i, h in enumerate(tables.HEADERS)}  # Text: cot-sc[k=5] is not markup
        gap = tables._number(r.get("iso_gap_tokens"))
        if gap is not None:
            cells[tables.HEADERS[gap_col]].stylize("green" if gap > 0 else "red" if gap < 0 else "")
        if tables.is_true(r.get("pareto")):
            cells["design"].stylize("bold")
        t.add_row(*[cells[h] for h in shown])
    return t, hidden


def _axes(axis: str | Sequence[str]) -> list[str]:
    """``--axis`` values, each once, in the order given (default: 'all')."""
    return list(dict.fromkeys([axis] if isinstance(axis, str) else axis)) or ["all"]


def _header(console: Console, info: data.RunInfo, costs: Sequence[str] = ()) -> None:
    """The run's header, printed once per command: label, run, suite, models, date, cost lines.
    Off a terminal every line is one line however long (log files)."""
    soft = not console.is_terminal
    if info.label:
        console.print(Text(info.label, style="bold yellow"), soft_wrap=soft)
    console.print(Text(f"run {info.run_id} · suite {info.suite} · models {info.models_text} · {info.created_at}"),
                  soft_wrap=soft)
    for line in costs:
        console.print(Text(line, style="dim"), soft_wrap=soft)


def compare(store_path: str | Path, run_id: str | None = None, axis: str | Sequence[str] = "all",
            console: Console | None = None) -> int:
    """Print the run's header once, then for each axis asked (``axis``: one or several; 'all' is
    the pooled table) its table per axis value and one verdict per non-baseline design. Returns
    the number of designs shown."""
    console = console or Console()
    soft = not console.is_terminal
    axes = _axes(axis)
    with data.open_store(store_path) as st:
        info = data.run_info(st, run_id)
        frames = {ax: data.comparison(st, info.run_id, ax) for ax in axes}
        known = [r[0] for r in st.sql("SELECT DISTINCT axis FROM design_metrics WHERE run_id = ? ORDER BY 1",
                                      [info.run_id])]
        costs = data.cost_lines(st, info.run_id) + data.tool_lines(st, info.run_id)
        judged = data.judge_lines(st, info.run_id)
    _header(console, info, costs)
    shown = [df for df in frames.values() if not df.empty]
    for ax, df in frames.items():
        if df.empty:
            console.print(Text(f"no results for axis {ax!r}; groups in this run: {', '.join(known) or '(none)'}",
                               style="yellow"), soft_wrap=soft)
    if not shown:
        return 0
    if not info.k_max:
        console.print("[yellow]no CoT-SC curve in this run[/]: iso-cost gaps and verdicts need cot_sc enabled",
                      soft_wrap=soft)
    df = pd.concat(shown, ignore_index=True)
    for ax in frames:
        for gax, _value, label, g in tables.task_groups(frames[ax]):
            title = "all tasks (pooled over every task group)" if gax == "all" else label
            table, hidden = _table(g, title.replace("[", "\\["), console.width)
            console.print(table)
            if hidden:
                console.print(Text(f"(narrow terminal: hidden {', '.join(hidden)}; see `masbench report`)",
                                   style="dim"), soft_wrap=soft)
            for v in verdicts(g):
                if v.verdict == BASELINE:
                    continue
                style = _VERDICT_STYLE.get(v.verdict, "yellow")
                line = Text(v.line)
                line.stylize(style, len(line) - len(v.line.split("\u2014", 1)[-1]), len(line))
                console.print(line, soft_wrap=soft)
            for note in judged:  # the verdicts above rest on the judge: how far it was checked
                console.print(Text(note, style="cyan"), soft_wrap=soft)
    console.print(Text("★ Pareto-optimal on (tokens, accuracy). ▲/▼ paired difference significant after Holm. "
                       + tables.CHEAPER_NOTE, style="dim"), soft_wrap=soft)
    if tables.any_same_cost(df):
        console.print(Text(tables.SAME_COST_NOTE, style="dim"), soft_wrap=soft)
    if (df["axis"] != "all").any():
        console.print(Text(AXIS_NOTE, style="dim"), soft_wrap=soft)
    console.print(Text(RULE, style="dim"), soft_wrap=soft)
    return int(df["design"].nunique())


def paired_table(df: pd.DataFrame, against: str, title: str) -> Table:
    """The stored paired tests of every design against one reference ('curve', 'cot' or a design)."""
    t = Table(title=title, title_justify="left", pad_edge=False)
    for h in ("design", "vs", "unit", "n tasks", "mean Δ pp", "95% CI", "p", "method", "Holm p (m)", "Holm CI"):
        t.add_column(h, justify="left" if h in ("design", "vs", "method") else "right", no_wrap=True)
    for r in tables.records(df):
        a, b = str(r["design"]), str(r["against"])
        sign = 1.0
        if against not in ("curve", "cot") and b != against:  # stored as (a, b) with a < b: flip to face `against`
            a, b, sign = b, a, -1.0
        lo, hi = sorted((sign * r["ci_lo"], sign * r["ci_hi"]))
        hlo, hhi = sorted((sign * r["ci_lo_holm"], sign * r["ci_hi_holm"]))
        t.add_row(Text(a), Text(b), str(r["unit"]), str(int(r["n_tasks"])), f"{100 * sign * r['mean_diff']:+.1f}",
                  f"[{100 * lo:+.1f}, {100 * hi:+.1f}]", f"{r['p_value']:.3g}", str(r["method"]),
                  f"{r['p_holm']:.3g} ({int(r['family_size'])})", f"[{100 * hlo:+.1f}, {100 * hhi:+.1f}]")
    return t


def by_agent(store_path: str | Path, run_id: str | None = None, console: Console | None = None) -> int:
    """Print what each agent of each design spent (calls, tokens, USD, per task, share of its
    design's tokens): a program design's agents as its calls named them. Returns the rows shown."""
    console = console or Console()
    with data.open_store(store_path) as st:
        info = data.run_info(st, run_id)
        df = data.agent_costs(st, info.run_id)
    t = Table(title=f"cost by agent — run {info.run_id}".replace("[", "\\["), title_justify="left")
    for h in ("design", "agent", "calls", "tokens", "USD", "calls/task", "tokens/task", "USD/task", "share"):
        t.add_column(h, justify="left" if h in ("design", "agent") else "right", no_wrap=True)
    for r in df.to_dict("records"):
        share = r["token_share"]
        t.add_row(str(r["design"]), str(r["agent"]), f"{r['calls']:,}", f"{r['tokens']:,}", f"{r['cost_usd']:.4f}",
                  f"{r['calls_per_task']:.2f}", f"{r['tokens_per_task']:,.0f}", f"{r['usd_per_task']:.5f}",
                  "–" if share is None or share != share else f"{share:.0%}")
    console.print(t)
    return len(df)


def compare_against(store_path: str | Path, against: str, run_id: str | None = None,
                    axis: str | Sequence[str] = "all", console: Console | None = None) -> int:
    """Print the paired tests against ``against``: 'curve' (at each design's cost), 'cot', or a
    design label (exact McNemar, design − that design), for one axis or several. Returns the
    number of rows."""
    console = console or Console()
    with data.open_store(store_path) as st:
        info = data.run_info(st, run_id)
        df = pd.concat([data.paired(st, info.run_id, ax) for ax in _axes(axis)], ignore_index=True)
    if info.label:
        console.print(Text(info.label, style="bold yellow"))
    if against in ("curve", "cot"):
        sel = df[df["against"] == against]
        if against == "curve":
            unit = sel.loc[sel["is_verdict"].fillna(False).astype(bool), "unit"]
            sel = sel[sel["unit"] == (unit.iloc[0] if len(unit) else "tokens")]
    else:
        sel = df[(df["against"] == against) | ((df["design"] == against) & ~df["against"].isin(["curve", "cot"]))]
    if sel.empty:
        refs = sorted(set(df["against"]) | set(df.loc[~df["against"].isin(["curve", "cot"]), "design"]))
        raise data.ReportError(f"no paired tests against {against!r} in run {info.run_id}; "
                               f"references: {', '.join(refs) or '(none: run `masbench stats`)'}")
    for ax, _value, label, g in tables.task_groups(sel):
        title = "all tasks" if ax == "all" else label
        console.print(paired_table(g, against, f"paired tests vs {against} — {title}".replace("[", "\\[")))
    console.print(Text("Δ = design − reference per task (seeds averaged); the test in 'method' over tasks, a task's "
                       "seeds together; Holm across the comparisons of the same kind (m): in the group for all tasks, "
                       "across every value of the axis for a per-axis table. docs/metrics.md", style="dim"))
    return len(sel)
