"""Python node ``smfr_aggregate`` (a lazy entry of :data:`~masbench.runtime.pyfuncs.PYTHON_FUNCS`): the SMFR
expert MAS's plain-code aggregation (logic in the bench)."""

from __future__ import annotations

from typing import Any

from ..bench.smfr_aggregate import aggregate_first_dates


def smfr_aggregate(question: Any = None, scans: Any = None, *_: Any, **__: Any) -> dict[str, Any]:
    """Earliest or latest first-valid date across investors (ties kept): see
    :func:`masbench.bench.smfr_aggregate.aggregate_first_dates`."""
    return aggregate_first_dates(str(question or ""), scans)
