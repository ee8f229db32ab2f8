"""A generated search corpus: a world's facts written into documents, confusable distractors, padding.

One corpus serves every task of a source: it is deterministic from its ref ``{"generator":
"search", "seed", "split", "corpus_size", "distractors", "entities"}`` and memoized by it
(:func:`build`, :func:`corpus_for`). Layout:

- the *core* world (``entities`` entities, default ``corpus_size // (2 · (2 + distractors))``):
  a person's and a company's facts are spread over two documents, a city's and a product's sit in
  one; about one entity in five has one fact moved into a document about the entity it points to
  (``Marta Velk was born in Oster.`` in Oster's document), so a document holds facts about one or
  two entities. Every document also states an attribute and a sentence that states nothing.
- ``distractors`` confusable twins per core entity (``Marta Volk`` for ``Marta Velk``): one
  document each, stating the same relations with other objects;
- padding: documents about a separate world nothing asks about, up to ``corpus_size`` in total.

Documents are shuffled, then numbered ``d00001``… (so an id says nothing about its role).
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .corpus import Corpus, Doc, ref_key
from .names import NameBook
from .world import ATTRIBUTES, FILLERS, RELATIONS, World, add_twins, make_world, mention, state

FactKey = tuple[str, str]
"""``(subject name, relation)``: one relation fact."""

_MOVE_SHARE = 0.2
_SECOND = {"person": "career", "company": "history"}


@dataclass(slots=True)
class _Draft:
    title: str
    pieces: list[tuple[FactKey | None, str]] = field(default_factory=list)
    """(the fact it states or None, sentence)."""

    def facts(self) -> int:
        return sum(1 for k, _ in self.pieces if k is not None)


@dataclass(slots=True)
class Built:
    """A generated corpus and the world it writes about."""

    corpus: Corpus
    world: World
    """Core entities, their twins (``twin_of`` set) — not the padding."""
    core: list[str]
    """The core entities with facts (a question starts and walks here), in creation order."""
    fact_doc: dict[FactKey, str]
    """Where each relation fact of the core world and the twins is stated: its document id."""
    fact_text: dict[FactKey, str]
    """Each such fact's sentence, as the document has it."""


def corpus_ref(seed: int, split: str, corpus_size: int, distractors: int, entities: int | None) -> dict[str, object]:
    """The ref of a generated corpus (what ``meta["corpus"]`` holds)."""
    return {"generator": "search", "seed": seed, "split": split, "corpus_size": corpus_size,
            "distractors": distractors, "entities": entities}


def _entity_drafts(rng: random.Random, w: World, name: str) -> list[_Draft]:
    e = w.entities[name]
    facts: list[tuple[FactKey | None, str]] = [((e.name, r), state(r, e.name, e.kind, o)) for r, o in e.rel.items()]
    rng.shuffle(facts)
    n_docs = 2 if e.kind in _SECOND and e.twin_of is None else 1
    drafts = [_Draft(e.name if i == 0 else f"{e.name} ({_SECOND[e.kind]})") for i in range(n_docs)]
    for i, piece in enumerate(facts):
        drafts[i % n_docs].pieces.append(piece)
    subject = mention(e.name, e.kind)
    attr = ATTRIBUTES[e.kind].format(s=subject, v=e.value)
    drafts[-1].pieces.append((None, attr[0].upper() + attr[1:]))
    for d in drafts:
        filler = rng.choice(FILLERS).format(s=subject)
        d.pieces.insert(rng.randrange(len(d.pieces) + 1), (None, filler[0].upper() + filler[1:]))
    return drafts


def _world_drafts(rng: random.Random, w: World, names: list[str], move: bool) -> list[_Draft]:
    by_entity = {n: _entity_drafts(rng, w, n) for n in names}
    if move:  # one fact of some entities goes into a document about the entity it points to
        for n in names:
            if rng.random() >= _MOVE_SHARE:
                continue
            e = w.entities[n]
            movable = [(d, p) for d in by_entity[n] if d.facts() >= 2 for p in d.pieces
                       if p[0] is not None and p[0][0] == n and e.rel[p[0][1]] in by_entity]
            if movable:
                src, piece = rng.choice(movable)
                src.pieces.remove(piece)
                fact = piece[0]
                assert fact is not None
                dst = by_entity[e.rel[fact[1]]][0]
                dst.pieces.insert(rng.randrange(len(dst.pieces) + 1), piece)
    return [d for n in names for d in by_entity[n]]


def _padding(rng: random.Random, names: NameBook, need: int) -> list[_Draft]:
    out: list[_Draft] = []
    while len(out) < need:
        pad = make_world(rng, names, max(8, int((need - len(out)) / 1.4) + 4))
        out += _world_drafts(rng, pad, [e.name for e in pad.entities.values() if e.rel], move=False)
    rng.shuffle(out)
    return out[:need]


def _build(key: str) -> Built:
    ref = json.loads(key)
    seed, split = int(ref["seed"]), str(ref["split"])
    size, twins_per = int(ref["corpus_size"]), int(ref["distractors"])
    n_core = ref.get("entities") or max(12, size // (2 * (2 + twins_per)))
    rng = random.Random(f"search-corpus|{split}|{seed}|{size}|{twins_per}|{n_core}")
    names = NameBook(rng)
    w = make_world(rng, names, int(n_core))
    core = [e.name for e in w.entities.values() if e.rel]
    twins = add_twins(rng, names, w, twins_per)
    drafts = _world_drafts(rng, w, core, move=True) + _world_drafts(rng, w, [t.name for t in twins], move=False)
    if len(drafts) > size:
        raise ValueError(f"search corpus: {len(core)} entities and {twins_per} distractor(s) each need "
                         f"{len(drafts)} documents, more than corpus_size={size}; raise corpus_size or "
                         "lower entities/distractors")
    drafts += _padding(rng, names, size - len(drafts))
    order = list(range(len(drafts)))
    rng.shuffle(order)
    docs, fact_doc, fact_text = [], {}, {}
    for i, j in enumerate(order, start=1):
        d, docid = drafts[j], f"d{i:05d}"
        docs.append(Doc(docid, d.title, " ".join(text for _, text in d.pieces)))
        for k, text in d.pieces:
            if k is not None and k[0] in w.entities:
                fact_doc[k], fact_text[k] = docid, text
    return Built(Corpus(ref, docs), w, core, fact_doc, fact_text)


@functools.lru_cache(maxsize=16)
def _built(key: str) -> Built:
    return _build(key)


def build(ref: Mapping[str, object]) -> Built:
    """The generated corpus of ``ref`` with its world (memoized by the ref)."""
    if ref.get("generator") != "search":
        raise ValueError(f"not a generated search corpus ref: {ref_key(ref)}")
    return _built(ref_key(ref))


@functools.lru_cache(maxsize=16)
def _from_path(path: str) -> Corpus:
    return Corpus.from_jsonl(Path(path), {"path": path})


def corpus_for(ref: Mapping[str, object]) -> Corpus:
    """The corpus a task's ``meta["corpus"]`` names: a generated one (its parameters) or a shipped
    JSONL file (``{"path": FILE}``); memoized by the ref, so every task of a source shares one."""
    if not isinstance(ref, Mapping):
        raise ValueError(f"a corpus ref is a mapping, got {type(ref).__name__}")
    if "path" in ref:
        return _from_path(str(ref["path"]))
    return build(ref).corpus


__all__ = ["Built", "FactKey", "RELATIONS", "build", "corpus_for", "corpus_ref"]
