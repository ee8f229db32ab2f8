"""Module walk (SIMULATED): which masbench modules a command loads, and which it calls into.

Runs one ``masbench`` command in this process with a profile hook on every thread, and at process
exit writes the masbench modules in ``sys.modules`` (loaded) and those whose functions were called
(called: not counting a module's own import — its body, its class bodies) as JSON. The walk the architecture notes quote is ``run quickstart`` on the simulator
followed by ``compare`` on its store::

    .venv/bin/python benchmarks/module_walk.py --out /tmp/walk-run.json -- \\
        run quickstart --model default=sim/medium --store /tmp/walk.duckdb --new
    .venv/bin/python benchmarks/module_walk.py --out /tmp/walk-compare.json -- compare --store /tmp/walk.duckdb
    .venv/bin/python benchmarks/module_walk.py --union /tmp/walk-run.json /tmp/walk-compare.json

Run it on the code before and after a change and compare the counts (or the lists). The package's
own module count is printed beside them (every ``masbench/**/*.py`` file).
"""

from __future__ import annotations

import argparse
import atexit
import json
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any


def package_modules(root: Path) -> set[str]:
    """Every module of the masbench package under ``root`` (``masbench/**/*.py``), by dotted name."""
    out = set()
    for p in (root / "masbench").rglob("*.py"):
        parts = list(p.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.add(".".join(parts))
    return out


def walk(argv: list[str], out: Path) -> None:
    """Run ``masbench ARGV`` here; at exit write ``{"loaded": [...], "called": [...]}`` to ``out``."""
    files: set[str] = set()

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        # a module's own import (its body, its class bodies, what it calls of itself) is not a call
        code = frame.f_code
        if event == "call" and code.co_name != "<module>":
            back = frame.f_back
            if back is None or back.f_code.co_name != "<module>" or back.f_code.co_filename != code.co_filename:
                files.add(code.co_filename)

    def dump() -> None:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
        loaded = sorted(n for n in sys.modules if n == "masbench" or n.startswith("masbench."))
        by_file = {getattr(sys.modules[n], "__file__", None): n for n in loaded}
        called = sorted({by_file[f] for f in files if f in by_file})
        out.write_text(json.dumps({"argv": argv, "loaded": loaded, "called": called}, indent=1))

    atexit.register(dump)
    threading.setprofile(hook)  # type: ignore[arg-type]
    sys.setprofile(hook)
    from masbench.cli import app

    sys.argv = ["masbench", *argv]
    app()


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--out", type=Path, help="where to write the walk (JSON)")
    ap.add_argument("--union", type=Path, nargs="+", help="print the counts of these walks and of their union")
    ap.add_argument("argv", nargs="*", help="the masbench command (after --)")
    a = ap.parse_args()
    if a.union:
        root = Path(__file__).resolve().parent.parent
        total = len(package_modules(root))
        loaded: set[str] = set()
        called: set[str] = set()
        for p in a.union:
            w = json.loads(p.read_text())
            loaded |= set(w["loaded"])
            called |= set(w["called"])
            print(f"{' '.join(w['argv'])[:60]:60s} loaded {len(w['loaded']):4d}  called {len(w['called']):4d}")
        print(f"{'union':60s} loaded {len(loaded):4d}  called {len(called):4d}  (of {total} modules)")
        return
    walk(a.argv, a.out)


if __name__ == "__main__":
    main()
