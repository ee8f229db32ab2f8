"""The ``search`` generator: multi-hop questions over one generated corpus (BrowseComp-Plus in spirit).

A question is a walk of ``hops`` relations from a named entity ("In which city was the founder of
the company that makes the Zorbel kettle born?": maker → founder → birthplace); each hop's fact
is stated in a different document, so answering needs one search (and read) per hop. ``values``
are hop counts (default 2–6; axis ``hops``). All tasks of a source share one corpus (``meta["corpus"]``
is its ref, :func:`~.build.corpus_for` turns it into the documents); ``meta["evidence"]`` lists the
gold documents in hop order and ``meta["hops"]`` says, per hop, the ideal query, the document, the
fact it states and what it reveals. Walks are drawn per (seed, hop count, index) and never repeat a
(start, relations) pair within a source.
"""

from __future__ import annotations

import random

from ...text import normalize_answer
from ..registry import generator
from ..types import TaskInstance
from .build import Built, build, corpus_ref
from .world import RELATIONS, mention

HOPS = (2, 3, 4, 5, 6)
"""The default hop counts."""
MAX_HOPS = 8
"""The longest walk a question may be."""
INSTRUCTION = 'Give the name as "Answer: <name>".'
"""The line after the question (the generator's and the published format's tasks alike)."""


def question_text(start: str, start_kind: str, relations: list[str]) -> str:
    """The question asking for the end of the walk ``relations`` from ``start``."""
    x = mention(start, start_kind)
    for r in relations[:-1]:
        x = RELATIONS[r].phrase.format(x=x)
    q = RELATIONS[relations[-1]].ask.format(x=x)
    return q[0].upper() + q[1:]


def _walk(rng: random.Random, b: Built, hops: int) -> tuple[list[str], list[str]] | None:
    """(entities visited, relations followed) of one walk, or None at a dead end."""
    path = [rng.choice(b.core)]
    rels: list[str] = []
    docs: list[str] = []
    for step in range(hops):
        e = b.world.entities[path[-1]]
        last = step == hops - 1
        options = [r for r in sorted(e.rel)
                   if e.rel[r] not in path and b.fact_doc[(e.name, r)] not in docs
                   and (last or b.world.entities[e.rel[r]].rel)]
        if not options:
            return None
        r = rng.choice(options)
        rels.append(r)
        docs.append(b.fact_doc[(e.name, r)])
        path.append(e.rel[r])
    return path, rels


def hop_records(b: Built, path: list[str], rels: list[str]) -> list[dict[str, str]]:
    """``meta["hops"]``: per hop the ideal query, its document, the fact and what it reveals (plus
    the subject and relation)."""
    out = []
    for subject, r, obj in zip(path, rels, path[1:]):
        out.append({"query": f"{subject} {RELATIONS[r].words}", "doc": b.fact_doc[(subject, r)],
                    "fact": b.fact_text[(subject, r)], "answer": obj, "subject": subject, "relation": r})
    return out


@generator("search")
def search_tasks(values: list[int] | None, n: int, seed: int, split: str, *, corpus_size: int = 500,
                 distractors: int = 1, entities: int | None = None, max_tries: int = 5000) -> list[TaskInstance]:
    """Multi-hop questions over one generated corpus of ``corpus_size`` documents with
    ``distractors`` confusable twins per entity; ``values`` are hop counts (default 2–6)."""
    values = list(HOPS) if values is None else list(values)
    if any(not isinstance(v, int) or not 1 <= v <= MAX_HOPS for v in values):
        raise ValueError(f"hop counts must be 1..{MAX_HOPS}, got {values!r}")
    if corpus_size < 10 or distractors < 0 or (entities is not None and entities < 8):
        raise ValueError("need corpus_size ≥ 10, distractors ≥ 0 and entities ≥ 8 (or unset)")
    ref = corpus_ref(seed, split, corpus_size, distractors, entities)
    b = build(ref)
    seen: set[tuple[str, tuple[str, ...]]] = set()
    out = []
    for h in values:
        for i in range(n):
            rng = random.Random(f"search-q|{split}|{seed}|{h}|{i}")
            for _ in range(max_tries):
                walk = _walk(rng, b, h)
                if walk is not None and (walk[0][0], tuple(walk[1])) not in seen:
                    break
            else:
                raise ValueError(f"search: no new {h}-hop question after {max_tries} walks "
                                 f"(corpus of {len(b.core)} entities); raise corpus_size or entities")
            path, rels = walk
            seen.add((path[0], tuple(rels)))
            hops = hop_records(b, path, rels)
            start_kind = b.world.entities[path[0]].kind
            out.append(TaskInstance(
                id=f"search-{h}-{split}-s{seed}-{i:04d}", source="search",
                question=question_text(path[0], start_kind, rels) + "\n" + INSTRUCTION,
                answers=[normalize_answer(path[-1])],
                intermediates=[normalize_answer(x) for x in path[1:-1]],
                axis="hops", axis_value=h,
                skills=["search", "search.multihop", *sorted({f"search.rel.{r}" for r in rels})],
                scorer="search",
                meta={"corpus": ref, "evidence": [x["doc"] for x in hops], "hops": hops,
                      "chain": {"start": path[0], "relations": rels}, "answer": path[-1],
                      "distractors": distractors, "corpus_size": corpus_size, "split": split, "seed": seed}))
    return out
