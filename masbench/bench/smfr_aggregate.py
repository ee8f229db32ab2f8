"""The plain-code last step of the SMFR expert MAS: earliest or latest first-valid date across investors."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

_FORMATS = ("%B %d, %Y", "%Y-%m-%d", "%b %d, %Y", "%B %d %Y")


def parse_date(text: Any) -> dt.date | None:
    """A date written as ``March 04, 2024`` or ``2024-03-04`` (None for "none", null or junk)."""
    if text is None:
        return None
    s = str(text).strip().rstrip(".")
    for fmt in _FORMATS:
        try:
            return dt.datetime.strptime(s[:10] if fmt == "%Y-%m-%d" else s, fmt).date()
        except ValueError:
            continue
    return None


def aggregation_of(question: str) -> str:
    """``earliest`` or ``latest``: what the question asks for (the published and our wordings)."""
    m = re.search(r"\b(earliest|latest|first|last|soonest)\b(?= possible| date|\?| to reach)", question or "")
    if m is None:
        m = re.search(r"\b(earliest|latest)\b", question or "")
    word = m.group(1) if m else "earliest"
    return "latest" if word in ("latest", "last") else "earliest"


def aggregate_first_dates(question: str, scans: Any) -> dict[str, Any]:
    """``{"answer": "A, B", "winners": [...], "dates": {...}}`` from per-investor scan results
    (``{"investor", "first_valid_date"}`` objects); investors with no valid date drop out."""
    rows = scans if isinstance(scans, list) else [scans]
    dates: dict[str, dt.date] = {}
    for row in rows:
        if not isinstance(row, dict) or not row.get("investor"):
            continue
        day = parse_date(row.get("first_valid_date"))
        if day is not None:
            dates[str(row["investor"]).strip()] = day
    if not dates:
        return {"answer": "none", "winners": [], "dates": {}}
    pick = min if aggregation_of(question) == "earliest" else max
    best = pick(dates.values())
    winners = sorted(n for n, d in dates.items() if d == best)
    return {"answer": ", ".join(winners), "winners": winners,
            "dates": {n: d.isoformat() for n, d in dates.items()}}
