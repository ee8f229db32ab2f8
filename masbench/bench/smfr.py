"""Our SMFR-style diagnostic (``smfr``): who reaches a target return first (or last)? Prices are synthetic.

This is OURS, not the paper's generator (targets 2–20 %, tickers, a stated return rule, entry-day
exits, possible "none" golds); :mod:`.smfr_paper` (``smfr.paper``) follows the published one.

Each instance: a table of daily open/close prices (the traded tickers mixed with distractors);
per investor, ``pairs`` closed round trips plus one open position in a ticker all investors share;
the question: for each investor, the first day (from the day the open position was taken) on
which their return reaches ``target`` %, and which investor(s) reach it earliest / latest.

The return on day t is ``(realized profit of closed trades + profit of the open position at
day t's price) / (shares × fill price over all trades, the open one included) × 100``, computed
exactly (integer cents, fractions). The answer is a set of names; ties are real ties, and a false
tie is scored wrong (``set`` scorer). Instance ``i`` cycles through buy/sell × earliest/latest ×
open/close (period 8), the 13 target percentages (period 13) and 2–6 distractor tickers (period 5),
so each factor is exactly balanced when ``n`` is a multiple of its period; ``values`` are investor
counts (2–6).
"""

from __future__ import annotations

import datetime as dt
import random
from fractions import Fraction
from typing import Any

from ..text import normalize_answer
from . import dag as dagmod
from .registry import generator
from .taskgraph import TaskGraph
from .templates import SPLITS, name_list
from .types import TaskInstance

TARGETS = (2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 18, 20)
"""The 13 target return percentages."""
SIDES = ("buy", "sell")
RANKS = ("earliest", "latest")
PRICES = ("open", "close")

INVESTORS = {
    "test": ["Alice", "Bruno", "Chloe", "Diego", "Erin", "Farid", "Greta", "Hiro", "Irene", "Jonas",
             "Keiko", "Lars"],
    "train": ["Aaron", "Bianca", "Cyrus", "Delia", "Emil", "Flora", "Gavin", "Helga", "Igor", "Jana",
              "Kofi", "Lena"],
}
"""Investor names per split (disjoint)."""

_TEXT = {
    "test": {
        "table": "Daily prices in USD ({k} stocks, {days} trading days):",
        "fills": "Every trade fills at that day's {price} price.",
        "buy.closed": "bought {s} shares of {t} on {a} and sold them on {b}",
        "buy.open": "bought {s} shares of {t} on {a} and still holds them",
        "sell.closed": "sold short {s} shares of {t} on {a} and bought them back on {b}",
        "sell.open": "sold short {s} shares of {t} on {a} and has not bought them back",
        "rule": ("An investor's return on a day is (the profit of the closed trades + the profit of the "
                 "open position valued at that day's {price} price) divided by (shares times fill price, "
                 "summed over all of the investor's trades including the open one), times 100."),
        "ask": ("For each investor, find the first day, counting from the day the open position was taken, "
                "on which the return is at least {target}%. Which investor reaches the target {when}? "
                "Investors who never reach it do not count. If several investors reach it on that same "
                "day, name all of them."),
        "format": 'Give the name(s) as "Answer: <name>" or "Answer: <name>, <name>".',
        "earliest": "first", "latest": "last",
    },
    "train": {
        "table": "Price history in USD for {k} tickers over {days} market days:",
        "fills": "All orders are filled at the {price} price of their day.",
        "buy.closed": "purchased {s} shares of {t} on {a}, then sold all of them on {b}",
        "buy.open": "purchased {s} shares of {t} on {a}, a position still open",
        "sell.closed": "shorted {s} shares of {t} on {a}, then covered the short on {b}",
        "sell.open": "shorted {s} shares of {t} on {a}, a short still open",
        "rule": ("Return on a given day = 100 × (realized profit from closed trades + unrealized profit "
                 "of the open position at that day's {price} price) ÷ (total capital committed: shares × "
                 "fill price over every trade of the investor, the open one included)."),
        "ask": ("Determine for every investor the earliest day, on or after opening the open position, "
                "with a return of {target}% or more. Who hits this target {when}? Ignore investors who "
                "never hit it; on a tie, list every tied investor."),
        "format": 'Reply with "Answer: <name>" or, for a tie, "Answer: <name>, <name>".',
        "earliest": "soonest", "latest": "latest",
    },
}


def _symbols(rng: random.Random, k: int) -> list[str]:
    seen: set[str] = set()
    out = []
    while len(out) < k:
        sym = "".join(rng.choice("ABCDEFGHJKLMNPQRSTVWXZ") for _ in range(rng.choice((3, 4))))
        if sym not in seen:
            seen.add(sym)
            out.append(sym)
    return out


def _dates(rng: random.Random, days: int) -> list[str]:
    day = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(300))
    out = []
    while len(out) < days:
        if day.weekday() < 5:
            out.append(day.isoformat())
        day += dt.timedelta(days=1)
    return out


def _walk(rng: random.Random, days: int, drift: float, vol: float = 0.02) -> list[tuple[int, int]]:
    """Daily (open, close) in cents."""
    close = rng.randint(2000, 20000)
    out = []
    for _ in range(days):
        open_ = max(100, round(close * (1 + rng.gauss(0, 0.004))))
        close = max(100, round(open_ * (1 + rng.gauss(drift, vol))))
        out.append((open_, close))
    return out


def _draw(rng: random.Random, names: list[str], side: str, price: str, target: int, days: int,
          pairs: int, traded: int, distractors: int) -> dict[str, Any]:
    symbols = _symbols(rng, 1 + traded + distractors)
    shared, others = symbols[0], symbols[1:1 + traded]
    sign = 1 if side == "buy" else -1
    series = {s: _walk(rng, days, sign * target / 1000 if s == shared else 0.0) for s in symbols}
    col = 0 if price == "open" else 1

    def px(sym: str, day: int) -> int:
        return series[sym][day][col]

    investors = []
    for name in names:
        entry = rng.randint(max(2 * pairs, days // 4), days // 2)
        closed = []
        for _ in range(pairs):
            a = rng.randrange(entry - 1)
            b = rng.randint(a + 1, entry - 1)
            closed.append((rng.choice([shared, *others]), 5 * rng.randint(1, 10), a, b))
        closed.sort(key=lambda c: (c[2], c[3], c[0]))
        shares = 10 * rng.randint(1, 10)
        capital = sum(s * px(t, a) for t, s, a, _ in closed) + shares * px(shared, entry)
        realized = sum(sign * s * (px(t, b) - px(t, a)) for t, s, a, b in closed)
        hit = None
        for day in range(entry, days):
            unrealized = sign * shares * (px(shared, day) - px(shared, entry))
            if Fraction(100 * (realized + unrealized), capital) >= target:
                hit = day
                break
        investors.append({"name": name, "closed": closed, "entry": entry, "shares": shares, "hit": hit})
    order = symbols[:]
    rng.shuffle(order)
    return {"symbols": order, "shared": shared, "series": series, "investors": investors}


@generator("smfr")
def smfr_tasks(values: list[int] | None, n: int, seed: int, split: str, *, days: int = 30, pairs: int = 2,
               traded: int = 2, distractors: int | None = None, min_hitters: int = 2,
               max_tries: int = 200) -> list[TaskInstance]:
    """SMFR-style instances; ``values`` are investor counts (default 2–6)."""
    values = [2, 3, 4, 5, 6] if values is None else list(values)
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if any(not isinstance(v, int) or not 1 <= v <= len(INVESTORS[split]) for v in values):
        raise ValueError(f"investor counts must be 1..{len(INVESTORS[split])}, got {values!r}")
    if days < 8 or pairs < 0 or traded < 0 or 2 * pairs > days // 2:
        raise ValueError("need days ≥ 8, traded ≥ 0 and 0 ≤ pairs ≤ days / 4")
    text = _TEXT[split]
    out = []
    for v in values:
        for i in range(n):
            rng = random.Random(f"smfr|{split}|{seed}|{v}|{i}")
            side, rank, price = SIDES[i % 2], RANKS[(i // 2) % 2], PRICES[(i // 4) % 2]
            target = TARGETS[i % len(TARGETS)]
            k_distract = distractors if distractors is not None else 2 + i % 5
            names = rng.sample(INVESTORS[split], v)
            tries = 0
            while True:  # redraw until enough investors hit the target (at most max_tries draws)
                world = _draw(rng, names, side, price, target, days, pairs, traded, k_distract)
                hitters = [x for x in world["investors"] if x["hit"] is not None]
                tries += 1
                if len(hitters) >= min(min_hitters, v) or tries >= max_tries:
                    break
            dates = _dates(rng, days)
            pick = min if rank == "earliest" else max
            best = pick((x["hit"] for x in hitters), default=None)
            winners = sorted(x["name"] for x in hitters if x["hit"] == best)
            out.append(_render(world, dates, text, side, rank, price, target, v, i, seed, split, days,
                               pairs, k_distract, winners))
    return out


def _render(world: dict[str, Any], dates: list[str], text: dict[str, str], side: str, rank: str,
            price: str, target: int, v: int, i: int, seed: int, split: str, days: int, pairs: int,
            k_distract: int, winners: list[str]) -> TaskInstance:
    symbols, series = world["symbols"], world["series"]
    header = " | ".join(["date"] + [f"{s} {c}" for s in symbols for c in ("open", "close")])
    rows = [" | ".join([dates[d]] + [f"{series[s][d][j] / 100:.2f}" for s in symbols for j in (0, 1)])
            for d in range(days)]
    lines = [text["table"].format(k=len(symbols), days=days), header, *rows, "",
             text["fills"].format(price=price), "Trades:"]
    for x in world["investors"]:
        parts = [text[f"{side}.closed"].format(s=s, t=t, a=dates[a], b=dates[b])
                 for t, s, a, b in x["closed"]]
        parts.append(text[f"{side}.open"].format(s=x["shares"], t=world["shared"], a=dates[x["entry"]]))
        lines.append(f"- {x['name']} " + "; ".join(parts) + ".")
    lines += ["", text["rule"].format(price=price),
              text["ask"].format(target=target, when=text[rank]), text["format"]]
    names = [x["name"] for x in world["investors"]]
    hits = [dates[x["hit"]] if x["hit"] is not None else "none" for x in world["investors"]]
    G = TaskGraph(answers=["winners"], axis=None, axis_value=None)
    G.add_node("prices", kind="given", value=None, op=None)
    G.add_node("winners", kind="derived", value=", ".join(winners) or "none", op=f"{rank}_hit")
    for name, hit in zip(names, hits):
        G.add_node(name, kind="derived", value=hit, op="first_hit")
        G.add_edge("prices", name)
        G.add_edge(name, "winners")
    return TaskInstance(
        id=f"smfr-{v}-{split}-s{seed}-{i:04d}",
        source="smfr",
        question="\n".join(lines),
        answers=[normalize_answer(name_list(winners)) if winners else "none"],
        intermediates=hits,
        axis=None,
        axis_value=None,
        skills=["smfr", "finance.pnl", "table.lookup", "aggregate.compare"],
        scorer="set",
        meta={"dag": dagmod.to_json(G), "split": split, "seed": seed, "candidates": names,
              "investors": v, "distractors": k_distract, "side": side, "rank": rank, "price": price,
              "target": target, "days": days, "pairs": pairs, "tie": len(winners) > 1,
              "templates": [f"{split}.smfr"]},
    )
