"""Held out means held out, over every bundled suite (tasks/*.yaml): a ``<stem>-heldout`` suite asks no
question its ``<stem>-train`` suite asks; a generator source either draws distinct questions
(``distinct: true``: none repeated, ``n`` per value) or its load reports how many repeat; a repeat is
counted by comparing question texts here, not by the loader's count."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from masbench.bench.loaders import load_source
from masbench.spec import SuiteSpec

ROOT = Path(__file__).resolve().parents[1]
SUITES = sorted((ROOT / "tasks").glob("*.yaml"))


def _suite(path: Path) -> SuiteSpec:
    return SuiteSpec.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


def _questions(path: Path) -> list[str]:
    """Every question the suite asks, from each of its sources (generated, inline or read from a file)."""
    return [t.question for s in _suite(path).tasks for t in load_source(s, path.parent).tasks]


def test_the_bundled_suites_hold_a_held_out_pair():
    names = {p.stem for p in SUITES}
    assert {"routing-train", "routing-heldout"} <= names


@pytest.mark.parametrize("heldout", [p for p in SUITES if p.stem.endswith("-heldout")], ids=lambda p: p.stem)
def test_a_held_out_suite_asks_no_question_of_its_training_suite(heldout):
    train = heldout.with_name(heldout.stem.removesuffix("-heldout") + "-train.yaml")
    assert train.is_file(), f"{heldout.name} is held out from {train.name}, which is missing"
    held, trained = _questions(heldout), _questions(train)
    assert held and trained
    shared = sorted(set(held) & set(trained))
    assert shared == [], f"{heldout.name} asks {len(shared)} questions of {train.name}: {shared[:3]}"
    # and neither asks a question twice: 40 and 20 distinct questions
    assert len(set(held)) == len(held) and len(set(trained)) == len(trained)


@pytest.mark.parametrize("path", SUITES, ids=lambda p: p.stem)
def test_every_generator_source_draws_distinct_questions_or_says_how_many_repeat(path):
    suite = _suite(path)
    for source in suite.tasks:
        if not source.generator:
            continue
        loaded = load_source(source, path.parent)
        questions = [t.question for t in loaded.tasks]
        repeats = sum(c - 1 for c in Counter(questions).values())
        (read,) = loaded.reads
        assert read.repeated == repeats
        if source.distinct:
            assert repeats == 0
            values = source.values or [None]
            assert len(questions) == (source.n or 0) * len(values)
        elif repeats:
            assert read.line().startswith("warning: ") and f"{repeats} of them repeating" in read.line()
        else:
            assert "repeat" not in read.line()
