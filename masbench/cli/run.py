"""``masbench run``.

Mount with :func:`register` (adds the ``run`` command). The root group loads this module only when
``run`` is used, so it imports at its top."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .. import api, telemetry
from ..bench import TaskDataError
from ..harness.engine import EngineUnavailable
from ..harness.failures import RunAborted
from ..harness.progress import RunDisplay
from ..harness.scoring import JudgeConfigError
from ..harness.sequence import SequentialError
from ..registry import PluginConflict, RegistryError
from ..spec.problems import SpecError
from ..spec.suite import TRANSCRIPT_MODES, TranscriptMode
from ..store import StoreBusy
from .common import ApiBaseOpt, FreeOpt, ModelOpt, model_flags, refuse_busy


def run(suite: Annotated[str, typer.Argument(help="Suite name (tasks/<name>.yaml) or path.")],
        model: ModelOpt = None,
        free: FreeOpt = None,
        api_base: ApiBaseOpt = None,
        store: Annotated[Optional[Path], typer.Option("--store", help="DuckDB file (default: the suite's).")] = None,
        workers: Annotated[int, typer.Option("--workers", min=1, help="Workers: processes (--engine processes, "
                                             "the default when N > 1) or Ray tasks (--engine ray; default there: "
                                             "the cluster's CPUs).")] = 1,
        engine: Annotated[Optional[str], typer.Option(
            "--engine", help="What runs the cells: local, processes or ray (default: processes with --workers > 1, "
            "else local). ray needs the ray extra. docs/scale.md")] = None,
        address: Annotated[Optional[str], typer.Option(
            "--address", help="--engine ray: the Ray cluster to join (auto, HOST:PORT, ray://HOST:10001; default: "
            "RAY_ADDRESS, else a local Ray for this run).")] = None,
        ray_mode: Annotated[Optional[str], typer.Option(
            "--ray-mode", help="--engine ray: tasks (one Ray task per shard; the default) or actors (one actor per "
            "shard holding its gateway, sent cells in batches). docs/scale.md")] = None,
        parts: Annotated[Optional[Path], typer.Option(
            "--parts", help="Directory the workers write their DuckDB parts to (default: parts/ beside the store; "
            "on a multi-machine Ray cluster a shared directory).")] = None,
        concurrency: Annotated[Optional[int], typer.Option("--concurrency", min=1, help="Cells in flight per process.")] = None,
        limit: Annotated[Optional[int], typer.Option("--limit", min=1, help="First N tasks of each source.")] = None,
        new: Annotated[bool, typer.Option("--new", help="Start a new run instead of resuming a matching one.")] = False,
        run_id: Annotated[Optional[str], typer.Option("--run-id", help="Resume (or create) this run id.")] = None,
        no_cache: Annotated[bool, typer.Option("--no-cache", help="Bypass the response cache.")] = False,
        lib: Annotated[Optional[list[Path]], typer.Option("--lib", help="Extra library root(s).")] = None,
        no_retry_failed: Annotated[bool, typer.Option("--no-retry-failed",
                                                      help="On resume, keep failed cells instead of rerunning them.")] = False,
        allow_failures: Annotated[bool, typer.Option("--allow-failures",
                                                     help="Exit 0 even if some cells failed.")] = False,
        transcripts: Annotated[Optional[str], typer.Option(
            "--transcripts", metavar="MODE", callback=lambda v: _mode(v),
            help="Keep the calls' messages and replies: full, errors (only calls whose status is not ok) or "
                 "none (default: the suite's `transcripts`, full).")] = None,
        until_decided: Annotated[bool, typer.Option(
            "--until-decided", help="Draw the tasks in a seeded random order, in batches, and look after each batch "
            "with an anytime-valid test: a design whose verdict is decided stops receiving tasks; the run ends when "
            "every design is decided or --max-tasks are drawn. docs/sequential.md")] = False,
        max_tasks: Annotated[Optional[int], typer.Option(
            "--max-tasks", min=1, help="With --until-decided: the task cap (default: all the suite's tasks).")] = None,
        batch: Annotated[Optional[int], typer.Option(
            "--batch", min=1, help="With --until-decided: tasks per batch, one look after each (default: 20).")] = None,
        otel: Annotated[bool, typer.Option("--otel", help="Export OpenTelemetry spans over OTLP/HTTP (to the "
                                           "OTEL_EXPORTER_OTLP_* endpoint, default localhost:4318; setting that "
                                           "variable alone also turns it on). docs/telemetry.md")] = False) -> None:
    """Run a suite (designs × tasks × seeds + the CoT-SC pool) into DuckDB. Rerun to resume.

    Exit codes: 0 every cell succeeded (or --allow-failures); 1 some cells failed; 2 bad input or
    the store is being written by another process; 3 a model is misconfigured (run marked failed);
    130 interrupted."""
    # its rich console (on stderr, soft-wrapped off a terminal: a log file gets one line per message, never
    # cut at 80 columns) is made on first use: a run's lines before its first call are plain off a terminal
    display = RunDisplay()
    flags = model_flags(model, free, api_base)
    try:
        summary = api.run(suite, models=flags["overrides"], store=store, otel=otel, display=display,
                          free=flags["free"], api_base=flags["api_base"], limit=limit, new=new, run_id=run_id,
                          workers=workers, concurrency=concurrency, cache=False if no_cache else None, lib=lib or [],
                          retry_failed=not no_retry_failed, transcripts=_mode(transcripts),
                          until_decided=until_decided, max_tasks=max_tasks, batch=batch, engine=engine,
                          address=address, ray_mode=ray_mode, parts=parts)
    except SpecError as exc:
        for p in exc.problems:
            display.console.print(str(p), markup=False, highlight=False, soft_wrap=True)  # one line, never wrapped
        raise typer.Exit(2)
    except SequentialError as exc:  # --until-decided on a suite (or with options) it cannot run
        display.console.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    except TaskDataError as exc:  # bad task data: one line naming the file, row and field
        display.console.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    except JudgeConfigError as exc:  # judged tasks without a usable judge: one line, before any call
        display.console.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    except (EngineUnavailable, RegistryError, PluginConflict) as exc:  # an unknown --engine, ray without its extra,
        # an installed plugin that takes a name already taken
        display.console.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    except telemetry.TelemetryUnavailable as exc:  # telemetry on without the otel extra: the install command
        display.console.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    except StoreBusy as exc:  # a second writer: one line naming the store and its holder; nothing touched
        refuse_busy(exc, display.console)
    except RunAborted as exc:  # a misconfigured model: one line, run marked failed with the reason
        display.console.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(3)
    except KeyboardInterrupt:
        display.console.print("[yellow]interrupted[/]: finished cells are saved; rerun the same command to resume.")
        raise typer.Exit(130)
    console = display.console
    sim = " (SIMULATED models: numbers are from the simulator)" if summary.simulated else ""
    console.print(f"[green]done[/] run [bold]{summary.run_id}[/]: {summary.ran} cells run, {summary.skipped} already "
                  f"done, {summary.failed} failed, {summary.wall_s:.1f}s{sim}")
    if summary.protocol:
        console.print(summary.protocol + (" SIMULATED" if summary.simulated else ""), markup=False)
    for d in summary.decisions:
        from ..report.verdict import sequential_phrase  # the report's wording: loaded once there is one to print

        console.print(f"{d['design']}: {d['verdict']} \u2014 " + sequential_phrase(d), markup=False, highlight=False,
                      soft_wrap=True)
    if summary.saving:
        from ..report.verdict import saving_line  # as above: not before the run's first call

        console.print(saving_line(summary.saving), markup=False, highlight=False, soft_wrap=True)
    if summary.failed_cells:
        reasons = "; ".join(f"{n}× {r}" for r, n in summary.reasons or [])
        console.print(f"[red]{summary.failed_cells} failed cell(s)[/] in the run; top reasons: ", end="")
        console.print(reasons, markup=False, highlight=False, soft_wrap=True)
        retry = ("a --until-decided run keeps them as its looks counted them" if summary.decisions
                 else "rerun the same command to retry them")
        console.print(retry + ("" if allow_failures else " (exit 1; --allow-failures exits 0)"), highlight=False)
    console.print(f"store: {summary.store}")
    console.print(f"report: masbench report --store {summary.store} --run {summary.run_id} --out reports/{summary.run_id}")
    typer.echo(summary.run_id)
    if summary.failed_cells and not allow_failures:
        raise typer.Exit(1)


def _mode(value: str | None) -> TranscriptMode | None:
    """The ``--transcripts`` value as a mode (None: the suite's); anything else is a usage error."""
    if value is None:
        return None
    for mode in TRANSCRIPT_MODES:
        if mode == value:
            return mode
    raise typer.BadParameter(f"{value!r} is not one of {', '.join(TRANSCRIPT_MODES)}")


def register(app: typer.Typer) -> None:
    """Mount ``masbench run`` on ``app``."""
    app.command("run")(run)


__all__ = ["register", "run"]
