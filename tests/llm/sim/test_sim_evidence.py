"""A simulated model on a search task knows only the facts in front of it: a plain answer whose
messages do not cite every hop's document is a guess (``tools.guess``), one that cites them all
answers at the profile's accuracy; a ReAct reply hands over what it found as ``[doc] fact`` notes
and says DONE only when every hop was found."""

from __future__ import annotations

import asyncio
import random

from masbench.llm.sim import Simulator
from masbench.llm.sim.engine import missing_evidence
from masbench.llm.sim.latent import SimModel
from masbench.llm.sim.react import react_step
from masbench.spec.model import SimProfile

HOPS = [{"query": "Fider stove made by", "doc": "d1", "fact": "The Fider stove is made by Zaprin.", "answer": "Zaprin"},
        {"query": "Zaprin headquartered in", "doc": "d2", "fact": "Zaprin is headquartered in Geva.", "answer": "Geva"}]


def _rate(seen: list[str], n: int = 400) -> float:
    sim = Simulator()
    prof = SimProfile(accuracy={"default": 0.9})
    right = 0
    for i in range(n):
        meta = {"gold": ["geva"], "mode": "answer", "task": f"t{i}", "hops": HOPS, "evidence": ["d1", "d2"],
                "seen": seen}
        r = asyncio.run(sim.complete("sim/x", prof, [{"role": "user", "content": f"q{i}"}], None, 0, 0, meta))
        right += r.text.strip().lower().endswith("geva")
    return right / n


def test_missing_evidence_needs_every_hop_cited():
    assert missing_evidence({"hops": HOPS, "seen": ["d1"]})
    assert not missing_evidence({"hops": HOPS, "seen": ["d2", "d1"]})
    assert not missing_evidence({"seen": []})  # not a search task: nothing to gate


def test_an_answer_without_the_evidence_is_a_guess_and_with_it_is_skill():
    without, part, full = _rate([]), _rate(["d1"]), _rate(["d1", "d2"])
    assert without < 0.15 and part < 0.15  # guess: 0.05 by default
    assert full > 0.8  # the profile's 0.9


def test_a_react_answer_cites_the_facts_found_and_done_only_when_complete():
    m = SimModel("sim/x", SimProfile(accuracy={"default": 1.0}))
    base = {"tools": ["search"], "hops": HOPS, "evidence": ["d1", "d2"], "max_steps": 4}
    done = react_step(m, "t", {**base, "seen": ["d1", "d2"], "step": 1}, ["Geva"], [], random.Random(0), False)
    assert "[d1] The Fider stove is made by Zaprin." in done.text and "[d2]" in done.text
    assert "\nDONE\n" in done.text and done.text.rstrip().endswith("Final Answer: Geva")
    forced = react_step(m, "t", {**base, "seen": ["d1"], "step": 3}, ["Geva"], [], random.Random(0), False)
    assert "[d1]" in forced.text and "[d2]" not in forced.text and "DONE" not in forced.text
