"""Generators true to the papers: iGSM-style MASBench (values recompute from the stored DAG mod 23)
and SMFR as published (golds recompute from the rendered text alone, by an independent reading)."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from fractions import Fraction

import networkx as nx
import pytest

from masbench.bench import GENERATORS, dag_from_json, load_tasks, measure_axis, score
from masbench.bench.smfr_paper import GRID, TARGETS, published_row
from masbench.spec.suite import TaskSource

AXES = {"depth": (2, 12), "breadth": (2, 8), "horizon": (2, 8), "parallel": (2, 8), "robustness": (2, 6)}


def recompute_mod23(G: nx.DiGraph) -> dict[str, int]:
    """An independent evaluation of a stored iGSM DAG (not the generator's own function)."""
    out: dict[str, int] = {}
    for node in nx.topological_sort(G):
        d = G.nodes[node]
        a = [out[x] for x in d["args"]]
        k = d["const"]
        out[node] = {"needle": lambda: k, "default": lambda: 0, "const": lambda: k % 23,
                     "add_k": lambda: (a[0] + k) % 23, "times_k": lambda: (a[0] * k) % 23,
                     "sum": lambda: sum(a) % 23, "diff": lambda: (a[0] - a[1]) % 23,
                     "prod": lambda: (a[0] * a[1]) % 23}[d["op"]]()
    return out


@pytest.mark.parametrize("axis", list(AXES))
def test_igsm_values_recompute_from_the_dag_mod_23(axis):
    lo, hi = AXES[axis]
    values = list(range(lo, hi + 1))
    per_value = -(-200 // len(values))
    tasks = GENERATORS[f"masbench.igsm.{axis}"](values, per_value, 0, "test")
    assert len(tasks) >= 200
    for t in tasks:
        G = dag_from_json(t.meta["dag"])
        values_now = recompute_mod23(G)
        assert all(values_now[n] == G.nodes[n]["value"] for n in G), t.id
        assert t.answers == [str(values_now[a]) for a in G.graph["answers"]], t.id
        assert measure_axis(G, axis) == t.axis_value, t.id
        iGSM = [n for n in G if G.nodes[n]["op"] != "needle"]
        assert all(0 <= values_now[n] < 23 for n in iGSM)
        assert "mod 23" in t.question and "not mentioned is 0 by default" in t.question
        for n in G:  # every stated parameter is in the text; the unmentioned ones are 0
            d = G.nodes[n]
            if d["op"] == "default":
                assert f"The number of {n} equals" not in t.question and values_now[n] == 0
            elif d["op"] not in ("needle",):
                assert f"number of {n} equals" in t.question or f"Number of {n} equals" in t.question
        if axis == "horizon":
            assert len(t.answers) == t.axis_value + 1 and "### Final Answers" in t.question
            assert all(f"[answer{p}]" in t.question for p in range(1, t.axis_value + 1))
            assert t.question.count("\\boxed{") == len(t.answers)
        if axis == "parallel":
            assert "INDEPENDENT" in t.question and f"The magic number is {t.answers[0]}." in t.question
        if axis == "robustness":
            assert t.question.count("Verify the information before you take it") == t.axis_value
    with pytest.raises(ValueError, match="published range"):
        GENERATORS[f"masbench.igsm.{axis}"]([hi + 1], 1, 0, "test")


def test_igsm_default_zero_parameters_occur_and_splits_differ():
    tasks = GENERATORS["masbench.igsm.depth"]([6], 50, 0, "test")
    assert sum(any(d["op"] == "default" for d in t.meta["dag"]["nodes"]) for t in tasks) > 5
    train = GENERATORS["masbench.igsm.depth"]([6], 5, 0, "train")
    assert not ({"Patella", "Melanocytes"} & set(re.findall(r"\w+", " ".join(t.question for t in train))))
    assert score(tasks[0], f"<answer>\\boxed{{{tasks[0].answers[0]}}}</answer>").correct


# ----------------------------------------------------------------------------------------- SMFR

_BUY, _SELL = {"bought", "acquired", "purchased"}, {"sold", "disposed"}


def read_smfr(text: str):
    """Prices, trades and the question, read back from the rendered problem text only."""
    prices: dict[str, dict[str, dict[str, Fraction]]] = {}
    company = None
    for line in text.splitlines():
        m = re.match(r"^(.+) Historical Stock Price Data$", line)
        if m:
            company = m.group(1)
            prices[company] = {}
            continue
        m = re.match(r"^Date: (\d{4}-\d{2}-\d{2}) \S+ Open: (\S+) High: \S+ Low: \S+ Close: (\S+) Volume:", line)
        if m and company:
            day = dt.date.fromisoformat(m.group(1)).strftime("%B %d, %Y")
            prices[company][day] = {"Open": Fraction(float(m.group(2))), "Close": Fraction(float(m.group(3)))}
    trades = []
    for m in re.finditer(r"^(\w+ \d{2}, \d{4}):\n(.+)$", text, re.MULTILINE):
        day = m.group(1)
        for sentence in m.group(2).rstrip(".").split(". "):
            name, rest = sentence.split(" ", 1)
            verb = None
            for tok in re.finditer(r"(bought|acquired|purchased|sold|disposed)|(\d+) shares of ([A-Z][\w-]*)", rest):
                if tok.group(1):
                    verb = tok.group(1)
                else:
                    trades.append((name, day, "buy" if verb in _BUY else "sell", int(tok.group(2)), tok.group(3)))
    qtype = "sell" if "could sell these remaining shares" in text else "buy"
    target = Fraction(re.search(r"at least ([\d.]+)% overall", text).group(1))
    timing = re.search(r"who has the (earliest|latest) possible", text).group(1)
    price = "Open" if "at opening prices" in text else "Close"
    return prices, trades, qtype, target / 100, timing, price


def smfr_answer(text: str) -> list[str]:
    prices, trades, qtype, p, timing, price = read_smfr(text)
    days = sorted(next(iter(prices.values())), key=lambda d: dt.datetime.strptime(d, "%B %d, %Y"))
    first: dict[str, int] = {}
    for name in sorted({t[0] for t in trades}):
        mine = [t for t in trades if t[0] == name]
        per_company = Counter(t[4] for t in mine)
        [shared] = [c for c, k in per_company.items() if k == 1]
        [(_, open_day, _, q, _)] = [t for t in mine if t[4] == shared]
        cost = realized = Fraction(0)
        for c in per_company:
            if c == shared:
                continue
            seq = sorted((t for t in mine if t[4] == c), key=lambda t: days.index(t[1]))
            for buy, sell in zip(seq[0::2], seq[1::2]):
                assert buy[2] == "buy" and sell[2] == "sell" and buy[3] == sell[3]
                cost += buy[3] * prices[c][buy[1]][price]
                realized += buy[3] * (prices[c][sell[1]][price] - prices[c][buy[1]][price])
        k = days.index(open_day)
        px = [prices[shared][d][price] for d in days]
        if qtype == "sell":  # strictly after the buy, scanning forward
            hits = [t for t in range(k + 1, len(days)) if (realized + q * (px[t] - px[k])) / (cost + q * px[k]) >= p]
        else:  # strictly before the sell, scanning backward; total profit / total cost >= p
            hits = [t for t in range(k - 1, -1, -1) if (realized + q * px[k] - q * px[t]) / (cost + q * px[t]) >= p]
        if hits:
            first[name] = hits[0]
    best = (min if timing == "earliest" else max)(first.values())
    return sorted(n for n, t in first.items() if t == best)


@pytest.mark.slow
def test_smfr_paper_golds_recompute_from_the_rendered_text():
    tasks = GENERATORS["smfr.paper"]([2, 3, 4, 5, 6], 40, 0, "test")
    assert len(tasks) == 200
    for t in tasks:
        assert smfr_answer(t.question) == t.meta["gold_names"], t.id
        assert t.meta["gold_names"] and "none" not in t.answers  # never a "none" gold
        assert "divided by" not in t.question and "return on a day" not in t.question.lower()  # rule not stated


def test_smfr_paper_grid_and_published_shape(tmp_path):
    tasks = GENERATORS["smfr.paper"]([3], 104, 0, "test")
    cells = Counter((t.meta["metadata"]["task_params"]["question_type"], t.meta["metadata"]["aggregation_op"],
                     t.meta["metadata"]["task_params"]["price_type"], t.meta["metadata"]["task_params"]["target_percentage"])
                    for t in tasks)
    assert len(cells) == len(GRID) == 104 and set(cells.values()) == {1}
    # every cell's gold recomputes from the text, the 52 buy cells too (the recomputation above draws 40
    # tasks per N: cells 0..39, all sell questions)
    for x in tasks:
        assert smfr_answer(x.question) == x.meta["gold_names"], x.id
    assert TARGETS[0] == 0.1 and TARGETS[-1] == 1.9 and len(TARGETS) == 13
    t = tasks[0]
    md = t.meta["metadata"]
    assert md["num_instances"] == 3 and md["breadth"] == 3 and md["depth"] == 4  # one N sets them all
    assert md["task_params"]["num_distractors"] == 3
    assert re.search(r"Date: \d{4}-\d{2}-\d{2} 00:00:00-05:00 Open: \d+\.\d{6,}", t.question)  # full precision
    # the published row shape loads through the smfr source to the same task
    import json

    path = tmp_path / "balanced_dataset_single_3_fixed.jsonl"
    path.write_text("".join(json.dumps(published_row(x)) + "\n" for x in tasks[:10]))
    loaded = load_tasks(TaskSource(smfr=str(path), n=10))
    assert [x.question for x in loaded] == [x.question for x in tasks[:10]]
    assert [x.answers for x in loaded] == [x.answers for x in tasks[:10]]
    assert all(x.axis_value == 3 for x in loaded)
