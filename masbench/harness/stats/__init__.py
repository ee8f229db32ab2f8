"""Statistics for verdicts: exact maj@k, paired tests against the CoT-SC curve, power planning.

Pure numpy/stdlib functions over arrays; the harness feeds them rows of the store's views and
writes what they return back to the store (formulas in docs/metrics.md).
"""

from .majk import exact_majk

__all__ = ["exact_majk"]
