"""The local-corpus search benchmark (in the spirit of BrowseComp-Plus): invented entities, facts
spread over documents, confusable distractors, multi-hop questions with gold answers and gold
evidence documents. See docs/tools.md "The search benchmark".

Public API::

    search_tasks(values, n, seed, split, corpus_size=, distractors=, entities=)  # generator "search"
    corpus_for(ref) -> Corpus         # a task's meta["corpus"] → its documents (memoized)
    Corpus, Doc                       # documents {docid, title, text}
    build(ref) -> Built               # a generated corpus with the world it writes about
    RELATIONS                         # relation → sentence / phrase / question / query words
    export(dir, values=, n=, ...)     # write corpus.jsonl + queries.jsonl (python -m masbench.bench.search export DIR)
"""

from __future__ import annotations

from . import score as _score  # noqa: F401  (registers the search scorer)
from .build import Built, build, corpus_for, corpus_ref
from .corpus import Corpus, Doc, UnknownDocument, ref_key
from .export import SHIPPED, export
from .generate import HOPS, INSTRUCTION, question_text, search_tasks
from .score import name_key
from .world import RELATIONS, Relation

__all__ = ["HOPS", "INSTRUCTION", "RELATIONS", "SHIPPED", "Built", "Corpus", "Doc", "Relation", "UnknownDocument", "build",
           "corpus_for", "corpus_ref", "export", "name_key", "question_text", "ref_key", "search_tasks"]
