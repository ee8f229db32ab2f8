"""The verdict words are defined once (masbench/harness/stats/decide.py): no other module spells
one as a string of its own, and every verdict the code decides or renders is one of them."""

from __future__ import annotations

import ast
import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from masbench.harness.run_compare import CHEAPER, COSTLIER, SAME, PairResult, decide_pair
from masbench.harness.stats import decide as words
from masbench.harness.stats.decide import decide
from masbench.harness.stats.sequential import LookInput, look
from masbench.report.verdict import verdict
from masbench.store.run_pairs import Side

PACKAGE = Path(words.__file__).resolve().parents[3] / "masbench"
HOME = Path(words.__file__).resolve()
# "baseline" is left out of the scan: it is also a column name and a design kind (spec/design.py)
SPELLED = {words.WORTH, words.NOT_WORTH, words.INCONCLUSIVE, words.NOT_SHOWN, words.NO_CURVE}


def test_the_word_lists_hold_each_word_once():
    assert words.VERDICTS == ("worth it", "not worth it", "inconclusive", "not shown worth it")
    assert words.SHOWN == (*words.VERDICTS, "baseline", "no CoT-SC curve")
    assert len(set(words.SHOWN)) == len(words.SHOWN)


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string nodes that are docstrings (a module's, a class's, a function's, an attribute's)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for stmt in body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                out.add(id(stmt.value))
    return out


def test_no_other_module_spells_a_verdict_word():
    assert HOME.is_file() and (PACKAGE / "report" / "verdict.py").is_file()  # the scan looks where the code is
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.resolve() == HOME:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in SPELLED and id(node) not in docs:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.value!r}")
    assert found == []


def test_the_scan_would_find_a_copy(tmp_path):
    """The scan above is not vacuous: a module with its own copy of a word is caught."""
    tree = ast.parse('"""Says worth it."""\nWORTH = "worth it"\n')
    docs = _docstrings(tree)
    hits = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in SPELLED and id(n) not in docs]
    assert hits == ["worth it"]


@pytest.mark.parametrize("position", ["within", "below", "beyond"])
def test_every_verdict_against_the_curve_is_a_decided_word(position):
    got = set()
    for p, ci in itertools.product([0.001, 0.5], [(0.1, 0.3), (-0.3, -0.1), (-0.1, 0.1)]):
        v, _reason = decide(position, sum(ci) / 2, ci, p, 0.05, 40, 20, 4, n_needed_hi=80)
        got.add(v)
    assert got <= set(words.VERDICTS)
    # significant better, worse and neither give distinct words at least twice over the three positions
    assert len(got) >= 2


def test_every_verdict_of_runs_against_runs_is_a_decided_word():
    got = set()
    for cost, (p, ci) in itertools.product([SAME, CHEAPER, COSTLIER],
                                           [(0.001, (0.1, 0.3)), (0.001, (-0.3, -0.1)), (0.5, (-0.1, 0.1))]):
        res = PairResult(Side("a", "x"), Side("b", "x"), "tokens", n_tasks=30, sd=0.4, p_holm=p, ci_holm=ci,
                         level_holm=0.05, cost=cost, cost_ratio=1.5)
        got.add(decide_pair(res, 0.05, 0.8, (-0.05, 0.15))[0])
    assert got == set(words.VERDICTS)  # the nine cells use all four words


def test_every_sequential_verdict_is_a_decided_word():
    rng = np.random.default_rng(3)
    inputs = [LookInput("up", rng.choice([1.0, 0.0], size=60, p=[0.9, 0.1]), "within", 4),
              LookInput("flat", rng.choice([1.0, -1.0], size=60), "beyond", 4),
              LookInput("down", -rng.choice([1.0, 0.0], size=60, p=[0.9, 0.1]), "below", 4)]
    got = {r.verdict for r in look(inputs)}
    assert got <= set(words.VERDICTS) and len(got) >= 2


def test_every_rendered_verdict_is_a_shown_word():
    rows = [dict(design="cot", baseline=True),
            dict(design="x", baseline=False, k_max=None, accuracy=0.5, cot_accuracy=0.4),
            dict(design="x", baseline=False, k_max=4, paired_verdict=math.nan),
            dict(design="x", baseline=False, k_max=4, paired_verdict=words.WORTH, paired_diff=0.1)]
    got = [verdict(r).verdict for r in rows]
    assert got == [words.BASELINE, words.NO_CURVE, words.INCONCLUSIVE, words.WORTH]
    assert set(got) <= set(words.SHOWN)
