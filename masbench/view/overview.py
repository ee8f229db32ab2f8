"""The runs list and a run's overview: the report's own data (:mod:`masbench.report`: run header,
``design_comparison`` rows with their paired tests, the formatted marginal-utility table, the
verdicts, the CoT-SC curve) and a small inline-SVG cost/accuracy plot drawn from the same rows."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..report import data as report_data
from ..report.tables import HEADERS, formatted_row, records
from ..report.verdict import BASELINE, RULE, Verdict, verdicts
from ..store import LATEST, Store
from .trace import NotFound

RUNS_PAGE = 200
"""Runs listed on the start page (newest first)."""


def runs(store: Store, only: str | None = None) -> list[dict[str, Any]]:
    """The newest :data:`RUNS_PAGE` runs (or just ``only``) with their cell and call counts (the
    store's ``run_summary`` view) and transcript mode."""
    with store.lock:
        cur = store.con.execute(f"""
            SELECT run_id, suite, status, created_at, finished_at, simulated, transcripts, results, calls, cost_usd
            FROM (SELECT s.*, r.transcripts FROM run_summary s JOIN runs r USING (run_id))
            WHERE $only IS NULL OR run_id = $only {LATEST} LIMIT {RUNS_PAGE}""", {"only": only})
        cols = [d[0] for d in cur.description or []]
        return [dict(zip(cols, row)) for row in cur.fetchall()]


@dataclass
class Overview:
    """What a run's overview page shows."""

    info: report_data.RunInfo
    """The run's header (report's :class:`~masbench.report.data.RunInfo`)."""
    headers: list[str]
    """The marginal-utility table's headers."""
    rows: list[tuple[str, list[str]]]
    """(design label, formatted cells) per design."""
    verdicts: list[Verdict]
    """One verdict per non-baseline design."""
    rule: str
    """The verdict rule, in words."""
    plot: dict[str, Any] | None
    """The cost/accuracy plot's drawing (None: nothing to draw)."""
    counts: dict[str, int]
    """Cells, calls, transcript messages and pool samples of the run."""


def overview(store: Store, run: str) -> Overview:
    """A run's overview (:class:`NotFound` for an unknown run)."""
    try:
        info = report_data.run_info(store, run)
    except report_data.ReportError as exc:
        raise NotFound(str(exc)) from exc
    comp = report_data.comparison(store, run, "all")
    curve = report_data.curve(store, run)
    rows = [(str(r["design"]), formatted_row(r)) for r in records(comp)]
    vs = [v for v in verdicts(comp) if v.verdict != BASELINE] if len(comp) else []
    (cells, calls, messages, pool), = store.sql("""
        SELECT (SELECT count(*) FROM results WHERE run_id = $1), (SELECT count(*) FROM calls WHERE run_id = $1),
               (SELECT count(*) FROM call_messages WHERE run_id = $1), (SELECT count(*) FROM pool WHERE run_id = $1)""",
                                                 [run])
    points = [(str(r["design"]), r["tokens"], r["accuracy"]) for r in records(comp)]
    curve_pts = [(int(r["k"]), r["tokens"], r["accuracy"]) for r in records(curve)]
    return Overview(info, list(HEADERS), rows, vs, RULE, plot(points, curve_pts),
                    {"cells": int(cells), "calls": int(calls), "messages": int(messages), "pool": int(pool)})


def _ok(v: Any) -> bool:
    try:
        return v is not None and math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


W, H, ML, MR, MT, MB = 640, 320, 56, 150, 16, 40


def plot(points: list[tuple[str, Any, Any]], curve: list[tuple[int, Any, Any]]) -> dict[str, Any] | None:
    """Accuracy against mean tokens per task (log axis): the CoT-SC curve (k labelled) and one dot per
    design, as SVG coordinates for the template. None if there is nothing with a positive cost."""
    pts = [(d, float(t), float(a)) for d, t, a in points if _ok(t) and _ok(a) and float(t) > 0]
    cur = [(k, float(t), float(a)) for k, t, a in curve if _ok(t) and _ok(a) and float(t) > 0]
    xs = [t for _, t, _ in pts] + [t for _, t, _ in cur]
    if not xs:
        return None
    lo, hi = math.log10(min(xs)) - 0.1, math.log10(max(xs)) + 0.1
    sx = lambda t: ML + (math.log10(t) - lo) / (hi - lo) * (W - ML - MR)  # noqa: E731
    sy = lambda a: MT + (1 - a) * (H - MT - MB)  # noqa: E731
    ticks = [10 ** e for e in range(math.floor(lo), math.ceil(hi) + 1) if lo <= math.log10(10 ** e) <= hi]
    return {
        "w": W, "h": H, "ml": ML, "mr": MR, "mt": MT, "mb": MB,
        "curve": " ".join(f"{sx(t):.1f},{sy(a):.1f}" for _, t, a in cur),
        "curve_pts": [{"x": sx(t), "y": sy(a), "k": k} for k, t, a in cur],
        "designs": [{"x": sx(t), "y": sy(a), "name": d, "acc": a, "tokens": t} for d, t, a in pts],
        "yticks": [{"y": sy(a), "label": f"{int(a * 100)}%"} for a in (0, 0.25, 0.5, 0.75, 1.0)],
        "xticks": [{"x": sx(t), "label": f"{t:,.0f}"} for t in ticks],
    }


__all__ = ["Overview", "RUNS_PAGE", "overview", "plot", "runs"]
