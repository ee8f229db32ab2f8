"""Review signals: printed for a reviewer to look at, never failed.

A module over 400 lines is a signal to look for a second concept in it (split by concept, not by
size): this lists them, longest first, each with its reason where its docstring gives one (a line
starting ``Why long:``). ``make test`` prints it before the tests run.

    python scripts/review_signals.py [PACKAGE_DIR] [--max-lines N]
"""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_MAX = 400


def long_modules(pkg: Path, max_lines: int = DEFAULT_MAX) -> list[tuple[str, int]]:
    """(path relative to ``pkg``, lines) of every ``*.py`` under ``pkg`` longer than ``max_lines``."""
    out = []
    for p in sorted(pkg.rglob("*.py")):
        if "_library" in p.parts:
            continue
        n = len(p.read_text(encoding="utf-8").splitlines())
        if n > max_lines:
            out.append((str(p.relative_to(pkg)), n))
    return sorted(out, key=lambda x: (-x[1], x[0]))


def why_long(path: Path) -> str | None:
    """The reason a module's docstring gives for its length (the text after ``Why long:``), if any."""
    text = path.read_text(encoding="utf-8")
    at = text.find("Why long:")
    if at < 0:
        return None
    reason = text[at + len("Why long:"):].split("\n\n")[0].split('"""')[0]
    return " ".join(reason.split())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("package", nargs="?", default=str(Path(__file__).resolve().parents[1] / "masbench"))
    ap.add_argument("--max-lines", type=int, default=DEFAULT_MAX)
    a = ap.parse_args(argv)
    big = long_modules(Path(a.package), a.max_lines)
    if not big:
        print(f"review signals: no module over {a.max_lines} lines")
    for rel, n in big:
        why = why_long(Path(a.package) / rel)
        print(f"review signal: {rel} has {n} lines (> {a.max_lines}): "
              + (f"why long: {why}" if why else "look for a second concept to split out"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
