"""Fresh Python environments for the tests that install masbench as a user would: build a wheel of
this checkout (or of a toy distribution) with ``uv build``, make a new virtual environment with
``uv venv`` and install into it with ``uv pip`` (dependencies come from uv's cache, which
``make setup`` fills; a missing one comes from the package index). Importable like simsuite.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UV = ROOT / ".venv" / "bin" / "uv"


def _uv(*args: str | Path, timeout: float = 600) -> None:
    proc = subprocess.run([str(UV), *map(str, args)], capture_output=True, text=True, timeout=timeout, env=clean_env())
    assert proc.returncode == 0, f"uv {' '.join(map(str, args))}: exit {proc.returncode}\n{proc.stderr[-3000:]}"


def build_wheel(src: Path, out: Path) -> Path:
    """``uv build --wheel`` of the project at ``src`` into ``out``; returns the wheel."""
    _uv("build", "--wheel", "--quiet", "--out-dir", out, src)
    (wheel,) = sorted(out.glob("*.whl"), key=lambda p: p.stat().st_mtime)[-1:]
    return wheel


def fresh_venv(path: Path, *installs: str | Path, no_deps: tuple[str | Path, ...] = ()) -> Path:
    """A new virtual environment at ``path`` (this interpreter's version) with ``installs``
    (dependencies resolved) and ``no_deps`` (installed alone) in it; returns its ``bin`` folder."""
    _uv("venv", "--quiet", "--python", sys.executable, path)
    py = path / "bin" / "python"
    if installs:
        _uv("pip", "install", "--quiet", "--python", py, *installs)
    if no_deps:
        _uv("pip", "install", "--quiet", "--no-deps", "--python", py, *no_deps)
    return path / "bin"


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would point a command back at this checkout or its
    virtual environment (``PYTHONPATH``, ``VIRTUAL_ENV``, ``MASBENCH_PATH``) or turn telemetry on."""
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "MASBENCH_PATH", "PYTHONHOME")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("OTEL_")}
    env.update(extra)
    return env
