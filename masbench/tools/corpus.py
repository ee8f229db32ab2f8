"""The ``search`` and ``read_document`` tools over a task's local corpus (``meta["corpus"]``).

``search`` ranks the corpus with BM25 (the ``bm25s`` library: its own tokenizer, lower-cased,
English stop words, no stemmer — none is installed) and shows the top ``k`` as lines
``[doc_id] title — snippet`` (the snippet: the document's sentence sharing most words with the
query); its data is the list of document ids, best first. ``read_document`` shows one document in
full; its data is ``[doc_id]``. An unknown document id, a task without a corpus or a query with no
searchable word is an error (raised; :func:`~masbench.tools.dispatch` records it and tells the model).

The index of a corpus is built once per process (a memo keyed by the corpus ref, shared by every
task and cell using that corpus) and also kept in :attr:`ToolContext.cache`; building and scoring run
in a thread (:func:`asyncio.to_thread`), never on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from dataclasses import dataclass

import bm25s
from pydantic import BaseModel, ConfigDict, Field

from ..bench.search import Corpus, corpus_for
from .base import Tool, ToolContext, ToolOutput

logging.getLogger("bm25s").setLevel(logging.WARNING)  # its per-index DEBUG line is not the run's business

SNIPPET_CHARS = 160
"""The longest snippet shown per search hit."""
MAX_K = 20
"""The most hits one search may ask for."""

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"(?u)\b\w\w+\b")


@dataclass(slots=True)
class Index:
    """A corpus and its BM25 retriever."""

    corpus: Corpus
    retriever: bm25s.BM25


_INDEXES: dict[str, Index] = {}
_LOCK = threading.Lock()


def _tokens(texts: list[str]) -> list[list[str]]:
    out = bm25s.tokenize(texts, stopwords="en", return_ids=False, show_progress=False)
    assert isinstance(out, list)
    return out


def build_index(corpus: Corpus) -> Index:
    """A BM25 index of ``corpus`` (title and text of each document); blocking — call it in a thread."""
    retriever = bm25s.BM25()
    retriever.index(_tokens([f"{d.title}\n{d.text}" for d in corpus.docs]), show_progress=False)
    return Index(corpus, retriever)


def corpus_of(ctx: ToolContext) -> Corpus:
    """The context task's corpus (``meta["corpus"]``; none is an error). Blocking the first time a
    corpus is generated or read — call it in a thread."""
    task = ctx.task
    ref = task.meta.get("corpus") if task is not None else None
    if not ref:
        raise ValueError("this task has no corpus to search (its meta has no 'corpus')")
    return corpus_for(ref)


def index_for(ctx: ToolContext) -> Index:
    """The index of the context task's corpus: from ``ctx.cache``, else the process memo, else built
    (once per corpus: concurrent callers wait for one build). Blocking — call it in a thread."""
    corpus = corpus_of(ctx)
    key = f"search.index:{corpus.key}"
    hit = ctx.cache.get(key)
    if isinstance(hit, Index):
        return hit
    with _LOCK:
        index = _INDEXES.get(key)
        if index is None:
            index = _INDEXES[key] = build_index(corpus)
    ctx.cache[key] = index
    return index


def snippet(text: str, query_words: set[str], limit: int = SNIPPET_CHARS) -> str:
    """The sentence of ``text`` sharing most words with the query (the first on a tie), cut to ``limit``."""
    sentences = _SENTENCE.split(text.strip()) or [text]
    best = max(sentences, key=lambda s: len(query_words & {w.lower() for w in _WORD.findall(s)}))
    return best if len(best) <= limit else best[: limit - 1].rstrip() + "…"


def search(index: Index, query: str, k: int) -> tuple[list[str], list[str]]:
    """(result lines, document ids) of the top ``k`` documents with a positive BM25 score. Blocking."""
    q = _tokens([query])[0]
    if not q:
        raise ValueError(f"the query {query!r} has no searchable word (stop words and one-letter words are ignored)")
    docs = index.corpus.docs
    ids, scores = index.retriever.retrieve([q], k=min(k, len(docs)), show_progress=False)
    words = set(q)
    lines, found = [], []
    for i, s in zip(ids[0], scores[0]):
        if s <= 0:
            continue
        d = docs[int(i)]
        found.append(d.docid)
        lines.append(f"[{d.docid}] {d.title} — {snippet(d.text, words)}")
    return lines, found


class SearchArgs(BaseModel):
    """Arguments of ``search``."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    query: str = Field(min_length=1, max_length=500)
    """The words to search for (names and what you want to know about them)."""
    k: int = Field(default=5, ge=1, le=MAX_K)
    """How many documents to return, best first."""


class ReadArgs(BaseModel):
    """Arguments of ``read_document``."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    doc_id: str = Field(min_length=1, max_length=100)
    """The id of a document a search returned (e.g. ``d00042``)."""


class SearchTool(Tool):
    """BM25 search over the task's corpus."""

    name = "search"
    description = ("Search the document collection. Returns up to k lines '[doc_id] title — snippet', "
                   "best match first; read a document in full with read_document.")
    Args = SearchArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput | str:
        assert isinstance(args, SearchArgs)
        index = await asyncio.to_thread(index_for, ctx)
        lines, found = await asyncio.to_thread(search, index, args.query, args.k)
        return ToolOutput("\n".join(lines) if lines else f"No document matches {args.query!r}.", found)


class ReadTool(Tool):
    """One document of the task's corpus, in full."""

    name = "read_document"
    description = "Read one document of the collection in full, by the doc_id a search returned."
    Args = ReadArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput | str:
        assert isinstance(args, ReadArgs)
        corpus = await asyncio.to_thread(corpus_of, ctx)
        doc = corpus.get(args.doc_id.strip())
        return ToolOutput(f"[{doc.docid}] {doc.title}\n{doc.text}", [doc.docid])


SEARCH = SearchTool()
"""The ``search`` tool."""
READ = ReadTool()
"""The ``read_document`` tool."""
