"""Registered Python functions for ``python:`` nodes. A design names a function; it never carries
code. Model text reaching these functions is data: :func:`calculator` parses arithmetic with the
one ``ast`` walk (:mod:`masbench.tools.calculator`, shared with the ``calculator`` tool) that admits
numbers, ``+ - * / // % **`` and parentheses only — nothing is evaluated.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from ..registry import Registry
from ..tools.calculator import CalculatorError, as_fraction, calculate, expression_of
from ..text import normalize_answer
from .ties import break_tie

PYTHON_FUNCS: Registry[Callable[..., Any]] = Registry("python function", {
    "smfr_aggregate": "masbench.runtime.smfr_funcs:smfr_aggregate",  # the SMFR expert MAS's plain-code step
}, plugins="masbench.python_funcs")
"""Name → function, for ``python:`` nodes. Add yours with :func:`python_func`."""


def python_func(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: register ``fn`` under ``name``. The function receives the values of the node's
    ``from`` inputs as positional arguments (the item, for a ``map`` node) and the node's
    ``params`` as keyword arguments; it returns a JSON-like value (number, str, list, dict)."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        PYTHON_FUNCS.add(name, fn, replace=True)  # a later definition replaces an earlier one
        return fn

    return deco


# --------------------------------------------------------------------------- majority


def majority_vote(answers: Sequence[Any], tie: str = "first", *, seed: int = 0, task_id: str = "",
                  node: str = "") -> tuple[Any, dict[Any, int], list[Any]]:
    """Majority over hashable answers; ``None`` entries are ignored. A tie is broken by ``tie``
    (see :mod:`.ties`; default: the tied answer seen first), reproducibly given ``seed``,
    ``task_id`` and ``node``. Returns (winner or None, tally in first-seen order, the tied
    answers in first-seen order if there was a tie)."""
    tally: dict[Any, int] = {}
    for a in answers:
        if a is None:
            continue
        tally[a] = tally.get(a, 0) + 1
    if not tally:
        return None, tally, []
    best = max(tally.values())
    tied = [a for a, c in tally.items() if c == best]
    if len(tied) == 1:
        return tied[0], tally, []
    return break_tie(tied, tie, seed=seed, task_id=task_id, node=node), tally, tied


# --------------------------------------------------------------------------- calculator

@python_func("calculator")
def calculator(expr: Any = None, *_: Any, **__: Any) -> int | float:
    """Safe arithmetic: see :func:`calculate`."""
    return calculate(expr)


_WORD_OPS = [(r"\bdivided\s+by\b", "/"), (r"\bmultiplied\s+by\b", "*"), (r"\btimes\b", "*"),
             (r"\bplus\b", "+"), (r"\bminus\b", "-")]
_SPAN = re.compile(r"[-(]*\d[\d.,\s()+\-*/×÷−^]*")
_OP_BETWEEN = re.compile(r"\d[\s)]*[+\-*/×÷−^][\s(]*-?\d")


@python_func("calculate_in_text")
def calculate_in_text(text: Any = None, *_: Any, **__: Any) -> int | float:
    """The value of the first arithmetic expression written inside a sentence ("the expression is:
    5 + 5", "7 plus 1, which equals 8" → 10, 8): the whole text if :func:`calculate` accepts it,
    else the first span of numbers and operators (``plus``/``minus``/``times``/``divided by``
    read as operators) that holds at least one operation. The span is computed by the same
    ``ast`` walk; a text with no operation in it is an error (a bare number would be the model's
    arithmetic, not Python's)."""
    try:
        return calculate(text)
    except CalculatorError:
        pass
    t = expression_of(text)
    for pat, op in _WORD_OPS:
        t = re.sub(pat, op, t, flags=re.I)
    for m in _SPAN.finditer(t):
        span = m.group().strip().rstrip(",.").strip()
        if _OP_BETWEEN.search(span):
            try:
                return calculate(span)
            except CalculatorError:
                continue
    raise CalculatorError(f"no arithmetic expression in {str(text)[:80]!r}")


def _to_number(x: Any) -> Fraction:
    if isinstance(x, dict):
        return _to_number(expression_of(x))
    if isinstance(x, str):
        return Fraction(calculate(x)).limit_denominator(10 ** 12)
    return as_fraction(x)


@python_func("sum_list")
def sum_list(*values: Any, **__: Any) -> int | float:
    """Sum of numbers; list arguments are flattened and strings are computed with the calculator."""
    flat: list[Any] = []
    for v in values:
        if isinstance(v, (list, tuple)):
            flat.extend(v)
        else:
            flat.append(v)
    total = sum((_to_number(v) for v in flat if v is not None), Fraction(0))
    return int(total) if total.denominator == 1 else float(total)


@python_func("majority")
def majority(*values: Any, **__: Any) -> Any:
    """The most common value (first seen wins a tie); lists are flattened; strings are normalized."""
    flat: list[Any] = []
    for v in values:
        flat.extend(v if isinstance(v, (list, tuple)) else [v])
    keys = [normalize_answer(str(v)) if v is not None else None for v in flat]
    winner, _tally, _tie = majority_vote(keys)
    return winner


@python_func("choose")
def choose(value: Any = None, *_: Any, options: Sequence[str] = (), default: str | None = None, **__: Any) -> Any:
    """The first of ``options`` that ``value`` names (whole words, any case; a dict is searched in
    its values), else ``default`` (else the first option). For routing on a model's free-text pick."""
    if isinstance(value, dict):
        text = " ".join(str(v) for v in value.values())
    elif isinstance(value, (list, tuple)):
        text = " ".join(str(v) for v in value)
    else:
        text = "" if value is None else str(value)
    for opt in sorted(options, key=len, reverse=True):  # "Math Professor" before "Professor"
        if re.search(rf"(?<!\w){re.escape(str(opt))}(?!\w)", text, re.I):
            return opt
    if default is not None:
        return default
    return options[0] if options else None


@python_func("identity")
def identity(*values: Any, **__: Any) -> Any:
    """Its input, unchanged (one argument), or the list of its inputs."""
    if len(values) == 1:
        return values[0]
    return list(values)
