"""``sim/<profile>``: a seeded simulated model for tests and controlled studies (always SIMULATED).

Behaviours, chosen by the profile (a built-in name or a model's ``sim:`` block):

- **fixed probability** (no ``difficulty``/``errors``/``reactions``): an independent coin per call
  with a per-skill accuracy, wrong answers from fixed ``distractor_weights`` — today's behaviour;
- **the tool policy** (``mode: react``, :mod:`.react`): a ReAct step searches for the next hop
  with the profile's retrieval competence, answers once every hop's evidence is seen;
- **the error model**: latent per-task difficulty (item response), per-task wrong answers shared by
  every sample (and partly across models of one world), and per-role reactions of calls that were
  shown other answers (keep right, fix wrong, adopt shown wrong).

The study API (see docs/simulator.md)::

    from masbench.llm.sim import sim_model, p_correct
    p_correct("sim/frontier", "depth-1-0007", ["arith"])      # exact P(correct) of one call
    m = sim_model("sim/7b"); m.answer_distribution(task_id, gold)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from ...lazy import lazy_exports
from ...spec.model import ModelSpec, SimProfile
from .engine import SimReply, Simulator, consensus, prompt_tokens, reaction_for

if TYPE_CHECKING:
    from .exact import (
        correctness_correlation,
        expected_unanimity,
        fit_concentration,
        fit_difficulty,
        maj_at_k,
        pool_curve,
        task_arrays,
        tune_unanimity,
        unanimity,
    )
from .latent import SimModel, calibrate, skill_accuracy, wrong_answer
from .profiles import BUILTIN_PROFILES, FRONTIER, SEVEN_B, profile_for
from .react import react_step, retrieval_competence, summary_text

_prompt_tokens = prompt_tokens  # the name runtime/testing and gateway have always imported

# deferred: start-up (the study API's exact numbers need numpy, ~0.1 s of imports; a simulated call does not)
__getattr__ = lazy_exports(__name__, dict.fromkeys(
    ("correctness_correlation", "expected_unanimity", "fit_concentration", "fit_difficulty", "maj_at_k", "pool_curve",
     "task_arrays", "tune_unanimity", "unanimity"), "exact"), globals())


def sim_model(model: str | ModelSpec, profile: SimProfile | None = None) -> SimModel:
    """The exact per-task behaviour of a simulated model: ``"sim/frontier"``, ``"sim/p70"``, a
    :class:`ModelSpec` with a ``sim`` block, or a model id with an explicit ``profile``. Its numbers
    are the ones the gateway draws from for that model id."""
    if isinstance(model, ModelSpec):
        return SimModel(model.id, profile_for(model.id, profile or model.sim))
    return SimModel(model, profile_for(model, profile))


def p_correct(model: str | ModelSpec | SimModel, task_id: str, skills: Iterable[str] = (),
              profile: SimProfile | None = None) -> float:
    """Exact P(one call of ``model`` on ``task_id`` with ``skills`` is correct), for a call that sees
    no other answers. SIMULATED."""
    m = model if isinstance(model, SimModel) else sim_model(model, profile)
    return m.p_correct(str(task_id), skills)


__all__ = [
    "BUILTIN_PROFILES", "FRONTIER", "SEVEN_B", "SimModel", "SimReply", "Simulator", "calibrate", "consensus",
    "correctness_correlation", "expected_unanimity", "fit_concentration", "fit_difficulty", "maj_at_k", "p_correct",
    "pool_curve", "profile_for",
    "prompt_tokens", "react_step", "retrieval_competence", "summary_text", "reaction_for", "sim_model", "skill_accuracy", "task_arrays", "tune_unanimity", "unanimity", "wrong_answer",
]
