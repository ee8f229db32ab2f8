"""The word-problem builder behind the simple five-axis generator (:mod:`.axes`): people holding
counts of things, each quantity a small DAG node rendered as one sentence. Ours, not the paper's."""

from __future__ import annotations

import random
from typing import Any

from . import dag as dagmod
from .taskgraph import TaskGraph
from .templates import CITIES, GROWS, HOBBIES, PLACES, TIMES, NamePool, Phrasebook, name_list, noun

MAX_GROW = 60
"""Above this, a quantity only shrinks (sub, half), so values stay small at any depth."""


class _Problem:
    """One instance under construction: the DAG plus its seeded RNG, names and phrasebook."""

    def __init__(self, rng: random.Random, split: str):
        self.rng, self.split = rng, split
        self.G = TaskGraph()
        self.names = NamePool(split, rng)
        self.book = Phrasebook(split, rng)

    # -- structure ---------------------------------------------------------------------------

    def value(self, node: str) -> int:
        return self.G.nodes[node]["value"]

    def subject(self, node: str) -> str:
        return self.G.nodes[node]["subject"]

    def _add(self, **attrs: Any) -> str:
        node = f"q{self.G.number_of_nodes()}"
        base = {"kind": "given", "value": 0, "op": None, "args": [], "const": None, "subject": "",
                "item": "", "style": None, "wrong": None, "subtask": None, "comp": 0}
        base.update(attrs)
        self.G.add_node(node, **base)
        return node

    def given(self, item: str, comp: int, value: int | None = None) -> str:
        """A stated quantity (small: 1..9 unless given)."""
        value = self.rng.randint(1, 9) if value is None else value
        return self._add(kind="given", value=value, subject=self.names.take(), item=item, comp=comp)

    def derived(self, op: str, args: list[str], const: int | None, item: str, style: str, comp: int,
                refs: dict[str, str] | None = None, subtask: int | None = None) -> str:
        """A sub-task: one ``op`` on ``args``. ``refs`` renames parents inside this sub-task
        (horizon: "Ann has [answer_1] apples"); stored on the edges as ``as``."""
        refs = refs or {}
        value = dagmod.apply_op(op, [self.value(a) for a in args], const)
        if style == "change":
            subject = refs.get(args[0], self.subject(args[0]))
        elif style in ("ask_sum", "ask_diff"):
            subject = ""
        else:
            subject = self.names.take()
        node = self._add(kind="derived", value=value, op=op, args=list(args), const=const,
                         subject=subject, item=item, style=style, comp=comp, subtask=subtask)
        for a in args:
            self.G.add_edge(a, node, **({"as": refs[a]} if a in refs else {}))
        return node

    def pick_op(self, v: int, allow_sum: bool) -> tuple[str, int | None]:
        """A feasible one-parent op (or ``sum`` with a fresh given) keeping values small, ≥ 1."""
        options: list[tuple[str, int]] = []
        if v <= MAX_GROW:
            options.append(("add", 3))
        if v >= 2:
            options.append(("sub", 3))
        if v <= 10:
            options.append(("mul", 1))
        if v >= 2 and v % 2 == 0:
            options.append(("half", 1))
        if allow_sum and v <= MAX_GROW:
            options.append(("sum", 2))
        op = self.rng.choices([o for o, _ in options], weights=[w for _, w in options])[0]
        if op == "add":
            return op, self.rng.randint(1, 9)
        if op == "sub":
            return op, self.rng.randint(1, min(9, v - 1))
        if op == "mul":
            return op, self.rng.choice([2, 3]) if v * 3 <= 20 else 2
        return op, None

    def final_style(self, op: str) -> str:
        """How the answer node is asked: mostly the simplest phrasing (a change, or "together")."""
        if op in ("sum",):
            return "ask_sum" if self.rng.random() < 0.8 else "rel"
        return "change" if self.rng.random() < 0.8 else "rel"

    def chain(self, depth: int, item: str, comp: int, max_in: int = 2, final: bool = True) -> str:
        """``depth`` operations in a row, starting from a given quantity; returns the last node."""
        cur = self.given(item, comp)
        for step in range(depth):
            op, const = self.pick_op(self.value(cur), allow_sum=max_in >= 2)
            args = [cur] + ([self.given(item, comp)] if op == "sum" else [])
            style = self.final_style(op) if final and step == depth - 1 else "rel"
            cur = self.derived(op, args, const, item, style, comp)
        return cur

    # -- rendering ---------------------------------------------------------------------------

    def ref(self, parent: str, child: str) -> str:
        return self.G.edges[parent, child].get("as") or self.subject(parent)

    def define(self, node: str) -> str | None:
        """The sentence that defines a node (None for answer nodes asked directly)."""
        d = self.G.nodes[node]
        if d["kind"] == "given":
            return self.book.say("given", a=d["subject"], n=d["value"], item=noun(d["item"], d["value"]))
        refs = [self.ref(a, node) for a in d["args"]]
        counted = d["op"] in ("add", "sub")
        const = d["const"] or 0
        item = noun(d["item"], d["const"]) if counted else d["item"]
        slots = dict(a=refs[0], b=d["subject"], c=d["const"], times=TIMES.get(const, ""),
                     grows=GROWS.get(const, ""), item=item, alist=name_list(refs))
        if d["style"] == "change":
            return self.book.say(f"chg.{d['op']}", **slots)
        if d["style"] == "rel":
            return self.book.say("rel.sum" if d["op"] == "sum" else f"rel.{d['op']}", **slots)
        return None

    def ask(self, node: str) -> str:
        d = self.G.nodes[node]
        refs = [self.ref(a, node) for a in d["args"]]
        if d["style"] == "change":
            return self.book.say("ask.now", a=d["subject"], item=d["item"])
        if d["style"] == "ask_sum":
            return self.book.say("ask.sum", alist=name_list(refs), item=d["item"])
        if d["style"] == "ask_diff":
            return self.book.say("ask.diff", a=refs[0], b=refs[1], item=d["item"])
        return self.book.say("ask", a=d["subject"], item=d["item"])

    def claim(self, node: str, wrong: int) -> str:
        d = self.G.nodes[node]
        refs = [self.ref(a, node) for a in d["args"]]
        key = {"change": "claim.now", "ask_sum": "claim.sum", "ask_diff": "claim.diff"}.get(d["style"],
                                                                                              "claim")
        return self.book.say(key, a=refs[0] if d["style"] == "ask_diff" else d["subject"],
                             b=refs[-1], alist=name_list(refs), n=wrong, item=noun(d["item"], wrong))

    def narrate(self, nodes: list[str], answer: str, shuffle: bool = False, filler: int = 0) -> str:
        """A word problem: defining sentences (attack notes right after their sub-task), optional
        shuffling and haystack filler, then the question."""
        free: list[list[str]] = []
        pinned: list[list[str]] = []
        for node in nodes:
            sentence = self.define(node)
            unit = [sentence] if sentence else []
            wrong = self.G.nodes[node]["wrong"]
            if wrong is not None:
                unit.append(self.book.say("note", claim=self.claim(node, wrong)))
            if not unit:
                continue
            (pinned if node == answer and self.G.nodes[node]["style"] != "rel" else free).append(unit)
        if shuffle:
            self.rng.shuffle(free)
        units = free + pinned
        for _ in range(filler):
            units.insert(self.rng.randint(0, len(units)), [self.filler()])
        return " ".join(s for unit in units for s in unit) + " " + self.ask(answer)

    def filler(self) -> str:
        r = self.rng
        hobby, hobbying = r.choice(HOBBIES)
        return self.book.say("filler", x=self.names.take(), y=self.names.take(), hobby=hobby,
                             hobbying=hobbying, city=r.choice(CITIES), place=r.choice(PLACES),
                             h=r.randint(7, 11), k=r.randint(2, 30))

    def expr(self, node: str, top: bool = True) -> str:
        """Bare arithmetic for a tree-shaped component: ``(3 plus 4) times 2``."""
        d = self.G.nodes[node]
        if d["kind"] == "given":
            return str(d["value"])
        parts = [self.expr(a, top=False) for a in d["args"]]
        c = d["const"]
        text = {
            "add": lambda: f"{parts[0]} plus {c}", "sub": lambda: f"{parts[0]} minus {c}",
            "mul": lambda: f"{parts[0]} times {c}", "half": lambda: f"half of {parts[0]}",
            "sum": lambda: " plus ".join(parts), "diff": lambda: f"{parts[0]} minus {parts[1]}",
        }[d["op"]]()
        return text if top else f"({text})"

    def component_text(self, answer: str, style: str, shuffle: bool) -> str:
        if style == "bare":
            return self.book.say("bare", expr=self.expr(answer))
        comp = self.G.nodes[answer]["comp"]
        nodes = [n for n, d in self.G.nodes(data=True) if d["comp"] == comp]
        return self.narrate(nodes, answer, shuffle=shuffle)


# ----------------------------------------------------------------------------- instances
