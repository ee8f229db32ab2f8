"""Search-benchmark rows as BrowseComp-Plus publishes them: a queries file next to its corpus.

A row of the queries file: ``query_id``, ``query`` (the question), ``answer`` (the gold name),
``evidence_docids`` (the gold documents, in hop order) and optionally ``hops`` (per hop: ``query``,
``doc``, ``fact``, ``answer``, as the generator's ``meta["hops"]``). The corpus is the JSONL file
``params.corpus`` (default ``corpus.jsonl``) in the queries file's folder, ``{docid, title, text}``
per line; the tasks carry ``meta["corpus"] = {"path": …}`` for the search tools. Axis ``hops`` =
the number of hops (else of evidence documents); scorer ``search``.
"""

from __future__ import annotations

from pathlib import Path

from ...spec.suite import TaskSource
from ...text import normalize_answer
from ..errors import TaskDataError
from ..search import INSTRUCTION
from ..types import TaskInstance
from .base import RowGroup


def _corpus_path(group: RowGroup, source: TaskSource) -> Path:
    if not group.files:
        raise TaskDataError(group.where, "the search format reads local files (a queries JSONL next to its corpus)")
    name = str(source.params.get("corpus", "corpus.jsonl"))
    path = group.files[0].parent / name
    if not path.exists():
        raise TaskDataError(path, "corpus file not found (set params.corpus: the corpus JSONL next to the queries)")
    return path


def search_format(group: RowGroup, source: TaskSource, label: str) -> list[TaskInstance]:
    """Format ``search``: one task per query row, all sharing the corpus beside the queries file."""
    corpus = {"path": str(_corpus_path(group, source))}
    label = group.label(label)
    out = []
    for file, row_no, row in group.rows:
        for key in ("query_id", "query", "answer"):
            if not isinstance(row.get(key), (str, int)) or str(row[key]) == "":
                raise TaskDataError(file, f"expected a non-empty {key!r}", row_no, key)
        evidence = row.get("evidence_docids") or []
        hops = row.get("hops") or []
        if not isinstance(evidence, list) or not all(isinstance(x, (str, int)) for x in evidence):
            raise TaskDataError(file, "expected a list of document ids", row_no, "evidence_docids")
        if not isinstance(hops, list) or not all(isinstance(h, dict) for h in hops):
            raise TaskDataError(file, "expected a list of hop objects", row_no, "hops")
        n_hops = len(hops) or len(evidence)
        answer = str(row["answer"])
        out.append(TaskInstance(
            id=f"{label}-{row['query_id']}", source=label, question=f"{row['query']}\n{INSTRUCTION}",
            answers=[normalize_answer(answer)],
            intermediates=[normalize_answer(str(h.get("answer", ""))) for h in hops[:-1]],
            axis="hops", axis_value=n_hops or None, skills=["search", "search.multihop"], scorer="search",
            meta={"corpus": corpus, "evidence": [str(x) for x in evidence], "hops": hops, "answer": answer,
                  "query_id": str(row["query_id"]), "file": str(file), "row": row_no}))
    return out
