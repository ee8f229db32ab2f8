"""Learning a handbook from an outcome matrix (exploration runs or stored traces).

1. **Taxonomy**: the skills in task metadata (and their dotted ancestors, so every family has a
   parent to shrink toward), optionally an LLM-proposed taxonomy (:func:`propose_taxonomy`);
   indicators are learned from the tagged questions (:func:`~.demand.learn_indicators`).
2. **Competence**: fractional updates. A task's outcome is split among its skills by weight ×
   responsibility (``credit="responsibility"``, iterated to a fixed point — EM for the mixture
   P(correct) = Σ_s w_s·p_s), or by weight alone (``"demand"``). Estimates shrink toward the
   parent skill and the model prior (see :mod:`.handbook`).
3. **Cost** per (model, skill): weighted mean USD and tokens per call.
4. **Split/merge** (:func:`refine`): a family of sibling skills is split (children active) when
   some model's posterior means across the children have standard deviation ≥
   ``split_threshold``, and merged into the parent otherwise. Evidence is always kept at the finest
   level, so a merge can be undone by later evidence (a split).
5. **Provenance**: source, runs, counts, credit mode, and the learning cost (every exploration
   call + LLM proposals).
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pandas as pd

from ..llm import Gateway
from ..spec.handbook import CostUnit, HandbookSpec, ModelProfile, Provenance, RefinementEvent, SkillSpec
from ..spec.model import ModelSpec
from .demand import IndicatorMatcher, learn_indicators, uniform
from .handbook import CompiledHandbook, compile_handbook
from .matrix import Arrays, now_iso, to_arrays
from .router import credit


def taxonomy_from_tags(tag_sets: list[list[str]], questions: list[str] | None = None, *, indicators: bool = True,
                       examples: int = 2, example_chars: int = 120) -> dict[str, SkillSpec]:
    """Skills seen in task metadata plus their dotted ancestors, with learned indicators and examples."""
    ids: set[str] = set()
    for tags in tag_sets:
        for s in tags:
            parts = s.split(".")
            for i in range(1, len(parts) + 1):
                ids.add(".".join(parts[:i]))
    learned = learn_indicators(questions, tag_sets) if (indicators and questions and any(questions)) else {}
    ex: dict[str, list[str]] = {}
    if questions:
        for q, tags in zip(questions, tag_sets):
            for s in tags:
                if q and len(ex.setdefault(s, [])) < examples:
                    q1 = " ".join(q.split())
                    ex[s].append(q1 if len(q1) <= example_chars else q1[:example_chars - 3] + "...")
    out = {}
    for s in sorted(ids):
        out[s] = SkillSpec(description=f"{s} (from task metadata)", indicators=list(learned.get(s, [])),
                           examples=ex.get(s, []))
    return out


def tag_matrix(ch: CompiledHandbook, tag_sets: list[list[str]], demands: list[dict[str, float]] | None = None) -> np.ndarray:
    """(n, S) demand weights at the *finest* known skill (not the effective one): evidence is
    recorded where it belongs; unknown tags fall back to their dotted prefix, else the root."""
    n, S = len(tag_sets), len(ch.skills)
    W = np.zeros((n, S))
    for i in range(n):
        d = demands[i] if demands is not None else uniform(tag_sets[i])
        for s, w in d.items():
            j = ch.index.get(s)
            if j is None:
                parts = s.split(".")
                for k in range(len(parts) - 1, 0, -1):
                    j = ch.index.get(".".join(parts[:k]))
                    if j is not None:
                        break
            W[i, j if j is not None else 0] += w
        tot = W[i].sum()
        if tot > 0:
            W[i] /= tot
        else:
            W[i, 0] = 1.0
    return W


def fit_evidence(ch: CompiledHandbook, W: np.ndarray, Y: np.ndarray, C: np.ndarray, T: np.ndarray | None = None,
                 *, mode: str = "responsibility", iters: int = 30, tol: float = 1e-6,
                 lat: np.ndarray | None = None) -> CompiledHandbook:
    """Add the evidence of tasks (rows of ``W``; outcomes ``Y`` and costs ``C`` per model, (n, M))
    to ``ch`` in place and refresh its posteriors. ``mode``: responsibility (EM) | demand | whole."""
    base_w, base_l = ch.wins.copy(), ch.losses.copy()
    Yt = Y.T  # (M, n)

    def add(p: np.ndarray | None) -> None:
        wins = np.zeros_like(base_w)
        losses = np.zeros_like(base_l)
        for m in range(Y.shape[1]):
            pm = np.broadcast_to(p[m], W.shape) if p is not None else W
            w1, w0 = credit(W, pm, Yt[m], mode)
            wins[m] = w1.sum(0)
            losses[m] = w0.sum(0)
        ch.wins, ch.losses = base_w + wins, base_l + losses
        ch.refresh()

    add(ch.mean.copy())
    if mode == "responsibility":
        prev = ch.mean.copy()
        for _ in range(iters):
            add(prev)
            cur = ch.mean.copy()
            if np.max(np.abs(cur - prev)) < tol:
                break
            prev = cur
    # costs: weighted by demand
    ch.cost_sum = ch.cost_sum + (W.T @ C).T
    ch.tok_sum = ch.tok_sum + (W.T @ (T if T is not None else np.zeros_like(C))).T
    if lat is not None:
        ch.lat_sum = ch.lat_sum + (W.T @ lat).T
    ch.cost_n = ch.cost_n + np.broadcast_to(W.sum(0), ch.cost_n.shape)
    ch.refresh()
    return ch


def divergence(ch: CompiledHandbook, parent: int, min_obs: float = 3.0) -> tuple[float, list[int]]:
    """Largest over models of the std of the children's posterior means (children with ≥ min_obs
    pooled observations for every model); and those children."""
    kids = [i for i in range(len(ch.skills)) if ch.parent[i] == parent]
    n = ch.pooled(ch.wins + ch.losses)
    kids = [i for i in kids if n[:, i].min() >= min_obs]
    if len(kids) < 2:
        return 0.0, kids
    return float(ch.mean[:, kids].std(axis=1).max()), kids


def refine(hb: HandbookSpec, ch: CompiledHandbook, *, threshold: float | None = None,
           min_obs: float = 3.0) -> tuple[HandbookSpec, list[RefinementEvent]]:
    """Split families whose children diverge, merge those that don't. Returns the new spec and events."""
    thr = hb.split_threshold if threshold is None else threshold
    tax = {k: v.model_copy() for k, v in hb.taxonomy.items()}
    events: list[RefinementEvent] = []
    for pi, pname in enumerate(ch.skills):
        if pi == 0:
            continue
        div, kids = divergence(ch, pi, min_obs)
        if len(kids) < 2:
            continue
        names = [ch.skills[k] for k in kids]
        want = div >= thr
        was = [tax[n].active for n in names]
        if want and not all(was):
            events.append(RefinementEvent(action="split", skill=pname, children=names, divergence=round(div, 4),
                                          at=now_iso()))
        elif not want and any(was):
            events.append(RefinementEvent(action="merge", skill=pname, children=names, divergence=round(div, 4),
                                          at=now_iso()))
        for n in names:
            tax[n] = tax[n].model_copy(update={"active": bool(want)})
    return hb.model_copy(update={"taxonomy": tax}), events


def annotate(hb: HandbookSpec, models: list[str]) -> HandbookSpec:
    """Strengths (within 0.05 of the best model) and weaknesses (0.2 below the pool median) on
    active skills with evidence for every model."""
    ch = compile_handbook(hb, models)
    out = hb
    mean = ch.mean
    n = ch.pooled(ch.wins + ch.losses)
    leaves = [i for i in range(1, len(ch.skills)) if hb.taxonomy[ch.skills[i]].active and n[:, i].min() >= 1]
    profiles = {}
    for mi, alias in enumerate(ch.models):
        strong = [ch.skills[i] for i in leaves if mean[mi, i] >= mean[:, i].max() - 0.05]
        weak = [ch.skills[i] for i in leaves if mean[mi, i] <= np.median(mean[:, i]) - 0.2]
        profiles[alias] = out.profiles[alias].model_copy(update={"strengths": strong, "weaknesses": weak})
    return out.model_copy(update={"profiles": {**out.profiles, **profiles}})


def learn_handbook(matrix: pd.DataFrame | Arrays, *, name: str, base: HandbookSpec | None = None,
                   models: dict[str, ModelSpec] | None = None, shrinkage: float = 4.0,
                   credit_mode: str = "responsibility", split_threshold: float = 0.15, do_refine: bool = True,
                   indicators: bool = True, taxonomy: dict[str, SkillSpec] | None = None,
                   cost_unit: CostUnit = "usd_per_1k_calls", provenance: dict[str, Any] | None = None,
                   description: str | None = None, min_obs: float = 3.0, target: str = "model") -> HandbookSpec:
    """Build (or, with ``base``, update) a handbook from an outcome matrix. ``target``: the route-target
    kind of new profiles (``model``; ``design`` when the matrix's "models" are sub-agent designs)."""
    A = matrix if isinstance(matrix, Arrays) else to_arrays(matrix)
    tax = dict(base.taxonomy) if base is not None else {}
    learned = taxonomy_from_tags(A.skills, A.questions, indicators=indicators)
    for s, sk in learned.items():
        if s not in tax:
            tax[s] = sk
        elif not tax[s].indicators and sk.indicators:
            tax[s] = tax[s].model_copy(update={"indicators": sk.indicators})
    for s, sk in (taxonomy or {}).items():
        tax[s] = sk
    profiles = dict(base.profiles) if base is not None else {}
    for m in A.models:
        spec = (models or {}).get(m)
        if m not in profiles:
            profiles[m] = ModelProfile(model=spec, target=target)
        elif spec is not None and profiles[m].model is None:
            profiles[m] = profiles[m].model_copy(update={"model": spec})
    prov_old = base.provenance if base is not None else Provenance()
    hb = HandbookSpec(name=name, description=description or (base.description if base else None),
                      cost_unit=base.cost_unit if base else cost_unit,
                      shrinkage=base.shrinkage if base else shrinkage,
                      split_threshold=base.split_threshold if base else split_threshold,
                      taxonomy=tax, profiles=profiles, provenance=prov_old)
    ch = compile_handbook(hb, A.models)
    # evidence from models not in this matrix is kept through to_spec (they are not candidates here)
    W = tag_matrix(ch, A.skills)
    fit_evidence(ch, W, A.Y, A.C, A.T, mode=credit_mode, lat=A.L)
    new = ch.to_spec()
    # keep profiles of models absent from this matrix
    new = new.model_copy(update={"profiles": {**profiles, **new.profiles}})
    events: list[RefinementEvent] = []
    if do_refine:
        new, events = refine(new, compile_handbook(new, A.models), min_obs=min_obs)
    new = annotate(new, A.models)
    p = prov_old.model_dump()
    p.update(provenance or {})
    p.update({
        "created": prov_old.created or now_iso(), "updated": now_iso(),
        "tasks": prov_old.tasks + len(A.task_ids), "observations": prov_old.observations + int(A.Y.size),
        "credit": credit_mode,
        "learning_cost_usd": prov_old.learning_cost_usd + float(A.C.sum()) + float((provenance or {}).get("extra_cost_usd", 0.0)),
        "learning_tokens": prov_old.learning_tokens + int(A.T.sum()),
        "learning_calls": prov_old.learning_calls + int(A.Y.size),
        "history": list(prov_old.history) + events,
    })
    p.pop("extra_cost_usd", None)
    if p.get("taxonomy_source") == "manual" and base is None:
        p["taxonomy_source"] = "metadata"
    return new.model_copy(update={"provenance": Provenance(**p)})


# ----- LLM-proposed taxonomy -----------------------------------------------------------------------
PROPOSE_PROMPT = """You are building a taxonomy of the skills that tasks require, to decide which model should
answer each task. Below are pairs of tasks: in each pair, one model succeeded on one task and failed on the other.
Contrast them and propose at most {max_skills} skills that explain the differences.

{pairs}

Reply with JSON only: {{"skills": [{{"id": "family.skill", "description": "...", "indicators": ["keyword", ...],
"parent": null}}]}}. Ids are lower-case dotted words (e.g. "arith.mul"); indicators are words or short phrases
that appear in the text of tasks needing the skill."""


def contrastive_pairs(A: Arrays, n_pairs: int = 8, seed: int = 0) -> list[tuple[str, str, str]]:
    """(model, solved question, failed question) pairs: same model, one success, one failure."""
    rng = np.random.default_rng(seed)
    out = []
    for j, m in enumerate(A.models):
        ok = np.nonzero(A.Y[:, j] > 0.5)[0]
        bad = np.nonzero(A.Y[:, j] <= 0.5)[0]
        if len(ok) and len(bad):
            for _ in range(max(1, n_pairs // len(A.models))):
                out.append((m, A.questions[int(rng.choice(ok))], A.questions[int(rng.choice(bad))]))
    return out[:n_pairs]


def parse_taxonomy_reply(text: str) -> dict[str, SkillSpec]:
    """Parse an LLM's taxonomy JSON; invalid entries are dropped."""
    m = re.search(r"\{.*\}", text, re.S)
    if not m:
        return {}
    try:
        obj = json.loads(m.group(0))
    except json.JSONDecodeError:
        return {}
    out: dict[str, SkillSpec] = {}
    for item in obj.get("skills", []) if isinstance(obj, dict) else []:
        if not isinstance(item, dict):
            continue
        sid = str(item.get("id", "")).strip().lower()
        if not re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_]+)*", sid):
            continue
        try:
            out[sid] = SkillSpec(description=str(item.get("description", "")),
                                 indicators=[str(i) for i in item.get("indicators", []) if str(i).strip()],
                                 parent=item.get("parent") or None)
        except Exception:
            continue
    for sid, sk in list(out.items()):  # parents must exist
        if sk.parent is not None and sk.parent not in out:
            out[sid] = sk.model_copy(update={"parent": None})
    return out


async def propose_taxonomy(gateway: Gateway, model: str, A: Arrays, *, n_pairs: int = 8, max_skills: int = 12,
                           max_tokens: int = 800, seed: int = 0) -> tuple[dict[str, SkillSpec], float, int]:
    """Ask a model for a taxonomy from contrastive success/failure pairs.
    Returns (skills, cost USD, tokens)."""
    pairs = contrastive_pairs(A, n_pairs, seed)
    text = "\n\n".join(f"Pair {i + 1} (model {m}):\n  SOLVED: {ok[:400]}\n  FAILED: {bad[:400]}"
                       for i, (m, ok, bad) in enumerate(pairs))
    res = await gateway.complete(model, [{"role": "user", "content": PROPOSE_PROMPT.format(pairs=text,
                                                                                             max_skills=max_skills)}],
                                 temperature=0.0, max_tokens=max_tokens, tags={"purpose": "routing"})
    return (parse_taxonomy_reply(res.text) if res.ok else {}), res.cost_usd, res.total_tokens


def tags_from_taxonomy(tax: dict[str, SkillSpec], questions: list[str]) -> list[list[str]]:
    """Assign skills to tasks by indicators (for an LLM-proposed taxonomy without metadata)."""

    mt = IndicatorMatcher(tax)
    return [list(mt.demand(q)) for q in questions]
