"""The table of ``masbench plan --sequential`` (tasks and calls to a decision under ``--until-decided``)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ..harness.plan_sequential import SeqPlanRow


def print_sequential(rows: list[SeqPlanRow], title: str, console: Console) -> None:
    t = Table(title=title, title_justify="left")
    heads = ("design", "true Δ (pp)", "σ", "decided by cap", "right way", "tasks mean", "median", "p90",
             "calls mean", "fixed-n tasks", "fixed-n calls")
    for h in heads:
        t.add_column(h, justify="left" if h == "design" else "right")
    for r in rows:
        fixed_calls = (None if r.fixed_n is None or r.calls_per_task is None else r.fixed_n * r.calls_per_task)
        t.add_row(r.design, f"{100 * r.delta:+.1f}", f"{r.sd:.3f}", f"{r.decided:.0%}",
                  ("false: " if r.delta == 0 else "") + f"{r.right:.0%}", f"{r.tasks_mean:.0f}",
                  f"{r.tasks_median:.0f}", f"{r.tasks_p90:.0f}",
                  "–" if r.calls_mean is None else f"{r.calls_mean:,.0f}",
                  "–" if r.fixed_n is None else str(r.fixed_n),
                  "–" if fixed_calls is None else f"{fixed_calls:,.0f}")
    console.print(t)
    if rows:
        r = rows[0]
        console.print(f"SIMULATED: the sequential rule (anytime-valid betting test, a look every {r.batch} tasks, "
                      f"cap {r.cap}) decided at level {r.level:.4g} (Holm's first step); undecided streams count "
                      f"the cap. Fixed-n tasks: the fixed-n plan at the same level and power.", markup=False,
                      highlight=False)
