"""The simulator's call path: one seeded reply per request, drawn from :mod:`.latent`'s exact numbers.

It never pretends to be a model: every row it produces is flagged ``simulated``. The caller (the
runtime) tells it what a correct answer is through request metadata ``{"sim": {"gold": [...],
"skills": [...], "mode": ..., "task": ..., "agent": ..., "shown": [...]}}``; metadata never reaches
a real provider. Modes: ``answer`` (default), ``json`` (fields of a schema), ``choice`` (pick one
of ``candidates``), ``judge`` (say whether ``candidate`` is correct), ``design`` (reply with one of
the scripted ``candidates`` designs, or one of the ``wrong`` ones, by the profile's accuracy),
``react`` (one step of a tool-using loop) and ``summarize`` (a summary of dropped ReAct steps) —
the tool policy of :mod:`.react` — and ``grade`` (a judge scorer's verdict on a reply, :mod:`.grade`).

A profile without ``difficulty``/``errors``/``reactions`` takes the fixed-probability path, draw
for draw as before: one coin per call with the skill's accuracy, distractors from
``distractor_weights``. With them, P(correct) comes from the task's latent difficulty, wrong answers
from the task's own distribution, and a call of an agent with a reaction that was shown answers
(``shown``; a judge's ``candidate``; a selector's ``candidates``) reacts to their most common one.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ...spec.model import SimProfile
from ...spec.sim import SimReaction
from ..errors import SimFault
from .grade import grade_text
from .latent import NUM, SimModel, gold_key, seeded, skill_accuracy, wrong_answer
from .react import react_step, summary_text

_FAULT_STATUS = {"rate_limit": 429, "server_error": 500, "timeout": 408, "connection": 503, "bad_request": 400}
_MODELS_MAX = 512


@dataclass(slots=True)
class SimReply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    latency_s: float
    tool_calls: list[dict[str, Any]] | None = None
    """Native tool calls of a ReAct step (the request carried ``tools``)."""


def prompt_tokens(messages: list[dict[str, Any]]) -> int:
    """The simulator's prompt-token count (exact; also the runtime's budget bound for ``sim/…``)."""
    chars = sum(len(str(m.get("content", ""))) for m in messages)
    return max(1, math.ceil(chars / 4)) + 3 * len(messages)


def consensus(shown: list[str]) -> str | None:
    """The most common non-empty answer key among those shown (ties: the first seen)."""
    keys = [s.strip().lower() for s in shown if s and s.strip()]
    if not keys:
        return None
    counts = Counter(keys)
    top = max(counts.values())
    return next(k for k in keys if counts[k] == top)


def missing_evidence(meta: dict[str, Any]) -> bool:
    """A call on a task with gold evidence (``hops``, a search task) whose messages do not cite
    every hop's document (``seen``): it cannot know the answer, whatever its skill, and guesses
    (correct with probability ``tools.guess``)."""
    hops = [h for h in meta.get("hops") or [] if isinstance(h, dict) and h.get("doc") is not None]
    seen = {str(d) for d in meta.get("seen") or []}
    return bool(hops) and any(str(h["doc"]) not in seen for h in hops)


def reaction_for(profile: SimProfile, role: str | None) -> SimReaction | None:
    """The reaction configured for an agent name, else ``default``, else None."""
    r = profile.reactions
    if not r:
        return None
    return r.get(role or "") or r.get("default")


class Simulator:
    """Answers requests for ``sim/…`` models. Every draw is seeded by the request; the only state
    is a cache of per-model task numbers (:class:`SimModel`), which are pure functions of the profile."""

    def __init__(self) -> None:
        self._models: dict[tuple[str, int], tuple[SimProfile, SimModel]] = {}

    def model(self, model_id: str, profile: SimProfile) -> SimModel:
        """The :class:`SimModel` of a model id and profile (cached by profile identity)."""
        key = (model_id, id(profile))
        hit = self._models.get(key)
        if hit is not None and hit[0] is profile:
            return hit[1]
        if len(self._models) > _MODELS_MAX:
            self._models.clear()
        m = SimModel(model_id, profile)
        self._models[key] = (profile, m)  # holding the profile keeps its id from being reused
        return m

    async def complete(self, model_id: str, profile: SimProfile, messages: list[dict[str, Any]],
                       max_tokens: int | None, sample_index: int, attempt: int,
                       meta: dict[str, Any] | None, native: bool = False) -> SimReply:
        """One reply. ``native``: the request carried ``tools`` (a ReAct step answers with
        ``tool_calls`` instead of ``Action:`` lines)."""
        meta = meta or {}
        key = (profile.seed, model_id, messages, sample_index)
        # Faults: drawn per attempt, so a retry can succeed (unless permanent).
        f = profile.faults
        if f.rate > 0:
            fr = seeded("fault", key, 0 if f.permanent else attempt)
            if fr.random() < f.rate:
                kind = fr.choice(f.kinds)
                raise SimFault(_FAULT_STATUS[kind], f"simulated {kind} fault")
        m = self.model(model_id, profile)
        task = ""
        if m.fixed:
            rng = seeded("answer", key)
        else:  # the task is part of the seed: two tasks with the same prompt still draw independently
            last = messages[-1].get("content", "") if messages else ""
            task = str(meta.get("task") or meta.get("question") or last)
            rng = seeded("answer", key, task)
        latency = 0.0
        if profile.latency_ms > 0:
            latency = rng.expovariate(1.0 / (profile.latency_ms / 1000.0))
            await asyncio.sleep(latency)
        skills = list(meta.get("skills") or [])
        mode = meta.get("mode", "answer")
        gold = [str(g) for g in (meta.get("gold") or [])]
        calls = None
        if mode == "grade":  # a judge scorer's sample: its own rates, not the answer path's
            body = grade_text(profile, meta, rng)
        elif mode in ("react", "summarize"):  # the tool policy (.react): its own draws, seeded by the step too
            task = task or str(meta.get("task") or meta.get("question") or "")
            rrng = seeded("react", key, task, meta.get("step"))
            if mode == "summarize":
                body = summary_text(m, meta, rrng)
            else:
                st = react_step(m, task, meta, gold, skills, rrng, native)
                body, calls = st.text, st.tool_calls
        elif mode == "answer" and missing_evidence(meta):  # a search task's facts are not in front of it
            correct = rng.random() < profile.tool_policy.guess
            body = _answer_text(gold if correct else (m.draw_wrong(task, gold, rng) if not m.fixed
                                                      else self._draw_wrong(gold, profile, rng)))
        elif m.fixed:
            correct = rng.random() < skill_accuracy(profile, skills)
            body = self._body(mode, meta, gold, correct, profile, rng)
        else:
            body = self._latent_body(m, task, mode, meta, gold, skills, rng)
        td = profile.completion_tokens
        n = max(td.min, int(round(rng.gauss(td.mean, td.sd))))
        finish = "stop"
        if max_tokens is not None and n > max_tokens:
            n, finish, calls = max_tokens, "length", None
            body = "Let me work through this step by step, considering each quantity in turn and"
        return SimReply(body, prompt_tokens(messages), n, finish, latency, calls)

    # ----- the error-model path ---------------------------------------------------------------
    def _latent_body(self, m: SimModel, task: str, mode: str, meta: dict[str, Any], gold: list[str],
                     skills: list[str], rng: random.Random) -> str:
        p = m.p_correct(task, skills)
        r = reaction_for(m.profile, meta.get("agent"))
        g = gold_key(gold)
        u = rng.random()
        if mode == "judge":
            cand = str(meta.get("candidate", "")).strip().lower()
            truly = bool(gold) and cand == g
            if r is not None and cand:
                if truly:
                    verdict = u < r.keep_right
                    ans = cand if verdict else ", ".join(m.draw_wrong(task, gold, rng))
                else:
                    verdict = r.fix_wrong <= u < r.fix_wrong + r.adopt_wrong  # rubber-stamps the wrong one
                    ans = ", ".join(gold) if u < r.fix_wrong else (
                        cand if verdict else ", ".join(m.draw_wrong(task, gold, rng, exclude=cand)))
            else:
                correct = u < p
                verdict = truly if correct else not truly
                ans = ", ".join(gold) if (not truly and correct) else cand
            return _judge_text(verdict, ans, bool(meta.get("json")))
        if mode == "choice":
            cands = [str(c) for c in meta.get("candidates") or []]
            if not cands:
                return "Choice: 1"
            keys = [c.strip().lower() for c in cands]
            good = [i for i, c in enumerate(keys) if gold and c == g]
            bad = [i for i in range(len(cands)) if i not in good]
            c = consensus(cands) if r is not None else None
            if r is None or c is None:
                pick_good = u < p
            elif c == g:
                pick_good = u < r.keep_right
            else:
                pick_good = u < r.fix_wrong
                if not pick_good and u < r.fix_wrong + r.adopt_wrong:
                    bad = [keys.index(c)]
                elif not pick_good:
                    bad = [i for i in bad if keys[i] != c] or bad
            if good and pick_good or not bad:
                idx = good[0] if good else rng.randrange(len(cands))
            else:
                idx = rng.choice(bad)
            return f"Having compared the candidates, the best one is {idx + 1}.\nChoice: {idx + 1}\nAnswer: {cands[idx]}"
        if mode == "design":
            return self._body(mode, meta, gold, u < p, m.profile, rng)
        shown = [str(s) for s in meta.get("shown") or []]
        c = consensus(shown) if r is not None else None
        if r is None or c is None:
            correct = u < p
            answers = gold if correct else m.draw_wrong(task, gold, rng)
        elif c == g:
            correct = u < r.keep_right
            answers = gold if correct else m.draw_wrong(task, gold, rng)
        else:
            correct = u < r.fix_wrong
            if correct:
                answers = gold
            elif u < r.fix_wrong + r.adopt_wrong:
                answers = [a.strip() for a in c.split(",")] if gold else [c]
            else:
                answers = m.draw_wrong(task, gold, rng, exclude=c)
        if mode == "json":
            return _json_text(meta, answers, correct)
        return _answer_text(answers)

    # ----- the fixed-probability path (unchanged draws) -----------------------------------------
    def _draw_wrong(self, gold: list[str], profile: SimProfile, rng: random.Random) -> list[str]:
        if not gold:
            return ["unknown"]
        w = profile.distractor_weights or [1.0]
        i = rng.choices(range(1, len(w) + 1), weights=w)[0]
        out = list(gold)
        pos = rng.randrange(len(out)) if len(out) > 1 else 0
        out[pos] = wrong_answer(out[pos], i)
        return out

    def _body(self, mode: str, meta: dict[str, Any], gold: list[str], correct: bool,
              profile: SimProfile, rng: random.Random) -> str:
        if mode == "choice":
            cands = [str(c) for c in meta.get("candidates") or []]
            if not cands:
                return "Choice: 1"
            norm = [c.strip().lower() for c in cands]
            good = [i for i, c in enumerate(norm) if gold and c == gold_key(gold)]
            if good and correct:
                idx = good[0]
            else:
                bad = [i for i in range(len(cands)) if i not in good] or list(range(len(cands)))
                idx = rng.choice(bad)
            return f"Having compared the candidates, the best one is {idx + 1}.\nChoice: {idx + 1}\nAnswer: {cands[idx]}"
        if mode == "design":  # designer calls: a scripted good or bad design; needs no gold
            good = [str(x) for x in meta.get("candidates") or []]
            bad = [str(x) for x in meta.get("wrong") or []]
            pool = good if (correct and good) or not bad else bad
            return rng.choice(pool) if pool else "I have no design for this."
        if mode == "judge":
            cand = str(meta.get("candidate", "")).strip().lower()
            truly = bool(gold) and cand == gold_key(gold)
            verdict = truly if correct else not truly
            ans = ", ".join(gold) if (not truly and correct) else cand
            return _judge_text(verdict, ans, bool(meta.get("json")))
        answers = gold if correct else self._draw_wrong(gold, profile, rng)
        if mode == "json":
            return _json_text(meta, answers, correct)
        return _answer_text(answers)


def _answer_text(answers: list[str]) -> str:
    # Several answers are also boxed, one per answer (MASBench's scorer counts \boxed{} spans).
    boxed = "\n" + "\n\n".join(f"\\boxed{{{a}}}" for a in answers) if len(answers) > 1 else ""
    return f"Let me reason step by step about the quantities involved.\nAnswer: {', '.join(answers)}{boxed}"


def _judge_text(verdict: bool, ans: str, as_json: bool) -> str:
    if as_json:
        return json.dumps({"correct": verdict, "feedback": "looks right" if verdict else "recheck the arithmetic",
                           "answer": ans})
    return "CORRECT" if verdict else f"INCORRECT. Recheck the arithmetic.\nAnswer: {ans}"


def _json_text(meta: dict[str, Any], answers: list[str], correct: bool) -> str:
    schema: dict[str, str] = meta.get("schema") or {}
    obj: dict[str, Any] = {}
    for fname, ftype in schema.items():
        if ftype == "list[str]":
            k = int(meta.get("n_items", 2))
            obj[fname] = [f"Sub-task {i + 1}: work out part {i + 1} of the problem." for i in range(k)]
        elif ftype in ("list[int]", "list[float]"):
            obj[fname] = [int(a) if NUM.match(a) and "." not in a else a for a in answers]
        elif ftype == "bool":
            obj[fname] = correct
        elif ftype in ("int", "float"):
            a = answers[0] if answers else "0"
            obj[fname] = (int(a) if "." not in a else float(a)) if NUM.match(a) else 0
        else:
            obj[fname] = ", ".join(answers) if fname in ("answer", "final", "result") else f"{fname} text"
    return json.dumps(obj)


__all__ = ["SimReply", "Simulator", "consensus", "prompt_tokens", "reaction_for"]
