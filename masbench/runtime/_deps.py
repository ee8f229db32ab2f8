"""Answer extraction, normalization and JSON extraction come from :mod:`masbench.bench`
(one implementation)."""

from __future__ import annotations

from masbench.text import extract_answers, json_objects, normalize_answer

__all__ = ["extract_answers", "json_objects", "normalize_answer"]
