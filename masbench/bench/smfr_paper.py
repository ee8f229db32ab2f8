"""SMFR as the Illusion paper generates it (``smfr.paper``), with synthetic prices.

Follows the published generator's rules (docs/formats.md "SMFR"; written from those facts, not
copied): a 30-calendar-day window of daily prices for companies from a fixed list of 10, one block
per company headed "``<Company> Historical Stock Price Data``" with ``Date: … Open: … High: … Low: …
Close: … Volume: … Dividends: … Stock Splits: …`` lines at full float precision, distractor
companies interleaved. One N sets the investors, the traded companies, the transactions per company
(N rounded up to even) and the distractors (as many as the 10 companies leave). The grid is
2 question types × earliest/latest × Open/Close × 13 targets 0.1 + 0.15·i % — 104 tasks per N, in
the upstream order. Investors come from a fixed list of 20 names and trade 50–100 shares.

Trades: each investor has depth/2 completed buy→sell round trips in every traded company but the
shared one, where they hold one open position: for sell questions a buy in the first quarter of the
days, valid sell dates strictly after it (scanned forward); for buy questions a sell in the last
quarter, valid buy dates strictly before it (scanned backward from the sell). Returns are exact
(fractions of the printed floats):

- sell: ``(E + q·(P_t − P_buy)) / (C + q·P_buy) ≥ p``
- buy: ``q·P_t ≤ (E + S − p·C) / (1 + p)``

with E the realized profit, C the completed buy cost, S = q·P_sell and p = pct/100. The upstream
generator divides by ``(1 − p)``; the algebra of "total profit / total cost ≥ p" gives ``(1 + p)``,
which the published expert MAS also uses — we use ``(1 + p)``.

Answer: each investor's first valid date in scan order; the earliest or latest of those across
investors; ties give every tied name (sorted); investors with no valid date drop out; draws repeat
until someone qualifies (never a "none" gold). The question does not state the return rule and keeps
the published wording, including its trap ("the latest date in their list of valid dates" while the
gold uses each investor's first valid date). The upstream templates say "smfr" where the paper
says "stock" (a rename artifact); we write "stock". Prices are SYNTHETIC (nothing is downloaded).
"""

from __future__ import annotations

import datetime as dt
import random
from fractions import Fraction
from itertools import product
from typing import Any

from ..text import normalize_answer
from .registry import generator
from .types import TaskInstance

COMPANIES = ("Apple", "Microsoft", "Alphabet", "Nvidia", "Adobe", "Airbnb", "Amazon", "Baidu", "Coca-Cola",
             "Dropbox")
"""The 10 fixed companies."""
INVESTORS = ("Alice", "Bob", "Charlie", "Diana", "Edward", "Fiona", "George", "Helen", "Isaac", "Julia", "Kevin",
             "Laura", "Michael", "Nina", "Oliver", "Patricia", "Quinn", "Rachel", "Samuel", "Teresa")
"""The fixed list of 20 investor names."""
TARGETS = tuple(round(0.1 + 0.15 * i, 2) for i in range(13))
"""Target returns in percent: 0.1, 0.25, …, 1.9."""
GRID = tuple(product(("reverse_target_sell", "reverse_target_buy"), ("earliest", "latest"), ("Open", "Close"),
                     TARGETS))
"""The 104 (question type, aggregation, price type, target) combinations, in the upstream order."""
ACTIONS = {"buy": ("bought", "acquired", "purchased"), "sell": ("sold", "disposed")}

_HEAD = "Here is some data on the stock prices of a few companies. Use this data to answer the following questions:"
_ASK = {
    "reverse_target_sell": (
        "Each investor has completed several transactions and holds shares in one remaining common stock. Based on "
        "when they could sell these remaining shares to achieve at least {target}% overall portfolio profit, who has "
        "the {timing} possible sell date (the {timing} date in their list of valid dates) to reach this target, if "
        "all transactions were made at {price} prices?"),
    "reverse_target_buy": (
        "Each investor has completed several transactions and has already sold shares in one common stock but has "
        "not yet bought them. Based on when they would have had to buy these shares to achieve at least {target}% "
        "overall portfolio profit when they sold, who has the {timing} possible buy date (the {timing} date in their "
        "list of valid dates) to reach this target, if all transactions were made at {price} prices?"),
}


def _records(rng: random.Random, start: dt.date, days: int = 30) -> list[dict[str, Any]]:
    """Synthetic daily records for the weekdays of ``days`` calendar days (full float precision).

    A random walk: the close before the first day is uniform on [20, 400]; each weekday's open is the
    previous close × (1 + N(0, 0.6%)), its close the open × (1 + N(0.05%, 1.5%)), its high
    max(open, close) × (1 + |N(0, 0.4%)|), its low min(open, close) × (1 − |N(0, 0.4%)|) (drawn in
    that order), its volume a uniform integer in [10⁶, 9·10⁷]; dividends and splits are 0."""
    close = rng.uniform(20, 400)
    out = []
    for d in range(days):
        day = start + dt.timedelta(days=d)
        if day.weekday() >= 5:
            continue
        open_ = close * (1 + rng.gauss(0, 0.006))
        close = open_ * (1 + rng.gauss(0.0005, 0.015))
        high = max(open_, close) * (1 + abs(rng.gauss(0, 0.004)))
        low = min(open_, close) * (1 - abs(rng.gauss(0, 0.004)))
        out.append({"Date": f"{day.isoformat()} 00:00:00-05:00", "Open": open_, "High": high, "Low": low,
                    "Close": close, "Volume": rng.randint(10**6, 9 * 10**7), "Dividends": 0.0, "Stock Splits": 0.0})
    return out


def _long_date(record: dict[str, Any]) -> str:
    return dt.date.fromisoformat(record["Date"][:10]).strftime("%B %d, %Y")


def valid_rows(qtype: str, shares: int, open_row: int, completed: list[tuple[int, Fraction, Fraction]],
               prices: list[Fraction], pct: Fraction) -> list[int]:
    """Rows where the open position meets the target, in scan order (forward for sell questions,
    backward from the sell for buy questions). ``completed``: (shares, buy price, sell price)."""
    p = pct / 100
    cost = sum((q * b for q, b, _ in completed), Fraction(0))
    realized = sum((q * (s - b) for q, b, s in completed), Fraction(0))
    if qtype == "reverse_target_sell":
        buy = prices[open_row]
        return [t for t in range(open_row + 1, len(prices))
                if (realized + shares * (prices[t] - buy)) >= p * (cost + shares * buy)]
    sell_revenue = shares * prices[open_row]
    limit = (realized + sell_revenue - p * cost) / (1 + p)
    return [t for t in range(open_row - 1, -1, -1) if shares * prices[t] <= limit]


def _draw(rng: random.Random, n: int, qtype: str, price: str, pct: float) -> dict[str, Any]:
    traded = rng.sample(range(len(COMPANIES)), k=min(n, len(COMPANIES)))
    rest = [i for i in range(len(COMPANIES)) if i not in traded]
    distract = rng.sample(rest, k=min(n, len(rest)))
    start = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(300))
    records = {c: _records(rng, start) for c in traded + distract}
    depth = n + n % 2
    shared = traded[0]
    prices = {c: [Fraction(r[price]) for r in records[c]] for c in traded}
    days = len(records[shared])
    investors = []
    for name in rng.sample(INVESTORS, k=n):
        txns, completed = [], []
        if qtype == "reverse_target_sell":
            row, op = rng.randrange(max(1, int(days * 0.25))), "buy"
        else:
            row, op = rng.randrange(int(days * 0.75), days), "sell"
        q = rng.randint(50, 100)
        txns.append((row, name, op, rng.choice(ACTIONS[op]), q, shared))
        for c in traded[1:]:
            rows = sorted(rng.sample(range(days), k=depth))
            for j in range(depth // 2):
                qq = rng.randint(50, 100)
                b, s = rows[2 * j], rows[2 * j + 1]
                txns.append((b, name, "buy", rng.choice(ACTIONS["buy"]), qq, c))
                txns.append((s, name, "sell", rng.choice(ACTIONS["sell"]), qq, c))
                completed.append((qq, prices[c][b], prices[c][s]))
        valid = valid_rows(qtype, q, row, completed, prices[shared], Fraction(str(pct)))  # as printed
        investors.append({"name": name, "txns": txns, "valid": valid})
    order = traded + distract
    rng.shuffle(order)
    return {"records": records, "order": order, "investors": investors, "shared": shared, "traded": traded,
            "distractors": distract, "depth": depth}


def _render(world: dict[str, Any], qtype: str, agg: str, price: str, pct: float) -> str:
    blocks = []
    for c in world["order"]:
        lines = [f"{COMPANIES[c]} Historical Stock Price Data"]
        lines += [" ".join(f"{k}: {v!r}" if isinstance(v, float) else f"{k}: {v}" for k, v in r.items())
                  for r in world["records"][c]]
        blocks.append("\n".join(lines) + "\n")
    shared_records = world["records"][world["shared"]]
    by_day: dict[int, dict[str, list]] = {}
    for inv in world["investors"]:
        for row, name, op, verb, q, c in inv["txns"]:
            by_day.setdefault(row, {}).setdefault(name, []).append((op, verb, q, c))
    paragraphs = []
    for row in sorted(by_day):
        sentences = []
        for name in sorted(by_day[row]):
            clauses: dict[str, list[str]] = {}
            for _op, verb, q, c in by_day[row][name]:
                clauses.setdefault(verb, []).append(f"{q} shares of {COMPANIES[c]}")
            parts = [f"{verb} {_join(items)}" for verb, items in sorted(clauses.items())]
            sentences.append(f"{name} {_join(parts)}")
        paragraphs.append(f"{_long_date(shared_records[row])}:\n" + ". ".join(sentences) + ".")
    ask = _ASK[qtype].format(target=pct, timing=agg, price="opening" if price == "Open" else "closing")
    return f"{_HEAD}\n\n" + "\n".join(blocks) + "\n" + "\n\n".join(paragraphs) + f"\n\n{ask}\n"


def _join(items: list[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + f", and {items[-1]}"


@generator("smfr.paper")
def smfr_paper_tasks(values: list[int] | None, n: int, seed: int, split: str, *,
                     max_tries: int = 50) -> list[TaskInstance]:
    """SMFR tasks as published; ``values`` are N (2–6); task ``i`` takes grid cell ``i % 104``."""
    values = [2, 3, 4, 5, 6] if values is None else list(values)
    if any(not isinstance(v, int) or not 2 <= v <= 10 for v in values):
        raise ValueError(f"smfr.paper: N must be 2..10, got {values!r}")
    out = []
    for v in values:
        for i in range(n):
            qtype, agg, price, pct = GRID[i % len(GRID)]
            rng = random.Random(f"smfr.paper|{split}|{seed}|{v}|{i}")
            for _ in range(max_tries):
                world = _draw(rng, v, qtype, price, pct)
                if any(inv["valid"] for inv in world["investors"]):
                    break
            else:
                raise ValueError(f"smfr.paper: no investor qualifies after {max_tries} draws (N={v}, task {i})")
            out.append(_task(world, v, i, seed, split, qtype, agg, price, pct))
    return out


def _task(world: dict[str, Any], v: int, i: int, seed: int, split: str, qtype: str, agg: str, price: str,
          pct: float) -> TaskInstance:
    recs = world["records"][world["shared"]]
    dates = {inv["name"]: [_long_date(recs[t]) for t in inv["valid"]] for inv in world["investors"]}
    firsts = {inv["name"]: inv["valid"][0] for inv in world["investors"] if inv["valid"]}
    best = (min if agg == "earliest" else max)(firsts.values())
    winners = sorted(name for name, row in firsts.items() if row == best)
    comparison = {inv["name"]: (dates[inv["name"]][0] if inv["valid"] else None) for inv in world["investors"]}
    metadata = {"task_type": "smfr", "seed": seed, "num_instances": v, "aggregation_op": f"{agg}_date",
                "task_params": {"price_type": price, "question_type": qtype, "target_percentage": pct,
                                "num_distractors": len(world["distractors"])},
                "breadth": len(world["traded"]), "depth": world["depth"], "updatable_data": False}
    names = [inv["name"] for inv in world["investors"]]
    return TaskInstance(
        id=f"smfr.paper-{v}-{split}-s{seed}-{i:04d}", source="smfr.paper",
        question=_render(world, qtype, agg, price, pct), answers=[normalize_answer(", ".join(winners))],
        intermediates=[comparison[nm] or "none" for nm in names], axis="smfr", axis_value=v,
        skills=["smfr", f"smfr.question.{qtype}", f"smfr.aggregation.{agg}_date", f"smfr.price.{price.lower()}"],
        scorer="smfr",
        meta={"candidates": names, "gold_names": winners, "investor_dates": dates, "comparison": comparison,
              "metadata": metadata, "tie": len(winners) > 1, "prices": "synthetic", "split": split})


def published_row(task: TaskInstance) -> dict[str, Any]:
    """A ``smfr.paper`` task as a row of the published jsonl (``problem``, ``answer``, ``metadata``…)."""
    m = task.meta
    return {"problem": task.question,
            "answer": {"investor_dates": m["investor_dates"], "comparison": m["comparison"], "answer": m["gold_names"]},
            "cot": "", "metadata": m["metadata"], "generation_params": {"generator": "masbench smfr.paper",
                                                                        "prices": "synthetic"}}
