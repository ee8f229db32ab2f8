"""Every bundled suite (tasks/*.yaml) opens with at most 10 comment lines: what it is and how to run it;
measured figures live in benchmarks/results/ and CHANGELOG.md, not in a suite's header."""

from __future__ import annotations

from pathlib import Path

import pytest

SUITES = sorted((Path(__file__).resolve().parents[1] / "tasks").glob("*.yaml"))


@pytest.mark.parametrize("path", SUITES, ids=lambda p: p.stem)
def test_a_suite_header_is_at_most_ten_lines(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    header = next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))
    assert header <= 10, f"{path.name}: {header} comment lines before the suite"
