"""A search corpus: documents ``{docid, title, text}``, as BrowseComp-Plus publishes its corpus.

A :class:`Corpus` is what the ``search`` and ``read_document`` tools read. It is named by a *ref*
(a small JSON-able mapping a task carries in ``meta["corpus"]``): either the parameters of a
generated corpus (see :mod:`.build`) or ``{"path": FILE}`` of a shipped JSONL file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import TaskDataError
from ..jsonl import jsonl_rows


@dataclass(frozen=True, slots=True)
class Doc:
    """One document."""

    docid: str
    title: str
    text: str

    def row(self) -> dict[str, str]:
        """The published row ``{docid, title, text}``."""
        return {"docid": self.docid, "title": self.title, "text": self.text}


def ref_key(ref: Mapping[str, object]) -> str:
    """The canonical text of a corpus ref (what memos key on)."""
    return json.dumps(dict(ref), sort_keys=True, separators=(",", ":"), default=str)


class UnknownDocument(KeyError):
    """A document id the corpus does not have (its message reads plainly, unlike a bare KeyError's)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown document"


class Corpus:
    """Documents by id, in their published order."""

    def __init__(self, ref: Mapping[str, object], docs: Iterable[Doc]):
        self.ref = dict(ref)
        """The ref this corpus was made from."""
        self.docs = list(docs)
        """The documents, in order."""
        self.by_id = {d.docid: d for d in self.docs}
        """Document id → document."""
        if len(self.by_id) != len(self.docs):
            raise ValueError(f"corpus {self.key}: document ids are not unique")

    @property
    def key(self) -> str:
        """:func:`ref_key` of :attr:`ref`."""
        return ref_key(self.ref)

    def __len__(self) -> int:
        return len(self.docs)

    def get(self, docid: str) -> Doc:
        """The document ``docid``; an unknown id is an :class:`UnknownDocument` that says so."""
        try:
            return self.by_id[docid]
        except KeyError:
            raise UnknownDocument(f"no document {docid!r} in this corpus ({len(self.docs)} documents, "
                           f"ids like {self.docs[0].docid!r})" if self.docs else "the corpus is empty") from None

    def write_jsonl(self, path: Path) -> None:
        """Write the corpus as JSON lines ``{docid, title, text}``."""
        with Path(path).open("w", encoding="utf-8") as fh:
            for d in self.docs:
                fh.write(json.dumps(d.row(), ensure_ascii=False) + "\n")

    @classmethod
    def from_jsonl(cls, path: Path, ref: Mapping[str, object] | None = None) -> "Corpus":
        """A corpus read from JSON lines ``{docid, title, text}`` (bad rows: :class:`TaskDataError`)."""
        path = Path(path)
        docs = []
        for _path, no, row in jsonl_rows(path):
            for key in ("docid", "text"):
                if not isinstance(row.get(key), (str, int)):
                    raise TaskDataError(path, f"expected a {key!r} string", no, key)
            docs.append(Doc(str(row["docid"]), str(row.get("title") or ""), str(row["text"])))
        return cls(ref if ref is not None else {"path": str(path)}, docs)
