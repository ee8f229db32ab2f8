"""The simulator as a judge (request mode ``grade``): a wrong reply passes with the profile's
``false_pass``, a right one fails with ``false_fail``, one of unknown truth passes with
``unknown_pass``; each sample draws on its own; the replies parse as the judge scorer expects."""

from __future__ import annotations

import asyncio
import math

import pytest

from masbench.bench.scoring.judge import parse_score
from masbench.llm.sim.engine import Simulator
from masbench.llm.sim.grade import grading_of, p_pass
from masbench.spec import JudgeSpec
from masbench.spec.judge import Scale
from masbench.spec.model import SimProfile
from masbench.spec.sim import SimGrading

N = 1500


def _rate(profile: SimProfile, truth: bool | None, scale: Scale = "pass-fail", position: str | None = None) -> float:
    sim = Simulator()
    spec = JudgeSpec(agent="j", scale=scale, rubric="{first} {second}" if scale == "pairwise" else None)

    async def one(i: int) -> float | None:
        meta = {"mode": "grade", "truth": truth, "scale": scale, "task": f"t{i}",
                **({"position": position} if position else {})}
        r = await sim.complete("sim/judge", profile, [{"role": "user", "content": f"reply {i}"}], None, i % 3, 1, meta)
        return parse_score(r.text, spec, position)

    async def all_() -> list[float | None]:
        return list(await asyncio.gather(*(one(i) for i in range(N))))

    scores = asyncio.run(all_())
    assert None not in scores  # every reply parses
    return sum(s >= 0.5 for s in scores if s is not None) / N


def _within(rate: float, p: float) -> bool:
    return abs(rate - p) <= 4 * math.sqrt(p * (1 - p) / N) + 1e-9


def test_configured_rates_are_what_the_judge_does():
    prof = SimProfile(grading=SimGrading(false_pass=0.3, false_fail=0.15, unknown_pass=0.6))
    assert _within(_rate(prof, False), 0.3)
    assert _within(_rate(prof, True), 0.85)
    assert _within(_rate(prof, None), 0.6)
    assert _within(_rate(prof, False, "graded"), 0.3)      # the same rates on a 0-10 scale
    assert _within(_rate(prof, True, "pairwise", "B"), 0.85)  # "Winner: <the reply's position>"
    assert _within(_rate(prof, False, "pairwise", "A"), 0.3)


def test_without_a_grading_block_both_errors_are_one_minus_accuracy():
    prof = SimProfile(accuracy={"default": 0.5, "judge": 0.8})
    g = grading_of(prof)
    assert g.false_pass == pytest.approx(0.2) and g.false_fail == pytest.approx(0.2)
    assert p_pass(g, True) == pytest.approx(0.8) and p_pass(g, False) == pytest.approx(0.2)
    assert _within(_rate(prof, False), 0.2)


def test_a_sample_is_seeded_by_its_request():
    prof = SimProfile(grading=SimGrading(false_pass=0.5))
    sim = Simulator()
    meta = {"mode": "grade", "truth": False, "scale": "pass-fail", "task": "t"}

    def reply(sample: int) -> str:
        msgs = [{"role": "user", "content": "the same reply"}]
        return asyncio.run(sim.complete("sim/judge", prof, msgs, None, sample, 1, meta)).text

    assert reply(0) == reply(0)                                 # a re-score gets the same verdict
    assert len({reply(j) for j in range(12)}) == 2              # samples differ: both verdicts occur
