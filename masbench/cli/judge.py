"""``masbench judge check``: a judge's agreement with rule-checkable golds, stored for ``compare``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console

from ..bench import TaskDataError
from ..harness.judge_check import judge_check
from ..harness.prepare import RunOptions
from ..harness.progress import RunDisplay
from ..harness.scoring import JudgeConfigError
from ..registry import RegistryError
from ..spec.problems import SpecError
from ..store import StoreBusy
from .common import ApiBaseOpt, FreeOpt, ModelOpt, model_flags, refuse_busy

judge_app = typer.Typer(no_args_is_help=True, help="Model judges as scorers: measure a judge against rule-checkable "
                                                   "golds.")


def _pct(v: Any) -> str:
    return "n/a" if v is None else f"{100 * float(v):.1f}%"


def _ci(lo: Any, hi: Any) -> str:
    return "" if lo is None or hi is None else f" [{100 * float(lo):.1f}, {100 * float(hi):.1f}]"


def check_lines(row: dict[str, Any]) -> list[str]:
    """The check's figures, one line each."""
    sim = " SIMULATED" if row.get("simulated") else ""
    k = int(row.get("k") or 1)
    lines = [f"judge {row['judge']} on {row['judge_model']}: {row['n_checked']} replies checked on "
             f"{row['n_tasks']} tasks of {row['suite']} (k = {k}, {row['scale']}){sim}",
             f"agreement with the gold: {_pct(row['agreement'])}{_ci(row['agreement_lo'], row['agreement_hi'])} "
             "(Wilson 95%)",
             f"false pass: {_pct(row['false_pass'])}{_ci(row['false_pass_lo'], row['false_pass_hi'])} of "
             f"{row['n_rule_fail']} replies the rule fails",
             f"false fail: {_pct(row['false_fail'])}{_ci(row['false_fail_lo'], row['false_fail_hi'])} of "
             f"{row['n_rule_pass']} replies the rule passes"]
    if k > 1:
        lines.append(f"self-consistency over k = {k}: two samples agree {_pct(row['self_consistency'])}; "
                     f"unanimous on {_pct(row['unanimous'])} of replies")
    if row.get("unparsed"):
        lines.append(f"unreadable verdicts: {_pct(row['unparsed'])} of the judge's samples (counted as the judge's "
                     "`unparsed` setting says)")
    tokens = int(row.get("judge_tokens") or 0)
    lines.append(f"judge cost: {int(row.get('judge_calls') or 0)} calls, {tokens:,} tokens, "
                 f"${float(row.get('judge_usd') or 0):.4f} (purpose scoring: in no design's cost)")
    return lines


@judge_app.command("check")
def check(suite: Annotated[str, typer.Argument(help="Suite name (tasks/<name>.yaml) or path.")],
          judge: Annotated[Optional[str], typer.Option("--judge", help="The judge agent (default: the suite's "
                                                       "`judge:` block).")] = None,
          k: Annotated[Optional[int], typer.Option("--k", min=1, max=32, help="Judge samples per reply (default: "
                                                   "the suite's judge).")] = None,
          model: ModelOpt = None, free: FreeOpt = None, api_base: ApiBaseOpt = None,
          store: Annotated[Optional[Path], typer.Option("--store", help="DuckDB file (default: the suite's).")] = None,
          limit: Annotated[Optional[int], typer.Option("--limit", min=1, help="First N tasks of each source.")] = None,
          concurrency: Annotated[Optional[int], typer.Option("--concurrency", min=1, help="Cells in flight.")] = None,
          lib: Annotated[Optional[list[Path]], typer.Option("--lib", help="Extra library root(s).")] = None,
          new: Annotated[bool, typer.Option("--new", help="Start a new check run instead of resuming one.")] = False
          ) -> None:
    """Judge the replies of a suite's tasks that have a rule-checkable gold; report agreement with the
    gold, false pass and false fail rates with Wilson 95% intervals and self-consistency over k; store them."""
    err = Console(stderr=True)
    opts = RunOptions(suite=suite, store=store, **model_flags(model, free, api_base), limit=limit, new=new,
                      concurrency=concurrency, lib=lib or [], judge=judge, judge_k=k)
    try:
        res = asyncio.run(judge_check(opts, RunDisplay(err)))
    except SpecError as exc:
        for p in exc.problems:
            err.print(str(p), markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    except (JudgeConfigError, TaskDataError, RegistryError) as exc:
        err.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    except StoreBusy as exc:
        refuse_busy(exc, err)
    out = Console()
    if res.row is None:
        err.print("error: no reply was checked (every cell failed?)", markup=False, highlight=False)
        raise typer.Exit(1)
    for line in check_lines(res.row):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    out.print(f"stored in judge_checks of {res.summary.store} (run {res.summary.run_id})", markup=False,
              highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Mount ``masbench judge ...`` on ``app``."""
    app.add_typer(judge_app, name="judge")


__all__ = ["check", "check_lines", "judge_app", "register"]
