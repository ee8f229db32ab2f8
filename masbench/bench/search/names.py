"""Invented names for the search benchmark's entities, and their confusable twins.

Every name is built from syllables by a seeded :class:`random.Random` (nothing real, nothing
downloaded). A :class:`NameBook` hands out names that are unique over the whole corpus, so a fact
``<subject> <relation> <object>`` names its subject unambiguously; :meth:`NameBook.twin` makes a
confusable one (one vowel of one word changed: ``Marta Velk`` → ``Marta Volk``) that is just as unique.
"""

from __future__ import annotations

import random

_ONSETS = ("b", "br", "d", "dr", "f", "g", "gr", "h", "k", "kl", "l", "m", "n", "p", "pr", "r", "s",
           "st", "t", "tr", "v", "z", "sh", "th")
_VOWELS = ("a", "e", "i", "o", "u")
_CODAS = ("", "", "n", "r", "l", "s", "k", "m", "th", "nd", "st")

KINDS = ("person", "company", "city", "product", "region")
"""The entity kinds; each has its own name shape."""

_COMPANY_SUFFIX = ("Works", "Industries", "Labs", "Systems", "Foundry", "Collective", "Group", "Dynamics")
_PRODUCT_NOUNS = ("kettle", "lamp", "bicycle", "drone", "loom", "scanner", "stove", "headset", "tractor",
                  "compass", "camera", "piano")
_REGION_SHAPES = ("{} Valley", "{} Province", "the {} Coast", "{} Highlands", "the {} Basin")


def _word(rng: random.Random, syllables: int) -> str:
    parts = [rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables)]
    return ("".join(parts) + rng.choice(_CODAS)).capitalize()


def _fresh(rng: random.Random, kind: str) -> str:
    if kind == "person":
        return f"{_word(rng, rng.choice((1, 2)))} {_word(rng, rng.choice((1, 2)))}"
    if kind == "company":
        return f"{_word(rng, rng.choice((2, 3)))} {rng.choice(_COMPANY_SUFFIX)}"
    if kind == "city":
        return _word(rng, rng.choice((2, 3)))
    if kind == "product":
        return f"{_word(rng, 2)} {rng.choice(_PRODUCT_NOUNS)}"
    if kind == "region":
        return rng.choice(_REGION_SHAPES).format(_word(rng, 2))
    raise ValueError(f"unknown entity kind {kind!r}; expected one of {', '.join(KINDS)}")


def _swap_vowel(rng: random.Random, word: str) -> str | None:
    spots = [i for i, ch in enumerate(word) if ch.lower() in _VOWELS]
    if not spots:
        return None
    i = rng.choice(spots)
    old = word[i].lower()
    new = rng.choice([v for v in _VOWELS if v != old])
    return word[:i] + (new.upper() if word[i].isupper() else new) + word[i + 1:]


class NameBook:
    """Unique invented names over one corpus (a name and its lower-cased form are never reused)."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        """The corpus's seeded generator (names are drawn in a fixed order, so they are reproducible)."""
        self.used: set[str] = set()
        """Lower-cased names already handed out."""

    def _take(self, name: str) -> bool:
        key = name.lower()
        if key in self.used:
            return False
        self.used.add(key)
        return True

    def new(self, kind: str) -> str:
        """A fresh name of ``kind`` no other entity of the corpus has."""
        for _ in range(10_000):
            name = _fresh(self.rng, kind)
            if self._take(name):
                return name
        raise RuntimeError(f"ran out of {kind} names")  # pragma: no cover - 24^4 shapes and more

    def twin(self, name: str, kind: str) -> str:
        """A confusable name: ``name`` with one vowel of its distinctive word changed (a person's
        surname, the first capitalised word otherwise: a brand, a city), unique like any other."""
        words = name.split(" ")
        capital = [i for i, w in enumerate(words) if w[:1].isupper()]
        i = capital[-1] if kind == "person" else capital[0]
        for _ in range(200):
            swapped = _swap_vowel(self.rng, words[i])
            candidate = " ".join(words[:i] + [swapped or words[i]] + words[i + 1:])
            if self._take(candidate):
                return candidate
        return self.new(kind)  # pragma: no cover - every vowel swap already taken


