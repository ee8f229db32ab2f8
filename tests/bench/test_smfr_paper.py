"""SMFR as published (masbench/bench/smfr_paper.py), piece by piece: the return rule on hand-built
price paths (worked by hand), the drawn world against the published generation rules, the answer's
aggregation on a hand-built world, and the generator's arguments (docs/formats.md "SMFR")."""

from __future__ import annotations

import datetime as dt
import random
import re
from fractions import Fraction as F

import pytest
from recording_rng import RecordingRandom  # tests/recording_rng.py

from masbench.bench import GENERATORS
from masbench.bench.smfr_paper import COMPANIES, INVESTORS, _draw, _join, _records, _task, published_row, valid_rows

# ----- the return rule, by hand --------------------------------------------------------------------
# the shared company's prices, rows 0..6
PATH = [F(10), F(12), F(9), F(11), F(20), F(25), F(19)]
# one completed round trip elsewhere: 5 shares bought at 10, sold at 14 → cost C = 50, realized E = 20
DONE = [(5, F(10), F(14))]


def test_buy_question_scans_backward_from_the_sell():
    # sold 10 shares at row 4 (price 20): S = 200. Buying at P_t qualifies when
    # (E + S − 10·P_t) / (C + 10·P_t) ≥ p, i.e. 10·P_t ≤ (E + S − p·C) / (1 + p).
    # p = 80%: (20 + 200 − 40) / 1.8 = 100 → P_t ≤ 10: rows 0 (10, exactly on the target) and 2 (9).
    #   check row 0: profit 20 + 10·(20 − 10) = 120 over cost 50 + 100 = 150 → 0.8 ✓;
    #   row 2: 130 / 140 ✓; row 3 (11): 110 / 160 = 0.69 ✗; row 1 (12): 100 / 170 ✗.
    # Scanned backward from the sell the first valid date is row 2; a forward scan would give row 0.
    assert valid_rows("reverse_target_buy", 10, 4, DONE, PATH, F(80)) == [2, 0]
    # p = 10%: (20 + 200 − 5) / 1.1 = 195.45… → P_t ≤ 19.545: every row before the sell, nearest first;
    # row 6 (19) would qualify too but is after the sell (valid buy dates are strictly before it)
    assert valid_rows("reverse_target_buy", 10, 4, DONE, PATH, F(10)) == [3, 2, 1, 0]
    # no completed trades, p = 100%: 10·P_t ≤ 200 / 2 → P_t ≤ 10: rows 2 then 0
    assert valid_rows("reverse_target_buy", 10, 4, [], PATH, F(100)) == [2, 0]
    # p = 150% with the round trip: (220 − 75) / 2.5 = 58 → P_t ≤ 5.8: none
    assert valid_rows("reverse_target_buy", 10, 4, DONE, PATH, F(150)) == []


def test_sell_question_scans_forward_strictly_after_the_buy():
    # bought 10 at row 0 (10): qualifies when 20 + 10·(P_t − 10) ≥ p·(50 + 100).
    # p = 80%: ≥ 120 → P_t ≥ 20: rows 4 (20, exactly) and 5 (25)
    assert valid_rows("reverse_target_sell", 10, 0, DONE, PATH, F(80)) == [4, 5]
    # p = 50%: ≥ 75 → P_t ≥ 15.5: rows 4, 5, 6
    assert valid_rows("reverse_target_sell", 10, 0, DONE, PATH, F(50)) == [4, 5, 6]
    # bought at row 2 (9), p = 10%: 20 + 10·(P_t − 9) ≥ 14 → P_t ≥ 8.4: every row after the buy, not
    # rows 0 and 1 (before it, though 10 and 12 ≥ 8.4) nor row 2 itself
    assert valid_rows("reverse_target_sell", 10, 2, DONE, PATH, F(10)) == [3, 4, 5, 6]
    # two round trips add up: C = 50 + 20·10 = 250, E = 20 + 20·(8 − 10) = −20;
    # p = 10%: −20 + 10·(P_t − 10) ≥ 35 → P_t ≥ 15.5: rows 4, 5, 6
    assert valid_rows("reverse_target_sell", 10, 0, DONE + [(20, F(10), F(8))], PATH, F(10)) == [4, 5, 6]
    # one profit unit short: 20 + 10·(19.9 − 10) = 119 < 0.8·150 = 120 at row 1, 120 exactly at row 2
    assert valid_rows("reverse_target_sell", 10, 0, DONE, [F(10), F(199, 10), F(20)], F(80)) == [2]


# ----- the drawn world against the published rules ---------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 6, 7])
@pytest.mark.parametrize("qtype", ["reverse_target_sell", "reverse_target_buy"])
def test_drawn_world_follows_the_generation_rules(n, qtype):
    depth = n + n % 2  # transactions per company, rounded up to even
    for k in range(6):
        w = _draw(random.Random(f"world|{n}|{qtype}|{k}"), n, qtype, "Close", 0.1)
        assert w["depth"] == depth
        assert len(w["traded"]) == n and w["shared"] == w["traded"][0]
        assert len(w["distractors"]) == min(n, 10 - n) and not set(w["distractors"]) & set(w["traded"])
        assert sorted(w["order"]) == sorted(w["traded"] + w["distractors"])
        recs = w["records"][w["shared"]]
        assert set(w["records"]) == set(w["traded"] + w["distractors"])
        days = [dt.date.fromisoformat(r["Date"][:10]) for r in recs]
        # 30 calendar days from a start in 2024-01-01 + 0..299, weekdays only
        assert dt.date(2024, 1, 1) <= days[0] <= dt.date(2024, 1, 1) + dt.timedelta(days=299 + 2)
        assert (days[-1] - days[0]).days <= 29 and all(d.weekday() < 5 for d in days)
        assert len(days) in (20, 21, 22)
        assert all(r["Date"].endswith(" 00:00:00-05:00") for r in recs)
        assert all([r["Date"] for r in w["records"][c]] == [r["Date"] for r in recs] for c in w["records"])
        names = [inv["name"] for inv in w["investors"]]
        assert len(names) == n == len(set(names)) and set(names) <= set(INVESTORS)
        for inv in w["investors"]:
            open_ = [t for t in inv["txns"] if t[5] == w["shared"]]
            assert len(open_) == 1
            row, _, op, verb, q, _ = open_[0]
            if qtype == "reverse_target_sell":  # a buy in the first quarter of the days
                assert op == "buy" and verb in ("bought", "acquired", "purchased")
                assert row < max(1, int(len(days) * 0.25))
            else:  # a sell in the last quarter
                assert op == "sell" and verb in ("sold", "disposed") and int(len(days) * 0.75) <= row < len(days)
            for c in w["traded"][1:]:  # depth/2 completed buy → sell round trips, same shares
                mine = sorted((t for t in inv["txns"] if t[5] == c), key=lambda t: t[0])
                assert len(mine) == depth and len({t[0] for t in mine}) == depth
                assert [t[2] for t in mine] == ["buy", "sell"] * (depth // 2)
                assert all(b[4] == s[4] for b, s in zip(mine[0::2], mine[1::2]))
            assert len(inv["txns"]) == 1 + depth * (n - 1)
            assert all(t[1] == inv["name"] for t in inv["txns"])


@pytest.mark.parametrize("k", range(2))
@pytest.mark.parametrize("qtype", ["reverse_target_sell", "reverse_target_buy"])
def test_draw_ranges_and_the_30_calendar_day_window(k, qtype):
    # every integer draw of a world, off a recording RNG: the window's day offset 0..299 (the first),
    # volumes 10⁶..9·10⁷, the open position's row (first quarter: rows 0..⌊days/4⌋ − 1 for sell questions;
    # last quarter: ⌊3·days/4⌋..days − 1 for buy questions) and every trade's 50..100 shares
    rng = RecordingRandom(f"window|{k}|{qtype}")
    w = _draw(rng, 3, qtype, "Open", 0.1)
    (args, offset) = rng.draws[0]
    assert args == (300,)
    # the rows are the weekdays of the 30 calendar days from 2024-01-01 + offset, by brute force
    start = dt.date(2024, 1, 1) + dt.timedelta(days=offset)
    want = [start + dt.timedelta(days=d) for d in range(30)]
    want = [f"{d.isoformat()} 00:00:00-05:00" for d in want if d.weekday() < 5]
    for recs in w["records"].values():
        assert [r["Date"] for r in recs] == want
    days = len(want)
    open_rows = (days // 4,) if qtype == "reverse_target_sell" else (3 * days // 4, days)
    assert {a for a, _ in rng.draws} == {(300,), (10**6, 9 * 10**7 + 1), open_rows, (50, 101)}
    # each investor's open position is one of those draws (its row, then its shares)
    opened = [t for inv in w["investors"] for t in inv["txns"] if t[5] == w["shared"]]
    rows = [r for a, r in rng.draws if a == open_rows]
    assert [t[0] for t in opened] == rows and len(rows) == 3


def test_drawn_prices_are_sane_daily_records():
    qs, volumes = [], []
    for k in range(40):
        w = _draw(random.Random(f"prices|{k}"), 3, "reverse_target_buy", "Open", 1.0)
        for c, recs in w["records"].items():
            prev = None
            for r in recs:
                assert r["Low"] <= min(r["Open"], r["Close"]) <= max(r["Open"], r["Close"]) <= r["High"]
                assert r["High"] < 1.05 * max(r["Open"], r["Close"]) and r["Low"] > 0.95 * min(r["Open"], r["Close"])
                assert abs(r["Close"] / r["Open"] - 1) < 0.1 and 10**6 <= r["Volume"] <= 9 * 10**7
                if prev is not None:  # the open follows the previous close (a 0.6% sd gap)
                    assert abs(r["Open"] / prev - 1) < 0.05
                prev = r["Close"]
                volumes.append(r["Volume"])
                assert r["Dividends"] == 0.0 and r["Stock Splits"] == 0.0
            assert 20 * 0.5 < recs[0]["Open"] < 400 * 1.5
        for inv in w["investors"]:
            qs += [t[4] for t in inv["txns"]]
    assert min(qs) == 50 and max(qs) == 100  # 50–100 shares, both ends drawn in ~2000 trades
    # volumes uniform on 10^6 .. 9·10^7: the lowest of ~5000 is above 1.5·10^6 with probability
    # (1 − 0.5/89)^5000 ≈ e^−28; the highest below 0.98·9·10^7 likewise
    assert min(volumes) < 1.5 * 10**6 and max(volumes) > 0.98 * 9 * 10**7


class _ScriptedRng(random.Random):
    """Records every draw; ``uniform`` gives its midpoint, ``gauss(mu, sigma)`` gives mu + z·sigma with z
    cycling through ``zs``, ``randint`` its lower end plus 7 — so each record can be worked by hand."""

    def __init__(self, zs: list[int]) -> None:
        super().__init__(0)
        self.zs, self.calls = list(zs), []

    def uniform(self, a: float, b: float) -> float:
        self.calls.append(("uniform", a, b))
        return (a + b) / 2

    def gauss(self, mu: float = 0.0, sigma: float = 1.0) -> float:
        self.calls.append(("gauss", mu, sigma))
        z = self.zs[(len([c for c in self.calls if c[0] == "gauss"]) - 1) % len(self.zs)]
        return mu + z * sigma

    def randint(self, a: int, b: int) -> int:
        self.calls.append(("randint", a, b))
        return a + 7


def test_price_walk_worked_by_hand_from_scripted_draws():
    # 2024-03-01 is a Friday: 4 calendar days give Friday and Monday, the weekend skipped. The draws per
    # weekday, in order: open gap N(0, 0.6%), day return N(0.05%, 1.5%), high and low wicks N(0, 0.4%),
    # volume; z = −1, +2, −1, +2 (the high's negative draw is taken as |·|, so the high stays above).
    rng = _ScriptedRng([-1, 2, -1, 2])
    recs = _records(rng, dt.date(2024, 3, 1), days=4)
    day = [("gauss", 0, 0.006), ("gauss", 0.0005, 0.015), ("gauss", 0, 0.004), ("gauss", 0, 0.004),
           ("randint", 10**6, 9 * 10**7)]
    assert rng.calls == [("uniform", 20, 400)] + day + day
    close0 = 210.0  # the midpoint of [20, 400]
    open1 = close0 * (1 - 0.006)  # 208.74
    close1 = open1 * (1 + 0.0005 + 2 * 0.015)  # 215.10657
    open2 = close1 * (1 - 0.006)  # the next weekday opens from Friday's close
    close2 = open2 * (1 + 0.0305)
    want = [("2024-03-01", open1, close1 * 1.004, open1 * (1 - 0.008), close1),
            ("2024-03-04", open2, close2 * 1.004, open2 * (1 - 0.008), close2)]
    assert [r["Date"] for r in recs] == [f"{d} 00:00:00-05:00" for d, *_ in want]
    for r, (_, o, h, lo, c) in zip(recs, want):
        assert (r["Open"], r["High"], r["Low"], r["Close"]) == pytest.approx((o, h, lo, c), rel=1e-12)
        assert r["Volume"] == 10**6 + 7 and r["Dividends"] == 0.0 and r["Stock Splits"] == 0.0
        assert list(r) == ["Date", "Open", "High", "Low", "Close", "Volume", "Dividends", "Stock Splits"]
    assert recs[0]["Open"] == pytest.approx(208.74, rel=1e-12)
    assert recs[0]["Close"] == pytest.approx(215.10657, rel=1e-12)


# ----- the answer on a hand-built world -------------------------------------------------------------
def _world(valid: dict[str, list[int]]) -> dict:
    start = dt.date(2024, 3, 4)  # a Monday
    recs = [{"Date": f"{(start + dt.timedelta(days=d)).isoformat()} 00:00:00-05:00", "Open": 10.0 + d,
             "High": 11.0 + d, "Low": 9.0 + d, "Close": 10.5 + d, "Volume": 1000, "Dividends": 0.0,
             "Stock Splits": 0.0} for d in range(5)]
    invs = [{"name": name, "valid": rows, "txns": [(4, name, "sell", "sold", 60, 0)]} for name, rows in valid.items()]
    invs[0]["txns"] += [(0, invs[0]["name"], "buy", "bought", 70, 1), (0, invs[0]["name"], "buy", "purchased", 80, 2),
                        (1, invs[0]["name"], "sell", "sold", 70, 1)]
    return {"records": {0: recs, 1: recs, 2: recs}, "order": [2, 0, 1], "investors": invs, "shared": 0,
            "traded": [0, 1, 2], "distractors": [], "depth": 2}


def test_answer_takes_each_investors_first_valid_date_then_aggregates():
    # first valid rows: Alice 2, Bob 3, Cara none (drops out); earliest → Alice, latest → Bob
    w = _world({"Alice": [2, 0], "Bob": [3], "Cara": []})
    args = ("reverse_target_buy", "Close", 0.25)
    early = _task(w, 3, 7, 1, "test", args[0], "earliest", *args[1:])
    late = _task(w, 3, 7, 1, "test", args[0], "latest", *args[1:])
    assert early.meta["gold_names"] == ["Alice"] and early.answers == ["alice"] and not early.meta["tie"]
    assert late.meta["gold_names"] == ["Bob"] and late.answers == ["bob"]
    # dates in the published "Month DD, YYYY" form, every valid date listed
    assert early.meta["investor_dates"] == {"Alice": ["March 06, 2024", "March 04, 2024"], "Bob": ["March 07, 2024"],
                                            "Cara": []}
    assert early.meta["comparison"] == {"Alice": "March 06, 2024", "Bob": "March 07, 2024", "Cara": None}
    assert early.intermediates == ["March 06, 2024", "March 07, 2024", "none"]
    assert early.meta["candidates"] == ["Alice", "Bob", "Cara"]
    # like every generator's tasks, the split it was drawn for; and the prices flagged as synthetic
    assert early.meta["split"] == "test" and early.meta["prices"] == "synthetic"
    assert set(early.meta) == {"candidates", "gold_names", "investor_dates", "comparison", "metadata", "tie",
                               "prices", "split"}
    md = early.meta["metadata"]
    assert md == {"task_type": "smfr", "seed": 1, "num_instances": 3, "aggregation_op": "earliest_date",
                  "task_params": {"price_type": "Close", "question_type": "reverse_target_buy",
                                  "target_percentage": 0.25, "num_distractors": 0},
                  "breadth": 3, "depth": 2, "updatable_data": False}
    assert early.id == "smfr.paper-3-test-s1-0007" and early.source == "smfr.paper" and early.scorer == "smfr"
    assert early.axis == "smfr" and early.axis_value == 3
    assert early.skills == ["smfr", "smfr.question.reverse_target_buy", "smfr.aggregation.earliest_date",
                            "smfr.price.close"]


def test_tied_first_dates_give_every_name_sorted():
    w = _world({"Dan": [1], "Bea": [1, 0], "Al": [3]})
    t = _task(w, 3, 0, 0, "test", "reverse_target_sell", "earliest", "Open", 1.9)
    assert t.meta["gold_names"] == ["Bea", "Dan"] and t.meta["tie"] and t.answers == ["bea, dan"]


def test_rendered_text_blocks_trades_and_question():
    w = _world({"Alice": [2], "Bob": [3]})
    q = _task(w, 2, 0, 0, "test", "reverse_target_buy", "latest", "Close", 0.4).question
    assert q.startswith("Here is some data on the stock prices of a few companies.")
    # blocks in the drawn order (companies 2, 0, 1 = Alphabet, Apple, Microsoft), floats by repr
    heads = re.findall(r"^(.+) Historical Stock Price Data$", q, re.MULTILINE)
    assert heads == [COMPANIES[2], COMPANIES[0], COMPANIES[1]]
    assert ("Date: 2024-03-04 00:00:00-05:00 Open: 10.0 High: 11.0 Low: 9.0 Close: 10.5 Volume: 1000 "
            "Dividends: 0.0 Stock Splits: 0.0") in q
    # one paragraph per trading day in date order, names sorted, verbs grouped and sorted
    # one block per company, a blank line between blocks and before the trades
    assert f"Stock Splits: 0.0\n\n{COMPANIES[0]} Historical Stock Price Data\n" in q
    assert "Stock Splits: 0.0\n\nMarch 04, 2024:\n" in q and "0.0\n\n\n" not in q
    assert "March 04, 2024:\nAlice bought 70 shares of Microsoft and purchased 80 shares of Alphabet." in q
    assert "March 05, 2024:\nAlice sold 70 shares of Microsoft." in q
    assert "March 08, 2024:\nAlice sold 60 shares of Apple. Bob sold 60 shares of Apple." in q
    assert q.index("March 04, 2024:") < q.index("March 05, 2024:") < q.index("March 08, 2024:")
    assert ("who has the latest possible buy date (the latest date in their list of valid dates) to reach this "
            "target, if all transactions were made at closing prices?") in q
    assert "at least 0.4% overall portfolio profit when they sold" in q and q.endswith("?\n")
    sell = _task(w, 2, 0, 0, "test", "reverse_target_sell", "earliest", "Open", 1.0).question
    assert "could sell these remaining shares to achieve at least 1.0% overall" in sell
    assert "made at opening prices?" in sell and "the earliest possible sell date" in sell


def test_published_row_has_the_published_fields():
    # docs/formats.md "SMFR": problem, answer = {investor_dates, comparison, answer}, cot, metadata, generation_params
    w = _world({"Alice": [2], "Bob": [3], "Cara": []})
    t = _task(w, 3, 0, 0, "test", "reverse_target_sell", "earliest", "Open", 0.1)
    assert published_row(t) == {
        "problem": t.question,
        "answer": {"investor_dates": {"Alice": ["March 06, 2024"], "Bob": ["March 07, 2024"], "Cara": []},
                   "comparison": {"Alice": "March 06, 2024", "Bob": "March 07, 2024", "Cara": None},
                   "answer": ["Alice"]},
        "cot": "", "metadata": t.meta["metadata"],
        "generation_params": {"generator": "masbench smfr.paper", "prices": "synthetic"}}


def test_join_lists_like_the_published_text():
    assert _join(["a"]) == "a" and _join(["a", "b"]) == "a and b" and _join(["a", "b", "c"]) == "a, b, and c"


# ----- the generator's arguments ---------------------------------------------------------------------
def test_generator_values_grid_cells_and_errors():
    gen = GENERATORS["smfr.paper"]
    tasks = gen(None, 1, 0, "test")
    assert [t.axis_value for t in tasks] == [2, 3, 4, 5, 6]  # default N = 2..6
    ten = gen([10], 1, 0, "test")[0]
    assert ten.meta["metadata"]["task_params"]["num_distractors"] == 0 and len(ten.meta["candidates"]) == 10
    # task i takes grid cell i % 104: task 104 is cell 0 again (sell, earliest, Open, 0.1%)
    t104 = gen([2], 105, 0, "test")[104].meta["metadata"]
    assert (t104["task_params"]["question_type"], t104["aggregation_op"], t104["task_params"]["price_type"],
            t104["task_params"]["target_percentage"]) == ("reverse_target_sell", "earliest_date", "Open", 0.1)
    for bad in ([1], [11], [3.0]):
        with pytest.raises(ValueError, match="N must be 2..10"):
            gen(bad, 1, 0, "test")  # pyright: ignore[reportArgumentType]  # a float N, on purpose
    with pytest.raises(ValueError, match="no investor qualifies after 0 draws"):
        gen([2], 1, 0, "test", max_tries=0)


def test_generator_is_seeded_by_split_seed_and_n():
    gen = GENERATORS["smfr.paper"]
    a = [t.model_dump_json() for t in gen([2, 3], 3, 5, "test")]
    assert a == [t.model_dump_json() for t in gen([2, 3], 3, 5, "test")]
    assert a[:3] == [t.model_dump_json() for t in gen([2], 3, 5, "test")]
    for other in (gen([2, 3], 3, 6, "test"), gen([2, 3], 3, 5, "train")):
        assert all(x.question != y.question for x, y in zip(gen([2, 3], 3, 5, "test"), other))
    assert gen([2], 2, 5, "test")[1].id == "smfr.paper-2-test-s5-0001"
