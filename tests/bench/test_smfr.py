"""SMFR-style diagnostic: balance, determinism, and gold answers recomputed from the rendered text."""

from __future__ import annotations

import re
from collections import Counter
from fractions import Fraction

import pytest

from masbench.bench import GENERATORS, score
from masbench.bench.smfr import TARGETS


@pytest.fixture(scope="module")
def tasks():
    return GENERATORS["smfr"]([2, 3, 4, 5, 6], 24, 0, "test")


def solve_from_text(question: str) -> tuple[set[str], list[str]]:
    """Recompute the answer by reading only the question text (independent of the generator)."""
    lines = question.splitlines()
    header = lines[1].split(" | ")
    table: dict[str, dict[str, int]] = {}
    for line in lines[2:]:
        if not line.strip():
            break
        cells = line.split(" | ")
        table[cells[0]] = {h: round(float(c) * 100) for h, c in zip(header[1:], cells[1:])}
    price = re.search(r"fills at that day's (open|close) price", question).group(1)
    target = int(re.search(r"at least (\d+)%", question).group(1))
    rank = re.search(r"reaches the target (first|last)", question).group(1)
    dates = sorted(table)
    hits, names = {}, []
    for line in lines:
        if not line.startswith("- "):
            continue
        name = line[2:].split(" ", 1)[0]
        names.append(name)
        short = "sold short" in line
        sign = -1 if short else 1
        realized = capital = 0
        for s, t, a, b in re.findall(r"(\d+) shares of (\w+) on ([\d-]+) and (?:sold them|bought them back) on ([\d-]+)",
                                     line):
            pa, pb = table[a][f"{t} {price}"], table[b][f"{t} {price}"]
            capital += int(s) * pa
            realized += sign * int(s) * (pb - pa)
        s, t, e = re.search(r"(\d+) shares of (\w+) on ([\d-]+) and (?:still holds|has not bought)", line).groups()
        pe = table[e][f"{t} {price}"]
        capital += int(s) * pe
        for day in dates:
            if day < e:
                continue
            pnl = realized + sign * int(s) * (table[day][f"{t} {price}"] - pe)
            if Fraction(100 * pnl, capital) >= target:
                hits[name] = day
                break
    if not hits:
        return {"none"}, names
    best = (min if rank == "first" else max)(hits.values())
    return {n.lower() for n, d in hits.items() if d == best}, names


def test_gold_recomputes_from_the_rendered_question(tasks):
    for t in tasks:
        winners, names = solve_from_text(t.question)
        assert set(t.answers[0].split(", ")) == winners, t.id
        assert names == t.meta["candidates"] and len(names) == t.meta["investors"]
        assert score(t, "Answer: " + ", ".join(sorted(winners))).correct


def test_balanced_over_factors(tasks):
    for key in ("side", "rank", "price"):
        counts = Counter(t.meta[key] for t in tasks)
        assert len(counts) == 2 and len(set(counts.values())) == 1  # exact when n is a multiple of 8
    assert {t.meta["target"] for t in tasks} == set(TARGETS)
    assert {t.meta["investors"] for t in tasks} == {2, 3, 4, 5, 6}
    assert {t.meta["distractors"] for t in tasks} == {2, 3, 4, 5, 6}
    first8 = tasks[:8]
    assert len({(t.meta["side"], t.meta["rank"], t.meta["price"]) for t in first8}) == 8


def test_ties_exist_and_false_ties_are_wrong(tasks):
    tied = [t for t in tasks if t.meta["tie"]]
    single = [t for t in tasks if not t.meta["tie"] and t.answers != ["none"]]
    assert tied and single
    t = single[0]
    winner = t.answers[0]
    other = next(c for c in t.meta["candidates"] if c.lower() != winner)
    assert score(t, f"Answer: {winner}").correct
    assert not score(t, f"Answer: {winner}, {other}").correct
    t = tied[0]
    assert not score(t, f"Answer: {t.answers[0].split(', ')[0]}").correct
    assert score(t, f"Answer: {t.answers[0]}").correct


def test_deterministic_and_split_disjoint():
    a = [t.model_dump_json() for t in GENERATORS["smfr"]([3], 4, 5, "test")]
    b = [t.model_dump_json() for t in GENERATORS["smfr"]([3], 4, 5, "test")]
    assert a == b
    train = GENERATORS["smfr"]([3], 4, 5, "train")
    test_names = {n for t in GENERATORS["smfr"]([3], 4, 5, "test") for n in t.meta["candidates"]}
    assert not test_names & {n for t in train for n in t.meta["candidates"]}
    assert "Daily prices" not in train[0].question


def test_sell_side_and_latest_phrasing(tasks):
    sells = [t for t in tasks if t.meta["side"] == "sell"]
    assert sells and all("sold short" in t.question for t in sells)
    latest = [t for t in tasks if t.meta["rank"] == "latest"]
    assert latest and all("reaches the target last" in t.question for t in latest)
