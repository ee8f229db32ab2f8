"""Write a generated level as BrowseComp-Plus publishes its data: a corpus and a queries file.

``corpus.jsonl``: one ``{docid, title, text}`` per line; ``queries.jsonl``: one ``{query_id,
query, answer, evidence_docids, hops}`` per line (``hops`` as in ``meta["hops"]``); ``params.json``:
the generator parameters, so the files can be regenerated and compared. The format ``search``
(:mod:`masbench.bench.sources.search`) reads such a folder back as tasks.
"""

from __future__ import annotations

import json
from pathlib import Path

from .build import corpus_for
from .generate import INSTRUCTION, search_tasks

SHIPPED = {"values": [2, 3, 4, 5, 6], "n": 8, "seed": 0, "split": "test", "corpus_size": 300, "distractors": 1}
"""The parameters of the level shipped in ``tasks/data/search/small``."""


def export(out_dir: Path, *, values: list[int], n: int, seed: int = 0, split: str = "test",
           corpus_size: int = 500, distractors: int = 1, entities: int | None = None) -> list[Path]:
    """Generate a level and write its three files into ``out_dir`` (created); returns their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    params = {"values": list(values), "n": n, "seed": seed, "split": split, "corpus_size": corpus_size,
              "distractors": distractors, "entities": entities}
    tasks = search_tasks(list(values), n, seed, split, corpus_size=corpus_size, distractors=distractors,
                         entities=entities)
    corpus = corpus_for(tasks[0].meta["corpus"])
    paths = [out_dir / "corpus.jsonl", out_dir / "queries.jsonl", out_dir / "params.json"]
    corpus.write_jsonl(paths[0])
    with paths[1].open("w", encoding="utf-8") as fh:
        for t in tasks:
            query = t.question.removesuffix("\n" + INSTRUCTION)
            row = {"query_id": t.id.removeprefix("search-"), "query": query, "answer": t.meta["answer"],
                   "evidence_docids": t.meta["evidence"], "hops": t.meta["hops"]}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    paths[2].write_text(json.dumps(params, indent=2) + "\n", encoding="utf-8")
    return paths
