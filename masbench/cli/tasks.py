"""``masbench tasks show|export|score``: look at a suite's tasks, or score replies made elsewhere,
without running anything."""

from __future__ import annotations

import csv
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Callable, NoReturn

import typer
import yaml
from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..bench import dag as dagmod
from ..bench.loaders import SuiteTasks, load_suite
from ..bench.replayscore import ReplayResult, read_replies, score_replies
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


def suite_file_tasks(suite: str) -> tuple[Path, SuiteTasks]:
    """Load and validate a suite, then all of its tasks (and what each source read)."""
    path = resolve_suite(suite)
    spec = Library(include_cwd=False).load_path(path, "suite", check=False).typed(SuiteSpec)
    return path, load_suite(spec, base_dir=path.parent)


def suite_tasks(suite: str) -> tuple[Path, list[TaskInstance]]:
    """Load and validate a suite, then all of its tasks."""
    path, loaded = suite_file_tasks(suite)
    return path, loaded.tasks


def print_reads(loaded: SuiteTasks, console: Console) -> None:
    """The rows each source read, one line each (a warning, in yellow, where a cap ``n`` cut a split
    or file) — printed once the command has succeeded, so an error stays one line."""
    for read in loaded.reads:
        console.print(read.line(), markup=False, highlight=False, soft_wrap=True, style="yellow" if read.cut else None)


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


def _group(task: TaskInstance) -> tuple[str, str | None, int | None]:
    """What ``tasks show`` counts by: (source, axis, value) — published breadth = 3 and horizon = 3
    are two rows, not one."""
    return task.source, task.axis, task.axis_value


@tasks_app.command("show")
def show(suite: str = typer.Argument(..., help="Suite name (tasks/<name>.yaml) or path to a suite YAML."),
         n: int = typer.Option(2, "--n", "-n", min=0, help="Instances to print per (source, axis, value)."),
         ) -> None:
    """Print a suite's tasks: rows read per source, counts per (source, axis, value), then rendered
    instances with gold answers and DAG statistics."""
    console = Console()
    try:
        path, loaded = suite_file_tasks(suite)
    except Exception as exc:  # noqa: BLE001 - shown to the user, exit 1
        _fail(console, exc)
    print_reads(loaded, console)
    tasks = loaded.tasks
    counts = Counter(_group(t) for t in tasks)
    table = Table(title=f"{path} — {len(tasks)} tasks")
    for col in ("source", "axis", "value", "tasks"):
        table.add_column(col)
    for (source, axis, value), k in counts.items():
        table.add_row(source, axis or "", "" if value is None else str(value), str(k))
    console.print(table)
    shown: Counter = Counter()
    for task in tasks:
        key = _group(task)
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
        _, loaded = suite_file_tasks(suite)
    except Exception as exc:  # noqa: BLE001
        _fail(console, exc)
    print_reads(loaded, console)
    tasks = loaded.tasks
    lines = "".join(t.model_dump_json() + "\n" for t in tasks)
    if out is None:
        typer.echo(lines, nl=False)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(lines, encoding="utf-8")
    console.print(f"wrote {len(tasks)} tasks to {out}")


def _table(result: ReplayResult, title: str, show: int) -> None:
    console = Console()
    several = any(r.sample for r in result.rows)  # a sample column only when some id has several replies
    table = Table(title=title)
    for col in ("task", *(("sample",) if several else ()), "scorer", "gold", "predicted", "correct"):
        table.add_column(col, overflow="fold")
    for row in result.rows[:show]:
        table.add_row(row.task_id, *((str(row.sample),) if several else ()), row.scorer, " | ".join(row.gold),
                      " | ".join(row.predicted), "yes" if row.correct else "no")
    console.print(table)
    _summary(result, console)


def _summary(result: ReplayResult, console: Console) -> None:
    for source, (right, total) in result.by_source().items():
        console.print(f"{source}: {right}/{total} = {100 * right / total:.1f}%", markup=False)
    console.print(f"accuracy: {result.correct}/{result.scored} = {100 * result.accuracy:.1f}% "
                  f"({result.missing} suite tasks without a reply)", markup=False)


def _jsonl(result: ReplayResult, _title: str, _show: int) -> None:
    for row in result.rows:
        sys.stdout.write(json.dumps(row.record(), ensure_ascii=False) + "\n")
    _summary(result, Console(stderr=True))


CSV_COLUMNS: tuple[str, ...] = ("id", "sample", "source", "scorer", "gold", "predicted", "correct")
"""``tasks score --format csv`` columns (the keys of a ``jsonl`` line too); in CSV, ``gold`` and
``predicted`` join several answers with `` | `` and ``correct`` is ``true``/``false``."""


def _csv(result: ReplayResult, _title: str, _show: int) -> None:
    out = csv.DictWriter(sys.stdout, fieldnames=CSV_COLUMNS, lineterminator="\n")
    out.writeheader()
    for row in result.rows:
        rec = row.record()
        out.writerow({**rec, "gold": " | ".join(rec["gold"]), "predicted": " | ".join(rec["predicted"]),
                      "correct": str(rec["correct"]).lower()})
    _summary(result, Console(stderr=True))


SCORE_FORMATS: dict[str, Callable[[ReplayResult, str, int], None]] = {
    "table": _table,
    "jsonl": _jsonl,
    "csv": _csv,
}
"""``tasks score --format``: a rich table (the first ``--show`` rows) and the accuracy lines on
stdout; or every verdict as JSON lines / CSV on stdout, the accuracy lines on stderr."""


def _format(value: str) -> str:
    if value not in SCORE_FORMATS:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(SCORE_FORMATS)}")
    return value


@tasks_app.command("score")
def score_cmd(suite: str = typer.Argument(..., help="Suite name (tasks/<name>.yaml) or path to a suite YAML."),
              replies: Path = typer.Option(..., "--replies", help='JSONL file of {"id": ..., "reply": ...} lines; '
                                           "an id may have several replies (each scored; optional "
                                           '"sample": an integer ≥ 0, default the reply\'s index in file order).'),
              fmt: str = typer.Option("table", "--format", callback=_format,
                                      help="table (rich, the first --show rows), jsonl or csv (every verdict: "
                                           "id, sample, source, scorer, gold, predicted, correct)."),
              show: int = typer.Option(50, "--show", min=0, help="Per-reply rows to print (table format)."),
              ) -> None:
    """Score replies produced elsewhere with the suite's own scorers: one verdict per reply, then
    per-source and overall accuracy over the replies."""
    err = Console(stderr=True)
    try:
        _, loaded = suite_file_tasks(suite)
        result = score_replies(loaded.tasks, read_replies(replies), replies)
    except Exception as exc:  # noqa: BLE001 - shown to the user
        _fail(err, exc)
    print_reads(loaded, err)
    SCORE_FORMATS[fmt](result, f"{replies} scored with {suite}", show)


def register(app: typer.Typer) -> None:
    """Mount ``masbench tasks``."""
    app.add_typer(tasks_app, name="tasks", help="Show and export benchmark tasks.")
