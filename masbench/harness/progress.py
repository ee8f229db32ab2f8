"""The progress display of ``masbench run``: cells done and remaining, calls, tokens, USD, ETA.

On a terminal it is a live rich bar; elsewhere (CI, pipes, log files) one plain line per update, at
most one every :data:`LOG_INTERVAL_S` seconds (``MASBENCH_PROGRESS_INTERVAL_S`` sets another; the last
one when every cell is done is always printed), never
wrapped however narrow the console thinks it is: a log has one line per update.
"""

from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress as Bar
    from rich.progress import TaskID

    from .prepare import Prepared


@dataclass
class Progress:
    """Counters the progress display reads (the whole run's, whatever the engine)."""

    total: int = 0
    done: int = 0
    skipped: int = 0
    failed: int = 0
    saved: int = 0
    """Of ``done``, the cells whose rows the store (a worker's part) has committed: a process killed
    now loses none of them, a rerun skips them. Lags ``done`` by the writer's flush interval."""
    started: float = field(default_factory=time.monotonic)


class Counters(Protocol):
    """The cell counters the display reads (the runner's ``Progress``)."""

    total: int
    done: int
    skipped: int
    failed: int


LOG_INTERVAL_S = 10.0
"""Off a terminal: the least time between two progress lines (``MASBENCH_PROGRESS_INTERVAL_S`` overrides)."""


def log_interval_s() -> float:
    """Off a terminal, the least seconds between two progress lines: ``MASBENCH_PROGRESS_INTERVAL_S``
    if set (a test that acts on progress lines need not wait 10 s for each), else :data:`LOG_INTERVAL_S`."""
    raw = os.environ.get("MASBENCH_PROGRESS_INTERVAL_S", "").strip()
    if not raw:
        return LOG_INTERVAL_S
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"MASBENCH_PROGRESS_INTERVAL_S={raw!r}: give seconds, e.g. 10") from None
    if not value >= 0:  # also refuses nan
        raise ValueError(f"MASBENCH_PROGRESS_INTERVAL_S={raw!r}: seconds must be >= 0")
    return value


_RICH_CHANGES = re.compile(r"[\x00-\x1f\x7f]|:\S*?:")
"""What rich's ``print`` could render otherwise than as is (off a terminal, without highlighting or
markup): a control code or tab, an ``:emoji:`` code."""


def plain_stderr() -> bool:
    """Whether a rich console on stderr would be no terminal, worked out without importing rich
    (~0.05 s of a run's start-up): stderr is not a tty, and neither the environment (``FORCE_COLOR``,
    ``TTY_COMPATIBLE``, ``TTY_INTERACTIVE``, Jupyter's sizes) nor IPython or IDLE could make rich decide
    otherwise. False whenever in doubt: the caller then asks rich."""
    err = sys.stderr
    if err is None or "IPython" in sys.modules or "idlelib" in sys.modules:
        return False
    if any(v in os.environ for v in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "JUPYTER_COLUMNS",
                                     "JUPYTER_LINES")):
        return False
    try:
        return not err.isatty()
    except (AttributeError, ValueError):
        return False


_BOLD = re.compile(r"(\[bold\]|\[/\])")
_TAG_OR_ESCAPE = re.compile(r"\\|\[[a-z#/@]")
"""In markup, what rich could read as a tag (``[`` then a lower-case letter, ``#``, ``/`` or ``@``) or an escape."""


def plain_line(text: str, markup: bool = False) -> str | None:
    """``text`` as rich prints it off a terminal (no highlighting, soft-wrapped), when that is plain to
    see: with ``markup``, ``[bold]…[/]`` pairs dropped (any other tag or an escape: None); nothing else
    rich would change (a control code, tab or ``:emoji:`` code: None, print it with rich)."""
    if markup:
        parts = _BOLD.split(text)
        tags, texts = parts[1::2], parts[0::2]
        if any(t != ("[bold]" if i % 2 == 0 else "[/]") for i, t in enumerate(tags)):
            return None  # a closing tag with nothing open, or bold opened twice
        text = "".join(texts)
        if _TAG_OR_ESCAPE.search(text):
            return None
    return None if _RICH_CHANGES.search(text) else text


class RunDisplay:
    def __init__(self, console: Console | None = None, interval_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic):
        """``console``: where to print (None: a rich console on stderr, made on first use; until then,
        off a terminal, each line rich would print as is is written to stderr without it, so a run
        reaches its first call without importing rich). ``interval_s``: off a terminal, the least time
        between two progress lines (None: :func:`log_interval_s`); ``clock``: seconds, monotonic
        (tests pass their own)."""
        self._console = console
        self._plain = console is None and plain_stderr()
        self.interval_s = log_interval_s() if interval_s is None else interval_s
        self._clock = clock
        self._stats: dict[str, Any] = {}
        self._bar: tuple[Bar, TaskID] | None = None
        self._state: Counters | None = None
        self._last: float | None = None
        self._final = False
        self._label = ""

    @property
    def console(self) -> Console:
        """The rich console: the one given, else one on stderr made now (soft-wrapped off a terminal:
        a log file gets one line per message, never cut at 80 columns)."""
        if self._console is None:
            from rich.console import Console  # deferred: start-up (see __init__)

            self._console = Console(stderr=True)
            self._console.soft_wrap = not self._console.is_terminal
        return self._console

    def _print(self, text: str, markup: bool = False, soft_wrap: bool | None = True) -> None:
        """One line, as rich prints it (``soft_wrap`` None: off a terminal only); off a terminal
        without rich while that gives the same text."""
        line = plain_line(text, markup) if self._plain else None
        if line is None:
            self.console.print(text, markup=markup, highlight=False,
                               soft_wrap=not self.console.is_terminal if soft_wrap is None else soft_wrap)
        else:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    def _line(self, text: str, markup: bool = False) -> None:
        """One line off a terminal (soft wrap: never cut at the console's width), as is on one."""
        self._print(text, markup, soft_wrap=None)

    def start(self, prep: Prepared, run_id: str, state: Counters) -> None:
        self._state = state
        sim = " [SIMULATED models]" if prep.simulated else ""
        self._label = prep.suite.name
        self._line(f"run [bold]{run_id}[/] · suite {prep.suite.name}{sim} · {len(prep.task_ids)} tasks × "
                   f"{len(prep.designs)} designs × {len(prep.suite.seeds)} seed(s)"
                   + (f" + CoT-SC pool k_max={prep.suite.cot_sc.k_max}" if prep.suite.cot_sc.enabled else "")
                   + (f" · {state.skipped} cells already done (resuming)" if state.skipped else ""), markup=True)
        if not self._plain and self.console.is_terminal:
            # deferred: rich's live bar (~20 ms of imports) is drawn only on a terminal
            from rich.progress import (BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)
            from rich.progress import Progress as Bar

            progress = Bar(
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[usage]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                console=self.console, transient=False)
            progress.start()
            self._bar = (progress, progress.add_task(self._label, total=state.total, completed=state.done, usage=""))
        self._t0 = self._clock()
        self._done0 = state.done

    def _started(self) -> Counters:
        if self._state is None:
            raise RuntimeError("RunDisplay.start() was not called")
        return self._state

    def attach(self, stats: dict[str, Any]) -> None:
        self._stats = stats

    def _usage(self) -> str:
        s = self._stats
        tok = int(s.get("prompt_tokens", 0) + s.get("completion_tokens", 0))
        fail = f" · failed cells {self._state.failed}" if self._state and self._state.failed else ""
        if s.get("breakers_open"):  # provider back-pressure, see masbench.llm.health
            fail += f" · breaker OPEN for {int(s['breakers_open'])} model(s)"
        if s.get("retry_after_waits"):
            fail += f" · Retry-After honoured {int(s['retry_after_waits'])}×"
        if s.get("limits"):  # the run's rate limiter: each limited model's window (masbench.llm.limits)
            fail += f" · limits {s['limits']}"
        return (f"calls {int(s.get('calls', 0)):,} · tokens {tok:,} · ${float(s.get('cost_usd', 0.0)):.4f}"
                f" · cache hits {int(s.get('cache_hits', 0)):,}{fail}")

    def update(self) -> None:
        st = self._started()
        if self._bar is not None:
            progress, task = self._bar
            progress.update(task, completed=st.done, usage=self._usage())
            return
        now = self._clock()
        if self._last is None or now - self._last >= self.interval_s or (st.done == st.total and not self._final):
            self._last = now
            self._final = st.done == st.total
            rate = (st.done - self._done0) / max(now - self._t0, 1e-9)
            eta = (st.total - st.done) / rate if rate > 0 else float("nan")
            # markup=False: "[quickstart]" is the label, not a rich style tag to swallow
            self._line(f"[{self._label}] {st.done}/{st.total} cells · {self._usage()} · "
                       f"elapsed {now - self._t0:.0f}s · ETA {eta:.0f}s")

    def sources(self, lines: list[str]) -> None:
        """Print what loading the suite's tasks read, one line per source group (before the run's header)."""
        for line in lines:
            self._print(line)

    def note(self, line: str) -> None:
        """Print one line above the bar (e.g. a sequential run's look: what was decided)."""
        self._print(line)

    def stop(self) -> None:
        if self._bar is not None:
            progress, task = self._bar
            progress.update(task, completed=self._started().done, usage=self._usage())
            progress.stop()
            self._bar = None
