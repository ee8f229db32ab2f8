"""The invented world behind a search corpus: entities, the relations between them, and how a
relation reads as a sentence, as a query and as a question.

A relation links a subject of one kind to an object of another (``maker``: a product is made by a
company). Every entity of a world has one object per relation of its kind, so following relations
from a named entity is a walk with one answer at each step: a multi-hop question is such a walk.
Sentences are fixed templates (``"{s} was born in {o}."``), so a fact can be read back out of a
document's text by anyone who knows the template — the tests do exactly that.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .names import NameBook


@dataclass(frozen=True, slots=True)
class Relation:
    """One relation: its kinds and its three renderings."""

    subject: str
    """The subject's kind."""
    obj: str
    """The object's kind."""
    sentence: str
    """The fact as a document states it (``{s}``, ``{o}``: the two mentions)."""
    phrase: str
    """The object as a noun phrase about ``{x}`` (an inner hop of a question)."""
    ask: str
    """The question asking for the object of ``{x}`` (the last hop)."""
    words: str
    """What a searcher adds to the subject's name to find the fact (the ideal query's other words)."""


RELATIONS: dict[str, Relation] = {
    "maker": Relation("product", "company", "{s} is made by {o}.", "the company that makes {x}",
                      "Which company makes {x}?", "made by"),
    "founder": Relation("company", "person", "{s} was founded by {o}.", "the founder of {x}",
                        "Who founded {x}?", "founded by"),
    "hq": Relation("company", "city", "{s} is headquartered in {o}.", "the city where {x} is headquartered",
                   "In which city is {x} headquartered?", "headquartered in"),
    "flagship": Relation("company", "product", "The best-known product of {s} is {o}.",
                         "the best-known product of {x}", "What is the best-known product of {x}?",
                         "best-known product"),
    "birthplace": Relation("person", "city", "{s} was born in {o}.", "the city where {x} was born",
                           "In which city was {x} born?", "born in"),
    "employer": Relation("person", "company", "{s} works for {o}.", "the company that {x} works for",
                         "Which company does {x} work for?", "works for"),
    "mentor": Relation("person", "person", "{s} was mentored by {o}.", "the mentor of {x}",
                       "Who mentored {x}?", "mentored by"),
    "mayor": Relation("city", "person", "The mayor of {s} is {o}.", "the mayor of {x}",
                      "Who is the mayor of {x}?", "mayor of"),
    "region": Relation("city", "region", "{s} lies in {o}.", "the region that {x} lies in",
                       "In which region does {x} lie?", "lies in region"),
}
"""Relation name → :class:`Relation`. An inner hop's object must itself have relations (so a
``region``, which has none, can only be a question's last hop)."""

ATTRIBUTES: dict[str, str] = {
    "person": "{s} was born in the year {v}.",
    "company": "{s} was established in {v}.",
    "product": "{s} first went on sale in {v}.",
    "city": "{s} has about {v} inhabitants.",
}
"""One plain attribute per kind (a year or a count): facts no question asks about, so a document
holds more than the facts that matter."""

FILLERS = ("{s} has been profiled in the local press.", "Little else is recorded about {s}.",
           "{s} appears in several regional histories.", "Archived notes about {s} were revised last year.",
           "Opinions about {s} differ among observers.")
"""Sentences that state nothing (they match no relation's template)."""

_SHARES = {"person": 0.35, "company": 0.2, "product": 0.2, "city": 0.25}


def rels_of(kind: str) -> list[str]:
    """The relations whose subject is of ``kind`` (in table order)."""
    return [name for name, r in RELATIONS.items() if r.subject == kind]


def mention(name: str, kind: str) -> str:
    """How text refers to an entity: a product with its article (``the Zorbel kettle``)."""
    return f"the {name}" if kind == "product" else name


def state(relation: str, subject: str, subject_kind: str, obj: str) -> str:
    """The sentence stating ``subject relation obj`` (first letter capitalised)."""
    r = RELATIONS[relation]
    text = r.sentence.format(s=mention(subject, subject_kind), o=mention(obj, r.obj))
    return text[0].upper() + text[1:]


@dataclass(slots=True)
class Entity:
    """One invented entity and its facts."""

    name: str
    kind: str
    rel: dict[str, str] = field(default_factory=dict)
    """Relation name → the object's name."""
    value: str = ""
    """Its plain attribute (a year or a count, see :data:`ATTRIBUTES`)."""
    twin_of: str | None = None
    """For a distractor: the name of the entity it is confusable with."""


@dataclass(slots=True)
class World:
    """Entities by name (one world's worth; its regions have no facts of their own)."""

    entities: dict[str, Entity] = field(default_factory=dict)

    def of_kind(self, kind: str) -> list[Entity]:
        """The entities of ``kind``, in creation order."""
        return [e for e in self.entities.values() if e.kind == kind]

    def add(self, e: Entity) -> Entity:
        """Add an entity (its name is new: :class:`~.names.NameBook` guarantees it)."""
        self.entities[e.name] = e
        return e


def _value(rng: random.Random, kind: str) -> str:
    if kind == "city":
        return f"{rng.randrange(20, 900) * 1000:,}"
    return str(rng.randrange(1890, 2021) if kind == "person" else rng.randrange(1950, 2024))


def make_world(rng: random.Random, names: NameBook, size: int) -> World:
    """A world of ``size`` entities with facts (plus about one region per ten), every relation of
    each entity filled; a company's best-known product is one it makes."""
    w = World()
    counts = {k: max(2, round(size * s)) for k, s in _SHARES.items()}
    for kind in ("person", "company", "city", "product"):
        for _ in range(counts[kind]):
            w.add(Entity(names.new(kind), kind, value=_value(rng, kind)))
    regions = [w.add(Entity(names.new("region"), "region")).name for _ in range(max(2, size // 10))]
    people, firms, cities = (sorted(e.name for e in w.of_kind(k)) for k in ("person", "company", "city"))
    for i, p in enumerate(w.of_kind("product")):
        p.rel["maker"] = firms[i] if i < len(firms) else rng.choice(firms)
    made: dict[str, list[str]] = {}
    for p in w.of_kind("product"):
        made.setdefault(p.rel["maker"], []).append(p.name)
    for c in w.of_kind("company"):
        c.rel["founder"], c.rel["hq"] = rng.choice(people), rng.choice(cities)
        if made.get(c.name):
            c.rel["flagship"] = made[c.name][0]
    for p in w.of_kind("person"):
        p.rel["birthplace"], p.rel["employer"] = rng.choice(cities), rng.choice(firms)
        p.rel["mentor"] = rng.choice([q for q in people if q != p.name])
    for c in w.of_kind("city"):
        c.rel["mayor"], c.rel["region"] = rng.choice(people), rng.choice(regions)
    return w


def add_twins(rng: random.Random, names: NameBook, w: World, per_entity: int) -> list[Entity]:
    """``per_entity`` confusable distractors for every entity with facts: a near-identical name, the
    same relations with other objects (never the original's), and their own attribute value."""
    twins: list[Entity] = []
    originals = [e for e in w.entities.values() if e.rel]
    by_kind = {k: sorted(e.name for e in w.entities.values() if e.kind == k and e.twin_of is None)
               for k in ("person", "company", "city", "product", "region")}
    for e in originals:
        for _ in range(per_entity):
            t = Entity(names.twin(e.name, e.kind), e.kind, value=_value(rng, e.kind), twin_of=e.name)
            for rname, obj in e.rel.items():
                pool = [x for x in by_kind[RELATIONS[rname].obj] if x != obj and x != e.name]
                t.rel[rname] = rng.choice(pool)
            twins.append(w.add(t))
    return twins
