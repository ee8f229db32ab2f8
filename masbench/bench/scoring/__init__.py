"""Benchmark-true scorers (``masbench``, ``smfr``, ``gsm8k``, ``aime``, ``math``, ``choice``) and the
``math-verify`` based equivalence they share. Importing this package registers them."""

from __future__ import annotations

from . import benchmarks as _benchmarks  # noqa: F401  (registers the scorers)
from . import judge as _judge  # noqa: F401  (registers the judge scorer)
from .mathequal import math_equal
from .replies import answer_region, final_span, letter_of, raw_vote_key

__all__ = ["answer_region", "final_span", "letter_of", "math_equal", "raw_vote_key"]
