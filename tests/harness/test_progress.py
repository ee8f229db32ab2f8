"""The plain (non-terminal) progress line keeps its "[suite]" label and the SIMULATED mark."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console

from masbench.harness.progress import RunDisplay


def test_plain_progress_line_keeps_the_suite_label() -> None:
    out = io.StringIO()
    display = RunDisplay(Console(file=out, force_terminal=False, width=200), interval_s=0.0)
    suite = SimpleNamespace(name="quickstart", seeds=[0], cot_sc=SimpleNamespace(enabled=False))
    prep = SimpleNamespace(simulated=True, suite=suite, tasks=[1, 2], designs=[1])
    state = SimpleNamespace(total=2, done=0, skipped=0, failed=0)
    display.start(prep, "run-1", state)
    display.attach({"calls": 3, "prompt_tokens": 10, "completion_tokens": 5})
    state.done = 2
    display.update()
    text = out.getvalue()
    assert "suite quickstart [SIMULATED models]" in text
    assert "[quickstart] 2/2 cells · calls 3 · tokens 15" in text
