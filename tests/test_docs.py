"""The README and docs/ are reference: how things work and how to check them, for users. A dated
figure (a date, a time of day, the machine's load beside a number) belongs in
benchmarks/results/*.json, an issue number or "the issue's …" in the project's tracker, and a link
to a file must point at one in the repository. (Suite headers: tests/test_suite_headers.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").rglob("*.md")])

RULES = {
    "a date": re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b"),
    "a time of day": re.compile(r"\(\d{1,2}:\d\d[,)]"),
    "the machine's load": re.compile(r"\bload(?: average)? \d"),
    "an issue number": re.compile(r"\b[Ii]ssues? #?\d+|(?<![#\w&])#\d{2,}\b"),
    "the issue": re.compile(r"\b[Tt]he issue's\b"),
    "a file not in the repository": re.compile(r"\bRESEARCH\.md\b"),
}


def findings(text: str) -> list[str]:
    """``line: rule: match`` for every place ``text`` breaks a rule."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for rule, rx in RULES.items():
            out += [f"{n}: {rule}: {m.group(0)!r}" for m in rx.finditer(line)]
    return out


def test_the_pages_are_found():
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {"README.md", "docs/benchmarks.md", "docs/timings.md", "docs/scale.md", "docs/metrics.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_page_holds_no_history(page):
    assert findings(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("text, rule", [
    ("run on 2026-12-06 it took 4 min", "a date"),
    ("the whole `make test` (05:28, no setup)", "a time of day"),
    ("336,500 rows/s (measured, load 17.7)", "the machine's load"),
    ("at load average 11–24", "the machine's load"),
    ("as issue 48 asks", "an issue number"),
    ("fixed in #123", "an issue number"),
    ("The issue's goal holds", "the issue"),
    ("see RESEARCH.md, section 3", "a file not in the repository"),
])
def test_each_rule_catches_its_pattern(text, rule):
    assert [f.split(": ")[1] for f in findings(text)] == [rule]


@pytest.mark.parametrize("text", [
    "`#### 72` ends a GSM8K answer", "a `load` hook", "CI [95% CI 68.3, 82.1]", "see docs/metrics.md#runs",
    "commit subjects of at most 72 characters", "time 4:15 per run",
])
def test_reference_text_passes(text):
    assert findings(text) == []
