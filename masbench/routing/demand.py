"""Skill demand of a call: which skills it needs, with weights summing to 1.

Inferred on *every* call (not only the first turn): from the handbook's indicator keywords by
default, or by an optional LLM classifier called through the gateway. Indicators can also be
learned from tagged examples (:func:`learn_indicators`): the words whose presence best separates a
skill's questions from the others' (smoothed log-odds).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from typing import TYPE_CHECKING, Any, Iterable

from ..spec.handbook import HandbookSpec, Indicator, SkillSpec

if TYPE_CHECKING:
    from ..llm import Gateway

_WORD = re.compile(r"[a-z][a-z'\-]*[a-z]|[a-z]")
STOPWORDS = frozenset("""a an the of to in on at for and or is are was were be been it its this that these those
with as by from what which who whom how many much do does did has have had will would can could should
i you he she we they them his her their our your my me us if then than so not no yes there here each every
all any some one two three four five six seven eight nine ten answer final step think give write only
number numbers value values please question""".split())


def tokens(text: str) -> list[str]:
    """Lower-case word tokens (letters only; numbers carry no skill signal here)."""
    return _WORD.findall(text.lower())


def message_text(messages: Any) -> str:
    """The text of a call: its messages' contents joined (a string passes through)."""
    if isinstance(messages, str):
        return messages
    parts = []
    for m in messages or []:
        c = m.get("content", "") if isinstance(m, dict) else getattr(m, "content", "")
        if isinstance(c, list):  # OpenAI content parts
            c = " ".join(str(p.get("text", "")) for p in c if isinstance(p, dict))
        parts.append(str(c or ""))
    return "\n".join(parts)


def _compile(ind: str | Indicator) -> tuple[re.Pattern, float]:
    pat, w = (ind.pattern, ind.weight) if isinstance(ind, Indicator) else (ind, 1.0)
    if len(pat) >= 2 and pat.startswith("/") and pat.endswith("/"):
        return re.compile(pat[1:-1], re.IGNORECASE), w
    return re.compile(r"(?<![A-Za-z0-9])" + re.escape(pat.strip().lower()) + r"(?![A-Za-z0-9])", re.IGNORECASE), w


class IndicatorMatcher:
    """Scores each skill by Σ weight × min(matches, 3) of its indicators; normalises to 1."""

    def __init__(self, taxonomy: dict[str, SkillSpec]):
        self.rules: list[tuple[str, list[tuple[re.Pattern, float]]]] = [
            (sid, [_compile(i) for i in sk.indicators]) for sid, sk in taxonomy.items() if sk.indicators]

    def scores(self, text: str) -> dict[str, float]:
        out: dict[str, float] = {}
        for sid, pats in self.rules:
            s = 0.0
            for rx, w in pats:
                n = len(rx.findall(text))
                if n:
                    s += w * min(n, 3)
            if s > 0:
                out[sid] = s
        return out

    def demand(self, text: str) -> dict[str, float]:
        sc = self.scores(text)
        tot = sum(sc.values())
        return {k: v / tot for k, v in sorted(sc.items(), key=lambda kv: -kv[1])} if tot > 0 else {}


def uniform(skills: Iterable[str]) -> dict[str, float]:
    s = list(dict.fromkeys(skills))
    return {k: 1.0 / len(s) for k in s} if s else {}


def infer_demand(matcher: IndicatorMatcher, text: str, hints: Iterable[str] = (),
                 fallback: Iterable[str] = ()) -> tuple[dict[str, float], str]:
    """Demand of one call and where it came from: ``indicators``; else the agent's skill
    ``hints``; else ``fallback`` (e.g. the task's tags); else ``none`` (the model-wide rate)."""
    d = matcher.demand(text)
    if d:
        return d, "indicators"
    d = uniform(hints)
    if d:
        return d, "hints"
    d = uniform(fallback)
    if d:
        return d, "task"
    return {}, "none"


_MID_CAP = re.compile(r"(?<=[a-z0-9,;:] )([A-Z][a-z]+)")


def proper_nouns(texts: list[str]) -> set[str]:
    """Lower-cased words that appear capitalized mid-sentence and never in lower case (names of
    people and places recur by chance and say nothing about the skill)."""
    caps: set[str] = set()
    lower: set[str] = set()
    for x in texts:
        caps.update(w.lower() for w in _MID_CAP.findall(x))
        lower.update(re.findall(r"\b[a-z][a-z'\-]*\b", x))
    return caps - lower


def learn_indicators(texts: list[str], tag_sets: list[list[str]], *, top_k: int = 6, min_support: int = 2,
                     min_frac: float = 0.15, min_precision: float = 0.6) -> dict[str, list[Indicator]]:
    """Per skill, the words that best separate its questions from the rest (smoothed log-odds).
    A word must occur in ≥ ``min_support`` and ≥ ``min_frac`` of the skill's questions (so names
    that happen to recur are not taken) with precision ≥ ``min_precision``. Weights are the log-odds."""
    names = proper_nouns(texts)
    docs = [set(t for t in tokens(x) if t not in STOPWORDS and len(t) > 2 and t not in names) for x in texts]
    df_all: Counter = Counter()
    for d in docs:
        df_all.update(d)
    by_skill: dict[str, list[int]] = {}
    for i, tags in enumerate(tag_sets):
        for s in dict.fromkeys(tags):
            by_skill.setdefault(s, []).append(i)
    n = len(docs)
    out: dict[str, list[Indicator]] = {}
    for s, idx in by_skill.items():
        df_s: Counter = Counter()
        for i in idx:
            df_s.update(docs[i])
        ns, no = len(idx), n - len(idx)
        cands = []
        need = max(min_support, math.ceil(min_frac * ns))
        for t, a in df_s.items():
            if a < need:
                continue
            b = df_all[t] - a
            if a / (a + b) < min_precision:
                continue
            lo = math.log((a + 0.5) / (ns + 1)) - math.log((b + 0.5) / (no + 1))
            if lo > 0.5:
                cands.append((lo * math.sqrt(a / ns), lo, t))
        cands.sort(reverse=True)
        if cands:
            out[s] = [Indicator(pattern=t, weight=round(max(lo, 0.1), 3)) for _sc, lo, t in cands[:top_k]]
    return out


# ----- optional LLM classifier ------------------------------------------------------------------
CLASSIFIER_PROMPT = """Which skills does the request below need? Skills:
{skills}

Request:
\"\"\"{text}\"\"\"

Reply with one JSON object mapping the needed skill ids to weights that sum to 1, e.g. {{"{example}": 1.0}}.
Use only the ids listed. JSON only."""


def parse_demand_reply(text: str, known: set[str]) -> dict[str, float]:
    """Parse a classifier's reply: a JSON object {skill: weight}, or a list of ids; unknown ids dropped."""
    obj: Any = None
    for m in re.finditer(r"\{[^{}]*\}|\[[^\[\]]*\]", text, re.S):
        try:
            obj = json.loads(m.group(0))
            break
        except json.JSONDecodeError:
            continue
    out: dict[str, float] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            try:
                w = float(v)
            except (TypeError, ValueError):
                continue
            if str(k) in known and w > 0:
                out[str(k)] = w
    elif isinstance(obj, list):
        out = {str(k): 1.0 for k in obj if str(k) in known}
    else:
        out = {k: 1.0 for k in re.findall(r"[A-Za-z][\w]*(?:\.[\w]+)+|[A-Za-z]\w*", text) if k in known}
    tot = sum(out.values())
    return {k: v / tot for k, v in out.items()} if tot > 0 else {}


class LLMDemandClassifier:
    """Asks a model (through the gateway) which skills a call needs. Falls back to indicators when
    the reply is unusable. Its calls are tagged ``purpose: routing`` so their cost is visible."""

    def __init__(self, gateway: Gateway, model: str, handbook: HandbookSpec, *, max_tokens: int = 64,
                 tags: dict[str, Any] | None = None, max_chars: int = 2000):
        self.gateway = gateway
        self.model = model
        self.known = {s for s, sk in handbook.taxonomy.items() if sk.active}
        lines = [f"- {s}: {handbook.taxonomy[s].description or s}" for s in sorted(self.known)]
        self.skills_text = "\n".join(lines)
        self.example = sorted(self.known)[0] if self.known else "skill.id"
        self.max_tokens = max_tokens
        self.tags = dict(tags or {})
        self.max_chars = max_chars
        self.fallback = IndicatorMatcher(handbook.taxonomy)
        self.calls = 0
        self.cost_usd = 0.0

    async def classify(self, text: str) -> dict[str, float]:
        prompt = CLASSIFIER_PROMPT.format(skills=self.skills_text, text=text[-self.max_chars:], example=self.example)
        res = await self.gateway.complete(self.model, [{"role": "user", "content": prompt}], temperature=0.0,
                                          max_tokens=self.max_tokens, tags={**self.tags, "purpose": "routing"})
        self.calls += 1
        self.cost_usd += res.cost_usd
        d = parse_demand_reply(res.text, self.known) if res.ok else {}
        return d or self.fallback.demand(text)
