"""The shipped search level (tasks/data/search/small): its files equal a fresh generation, stay small,
and read back through the ``search`` format as the generator's tasks; the ``search`` scorer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from masbench.bench import TaskDataError, load_tasks, score
from masbench.bench.search import SHIPPED, corpus_for, export, search_tasks
from masbench.spec.suite import TaskSource

SHIPPED_DIR = Path(__file__).resolve().parents[2] / "tasks" / "data" / "search" / "small"
FILES = ("corpus.jsonl", "queries.jsonl", "params.json")


def test_shipped_files_equal_a_fresh_generation(tmp_path: Path) -> None:
    params = json.loads((SHIPPED_DIR / "params.json").read_text())
    assert params == {**SHIPPED, "entities": None}
    export(tmp_path, **params)
    for name in FILES:
        assert (tmp_path / name).read_bytes() == (SHIPPED_DIR / name).read_bytes(), name
    assert sum((SHIPPED_DIR / n).stat().st_size for n in FILES) < 1_000_000


def test_the_format_reads_the_published_files_as_the_generators_tasks() -> None:
    src = TaskSource(path=str(SHIPPED_DIR / "queries.jsonl"), format="search", n=1000)
    read = load_tasks(src)
    gen = search_tasks(SHIPPED["values"], SHIPPED["n"], SHIPPED["seed"], SHIPPED["split"],
                       corpus_size=SHIPPED["corpus_size"], distractors=SHIPPED["distractors"])
    assert [t.id for t in read] == [t.id for t in gen]
    for r, g in zip(read, gen):
        assert (r.question, r.answers, r.axis, r.axis_value, r.scorer) == (g.question, g.answers, g.axis,
                                                                            g.axis_value, g.scorer)
        assert r.meta["evidence"] == g.meta["evidence"] and r.meta["hops"] == g.meta["hops"]
    shipped, generated = corpus_for(read[0].meta["corpus"]), corpus_for(gen[0].meta["corpus"])
    assert [d.row() for d in shipped.docs] == [d.row() for d in generated.docs]
    for t in read:
        for h in t.meta["hops"]:
            assert h["fact"] in shipped.get(h["doc"]).text


def test_the_format_names_a_missing_corpus_and_bad_rows(tmp_path: Path) -> None:
    q = tmp_path / "queries.jsonl"
    q.write_text(json.dumps({"query_id": "1", "query": "Who?", "answer": "X", "evidence_docids": ["d1"]}) + "\n")
    with pytest.raises(TaskDataError, match="corpus file not found"):
        load_tasks(TaskSource(path=str(q), format="search"))
    (tmp_path / "corpus.jsonl").write_text(json.dumps({"docid": "d1", "title": "X", "text": "X is."}) + "\n")
    (t,) = load_tasks(TaskSource(path=str(q), format="search"))
    assert t.axis_value == 1 and t.meta["evidence"] == ["d1"] and corpus_for(t.meta["corpus"]).get("d1").title == "X"
    q.write_text(json.dumps({"query_id": "1", "query": "Who?", "answer": "X", "evidence_docids": "d1"}) + "\n")
    with pytest.raises(TaskDataError, match="row 1 field 'evidence_docids'"):
        load_tasks(TaskSource(path=str(q), format="search"))


@pytest.mark.parametrize("reply, ok", [
    ("Answer: Zorbel kettle", True), ("Answer: The Zorbel kettle.", True), ('Answer: "zorbel  Kettle"', True),
    ("Answer: Zorbel kettle (made by Quenta Works)", True), ("Answer: Zurbel kettle", False),
    ("Answer: Zorbel", False), ("I could not find it.", False),
])
def test_the_search_scorer_compares_names(reply: str, ok: bool) -> None:
    (t,) = search_tasks([2], 1, 0, "test", corpus_size=120)
    t = t.model_copy(update={"answers": ["zorbel kettle"]})
    assert score(t, reply).correct is ok
