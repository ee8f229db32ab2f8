"""``masbench …`` run in this process (typer's CliRunner) with a finished subprocess's shape
(``returncode``, ``stdout``, ``stderr``): for tests of what a command does and prints, where the
process boundary is not what is tested. A ``python -m masbench.cli run`` costs a fresh interpreter
and litellm's import (3-5 s of CPU) per call; in the test's process both are already paid.

An exception the command did not turn into an exit code is raised here (a subprocess would exit 1
with a traceback), so no test can mistake a crash for an expected non-zero exit."""

from __future__ import annotations

from dataclasses import dataclass

from typer.testing import CliRunner

from masbench.cli import app


@dataclass(frozen=True)
class Ran:
    """What the command returned and wrote."""

    returncode: int
    stdout: str
    stderr: str


def masbench(*args: str, env: dict[str, str | None] | None = None) -> Ran:
    """Run ``masbench ARGS`` here. ``env``: variables set for the call (``None`` unsets one)."""
    res = CliRunner().invoke(app, list(args), env=env)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return Ran(res.exit_code, res.stdout, res.stderr)
