"""The ``search`` scorer: the named entity, compared as a name.

Both sides go through :func:`~masbench.text.normalize_answer`, then lose a leading article, a
parenthesised aside and surrounding quotes or punctuation (``"The Zorbel kettle."`` =
``zorbel kettle``; ``Oster (in Kesh Valley)`` = ``oster``). Anything else must match exactly:
a confusable twin (``Marta Volk`` for ``Marta Velk``) is wrong.
"""

from __future__ import annotations

import re

from ...text import normalize_answer
from ..registry import scorer
from ..types import Score, TaskInstance


def name_key(s: str) -> str:
    """The comparable form of a named answer."""
    t = re.sub(r"\(.*$", " ", str(s))  # an aside, even one whose ")" extraction cut off
    t = normalize_answer(t)
    t = re.sub(r"^[\s\"'“”‘’*_]+|[\s\"'“”‘’*_.!?,;:]+$", "", t)
    t = re.sub(r"^(?:the|a|an)\s+", "", t)
    return re.sub(r"\s+", " ", t).strip()


@scorer("search")
def score_search(task: TaskInstance, predicted: list[str]) -> Score:
    """Each position is one name (see the module docstring); all-or-nothing, per-position partial."""
    gold = list(task.answers)
    positions = [i < len(predicted) and bool(name_key(g)) and name_key(predicted[i]) == name_key(g)
                 for i, g in enumerate(gold)]
    return Score(correct=bool(gold) and all(positions), partial=sum(positions) / len(gold) if gold else 0.0,
                 predicted=[normalize_answer(p) for p in predicted], gold=gold, positions=positions)
