"""Answer extraction and normalization come from :mod:`masbench.bench` (one implementation)."""

from __future__ import annotations

try:
    from masbench.bench import extract_answers, normalize_answer
except ImportError:  # the package __init__ may not re-export them (yet)
    from masbench.bench.answers import extract_answers, normalize_answer

__all__ = ["extract_answers", "normalize_answer"]
