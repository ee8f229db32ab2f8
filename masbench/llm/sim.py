"""``sim/<profile>``: a seeded simulated model for tests and controlled studies.

It never pretends to be a model: every row it produces is flagged ``simulated``. It answers
correctly with a per-skill probability, otherwise with wrong answer *i* (gold + i for numbers)
drawn with ``distractor_weights`` — so the distribution of its answers is known exactly and
maj@k can be checked against the multinomial expectation.

The caller (the runtime) tells it what a correct answer is through request metadata
``{"sim": {"gold": [...], "skills": [...], "mode": ..., ...}}``; metadata never reaches a real
provider. Modes: ``answer`` (default), ``json`` (fields of a schema), ``choice`` (pick one of
``candidates``), ``judge`` (say whether ``candidate`` is correct), ``design`` (reply with one of the
scripted ``candidates`` designs, or one of the ``wrong`` ones, by the profile's accuracy).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import random
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..spec.model import SimFaults, SimProfile, TokenDist
from .errors import SimFault

BUILTIN_PROFILES: dict[str, SimProfile] = {
    "perfect": SimProfile(accuracy={"default": 1.0}),
    "strong": SimProfile(accuracy={"default": 0.85}, completion_tokens=TokenDist(mean=220, sd=60)),
    "medium": SimProfile(accuracy={"default": 0.6}),
    "weak": SimProfile(accuracy={"default": 0.3}, completion_tokens=TokenDist(mean=90, sd=25)),
    "coin": SimProfile(accuracy={"default": 0.5}),
    "wrong": SimProfile(accuracy={"default": 0.0}),
    "flaky": SimProfile(accuracy={"default": 0.6}, faults=SimFaults(rate=0.3)),
}
"""Profiles usable as a bare ``sim/<name>`` id."""

_FAULT_STATUS = {"rate_limit": 429, "server_error": 500, "timeout": 408, "connection": 503, "bad_request": 400}
_NUM = re.compile(r"^-?\d+(?:\.\d+)?$")


def profile_for(model_id: str, explicit: SimProfile | None) -> SimProfile:
    """The profile of ``sim/<name>``: the model's own ``sim`` block, else a built-in, else a
    ``sim/p<percent>`` shorthand (``sim/p70`` → 70% correct)."""
    if explicit is not None:
        return explicit
    name = model_id.split("/", 1)[1] if "/" in model_id else model_id
    if name in BUILTIN_PROFILES:
        return BUILTIN_PROFILES[name]
    m = re.fullmatch(r"p(\d{1,3})", name)
    if m and int(m.group(1)) <= 100:
        return SimProfile(accuracy={"default": int(m.group(1)) / 100})
    raise ValueError(f"unknown simulator profile {name!r}: use one of {sorted(BUILTIN_PROFILES)}, "
                     "sim/p<percent>, or give the model a `sim:` block")


def skill_accuracy(profile: SimProfile, skills: list[str]) -> float:
    """Mean accuracy over the call's skills; a dotted skill falls back to its parents, then default."""
    acc = profile.accuracy
    default = acc.get("default", 0.5)
    if not skills:
        return default
    vals = []
    for s in skills:
        parts = s.split(".")
        for i in range(len(parts), 0, -1):
            key = ".".join(parts[:i])
            if key in acc:
                vals.append(acc[key])
                break
        else:
            vals.append(default)
    return sum(vals) / len(vals)


def wrong_answer(gold: str, i: int) -> str:
    """Wrong answer number ``i`` (1-based) for a gold answer."""
    g = gold.strip()
    if _NUM.match(g):
        v = Fraction(g) + i
        return str(int(v)) if v.denominator == 1 else str(float(v))
    return f"{g} (variant {i})" if g else f"wrong-{i}"


@dataclass(slots=True)
class SimReply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    latency_s: float


def _rng(*parts: Any) -> random.Random:
    h = hashlib.blake2b(json.dumps(parts, sort_keys=True, default=str).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(h, "big"))


def _prompt_tokens(messages: list[dict[str, Any]]) -> int:
    chars = sum(len(str(m.get("content", ""))) for m in messages)
    return max(1, math.ceil(chars / 4)) + 3 * len(messages)


class Simulator:
    """Answers requests for ``sim/…`` models. Stateless; every draw is seeded by the request."""

    async def complete(self, model_id: str, profile: SimProfile, messages: list[dict[str, Any]],
                       max_tokens: int | None, sample_index: int, attempt: int,
                       meta: dict[str, Any] | None) -> SimReply:
        meta = meta or {}
        key = (profile.seed, model_id, messages, sample_index)
        # Faults: drawn per attempt, so a retry can succeed (unless permanent).
        f = profile.faults
        if f.rate > 0:
            fr = _rng("fault", key, 0 if f.permanent else attempt)
            if fr.random() < f.rate:
                kind = fr.choice(f.kinds)
                raise SimFault(_FAULT_STATUS[kind], f"simulated {kind} fault")
        rng = _rng("answer", key)
        latency = 0.0
        if profile.latency_ms > 0:
            latency = rng.expovariate(1.0 / (profile.latency_ms / 1000.0))
            await asyncio.sleep(latency)
        p = skill_accuracy(profile, list(meta.get("skills") or []))
        mode = meta.get("mode", "answer")
        gold = [str(g) for g in (meta.get("gold") or [])]
        correct = rng.random() < p
        body = self._body(mode, meta, gold, correct, profile, rng)
        td = profile.completion_tokens
        n = max(td.min, int(round(rng.gauss(td.mean, td.sd))))
        finish = "stop"
        if max_tokens is not None and n > max_tokens:
            n, finish = max_tokens, "length"
            body = "Let me work through this step by step, considering each quantity in turn and"
        text = body
        return SimReply(text, _prompt_tokens(messages), n, finish, latency)

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
            good = [i for i, c in enumerate(norm) if gold and c == ",".join(gold).strip().lower()]
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
            truly = bool(gold) and cand == ",".join(gold).strip().lower()
            verdict = truly if correct else not truly
            ans = ", ".join(gold) if (not truly and correct) else cand
            return json.dumps({"correct": verdict, "feedback": "looks right" if verdict else "recheck the arithmetic",
                               "answer": ans}) if meta.get("json") else (
                "CORRECT" if verdict else f"INCORRECT. Recheck the arithmetic.\nAnswer: {ans}")
        if mode == "json":
            schema: dict[str, str] = meta.get("schema") or {}
            answers = gold if correct else self._draw_wrong(gold, profile, rng)
            obj: dict[str, Any] = {}
            for fname, ftype in schema.items():
                if ftype == "list[str]":
                    k = int(meta.get("n_items", 2))
                    obj[fname] = [f"Sub-task {i + 1}: work out part {i + 1} of the problem." for i in range(k)]
                elif ftype in ("list[int]", "list[float]"):
                    obj[fname] = [int(a) if _NUM.match(a) and "." not in a else a for a in answers]
                elif ftype == "bool":
                    obj[fname] = correct
                elif ftype in ("int", "float"):
                    a = answers[0] if answers else "0"
                    obj[fname] = (int(a) if "." not in a else float(a)) if _NUM.match(a) else 0
                else:
                    obj[fname] = ", ".join(answers) if fname in ("answer", "final", "result") else f"{fname} text"
            return json.dumps(obj)
        answers = gold if correct else self._draw_wrong(gold, profile, rng)
        boxed = "\n" + "\n\n".join(f"\\boxed{{{a}}}" for a in answers) if len(answers) > 1 else ""
        return ("Let me reason step by step about the quantities involved.\n"  # several answers are also
                f"Answer: {', '.join(answers)}{boxed}")                           # boxed (MASBench's rule)
