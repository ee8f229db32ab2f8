"""JSON Lines as published: every non-blank line one JSON object, each error naming its file and
line. Shared by the file readers (:mod:`.sources.readers`), replayed replies
(:mod:`.replayscore`) and the search benchmark's corpus (:mod:`.search.corpus`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from .errors import TaskDataError


def jsonl_rows(path: Path) -> Iterator[tuple[Path, int, dict[str, Any]]]:
    """``(path, line, object)`` for every non-blank line of a JSONL file; an unreadable file or a
    line that is not a JSON object is a :class:`TaskDataError` naming the file (and line)."""
    try:
        fh = path.open(encoding="utf-8")
    except OSError as exc:
        raise TaskDataError(path, f"cannot read the file ({exc.strerror or exc})") from None
    with fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise TaskDataError(path, f"invalid JSON ({exc})", line_no) from None
            if not isinstance(row, dict):
                raise TaskDataError(path, "each line must be a JSON object", line_no)
            yield path, line_no, row


__all__ = ["jsonl_rows"]
