"""Split and merge's divergence measure (masbench.routing.learn.divergence) on a hand-made handbook: a
child counts only when every model has at least ``min_obs`` pooled observations of it."""

from __future__ import annotations

import numpy as np
import pytest

from masbench.routing import HandbookSpec, compile_handbook
from masbench.routing.learn import divergence
from masbench.spec.handbook import ModelProfile, SkillSpec, SkillStats


def _hb(n_y: float) -> HandbookSpec:
    """Parent a, children a.x and a.y; m: 4/1 on a.x, 1/4 on a.y; n: 3/2 on a.x, n_y observations of a.y."""
    return HandbookSpec(
        name="div", shrinkage=0.0,
        taxonomy={"a": SkillSpec(description="a"), "a.x": SkillSpec(description="x"), "a.y": SkillSpec(description="y")},
        profiles={"m": ModelProfile(skills={"a.x": SkillStats(wins=4, losses=1), "a.y": SkillStats(wins=1, losses=4)}),
                  "n": ModelProfile(skills={"a.x": SkillStats(wins=3, losses=2), "a.y": SkillStats(wins=n_y, losses=0)})})


def test_a_child_seen_too_little_by_one_model_is_left_out():
    ch = compile_handbook(_hb(1.0))  # n saw a.y once: fewer than 3
    assert divergence(ch, ch.index["a"], min_obs=3.0) == (0.0, [ch.index["a.x"]])


def test_the_largest_spread_of_the_childrens_means_over_models():
    """κ = 0: each child's posterior is its own evidence. m: a.x 4/5, a.y 1/5 → std 0.3; n: a.x 3/5, a.y 3/3
    → std 0.2; the largest is 0.3. At exactly min_obs the child counts."""
    ch = compile_handbook(_hb(3.0))
    value, kids = divergence(ch, ch.index["a"], min_obs=3.0)
    assert kids == [ch.index["a.x"], ch.index["a.y"]]
    assert value == pytest.approx(0.3)
    assert np.std([0.8, 0.2]) == pytest.approx(0.3) and np.std([0.6, 1.0]) == pytest.approx(0.2)
