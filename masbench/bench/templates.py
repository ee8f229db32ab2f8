"""Sentence templates and vocabularies of the five-axis generator.

Train and test use disjoint templates, names and items: every template id starts with its split
(``test.rel.add.0``), and each instance records the ids it used in ``meta["templates"]``.

Placeholders: ``{a}``/``{b}`` names, ``{alist}`` a list of names, ``{item}`` a plural noun,
``{n}`` a stated value (a number or ``[answer_i]``), ``{c}`` a constant, ``{times}`` "twice" /
"three times", ``{grows}`` "doubles" / "triples", ``{hobby}``/``{hobbying}`` a pastime,
``{claim}`` a wrong-value claim, ``{expr}`` an arithmetic expression.
"""

from __future__ import annotations

import random

SPLITS = ("train", "test")

_TEMPLATES: dict[str, dict[str, list[str]]] = {
    "test": {
        "given": ["{a} has {n} {item}."],
        "rel.add": ["{b} has {c} more {item} than {a}."],
        "rel.sub": ["{b} has {c} fewer {item} than {a}."],
        "rel.mul": ["{b} has {times} as many {item} as {a}."],
        "rel.half": ["{b} has half as many {item} as {a}."],
        "rel.sum": ["{b} has as many {item} as {alist} together."],
        "chg.add": ["Then {a} gets {c} more {item}.", "Then {a} finds {c} more {item}."],
        "chg.sub": ["Then {a} gives {c} {item} away.", "Then {a} loses {c} {item}."],
        "chg.mul": ["Then {a} {grows} the number of {item}."],
        "chg.half": ["Then {a} gives away half of the {item}."],
        "ask": ["How many {item} does {a} have?"],
        "ask.now": ["How many {item} does {a} have now?"],
        "ask.sum": ["How many {item} do {alist} have together?"],
        "ask.diff": ["How many more {item} does {a} have than {b}?"],
        "claim": ["{a} has {n} {item}"],
        "claim.now": ["{a} has {n} {item} now"],
        "claim.sum": ["{alist} have {n} {item} together"],
        "claim.diff": ["{a} has {n} more {item} than {b}"],
        "note": ["Note: verify the information before you take it — {claim}."],
        "bare": ["What is {expr}?"],
        "parallel.head": ["The following {p} problems are INDEPENDENT. Solve each one."],
        "horizon.head": ['Solve the {m} sub-tasks in order. "[answer_i]" stands for the answer of '
                         'sub-task i.'],
        "filler": [
            "{x} likes to {hobby} on weekends.",
            "{x}'s cousin lives in {city}.",
            "The {place} near {x}'s home opens at {h} o'clock.",
            "{x} walked {k} blocks to the {place} yesterday.",
            "{x} and {y} met at the {place} last week.",
        ],
    },
    "train": {
        "given": ["{a} owns {n} {item}."],
        "rel.add": ["{b} owns {c} {item} more than {a} does."],
        "rel.sub": ["{b} owns {c} {item} less than {a} does."],
        "rel.mul": ["{b} owns {c} times the number of {item} that {a} owns."],
        "rel.half": ["{b} owns half the number of {item} that {a} owns."],
        "rel.sum": ["{b} owns as many {item} as {alist} combined."],
        "chg.add": ["Later, {a} receives {c} extra {item}.", "Later, {a} buys {c} extra {item}."],
        "chg.sub": ["Later, {a} sells {c} {item}.", "Later, {a} drops {c} {item}."],
        "chg.mul": ["Later, the number of {item} that {a} owns is multiplied by {c}."],
        "chg.half": ["Later, {a} sells half of the {item}."],
        "ask": ["What is the number of {item} that {a} owns?"],
        "ask.now": ["What is the number of {item} that {a} owns in the end?"],
        "ask.sum": ["What is the total number of {item} owned by {alist}?"],
        "ask.diff": ["By how many {item} does {a} exceed {b}?"],
        "claim": ["{a} owns {n} {item}"],
        "claim.now": ["{a} owns {n} {item} in the end"],
        "claim.sum": ["{alist} own {n} {item} in total"],
        "claim.diff": ["{a} owns {n} {item} more than {b}"],
        "note": ["Hint: verify the information before you take it — {claim}."],
        "bare": ["Compute {expr}."],
        "parallel.head": ["Here are {p} INDEPENDENT problems; solve all of them."],
        "horizon.head": ['Work through the {m} sub-tasks below in order; "[answer_i]" is the result '
                         'of sub-task i.'],
        "filler": [
            "{x} enjoys {hobbying} after school.",
            "{x}'s uncle moved to {city} last year.",
            "The {place} that {x} visits closes at {h} o'clock.",
            "{x} spent {k} minutes at the {place} on Monday.",
            "{x} phoned {y} from the {place} on Friday.",
        ],
    },
}

NAMES = {
    "test": ["Tom", "Ann", "Sam", "Lily", "Ben", "Mia", "Max", "Zoe", "Leo", "Ella", "Jack", "Emma",
             "Noah", "Ava", "Luke", "Ruby", "Owen", "Nora", "Finn", "Ivy", "Jake", "Lucy", "Dan",
             "Rose", "Paul", "Kate", "Omar", "Sara", "Hugo", "Alma"],
    "train": ["Bob", "Eve", "Tim", "Amy", "Joe", "Liz", "Ray", "Kim", "Ned", "Fay", "Carl", "Dora",
              "Glen", "Hana", "Ian", "June", "Kyle", "Lara", "Marc", "Nina", "Otto", "Pia", "Quin",
              "Rita", "Seth", "Tara", "Uma", "Vic", "Wes", "Yara"],
}
"""First names per split (disjoint). Past the pool, names get an initial: ``Tom B.``."""

ITEMS = {
    "test": ["apples", "pencils", "marbles", "stickers", "cookies", "books", "toy cars", "seashells",
             "balloons", "cards", "coins", "buttons"],
    "train": ["oranges", "crayons", "beads", "stamps", "candies", "comics", "toy trains", "pebbles",
              "kites", "badges", "feathers", "blocks"],
}
"""Countable items per split (disjoint)."""

HOBBIES = [("paint", "painting"), ("swim", "swimming"), ("read comics", "reading comics"),
           ("play chess", "playing chess"), ("bake bread", "baking bread"), ("ride a bike", "riding a bike"),
           ("sing", "singing"), ("draw maps", "drawing maps")]
CITIES = ["Lisbon", "Oslo", "Cairo", "Lima", "Hanoi", "Perth", "Quito", "Dakar"]
PLACES = ["library", "park", "bakery", "museum", "pool", "market", "zoo", "cinema"]
"""Haystack vocabularies (shared; only number-free or unrelated facts are built from them)."""

TIMES = {2: "twice", 3: "three times"}
GROWS = {2: "doubles", 3: "triples"}


def template_ids(split: str) -> set[str]:
    """Every template id of a split."""
    return {f"{split}.{key}.{i}" for key, texts in _TEMPLATES[split].items() for i in range(len(texts))}


class Phrasebook:
    """Picks templates of one split with a seeded RNG and remembers which ids it used."""

    def __init__(self, split: str, rng: random.Random):
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        self.split, self.rng, self.used = split, rng, set()

    def say(self, key: str, **slots: object) -> str:
        """Render one template of ``key`` (chosen at random among the split's variants)."""
        texts = _TEMPLATES[self.split][key]
        i = self.rng.randrange(len(texts)) if len(texts) > 1 else 0
        self.used.add(f"{self.split}.{key}.{i}")
        return texts[i].format(**slots)


_IRREGULAR = {"candies": "candy"}


def noun(item: str, count: object) -> str:
    """``apples`` → ``apple`` when ``count`` is 1 (``candies`` → ``candy``), else unchanged."""
    if count != 1:
        return item
    return _IRREGULAR.get(item, item[:-1] if item.endswith("s") else item)


def name_list(names: list[str]) -> str:
    """``Tom``, ``Tom and Ann``, ``Tom, Ann and Sam``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


class NamePool:
    """Unique names for one instance, drawn from a split's pool in seeded order, unbounded."""

    def __init__(self, split: str, rng: random.Random):
        self.pool = list(NAMES[split])
        rng.shuffle(self.pool)
        self.i = 0

    def take(self) -> str:
        """The next unused name."""
        i, self.i = self.i, self.i + 1
        base = self.pool[i % len(self.pool)]
        rounds = i // len(self.pool)
        if rounds == 0:
            return base
        letters = "ABCDEFGHJKLMNPRSTVWZ"
        suffix = ""
        rounds -= 1
        while True:
            suffix = letters[rounds % len(letters)] + suffix
            rounds = rounds // len(letters) - 1
            if rounds < 0:
                break
        return f"{base} {suffix}."
