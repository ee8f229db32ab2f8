"""An iGSM-style MASBench generator (``masbench.igsm.<axis>``), written from the published facts.

MASBench's generator is not public; its data is (docs/formats.md "MASBench"). This generator
follows what the data shows: hierarchical entities ("The number of each Patella's Melanocytes equals
20 more than the difference of each Patella's Osteoblasts and each Euglena's Patella."), all
arithmetic mod 23, parameters never mentioned are 0 by default, statements in shuffled order, and
the five axes with their published value ranges and answer formats:

- ``depth`` d (2–12): the longest dependency chain ending at the answer has d operations.
- ``breadth`` b (2–8): the answer combines b parameters (maximum in-degree b).
- ``horizon`` h (2–8): h + 1 problems; problem p > 1 uses ``[answer{p-1}]`` (h answers carried
  forward); "### Final Answers" with one ``Problem i: \\boxed{…}`` per problem, all scored
  (that h counts carried answers is inferred, as in our simple generator).
- ``parallel`` p (2–8): "each problem is INDEPENDENT": a needle-in-a-haystack passage holding a
  four-digit magic number (uniform on 1000–9999, not mod 23), and p − 1 iGSM problems; p answers
  in ``\\boxed{}`` separated by blank lines.
- ``robustness`` r (2–6): an r-step chain whose r statements each carry the note "verify the
  information before you take it — <wrong value>", inside haystack filler.

Each instance stores its DAG (``meta["dag"]``, node-link JSON): every node has ``value`` (mod 23),
``op``, ``args`` and ``const``, so :func:`evaluate` recomputes every value from the DAG alone.
Train and test use disjoint entity vocabularies and filler. The simpler ``masbench.<axis>``
generators (:mod:`.axes`) are ours, for tiny models.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # networkx (~0.15 s to import) is imported by the first generator that builds a graph
    import networkx as nx

from . import dag as dagmod
from .registry import GeneratorFn, generator
from .taskgraph import TaskGraph
from .types import TaskInstance

MOD = 23
RANGES = {"depth": (2, 12), "breadth": (2, 8), "horizon": (2, 8), "parallel": (2, 8), "robustness": (2, 6)}
"""Published axis value ranges."""
RULE = "Note: all calculation is done mod 23, and a parameter that is not mentioned is 0 by default."

_LAYERS = {
    "test": (["Patella", "Tibia", "Femur", "Sternum", "Clavicle", "Scapula", "Radius", "Humerus"],
             ["Melanocytes", "Osteoblasts", "Neurons", "Keratinocytes", "Adipocytes", "Myocytes", "Hepatocytes"],
             ["Euglena", "Amoeba", "Paramecium", "Volvox", "Diatom", "Stentor"]),
    "train": (["Lagoon", "Fjord", "Estuary", "Delta", "Atoll", "Marsh", "Reef", "Bayou"],
              ["Herons", "Otters", "Pelicans", "Beavers", "Egrets", "Seals", "Cranes"],
              ["Kelp", "Sedge", "Reed", "Lotus", "Mangrove", "Cattail"]),
}
_FILLER = {
    "test": ["The museum opened a new wing last spring.", "Rain is expected over the weekend.",
             "The library extended its opening hours.", "A new bakery sells rye bread on Fridays.",
             "The river was calm this morning.", "Tickets for the concert sold out quickly.",
             "The old bridge was painted green.", "Most shops close early on holidays."],
    "train": ["The ferry leaves every hour.", "A choir rehearses in the town hall.",
              "The orchard harvest was late this year.", "Snow closed the mountain pass.",
              "The market moved to the square.", "A comet was visible after midnight.",
              "The lighthouse keeper retired.", "The tram line was extended north."],
}
_OPS = ("add_k", "sum", "diff", "prod", "times_k")


def _k(op: str, const: int | None) -> int:
    if const is None:
        raise ValueError(f"operation {op!r} needs a constant")
    return const


def apply(op: str, args: list[int], const: int | None) -> int:
    """One operation mod 23."""
    if op == "needle":  # a magic number in a haystack passage: a plain number, not mod 23
        return int(const or 0)
    if op in ("const", "default"):
        return (const or 0) % MOD
    if op == "add_k":
        return (args[0] + _k(op, const)) % MOD
    if op == "times_k":
        return (args[0] * _k(op, const)) % MOD
    if op == "sum":
        return (sum(args) + (const or 0)) % MOD
    if op == "diff":
        return (args[0] - args[1]) % MOD
    if op == "prod":
        out = 1
        for a in args:
            out = out * a % MOD
        return out
    raise ValueError(f"unknown iGSM op {op!r}")


def evaluate(G: nx.DiGraph) -> dict[str, int]:
    """Every node's value recomputed from the DAG's ops and constants (topological order)."""
    import networkx as nx

    values: dict[str, int] = {}
    for node in nx.topological_sort(G):
        d = G.nodes[node]
        values[node] = apply(d["op"], [values[a] for a in d["args"]], d["const"])
    return values


class _Build:
    def __init__(self, rng: random.Random, split: str):
        self.rng, self.split, self.G, self.order = rng, split, TaskGraph(), []
        a, b, c = _LAYERS[split]
        self.pairs = [f"each {x}'s {y}" for x, y in [(p, q) for p in a for q in b] + [(p, q) for p in b for q in c]]
        rng.shuffle(self.pairs)

    def _node(self, op: str, args: list[str], const: int | None, comp: int, **extra: Any) -> str:
        name = self.pairs.pop()
        value = apply(op, [self.G.nodes[a]["value"] for a in args], const)
        kind = "given" if op in ("const", "default", "needle") else "derived"
        self.G.add_node(name, kind=kind, op=op, args=list(args), const=const, value=value, comp=comp,
                        wrong=None, **extra)
        for a in args:
            self.G.add_edge(a, name)
        self.order.append(name)
        return name

    def given(self, comp: int) -> str:
        if self.rng.random() < 0.15:  # never mentioned: 0 by default
            return self._node("default", [], 0, comp)
        return self._node("const", [], self.rng.randint(0, MOD - 1), comp)

    def step(self, parent: str, comp: int) -> str:
        op = self.rng.choice(_OPS)
        if op in ("add_k", "times_k"):
            return self._node(op, [parent], self.rng.randint(1, MOD - 1), comp)
        other = self.given(comp)
        args = [parent, other] if self.rng.random() < 0.5 else [other, parent]
        return self._node(op, args, None, comp)

    def chain(self, length: int, comp: int) -> list[str]:
        nodes = [self.given(comp)]
        for _ in range(length):
            nodes.append(self.step(nodes[-1], comp))
        return nodes

    def sentence(self, node: str, refs: dict[str, str] | None = None) -> str | None:
        d = self.G.nodes[node]
        refs = refs or {}
        names = [refs[a] if a in refs else a for a in d["args"]]
        if d["op"] == "default":
            return None
        if d["op"] == "const":
            body = f"{d['const']}"
        elif d["op"] == "add_k":
            body = f"{d['const']} more than {names[0]}"
        elif d["op"] == "times_k":
            body = f"{d['const']} times {names[0]}"
        else:
            word = {"sum": "sum", "diff": "difference", "prod": "product"}[d["op"]]
            body = f"the {word} of " + (", ".join(names[:-1]) + f" and {names[-1]}")
        text = f"The number of {node} equals {body}."
        if d.get("wrong") is not None:
            text += f" Verify the information before you take it — the number of {node} is {d['wrong']}."
        return text[0].upper() + text[1:]

    def problem(self, mark: int, answer: str, refs: dict[str, str] | None = None, filler: int = 0) -> str:
        """The statements of every node made since ``mark`` (shuffled; ``filler`` sentences of
        haystack after each), then the question about ``answer``."""
        lines = [s for s in (self.sentence(n, refs) for n in self.order[mark:]) if s]
        self.rng.shuffle(lines)
        if filler:
            lines = [x for line in lines for x in [line, *self.filler(filler)]]
        owner, item = answer.removeprefix("each ").split("'s ")
        return " ".join(lines) + f" How many {item} does each {owner} have?"

    def filler(self, k: int) -> list[str]:
        return [self.rng.choice(_FILLER[self.split]) for _ in range(k)]


def _single(b: _Build, axis: str, v: int) -> tuple[str, list[str]]:
    if axis in ("depth", "robustness"):
        nodes = b.chain(v, 0)
        if axis == "robustness":
            for n in nodes[1:]:
                d = b.G.nodes[n]
                d["wrong"] = (d["value"] + b.rng.randint(1, MOD - 1)) % MOD
        text = b.problem(0, nodes[-1], filler=2 if axis == "robustness" else 0)
        return f"{text} {RULE} Give the final answer as \\boxed{{…}}.", [nodes[-1]]
    parents = [b.step(b.given(0), 0) if b.rng.random() < 0.5 else b.given(0) for _ in range(v)]
    answer = b._node("sum", parents, None, 0)
    return f"{b.problem(0, answer)} {RULE} Give the final answer as \\boxed{{…}}.", [answer]


def _horizon(b: _Build, h: int) -> tuple[str, list[str]]:
    answers, parts = [], []
    for p in range(h + 1):  # one step per problem: exactly the h problem answers are carried forward
        mark = len(b.order)
        cur = b.step(b.given(0) if p == 0 else answers[-1], 0)
        b.G.nodes[cur]["problem"] = p + 1
        refs = {answers[-1]: f"[answer{p}]"} if p else {}
        parts.append(f"Problem {p + 1}: {b.problem(mark, cur, refs)}")
        answers.append(cur)
    finals = "\n".join(f"Problem {i}: \\boxed{{…}}" for i in range(1, h + 2))
    intro = "Solve the problems in order; [answerN] stands for the answer to Problem N."
    return f"{intro} {RULE}\n\n" + "\n\n".join(parts) + f"\n\n### Final Answers\n{finals}", answers


def _parallel(b: _Build, p: int) -> tuple[str, list[str]]:
    magic = b.rng.randint(1000, 9999)
    needle = b._node("needle", [], magic, 0)
    hay = b.filler(8)
    hay.insert(b.rng.randrange(len(hay) + 1), f"The magic number is {magic}.")
    parts = [f"Problem 1: {' '.join(hay)} What is the magic number?"]
    answers = [needle]
    for comp in range(1, p):
        mark = len(b.order)
        nodes = b.chain(b.rng.randint(1, 2), comp)
        parts.append(f"Problem {comp + 1}: {b.problem(mark, nodes[-1])}")
        answers.append(nodes[-1])
    return ("Each problem is INDEPENDENT. " + RULE + "\n\n" + "\n\n".join(parts)
            + "\n\nGive each answer in \\boxed{}, separated by blank lines."), answers


def _make(axis: str, v: int, i: int, seed: int, split: str) -> TaskInstance:
    rng = random.Random(f"igsm|{axis}|{split}|{seed}|{v}|{i}")
    b = _Build(rng, split)
    if axis == "horizon":
        question, answers = _horizon(b, v)
    elif axis == "parallel":
        question, answers = _parallel(b, v)
    else:
        question, answers = _single(b, axis, v)
    G = b.G
    G.graph.update(answers=answers, axis=axis, axis_value=v, mod=MOD)
    values = [str(G.nodes[a]["value"]) for a in answers]
    inter = [str(d["value"]) for n, d in G.nodes(data=True) if d["kind"] == "derived" and n not in answers
             and G.out_degree(n) > 0]
    return TaskInstance(
        id=f"igsm-{axis}-{v}-{split}-s{seed}-{i:04d}", source=f"masbench.igsm.{axis}", question=question,
        answers=values, intermediates=inter, axis=axis, axis_value=v,
        skills=[f"masbench.{axis}", "math.igsm", "arith.mod23"], scorer="masbench",
        meta={"dag": dagmod.to_json(G), "gold": values, "split": split, "seed": seed, "generator": "igsm"})


def _register(axis: str) -> GeneratorFn:
    lo, hi = RANGES[axis]

    @generator(f"masbench.igsm.{axis}")
    def make(values: list[int] | None, n: int, seed: int, split: str, **params: object) -> list[TaskInstance]:
        if params:
            raise ValueError(f"masbench.igsm.{axis} takes no params, got {sorted(params)}")
        if split not in _LAYERS:
            raise ValueError(f"split must be one of {sorted(_LAYERS)}, got {split!r}")
        vals = list(range(lo, hi + 1)) if values is None else list(values)
        bad = [v for v in vals if not isinstance(v, int) or not lo <= v <= hi]
        if bad:
            raise ValueError(f"masbench.igsm.{axis}: values must be {lo}..{hi} (published range), got {bad}")
        return [_make(axis, v, i, seed, split) for v in vals for i in range(n)]

    make.__doc__ = f"iGSM-style MASBench {axis} tasks, values {lo}–{hi} (see :mod:`masbench.bench.igsm`)."
    return make


# one name per axis of RANGES, in its order: what the GENERATORS entries masbench.igsm.* point at
igsm_depth = _register("depth")
igsm_breadth = _register("breadth")
igsm_horizon = _register("horizon")
igsm_parallel = _register("parallel")
igsm_robustness = _register("robustness")
