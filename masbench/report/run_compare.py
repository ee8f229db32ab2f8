"""``masbench compare --a RUN[:DESIGN] --b RUN[:DESIGN]``: runs against runs in the terminal.

Opens the store of A (``--store``) and, when B's is another file (``--b-store``), attaches it
read-only; pairs the cells, tests, corrects and decides (:mod:`masbench.harness.run_compare`);
prints one table, one verdict line per pair in the verdict's words, and what was left out::

    B r2:debate vs A r1:debate: +12.5 pp, 95% paired CI [+2.5, +22.5], p = 0.021, 40 tasks
      (cost 1.02× A's, tokens: same) — worth it (significantly better than A at the same cost)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..harness.paired_tests import stats_spec_of
from ..harness.run_compare import CHEAPER, COSTLIER, PairResult, Ref, compare_runs, resolve
from ..store.run_pairs import GOLD_DIFFERS, ONLY_A, ONLY_B, Side, attached, run_config_json, run_header
from .data import ReportError, RunInfo, open_store
from .verdict import NOT_WORTH, WORTH

_STYLE = {WORTH: "green", NOT_WORTH: "red"}
B_CATALOG = "runs_b"
"""The catalog name of B's store when it is another file."""

RULE = ("Δ = B − A per task (seeds averaged), on the (task, seed) cells both sides have with the same gold; exact "
        "McNemar clustered by task (the test of two designs within a run); Holm across the pairs asked (m). "
        "Verdict on B against A, A's cost in the CoT-SC curve's place: 'worth it'/'not worth it' only if the Holm "
        "interval excludes 0 and the cost allows it (docs/metrics.md, \"Runs against runs\")")

_LEFT_OUT = {ONLY_A: "only in A", ONLY_B: "only in B", GOLD_DIFFERS: "same task id, another gold"}


@dataclass(frozen=True)
class Asked:
    """What the command was given."""

    store: Path
    """A's store (``--store``)."""
    b_store: Path | None
    """B's store (``--b-store``; None: the same file)."""
    a: list[str]
    """``--a`` values."""
    b: list[str]
    """``--b`` values."""
    unit: str | None = None
    """``--unit`` (None: the suite's ``stats.match``)."""


def _pp(v: float | None) -> str:
    return "n/a" if v is None or v != v else f"{100 * v + 0.0:+.1f}".replace("-", "\u2212")


def _p(v: float) -> str:
    return "n/a" if v != v else (f"{v:.3f}" if v >= 0.001 else "< 0.001")


def _p_is(v: float) -> str:
    """``= 0.021`` or ``< 0.001``."""
    text = _p(v)
    return text if text.startswith("<") else f"= {text}"


def label(s: Side) -> str:
    """``run:design`` of a side."""
    return f"{s.run}:{s.design}"


def evidence(r: PairResult) -> str:
    """``95% paired CI [lo, hi], Holm p = … (m pairs), n tasks`` at the pair's Holm level."""
    lo, hi = r.ci_holm
    holm = f"Holm p {_p_is(r.p_holm)} ({r.family_size} pairs)" if r.family_size > 1 else f"p {_p_is(r.p_holm)}"
    return f"{100 * (1 - r.level_holm):.4g}% paired CI [{_pp(lo)}, {_pp(hi)}], {holm}, {r.n_tasks} tasks"


def cost_words(r: PairResult) -> str:
    """``cost 1.30× A's, tokens: costlier``."""
    ratio = "n/a" if r.cost_ratio is None else f"{r.cost_ratio:.2f}\u00d7"
    pos = {CHEAPER: "cheaper", COSTLIER: "costlier"}.get(r.cost, "same within noise")
    return f"cost {ratio} A's, {r.unit}: {pos}"


def verdict_line(r: PairResult) -> str:
    """One pair's verdict in the words of the verdict against the curve."""
    head = f"B {label(r.b)} vs A {label(r.a)}"
    if not r.n_tasks:
        return f"{head}: no matched cells \u2014 nothing to test"
    gap = f"{_pp(r.mean_diff)} pp"
    tail = f", {r.reason}" if r.reason.startswith(("needs", "no difference")) else f" ({r.reason})"
    return f"{head}: {gap}, {evidence(r)} ({cost_words(r)}) \u2014 {r.verdict}{tail}"


def left_out_lines(r: PairResult) -> list[str]:
    """What of the pair did not match, by kind (reported, not tested)."""
    out = []
    for u in r.unmatched:
        more = ", …" if u.tasks > len(u.first_tasks) else ""
        out.append(f"{label(r.b)} vs {label(r.a)}: left out {u.cells} cell(s) of {u.tasks} task(s) "
                   f"{_LEFT_OUT.get(u.kind, u.kind)}: {', '.join(u.first_tasks)}{more}")
    return out


def table(results: Sequence[PairResult]) -> Table:
    """The pairs' tests, one row each."""
    runs_a, runs_b = {r.a.run for r in results}, {r.b.run for r in results}
    short_a, short_b = len(runs_a) == 1, len(runs_b) == 1  # one run a side: its id is in the header
    t = Table(title="runs against runs: Δ = B − A on matched tasks", title_justify="left", pad_edge=False)
    for h in ("A", "B", "tasks", "cells", "acc A", "acc B", "Δ pp", "95% CI", "p", "B+ / A+", "Holm p (m)",
              "Holm CI", "cost B/A", "verdict"):
        t.add_column(h, justify="left" if h in ("A", "B", "verdict") else "right", no_wrap=h not in ("A", "B"),
                     overflow="fold")
    for r in results:
        acc = lambda v: "–" if v is None else f"{100 * v:.1f}%"  # noqa: E731
        ratio = "–" if r.cost_ratio is None else f"{r.cost_ratio:.2f}\u00d7 {r.unit}"
        t.add_row(Text(r.a.design if short_a else label(r.a)), Text(r.b.design if short_b else label(r.b)), str(r.n_tasks), str(r.n_cells), acc(r.acc_a), acc(r.acc_b),
                  _pp(r.mean_diff), f"[{_pp(r.ci[0])}, {_pp(r.ci[1])}]", _p(r.p_value), f"{r.n_plus} / {r.n_minus}",
                  f"{_p(r.p_holm)} ({r.family_size})", f"[{_pp(r.ci_holm[0])}, {_pp(r.ci_holm[1])}]", ratio,
                  Text(r.verdict if r.n_tasks else "–", style=_STYLE.get(r.verdict, "yellow")))
    return t


def _config(store: Any, run: str) -> dict | None:
    cfg = run_config_json(store, run)
    return json.loads(cfg) if isinstance(cfg, str) else cfg


@dataclass
class Outcome:
    """What the command computed: the pairs' results and the header of every run they read."""

    results: list[PairResult]
    """One per pair asked."""
    runs: dict[tuple[str, str], RunInfo]
    """(side 'A' or 'B', run id) → its header."""


def run_pairs(asked: Asked) -> Outcome:
    """Open the store(s), resolve the pairs, test them (``ReportError`` for a bad run, design or file)."""
    if asked.b_store is not None and not asked.b_store.exists():
        raise ReportError(f"no store at {asked.b_store} (--b-store)")
    try:
        a_refs, b_refs = [Ref.parse(x) for x in asked.a], [Ref.parse(x) for x in asked.b]
    except ValueError as exc:
        raise ReportError(str(exc)) from exc
    same = asked.b_store is None or asked.b_store.resolve() == asked.store.resolve()
    if not same and asked.b_store is not None:
        open_store(asked.b_store).close()  # brings an older file's schema forward (as compare does)
    with open_store(asked.store) as st:
        try:
            if same:
                return _compute(st, a_refs, b_refs, "", asked.unit)
            assert asked.b_store is not None
            with attached(st, asked.b_store, B_CATALOG) as cat:
                return _compute(st, a_refs, b_refs, cat, asked.unit)
        except ValueError as exc:
            raise ReportError(str(exc)) from exc


def _info(st: Any, run: str, catalog: str) -> RunInfo:
    suite, status, created, finished, models, simulated = run_header(st, run, catalog) or (None,) * 6
    models = (json.loads(models) if isinstance(models, str) else models) or {}
    return RunInfo(run, suite or "?", status or "?", created, finished, {str(k): str(v) for k, v in models.items()},
                   bool(simulated))


def _compute(st: Any, a_refs: list[Ref], b_refs: list[Ref], cat: str, unit: str | None) -> Outcome:
    pairs = resolve(st, a_refs, b_refs, cat)
    results = compare_runs(st, pairs, stats_spec_of(_config(st, pairs[0][0].run)), unit)
    runs = {}
    for a, b in pairs:
        runs[("A", a.run)] = _info(st, a.run, a.catalog)
        runs[("B", b.run)] = _info(st, b.run, b.catalog)
    return Outcome(results, runs)


def print_pairs(outcome: Outcome, asked: Asked, console: Console | None = None) -> None:
    """The header (each run read: store, suite, models, labels), the table, the verdicts, what was left out."""
    console = console or Console()
    soft = not console.is_terminal
    results = outcome.results
    for (side, _), info in outcome.runs.items():
        where = asked.store if side == "A" else (asked.b_store or asked.store)
        console.print(Text(f"{side}: run {info.run_id} · suite {info.suite} · models {info.models_text} · "
                           f"{info.created_at} · store {where}"), soft_wrap=soft)
        if info.label:
            console.print(Text(f"{side}: {info.label}", style="bold yellow"), soft_wrap=soft)
    console.print(table(results))
    for r in results:
        line = verdict_line(r)
        text = Text(line)
        text.stylize(_STYLE.get(r.verdict, "yellow"), len(line) - len(line.split("\u2014", 1)[-1]), len(line))
        console.print(text, soft_wrap=soft)
    for r in results:
        for line in left_out_lines(r) + r.notes:
            console.print(Text(line, style="yellow"), soft_wrap=soft)
    console.print(Text(RULE, style="dim"), soft_wrap=soft)


def compare_runs_command(asked: Asked, console: Console | None = None) -> list[PairResult]:
    """``masbench compare --a … --b …``: compute and print; returns the results."""
    outcome = run_pairs(asked)
    print_pairs(outcome, asked, console)
    return outcome.results


__all__ = ["Asked", "B_CATALOG", "Outcome", "RULE", "compare_runs_command", "cost_words", "evidence", "label", "left_out_lines",
           "print_pairs", "run_pairs", "table", "verdict_line"]
