"""``masbench doctor``: one cheap call per model of a suite before anything is spent — a missing
key, a wrong model id or an unreachable server shows up here, named, instead of mid-run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..harness.prepare import RunOptions, prepare
from ..llm import Gateway, is_simulated
from ..llm.errors import misconfig_hint, systemic_reason
from ..spec.problems import SpecError
from .common import ApiBaseOpt, FreeOpt, ModelOpt, console, err, model_flags

PING = [{"role": "user", "content": "Reply with the single word OK."}]


async def _ping(gw: Gateway, alias: str) -> tuple[str, str]:
    res = await gw.complete(alias, PING, max_tokens=4, temperature=0.0, tags={"purpose": "smoke"})
    spec = gw.models[alias]
    if res.ok:
        return "ok", f"{res.latency_s:.2f}s, {res.total_tokens} tokens, ${res.cost_usd:.6f}"
    if systemic_reason(Exception(res.error)) or gw.fatal:
        return "misconfigured", f"{misconfig_hint(spec.id, spec.api_key_env, res.error or '')}. Error: {res.error}"
    return "failed", res.error or "unknown error"


def doctor(suite: Annotated[str, typer.Argument(help="Suite name (tasks/<name>.yaml) or path.")],
           model: ModelOpt = None,
           free: FreeOpt = None,
           api_base: ApiBaseOpt = None,
           lib: Annotated[Optional[list[Path]], typer.Option("--lib", help="Extra library root(s).")] = None) -> None:
    """Make one cheap call per model of a suite and say which ones work (exit 3 if one is misconfigured)."""
    try:
        prep = prepare(RunOptions(suite=suite, **model_flags(model, free, api_base), lib=lib or []))
    except SpecError as exc:
        for p in exc.problems:
            err.print(str(p), markup=False, highlight=False)
        raise typer.Exit(2)

    async def all_models() -> list[tuple[str, str, str]]:
        out = []
        for alias in prep.models:  # one at a time: a fresh gateway each, so one model's failure is its own
            gw = Gateway({alias: prep.models[alias]}, retry_base_s=0.2, retry_max_s=2.0)
            out.append((alias, *await _ping(gw, alias)))
        return out

    worst = 0
    for alias, verdict, detail in asyncio.run(all_models()):
        code = {"ok": 0, "failed": 1, "misconfigured": 3}[verdict]
        worst = max(worst, code)
        sim = " (SIMULATED)" if is_simulated(prep.models[alias]) else ""
        console.print(f"{alias} ({prep.models[alias].id}){sim}: {verdict} · {detail}", markup=False, highlight=False,
                      soft_wrap=True)
    if worst:
        raise typer.Exit(worst)


def register(app: typer.Typer) -> None:
    """Mount ``doctor``."""
    app.command()(doctor)


__all__ = ["doctor", "register"]
