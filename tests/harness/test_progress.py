"""The plain (non-terminal) progress lines: the "[suite]" label and the SIMULATED mark, one line per
update at most every 10 s (an injected clock), never wrapped (also through a real pipe); written
without rich where rich would print them as they are, and by rich everywhere else."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from types import SimpleNamespace

from rich.console import Console

import pytest

from masbench.harness.progress import LOG_INTERVAL_S, RunDisplay, log_interval_s, plain_line, plain_stderr
from simsuite import write_suite


def test_plain_progress_line_keeps_the_suite_label() -> None:
    out = io.StringIO()
    display = RunDisplay(Console(file=out, force_terminal=False, width=200), interval_s=0.0)
    suite = SimpleNamespace(name="quickstart", seeds=[0], cot_sc=SimpleNamespace(enabled=False))
    prep = SimpleNamespace(simulated=True, suite=suite, task_ids=["a", "b"], designs=[1])
    state = SimpleNamespace(total=2, done=0, skipped=0, failed=0)
    display.start(prep, "run-1", state)
    display.attach({"calls": 3, "prompt_tokens": 10, "completion_tokens": 5})
    state.done = 2
    display.update()
    text = out.getvalue()
    assert "suite quickstart [SIMULATED models]" in text
    assert "[quickstart] 2/2 cells · calls 3 · tokens 15" in text


def _plain(width: int, clock) -> tuple[RunDisplay, io.StringIO, SimpleNamespace]:
    """A display on a non-terminal console of ``width`` columns, started on a 10-cell run."""
    out = io.StringIO()
    display = RunDisplay(Console(file=out, force_terminal=False, width=width), clock=clock)
    suite = SimpleNamespace(name="a-suite-with-a-rather-long-name", seeds=[0], cot_sc=SimpleNamespace(enabled=True, k_max=8))
    prep = SimpleNamespace(simulated=True, suite=suite, task_ids=[str(i) for i in range(40)], designs=[1, 2, 3])
    state = SimpleNamespace(total=10, done=0, skipped=0, failed=0)
    display.start(prep, "run-with-an-id-of-some-length-20260101", state)
    display.attach({"calls": 123456, "prompt_tokens": 9_876_543, "completion_tokens": 1_234_567, "cost_usd": 12.5,
                    "cache_hits": 42})
    return display, out, state


PROGRESS = re.compile(r"^\[a-suite-with-a-rather-long-name\] (\d+)/10 cells · calls 123,456 · tokens 11,111,110 · "
                      r"\$12\.5000 · cache hits 42 · elapsed (\d+)s · ETA (\d+|nan)s$")


def test_plain_progress_is_one_line_per_update_at_most_every_10_s() -> None:
    """Off a terminal: an update prints only if 10 s (injected clock) passed since the last line,
    except the last one (every cell done); each line is whole however narrow the console."""
    now = [100.0]
    display, out, state = _plain(40, lambda: now[0])
    printed_at = []
    # (clock, cells done): updates at 0, 3, 9.9 s print once; 10 s prints; 12, 19.9 no; 20.5 yes; the end yes
    for t, done in ((0.0, 1), (3.0, 2), (9.9, 3), (10.0, 4), (12.0, 5), (19.9, 6), (20.5, 7), (21.0, 10)):
        now[0] = 100.0 + t
        state.done = done
        before = out.getvalue().count("\n")
        display.update()
        if out.getvalue().count("\n") > before:
            printed_at.append(t)
    assert printed_at == [0.0, 10.0, 20.5, 21.0]
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("run run-with-an-id-of-some-length-20260101 · suite a-suite-with-a-rather-long-name "
                               "[SIMULATED models] · 40 tasks × 3 designs × 1 seed(s) + CoT-SC pool k_max=8")
    progress = lines[1:]
    assert len(progress) == 4 and all(PROGRESS.match(line) for line in progress), progress
    assert [int(PROGRESS.match(line)[1]) for line in progress] == [1, 4, 7, 10]  # type: ignore[index]
    assert [int(PROGRESS.match(line)[2]) for line in progress] == [0, 10, 20, 21]  # type: ignore[index]
    # a repeated update once all cells are done does not print the last line again
    now[0] += 1
    display.update()
    assert out.getvalue().splitlines() == lines


def test_the_progress_interval_is_10_s_unless_the_environment_sets_it(monkeypatch) -> None:
    monkeypatch.delenv("MASBENCH_PROGRESS_INTERVAL_S", raising=False)
    assert LOG_INTERVAL_S == 10.0 and log_interval_s() == 10.0
    assert RunDisplay(Console(file=io.StringIO())).interval_s == 10.0
    monkeypatch.setenv("MASBENCH_PROGRESS_INTERVAL_S", " 2.5 ")
    assert RunDisplay(Console(file=io.StringIO())).interval_s == 2.5
    assert RunDisplay(Console(file=io.StringIO()), interval_s=0.0).interval_s == 0.0  # an explicit value wins
    monkeypatch.setenv("MASBENCH_PROGRESS_INTERVAL_S", "")
    assert log_interval_s() == 10.0
    for bad in ("ten", "-1", "nan"):
        monkeypatch.setenv("MASBENCH_PROGRESS_INTERVAL_S", bad)
        with pytest.raises(ValueError, match="MASBENCH_PROGRESS_INTERVAL_S"):
            log_interval_s()


@pytest.mark.slow
def test_run_piped_to_a_log_has_no_wrapped_progress_line(tmp_path) -> None:
    """`masbench run` with stdout and stderr piped (a log file): every progress line is whole on one
    line, though the console width defaults to 80 and the lines are longer."""
    suite = write_suite(tmp_path, name="log-friendly-suite-name", n=3, designs="[cot, debate]", k_max=3)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "FORCE_COLOR", "TERM")}
    proc = subprocess.run([sys.executable, "-m", "masbench.cli", "run", str(suite), "--new"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    line = re.compile(r"^\[log-friendly-suite-name\] (\d+)/(\d+) cells · calls [\d,]+ · tokens [\d,]+ · \$[\d.]+ · "
                      r"cache hits [\d,]+ · elapsed \d+s · ETA (\d+|nan)s$")
    progress = [x for x in lines if "cells ·" in x or "ETA" in x or "elapsed" in x]
    assert progress and all(line.match(x) for x in progress), progress
    assert max(len(x) for x in progress) > 80  # longer than the default width: it would have wrapped
    last = line.match(progress[-1])
    assert last is not None and last[1] == last[2]  # the last line: every cell done
    head = [x for x in lines if x.startswith("run ")]
    assert len(head) == 1 and "suite log-friendly-suite-name [SIMULATED models]" in head[0] and "k_max=3" in head[0]
    assert any(x.startswith("report: masbench report --store ") and x.endswith("--out reports/" + proc.stdout.strip())
               for x in lines)


def _rich(text: str, markup: bool) -> str:
    """What rich's console prints off a terminal, as the display asks it to (no highlighting, soft-wrapped)."""
    out = io.StringIO()
    Console(file=out, force_terminal=False, width=20).print(text, markup=markup, highlight=False, soft_wrap=True)
    return out.getvalue()


# (text, markup, plain?): the display's own lines, then what rich would change
LINES = [
    ("run [bold]quickstart-20261207-211711-024ddf[/] · suite quickstart [SIMULATED models] · 2 tasks × 3 designs "
     "× 1 seed(s) + CoT-SC pool k_max=4", True, True),
    ("[quickstart] 8/8 cells · calls 18 · tokens 2,048 · $0.0000 · cache hits 2 · elapsed 0s · ETA 0s", False,
     True),
    ("warning: arithmetic: 40 tasks made by generator masbench.arith (distinct: true draws distinct ones)", False,
     True),
    ("a \\[bold] and [red] stay in plain text", False, True),
    ("suite [Big] [1] [_x] in markup stay", True, True),
    ("run [bold]r[/] · [red]s[/]", True, False),  # another tag
    ("run [/]r", True, False),  # a closing tag with nothing open: rich refuses it
    ("run [bold]a[bold]b[/]", True, False),
    ("escaped \\[bold] tag", True, False),
    ("a :thumbs_up: code", False, False),
    ("a\ttab", False, False),
    ("a carriage\rreturn", False, False),
    ("two\nlines", False, False),
]


@pytest.mark.parametrize(("text", "markup", "plain"), LINES)
def test_a_plain_line_is_what_rich_prints_or_left_to_rich(text: str, markup: bool, plain: bool) -> None:
    line = plain_line(text, markup)
    assert (line is not None) == plain
    if line is not None:
        assert line + "\n" == _rich(text, markup)


def test_stderr_is_plain_off_a_terminal_unless_the_environment_says_otherwise(monkeypatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    for var in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "JUPYTER_COLUMNS", "JUPYTER_LINES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert plain_stderr() is True and Console(stderr=True).is_terminal is False
    monkeypatch.setattr(sys, "stderr", Tty())
    assert plain_stderr() is False and Console(stderr=True).is_terminal is True
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich calls a pipe a terminal now
    assert plain_stderr() is False and Console(stderr=True).is_terminal is True
    monkeypatch.delenv("FORCE_COLOR")
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    assert plain_stderr() is False and Console(stderr=True).is_terminal is True


def test_a_display_without_a_console_writes_plain_lines_and_makes_one_only_when_asked(monkeypatch) -> None:
    """Off a terminal the header and the progress lines go to stderr as rich would print them, with
    no console made; a line rich would change (here an emoji code in a note) makes the console, on
    stderr and soft-wrapped, and it prints that line."""
    for var in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "JUPYTER_COLUMNS", "JUPYTER_LINES"):
        monkeypatch.delenv(var, raising=False)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    display = RunDisplay(interval_s=0.0)
    suite = SimpleNamespace(name="quickstart", seeds=[0], cot_sc=SimpleNamespace(enabled=False))
    prep = SimpleNamespace(simulated=True, suite=suite, task_ids=["a", "b"], designs=[1])
    state = SimpleNamespace(total=2, done=0, skipped=0, failed=0)
    display.sources(["one-step: 2 tasks made by generator masbench.depth"])
    display.start(prep, "run-1", state)
    state.done = 2
    display.update()
    assert display._console is None
    assert err.getvalue().splitlines()[:2] == [
        "one-step: 2 tasks made by generator masbench.depth",
        "run run-1 · suite quickstart [SIMULATED models] · 2 tasks × 1 designs × 1 seed(s)"]
    assert err.getvalue().splitlines()[2].startswith("[quickstart] 2/2 cells · calls 0 · tokens 0")
    display.note("decided :thumbs_up:")
    assert display._console is not None and display.console.soft_wrap is True
    assert err.getvalue().splitlines()[3] == "decided \N{THUMBS UP SIGN}"
