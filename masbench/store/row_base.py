"""The base of the store's row records: :class:`Row`, a slotted keyword-only dataclass whose
``TABLE`` names the table it is a row of; :meth:`Row.as_dict` is what the writer inserts (every
column, ``None`` as SQL NULL). The records themselves: :mod:`.rows` (the tables a run writes row by
row) and :mod:`.derived_rows` (the derived tables the verdicts come from).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar


_COLUMNS: dict[type, tuple[str, ...]] = {}
"""Record type → its columns (see :meth:`Row.columns`)."""


@dataclass(kw_only=True, slots=True)
class Row:
    """Base of the records: ``TABLE`` names the table a record is a row of."""

    TABLE: ClassVar[str] = ""

    def as_dict(self) -> dict[str, Any]:
        """Column → value, every column of the record (the writer's input)."""
        return {c: getattr(self, c) for c in self.columns()}

    def __getitem__(self, column: str) -> Any:
        """A column's value by name (``row["node"]``), for readers that look rows up by column."""
        if column not in self.columns():
            raise KeyError(f"{self.TABLE}: no column {column!r}")
        return getattr(self, column)

    def __contains__(self, column: object) -> bool:
        """The record has this column (``"node" in row``)."""
        return column in self.columns()

    @classmethod
    def columns(cls) -> tuple[str, ...]:
        """The record's columns, in declaration order (computed once per record type: every row
        of a run goes through :meth:`as_dict`)."""
        cols = _COLUMNS.get(cls)
        if cols is None:
            cols = _COLUMNS[cls] = tuple(f.name for f in dataclasses.fields(cls))
        return cols


__all__ = ["Row"]
