"""The ``search`` and ``read_document`` tools through ``dispatch``: an ideal hop query finds its
gold document in the top k, a read returns it in full, and bad arguments, unknown documents and a
task without a corpus are recorded errors, never crashes."""

from __future__ import annotations

import asyncio

import pytest

from masbench.bench.search import corpus_for, search_tasks
from masbench.tools import TOOLS, ToolCall, ToolContext, dispatch, resolve
from masbench.tools import corpus as corpus_tools


@pytest.fixture(scope="module")
def tasks():
    return search_tasks([2, 3], 5, 0, "test", corpus_size=200)


def run(call: ToolCall, ctx: ToolContext, names=("search", "read_document")):
    return asyncio.run(dispatch(call, resolve(list(names)), ctx))


def test_registered_lazily_under_their_names() -> None:
    assert TOOLS["search"] is corpus_tools.SEARCH and TOOLS["read_document"] is corpus_tools.READ
    fn = corpus_tools.SEARCH.schema()["function"]
    assert isinstance(fn, dict) and fn["name"] == "search"
    assert set(fn["parameters"]["properties"]) == {"query", "k"}
    assert corpus_tools.READ.single_field() == "doc_id" and corpus_tools.SEARCH.single_field() == "query"


def test_an_ideal_hop_query_finds_the_gold_document_in_the_top_k(tasks) -> None:
    ctx = ToolContext(task=tasks[0])
    for t in tasks:
        ctx.task = t
        for h in t.meta["hops"]:
            res = run(ToolCall("search", {"query": h["query"], "k": 5}), ctx)
            assert res.status == "ok", res.text
            assert isinstance(res.data, list) and 1 <= len(res.data) <= 5
            assert h["doc"] in res.data, (t.id, h["query"], res.text)
            lines = res.text.splitlines()
            assert len(lines) == len(res.data)
            assert all(line.startswith(f"[{d}] ") and " — " in line for line, d in zip(lines, res.data))


def test_read_returns_the_document_in_full(tasks) -> None:
    t = tasks[0]
    h = t.meta["hops"][0]
    res = run(ToolCall("read_document", {"doc_id": h["doc"]}), ToolContext(task=t))
    doc = corpus_for(t.meta["corpus"]).get(h["doc"])
    assert res.status == "ok" and res.data == [h["doc"]]
    assert res.text == f"[{doc.docid}] {doc.title}\n{doc.text}" and h["fact"] in res.text
    plain = run(ToolCall("read_document", f"  {h['doc']} "), ToolContext(task=t))  # the text protocol's plain string
    assert plain.status == "ok" and plain.data == [h["doc"]]


@pytest.mark.parametrize("name, args, status, words", [
    ("search", {"query": "x", "k": 0}, "invalid_args", "k"),
    ("search", {"query": "x", "k": 21}, "invalid_args", "k"),
    ("search", {"query": ""}, "invalid_args", "query"),
    ("search", {"q": "Marta"}, "invalid_args", "query"),
    ("search", "{not json", "invalid_args", "JSON"),
    ("read_document", {"doc_id": "d99999"}, "error", "no document 'd99999'"),
    ("read_document", {"doc_id": "d00001", "extra": 1}, "invalid_args", "extra"),
    ("search", {"query": "the of and"}, "error", "no searchable word"),
])
def test_bad_calls_are_recorded_errors(tasks, name, args, status, words) -> None:
    res = run(ToolCall(name, args), ToolContext(task=tasks[0]))
    assert res.status == status and words in (res.error or ""), res.text
    assert res.text.startswith("Error:") and res.data is None


def test_a_task_without_a_corpus_is_an_error(tasks) -> None:
    bare = tasks[0].model_copy(update={"meta": {}})
    for call in (ToolCall("search", {"query": "Marta"}), ToolCall("read_document", {"doc_id": "d00001"})):
        for ctx in (ToolContext(task=bare), ToolContext()):
            res = run(call, ctx)
            assert res.status == "error" and "no corpus" in (res.error or "")


def test_the_index_is_built_once_per_corpus(tasks, monkeypatch) -> None:
    built = []
    real = corpus_tools.build_index
    monkeypatch.setattr(corpus_tools, "_INDEXES", {})
    monkeypatch.setattr(corpus_tools, "build_index", lambda c: built.append(c.key) or real(c))
    for t in tasks[:3]:  # three tasks, three fresh contexts, one corpus
        assert run(ToolCall("search", {"query": t.meta["hops"][0]["query"]}), ToolContext(task=t)).ok
    other = search_tasks([2], 1, 1, "test", corpus_size=120)[0]
    ctx = ToolContext(task=other)
    assert run(ToolCall("search", {"query": "mayor"}), ctx).ok
    assert len(built) == 2 and len(set(built)) == 2
    assert any(isinstance(v, corpus_tools.Index) for v in ctx.cache.values())
