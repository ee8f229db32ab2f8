"""The search generator: answers recompute from the corpus text alone (an independent walk that
parses facts back out of the documents with its own patterns, never reading the hops' answers),
gold evidence holds its fact, hops sit in distinct documents, confusable distractors exist,
hops 2–6 generate, and everything is deterministic from (seed, params)."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from masbench.bench import GENERATORS, load_tasks, score
from masbench.bench.search import build, corpus_for
from masbench.bench.search.build import _built
from masbench.spec.suite import TaskSource
from masbench.text import normalize_answer

# The test's own reading of the sentences (not the generator's templates).
PATTERNS = {
    "maker": r"The (?P<s>.+?) is made by (?P<o>.+?)\.",
    "founder": r"(?P<s>.+?) was founded by (?P<o>.+?)\.",
    "hq": r"(?P<s>.+?) is headquartered in (?P<o>.+?)\.",
    "flagship": r"The best-known product of (?P<s>.+?) is the (?P<o>.+?)\.",
    "birthplace": r"(?P<s>.+?) was born in (?!the year)(?P<o>.+?)\.",
    "employer": r"(?P<s>.+?) works for (?P<o>.+?)\.",
    "mentor": r"(?P<s>.+?) was mentored by (?P<o>.+?)\.",
    "mayor": r"The mayor of (?P<s>.+?) is (?P<o>.+?)\.",
    "region": r"(?P<s>.+?) lies in (?P<o>.+?)\.",
}
COMPILED = {r: re.compile(p) for r, p in PATTERNS.items()}


def read_facts(corpus) -> dict[tuple[str, str], list[tuple[str, str, str]]]:
    """(relation, subject) → [(object, doc id, sentence)] over every sentence of every document."""
    facts: dict[tuple[str, str], list[tuple[str, str, str]]] = defaultdict(list)
    for d in corpus.docs:
        for sentence in re.split(r"(?<=\.)\s+", d.text):
            for r, pat in COMPILED.items():
                m = pat.fullmatch(sentence)
                if m:
                    facts[(r, m["s"])].append((m["o"], d.docid, sentence))
    return facts


def one_off(a: str, b: str) -> bool:
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1


@pytest.fixture(scope="module")
def tasks():
    return GENERATORS["search"]([2, 3, 4, 5, 6], 40, 0, "test", corpus_size=600, distractors=2)


@pytest.fixture(scope="module")
def facts(tasks):
    return read_facts(corpus_for(tasks[0].meta["corpus"]))


def test_200_answers_recompute_from_the_corpus_text(tasks, facts) -> None:
    assert len(tasks) == 200
    for t in tasks:
        cur, docs = t.meta["chain"]["start"], []
        assert cur in t.question
        for r in t.meta["chain"]["relations"]:
            found = facts[(r, cur)]
            assert len(found) == 1, (t.id, r, cur, found)  # one answer per step over the whole corpus
            cur, doc, _ = found[0]
            docs.append(doc)
        assert normalize_answer(cur) == t.answers[0], t.id
        assert docs == t.meta["evidence"], t.id
        assert score(t, f"Answer: {cur}").correct


def test_gold_evidence_holds_its_fact_and_hops_use_distinct_documents(tasks, facts) -> None:
    corpus = corpus_for(tasks[0].meta["corpus"])
    for t in tasks:
        hops = t.meta["hops"]
        assert len(hops) == t.axis_value == len(t.meta["evidence"])
        assert len({h["doc"] for h in hops}) == len(hops), t.id
        for h, r in zip(hops, t.meta["chain"]["relations"]):
            assert h["fact"] in re.split(r"(?<=\.)\s+", corpus.get(h["doc"]).text)
            assert h["subject"] in h["query"] and h["subject"] in h["fact"] and h["answer"] in h["fact"]
            (obj, doc, sentence), = facts[(r, h["subject"])]
            assert (obj, doc, sentence) == (h["answer"], h["doc"], h["fact"])


def test_confusable_distractors_state_the_same_relation_with_another_value(tasks, facts) -> None:
    by_relation = defaultdict(list)
    for (r, subject), found in facts.items():
        by_relation[r].append((subject, found[0][0]))
    corpus = corpus_for(tasks[0].meta["corpus"])
    for t in tasks[::10]:
        for h in t.meta["hops"]:
            twins = [(s, o) for s, o in by_relation[h["relation"]] if one_off(s, h["subject"])]
            assert len(twins) >= 2, (t.id, h["subject"])  # distractors=2 per entity
            assert all(o != h["answer"] for _, o in twins)
            twin_docs = [d for d in corpus.docs if any(d.title == s for s, _ in twins)]
            assert twin_docs and all(d.docid not in t.meta["evidence"] for d in twin_docs)


def test_hops_2_to_6_and_one_shared_corpus_of_the_asked_size(tasks) -> None:
    assert sorted({t.axis_value for t in tasks}) == [2, 3, 4, 5, 6]
    assert all(sum(t.axis_value == h for t in tasks) == 40 for h in range(2, 7))
    assert all(t.axis == "hops" and "search.multihop" in t.skills and t.scorer == "search" for t in tasks)
    refs = {str(t.meta["corpus"]) for t in tasks}
    assert len(refs) == 1
    assert corpus_for(tasks[0].meta["corpus"]) is corpus_for(tasks[-1].meta["corpus"])
    assert len(corpus_for(tasks[0].meta["corpus"])) == 600
    assert len({t.id for t in tasks}) == 200
    assert len({(t.meta["chain"]["start"], tuple(t.meta["chain"]["relations"])) for t in tasks}) == 200


def test_corpus_too_small_for_its_world_is_an_error() -> None:
    with pytest.raises(ValueError, match="corpus_size"):
        GENERATORS["search"]([2], 1, 0, "test", corpus_size=50, distractors=3, entities=40)
    with pytest.raises(ValueError, match="hop counts"):
        GENERATORS["search"]([0], 1, 0, "test")


def test_deterministic_from_seed_and_params() -> None:
    def fresh(seed: int, **kw):
        _built.cache_clear()
        ts = GENERATORS["search"]([2, 5], 5, seed, "test", corpus_size=150, **kw)
        return [t.model_dump() for t in ts], [d.row() for d in build(ts[0].meta["corpus"]).corpus.docs]

    a, b = fresh(3), fresh(3)
    assert a == b
    c = fresh(4)
    assert c[0] != a[0] and c[1] != a[1]
    assert fresh(3, distractors=2)[1] != a[1]


def test_generated_source_through_a_suite_entry() -> None:
    src = TaskSource(generator="search", name="s2", values=[2], n=3, params={"corpus_size": 120})
    ts = load_tasks(src)
    assert [t.id for t in ts] == [f"s2-search-2-test-s0-{i:04d}" for i in range(3)]
    assert all(t.source == "s2" for t in ts)
