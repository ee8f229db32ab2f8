"""``masbench tasks show|export``: look at a suite's tasks without running anything."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import NoReturn

import typer
import yaml
from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..bench import dag as dagmod
from ..bench.loaders import load_suite_tasks
from ..bench.replayscore import read_replies, score_replies
from ..bench.types import TaskInstance
from ..library import Library, bundled_root
from ..spec import SuiteSpec

tasks_app = typer.Typer(help="Show or export the tasks of a benchmark suite (no model is called).",
                        no_args_is_help=True)


def resolve_suite(suite: str) -> Path:
    """A suite file from a path, or a name looked up as ``tasks/<name>.yaml`` in the working
    directory, then in the bundled library."""
    given = Path(suite)
    if given.suffix in (".yaml", ".yml") and given.is_file():
        return given
    name = given.stem if given.suffix in (".yaml", ".yml") else suite
    for folder in (Path.cwd() / "tasks", bundled_root() / "tasks"):
        for ext in (".yaml", ".yml"):
            candidate = folder / f"{name}{ext}"
            if candidate.is_file():
                return candidate
    raise FileNotFoundError(f"no suite {suite!r}: not a file, and no tasks/{name}.yaml here "
                            f"or in {bundled_root() / 'tasks'}")


def suite_tasks(suite: str) -> tuple[Path, list[TaskInstance]]:
    """Load and validate a suite, then all of its tasks."""
    path = resolve_suite(suite)
    spec = Library(include_cwd=False).load_path(path, "suite", check=False).typed(SuiteSpec)
    return path, load_suite_tasks(spec, base_dir=path.parent)


def _fail(console: Console, exc: Exception) -> NoReturn:
    """Bad input (a suite, a task file, a replies file) is one line and exit 2; anything else exit 1."""
    bad_input = isinstance(exc, (ValueError, FileNotFoundError, yaml.YAMLError))
    console.print(Text(f"error: {exc}", style="bold red"), soft_wrap=True)
    raise typer.Exit(code=2 if bad_input else 1)


def _panel(task: TaskInstance) -> Panel:
    body = Text()
    body.append(task.question + "\n\n")
    body.append("gold: ", style="bold green")
    body.append(" | ".join(task.answers) + "\n")
    if task.intermediates:
        body.append("intermediates: ", style="bold")
        body.append(", ".join(task.intermediates) + "\n")
    if "dag" in task.meta:
        st = dagmod.stats(dagmod.from_json(task.meta["dag"]))
        body.append("dag: ", style="bold cyan")
        body.append(", ".join(f"{k}={v}" for k, v in st.items()) + "\n")
    body.append("skills: ", style="dim")
    body.append(", ".join(task.skills) + f"   scorer: {task.scorer}", style="dim")
    axis = f"  [{task.axis}={task.axis_value}]" if task.axis else ""
    return Panel(body, title=Text(f"{task.id}{axis}"), title_align="left")


@tasks_app.command("show")
def show(suite: str = typer.Argument(..., help="Suite name (tasks/<name>.yaml) or path to a suite YAML."),
         n: int = typer.Option(2, "--n", "-n", min=0, help="Instances to print per (source, axis value)."),
         ) -> None:
    """Print a suite's tasks: counts, then rendered instances with gold answers and DAG statistics."""
    console = Console()
    try:
        path, tasks = suite_tasks(suite)
    except Exception as exc:  # noqa: BLE001 - shown to the user, exit 1
        _fail(console, exc)
    counts = Counter((t.source, t.axis_value) for t in tasks)
    table = Table(title=f"{path} — {len(tasks)} tasks")
    for col in ("source", "value", "tasks"):
        table.add_column(col)
    for (source, value), k in counts.items():
        table.add_row(source, "" if value is None else str(value), str(k))
    console.print(table)
    shown: Counter = Counter()
    for task in tasks:
        key = (task.source, task.axis_value)
        if shown[key] < n:
            shown[key] += 1
            console.print(_panel(task))


@tasks_app.command("export")
def export(suite: str = typer.Argument(..., help="Suite name (tasks/<name>.yaml) or path to a suite YAML."),
           out: Path | None = typer.Option(None, "--out", "-o",
                                           help="JSONL file to write (default: stdout)."),
           ) -> None:
    """Write a suite's tasks as JSONL, one TaskInstance per line (DAG included)."""
    console = Console(stderr=True)
    try:
        _, tasks = suite_tasks(suite)
    except Exception as exc:  # noqa: BLE001
        _fail(console, exc)
    lines = "".join(t.model_dump_json() + "\n" for t in tasks)
    if out is None:
        typer.echo(lines, nl=False)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(lines, encoding="utf-8")
    console.print(f"wrote {len(tasks)} tasks to {out}")


@tasks_app.command("score")
def score_cmd(suite: str = typer.Argument(..., help="Suite name (tasks/<name>.yaml) or path to a suite YAML."),
              replies: Path = typer.Option(..., "--replies", help='JSONL file of {"id": ..., "reply": ...} lines.'),
              show: int = typer.Option(50, "--show", min=0, help="Per-task rows to print."),
              ) -> None:
    """Score replies produced elsewhere with the suite's own scorers: per-task and overall accuracy."""
    console = Console()
    try:
        _, tasks = suite_tasks(suite)
        result = score_replies(tasks, read_replies(replies), replies)
    except Exception as exc:  # noqa: BLE001 - shown to the user
        _fail(console, exc)
    table = Table(title=f"{replies} scored with {suite}")
    for col in ("task", "scorer", "gold", "predicted", "correct"):
        table.add_column(col, overflow="fold")
    for row in result.rows[:show]:
        table.add_row(row.task_id, row.scorer, " | ".join(row.gold), " | ".join(row.predicted),
                      "yes" if row.correct else "no")
    console.print(table)
    for source, (right, total) in result.by_source().items():
        console.print(f"{source}: {right}/{total} = {100 * right / total:.1f}%", markup=False)
    console.print(f"accuracy: {result.correct}/{result.scored} = {100 * result.accuracy:.1f}% "
                  f"({result.missing} suite tasks without a reply)", markup=False)


def register(app: typer.Typer) -> None:
    """Mount ``masbench tasks``."""
    app.add_typer(tasks_app, name="tasks", help="Show and export benchmark tasks.")
