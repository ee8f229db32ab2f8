"""The skill handbook: a skill taxonomy, per-(model, skill) competence evidence and cost, provenance.

A handbook is a YAML file in ``skills/`` (kind ``handbook``)::

    name: arith-pool
    cost_unit: relative              # or usd_per_1k_calls (the default)
    shrinkage: 4                     # κ: pseudo-count strength of the parent-skill prior
    taxonomy:
      arith:     {description: Arithmetic on small integers}
      arith.add: {description: Addition, indicators: [plus, sum, "/in total/"], examples: [...]}
    profiles:
      sim/mathy:
        model: {id: sim/mathy, input_usd_per_mtok: 0.5, output_usd_per_mtok: 1.5}
        cost_usd: 0.00024           # model-wide mean USD per call
        skills:
          arith.add: {wins: 18.2, losses: 1.1, cost_usd: 0.00023, tokens: 190, calls: 19.3}
    provenance: {source: explore, learning_cost_usd: 0.012, ...}

What is stored is *evidence* (fractional wins/losses — the Beta posterior's sufficient
statistics); the posterior itself is computed with hierarchical shrinkage (see
:func:`compile_handbook`):

* the model-wide rate: Beta(prior.alpha + W, prior.beta + L) over all of the model's evidence;
* a skill: Beta(κ·m + w_s, κ·(1 − m) + l_s), where m is the posterior mean of its parent (the
  model-wide rate for a top-level skill) and w_s, l_s pool the skill's own evidence with that of
  its descendants.

So an unseen skill inherits its parent's rate (never 0), and a skill seen twice moves only
part-way from it. A skill with ``active: false`` has been merged into its parent: routing uses
the nearest active ancestor, whose pooled evidence includes it (see :mod:`.learn` for split/merge).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..library import Library, default_library
from ..spec.handbook import ROOT, HandbookSpec, ModelProfile, SkillStats, validate_handbook


def load_handbook(path_or_name: str | Path, library: Library | None = None) -> HandbookSpec:
    """A handbook from a YAML path, or by name through the library (``skills/NAME.yaml``)."""
    p = Path(path_or_name)
    if p.suffix in (".yaml", ".yml") and p.is_file():
        if library is None:
            library = Library(include_cwd=False)
        return library.load_path(p, "handbook").typed(HandbookSpec)
    if library is None:
        library = default_library()
    return library.handbook(str(path_or_name))


def _round(x: Any) -> Any:
    if isinstance(x, float):
        return float(f"{x:.5g}")
    if isinstance(x, dict):
        return {k: _round(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_round(v) for v in x]
    return x


def handbook_yaml(hb: HandbookSpec, header: str | None = None) -> str:
    """YAML text of a handbook (defaults omitted, floats to 5 significant digits, leaf mappings inline)."""
    data = _round(hb.model_dump(by_alias=True, exclude_defaults=True, mode="json"))
    data = {"name": hb.name, **{k: v for k, v in data.items() if k != "name"}}
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110, default_flow_style=None)
    return (header.rstrip() + "\n" if header else "") + text


def save_handbook(hb: HandbookSpec, path: str | Path, header: str | None = None) -> Path:
    """Write a handbook YAML file (creating folders)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(handbook_yaml(hb, header), encoding="utf-8")
    return p


# ----- the compiled form: arrays for routing ----------------------------------------------------
@dataclass
class CompiledHandbook:
    """Arrays over (model, skill) for fast routing. Skill index 0 is the root (model-wide)."""

    spec: HandbookSpec
    models: list[str]
    skills: list[str]
    parent: np.ndarray
    """Index of each skill's parent (−1 for the root)."""
    effective: np.ndarray
    """Index of each skill's nearest active ancestor-or-self (the root if none)."""
    depth: np.ndarray
    wins: np.ndarray
    """(M, S) direct evidence."""
    losses: np.ndarray
    cost_sum: np.ndarray
    """(M, S) direct cost evidence: Σ weight·USD."""
    tok_sum: np.ndarray
    cost_n: np.ndarray
    """(M, S) direct weight behind cost_sum."""
    prior_a: np.ndarray
    """(M,) model prior."""
    prior_b: np.ndarray
    price_cost: np.ndarray
    """(M,) fallback USD per call from prices (0 if unknown)."""
    lat_sum: np.ndarray
    """(M, S) direct latency evidence: Σ weight·seconds (over the same weights as cost_n)."""
    alpha: np.ndarray = field(init=False)
    beta: np.ndarray = field(init=False)
    cost: np.ndarray = field(init=False)
    """(M, S) mean USD per call (pooled, falling back up the tree)."""
    tokens: np.ndarray = field(init=False)
    latency: np.ndarray = field(init=False)
    """(M, S) mean seconds per call (pooled, falling back up the tree; 0 if unknown)."""
    index: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.index = {s: i for i, s in enumerate(self.skills)}
        self.refresh()

    @property
    def kappa(self) -> float:
        return self.spec.shrinkage

    def pooled(self, arr: np.ndarray) -> np.ndarray:
        """Each skill's value plus all of its descendants' (root = everything)."""
        out = arr.copy()
        for d in range(int(self.depth.max()), 0, -1):
            for i in np.nonzero(self.depth == d)[0]:
                out[:, self.parent[i]] += out[:, i]
        return out

    def refresh(self) -> None:
        """Recompute posteriors and costs from the evidence."""
        k = self.kappa
        W, L = self.pooled(self.wins), self.pooled(self.losses)
        M, S = W.shape
        a = np.zeros((M, S))
        b = np.zeros((M, S))
        a[:, 0] = self.prior_a + W[:, 0]
        b[:, 0] = self.prior_b + L[:, 0]
        for d in range(1, int(self.depth.max()) + 1):
            idx = np.nonzero(self.depth == d)[0]
            par = self.parent[idx]
            m = a[:, par] / (a[:, par] + b[:, par])
            ai = k * m + W[:, idx]
            bi = k * (1 - m) + L[:, idx]
            # with κ = 0 a skill without evidence would be Beta(0, 0): it gets its parent's posterior
            empty = (ai + bi) <= 1e-12
            a[:, idx] = np.where(empty, a[:, par], ai)
            b[:, idx] = np.where(empty, b[:, par], bi)
        self.alpha, self.beta = a, b
        cs, ts, cn = self.pooled(self.cost_sum), self.pooled(self.tok_sum), self.pooled(self.cost_n)
        cost = np.zeros((M, S))
        tok = np.zeros((M, S))
        has = cn[:, 0] > 1e-12
        cost[:, 0] = np.where(has, cs[:, 0] / np.maximum(cn[:, 0], 1e-12), self.price_cost)
        tok[:, 0] = np.where(has, ts[:, 0] / np.maximum(cn[:, 0], 1e-12), 0.0)
        for d in range(1, int(self.depth.max()) + 1):
            idx = np.nonzero(self.depth == d)[0]
            par = self.parent[idx]
            h = cn[:, idx] > 1e-9
            cost[:, idx] = np.where(h, cs[:, idx] / np.maximum(cn[:, idx], 1e-12), cost[:, par])
            tok[:, idx] = np.where(h, ts[:, idx] / np.maximum(cn[:, idx], 1e-12), tok[:, par])
        self.cost, self.tokens = cost, tok
        ls = self.pooled(self.lat_sum)
        lat = np.zeros((M, S))
        lat[:, 0] = np.where(has, ls[:, 0] / np.maximum(cn[:, 0], 1e-12), 0.0)
        for d in range(1, int(self.depth.max()) + 1):
            idx = np.nonzero(self.depth == d)[0]
            h = cn[:, idx] > 1e-9
            lat[:, idx] = np.where(h, ls[:, idx] / np.maximum(cn[:, idx], 1e-12), lat[:, self.parent[idx]])
        self.latency = lat

    # ----- derived quantities -----------------------------------------------------------------
    @property
    def mean(self) -> np.ndarray:
        return self.alpha / (self.alpha + self.beta)

    @property
    def var(self) -> np.ndarray:
        a, b = self.alpha, self.beta
        n = a + b
        return a * b / (n * n * (n + 1))

    def cost_scale(self) -> float:
        """USD per cost unit: 1/1000 for ``usd_per_1k_calls``; the priciest model's mean cost for ``relative``."""
        if self.spec.cost_unit == "relative":
            top = float(self.cost[:, 0].max()) if self.cost.size else 0.0
            return top if top > 0 else 1.0
        return 1e-3

    def unit_cost(self) -> np.ndarray:
        """(M, S) E[c] in the handbook's cost unit: thousands of tokens per call for ``ktokens``,
        else USD ÷ :meth:`cost_scale`."""
        if self.spec.cost_unit == "ktokens":
            return self.tokens / 1000.0
        return self.cost / self.cost_scale()

    def demand_vector(self, demand: dict[str, float]) -> np.ndarray:
        """A {skill: weight} demand → a normalised vector over the effective (active) skills.
        Unknown skills fall back to their nearest known dotted prefix, then to the root."""
        v = np.zeros(len(self.skills))
        for s, w in demand.items():
            if w <= 0:
                continue
            i = self.index.get(s)
            if i is None:
                parts = s.split(".")
                for j in range(len(parts) - 1, 0, -1):
                    i = self.index.get(".".join(parts[:j]))
                    if i is not None:
                        break
            v[self.effective[i] if i is not None else 0] += w
        tot = v.sum()
        if tot <= 0:
            v[0] = 1.0
            return v
        return v / tot

    def ancestors(self, i: int) -> list[int]:
        """i, its parent, …, the root."""
        out = []
        while i >= 0:
            out.append(i)
            i = int(self.parent[i])
        return out

    # ----- write back -------------------------------------------------------------------------
    def to_spec(self) -> HandbookSpec:
        """The handbook with this object's evidence (after online updates)."""
        profiles = {}
        for mi, alias in enumerate(self.models):
            old = self.spec.profiles.get(alias) or ModelProfile()
            skills = {}
            for si, s in enumerate(self.skills):
                if si == 0:
                    continue
                w, l, n = self.wins[mi, si], self.losses[mi, si], self.cost_n[mi, si]
                if w + l <= 0 and n <= 0:
                    continue
                skills[s] = SkillStats(
                    wins=float(w), losses=float(l),
                    cost_usd=float(self.cost_sum[mi, si] / n) if n > 0 else None,
                    tokens=float(self.tok_sum[mi, si] / n) if n > 0 else None,
                    latency_s=(float(self.lat_sum[mi, si] / n) if n > 0 and self.lat_sum[mi, si] > 0 else
                               (old.skills[s].latency_s if s in old.skills else None)), calls=float(n))
            cn = self.pooled(self.cost_n)[mi, 0]
            profiles[alias] = old.model_copy(update={
                "skills": skills,
                "cost_usd": float(self.cost[mi, 0]) if cn > 0 or old.cost_usd is None else old.cost_usd,
                "tokens": float(self.tokens[mi, 0]) if cn > 0 else old.tokens,
                "latency_s": float(self.latency[mi, 0]) if cn > 0 and self.latency[mi, 0] > 0 else old.latency_s,
                "calls": float(cn) if cn > 0 else old.calls})
        return self.spec.model_copy(update={"profiles": profiles})


def _price_cost(prof: ModelProfile) -> float:
    """A fallback per-call cost from prices: 200 prompt + 200 completion tokens."""
    m = prof.model
    if m is None:
        return 0.0
    return ((m.input_usd_per_mtok or 0.0) * 200 + (m.output_usd_per_mtok or 0.0) * 200) / 1e6


def compile_handbook(hb: HandbookSpec, candidates: list[str] | None = None) -> CompiledHandbook:
    """Arrays for routing (posteriors with hierarchical shrinkage, costs with fallbacks)."""
    problems = validate_handbook(hb)
    if problems:
        raise ValueError(f"handbook {hb.name!r} is invalid: " + "; ".join(problems))
    models = [m for m in hb.profiles if candidates is None or m in candidates]
    if candidates is not None:
        missing = [c for c in candidates if c not in hb.profiles]
        if missing:
            raise KeyError(f"handbook {hb.name!r} has no profile for {missing} (profiles: {list(hb.profiles)})")
    if not models:
        raise ValueError(f"handbook {hb.name!r}: no candidate models")
    # order skills so parents come before children
    order: list[str] = []
    placed: set[str] = set()

    def place(s: str) -> None:
        if s in placed:
            return
        p = hb.parent_of(s)
        if p is not None:
            place(p)
        placed.add(s)
        order.append(s)

    for s in sorted(hb.taxonomy):
        place(s)
    skills = [ROOT] + order
    index = {s: i for i, s in enumerate(skills)}
    S, M = len(skills), len(models)
    parent = np.full(S, -1, dtype=int)
    depth = np.zeros(S, dtype=int)
    for s in order:
        p = hb.parent_of(s)
        parent[index[s]] = index[p] if p is not None else 0
        depth[index[s]] = depth[parent[index[s]]] + 1
    effective = np.zeros(S, dtype=int)
    for s in order:
        i = index[s]
        j = i
        while j > 0 and not hb.taxonomy[skills[j]].active:
            j = parent[j]
        effective[i] = j
    wins = np.zeros((M, S))
    losses = np.zeros((M, S))
    cost_sum = np.zeros((M, S))
    tok_sum = np.zeros((M, S))
    lat_sum = np.zeros((M, S))
    cost_n = np.zeros((M, S))
    pa = np.ones(M)
    pb = np.ones(M)
    pc = np.zeros(M)
    for mi, alias in enumerate(models):
        prof = hb.profiles[alias]
        pa[mi], pb[mi] = prof.prior.alpha, prof.prior.beta
        pc[mi] = prof.cost_usd if prof.cost_usd is not None else _price_cost(prof)
        for s, st in prof.skills.items():
            si = index[s]
            wins[mi, si] += st.wins
            losses[mi, si] += st.losses
            if st.cost_usd is not None and st.calls > 0:
                cost_sum[mi, si] += st.cost_usd * st.calls
                tok_sum[mi, si] += (st.tokens or 0.0) * st.calls
                lat_sum[mi, si] += (st.latency_s or 0.0) * st.calls
                cost_n[mi, si] += st.calls
        if cost_n[mi].sum() <= 0 and prof.cost_usd is not None and prof.calls > 0:
            cost_sum[mi, 0] = prof.cost_usd * prof.calls
            tok_sum[mi, 0] = (prof.tokens or 0.0) * prof.calls
            lat_sum[mi, 0] = (prof.latency_s or 0.0) * prof.calls
            cost_n[mi, 0] = prof.calls
    return CompiledHandbook(hb, models, skills, parent, effective, depth, wins, losses, cost_sum, tok_sum, cost_n,
                            pa, pb, pc, lat_sum)
