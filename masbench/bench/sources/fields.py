"""Dotted field paths into rows whose columns may hold JSON text (the verl / MASBench convention).

``prompt.0.content`` walks ``row["prompt"]`` (or ``row["prompt_json"]`` when there is no ``prompt``
column), parsing a string that holds JSON on the way, then list index ``0``, then key ``content``.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import TaskDataError

_MISSING = object()


def parse_json_cell(value: Any, file: object, row: int, field: str) -> Any:
    """A JSON-string cell decoded; a non-string cell as it is."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError as exc:
        raise TaskDataError(file, f"column does not parse as JSON ({exc})", row, field) from None


def _step(cur: Any, key: str) -> Any:
    if isinstance(cur, str) and cur[:1] in ("{", "["):
        try:
            cur = json.loads(cur)
        except ValueError:
            return _MISSING
    if hasattr(cur, "tolist") and not isinstance(cur, (str, bytes)):
        cur = cur.tolist()
    if isinstance(cur, dict):
        return cur.get(key, _MISSING)
    if isinstance(cur, (list, tuple)):
        try:
            return cur[int(key)]
        except (ValueError, IndexError):
            return _MISSING
    return _MISSING


def get_path(row: dict[str, Any], path: str, file: object, row_no: int, required: bool = True) -> Any:
    """The value at a dotted ``path`` in ``row`` (see the module doc); None if absent and not required."""
    head, *rest = path.split(".")
    column = head if head in row else f"{head}_json" if f"{head}_json" in row else None
    if column is None:
        if required:
            raise TaskDataError(file, f"no column {head!r} (columns: {', '.join(sorted(row))})", row_no, path)
        return None
    cur = row[column]
    if rest:
        cur = parse_json_cell(cur, file, row_no, column) if isinstance(cur, str) else cur
    walked = [head]
    for key in rest:
        nxt = _step(cur, key)
        if nxt is _MISSING:
            if not required:
                return None
            has = sorted(cur) if isinstance(cur, dict) else f"{len(cur)} items" if isinstance(cur, list) else type(cur).__name__
            raise TaskDataError(file, f"{'.'.join(walked)} has no {key!r} (has: {has})", row_no, path)
        cur = nxt
        walked.append(key)
    if hasattr(cur, "tolist") and not isinstance(cur, (str, bytes)):
        cur = cur.tolist()
    return cur


def first_present(row: dict[str, Any], names: list[str]) -> str | None:
    """The first of ``names`` that is a column of ``row``, case-insensitively (the column's own spelling)."""
    lower = {k.lower(): k for k in row}
    for name in names:
        if name in row:
            return name
        if name.lower() in lower:
            return lower[name.lower()]
    return None
