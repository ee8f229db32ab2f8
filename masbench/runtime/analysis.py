"""Static analysis of a design, before anything runs: resolve agents and references, build the
dependency graph (networkx), and report every problem at its place in the YAML.

Caught: unknown agents, nodes, references, fields, params, python functions and sub-designs;
cycles other than declared loops; nodes whose value never reaches the output; a missing or
ambiguous output; parallel writes into a channel with no reducer; bad repeat / map / loop
settings. The compiler builds its plan from the same analysis, so what validates is what runs.
"""

from __future__ import annotations

import contextvars
import re
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from ..spec.agent import AgentSpec
from ..spec.design import DesignSpec, NodeSpec
from ..spec.problems import Problem, SpecError, field_name
from ..spec.yamlpos import Located
from .pyfuncs import PYTHON_FUNCS
from .template import refs as template_refs
from .template import substitute_params

_WALKING: contextvars.ContextVar[bool] = contextvars.ContextVar("masbench_design_walk", default=False)
RESERVED = frozenset({"question", "inputs", "item", "index", "candidates", "round", "history"})
"""Names with a built-in meaning in templates; nodes and params may not use them."""
VAL_FIELDS = frozenset({"answer", "text"})
MAX_REPEAT = 256
MAX_ROUNDS = 100
_UNTIL = re.compile(r"^\s*(?:(?P<not>not)\s+)?(?P<node>[A-Za-z_][\w\-]*)(?:\.(?P<field>[A-Za-z_][\w\-]*))?"
                    r"(?:\s+contains\s+(?P<word>\S.*?))?\s*$")


@dataclass
class Until:
    """A parsed loop stop condition."""

    node: str | None
    field: str | None = None
    word: str | None = None
    negate: bool = False
    converged: bool = False


@dataclass
class NodeInfo:
    """One node, resolved."""

    name: str
    spec: NodeSpec
    path: tuple
    loop: str | None = None
    order: int = 0
    agent: AgentSpec | None = None
    fan: str | None = None
    k: int = 1
    map_src: tuple[str, str | None] | None = None
    map_param: list[Any] | None = None
    refs: list[tuple[str, str | None]] = field(default_factory=list)
    deps: set[str] = field(default_factory=set)
    ext: set[str] = field(default_factory=set)
    back: set[str] = field(default_factory=set)
    schema: dict[str, str] | None = None

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def key(self) -> str:
        """langgraph state key / display name (``loop.body`` inside loops)."""
        return f"{self.loop}.{self.name}" if self.loop else self.name


@dataclass
class LoopInfo:
    """A loop node's settings and body."""

    name: str
    max_rounds: int
    until: Until | None
    init: str | None
    output: str
    body: dict[str, NodeInfo]


class Analysis:
    """The resolved design. ``problems`` is empty when the design is valid."""

    def __init__(self, design: DesignSpec, located: Located | None, library: Any, params: dict[str, Any] | None = None,
                 *, check_refs: bool = True):
        self.design = design
        self.located = located
        self.library = library
        self.check_refs = check_refs
        self.params: dict[str, Any] = {**design.params, **(params or {})}
        self.problems: list[Problem] = []
        self.top: dict[str, NodeInfo] = {}
        self.loops: dict[str, LoopInfo] = {}
        self.channels: dict[str, list[str]] = {}
        self.graph = nx.DiGraph()
        self.order: list[str] = []
        if params:
            for p in params:
                if p not in design.params:
                    self.problem((), "params", f"unknown param {p!r} (design {design.name!r} has: "
                                               f"{', '.join(design.params) or 'none'})")
        self._run()

    # ----- problems ------------------------------------------------------------------------------
    def problem(self, path: tuple, field: str | tuple, msg: str) -> None:
        fname = field if isinstance(field, str) else field_name(field)
        if self.located is not None:
            line, col = self.located.locate(path)
            file = self.located.file
        else:
            line, col, file = 1, 1, f"<design {self.design.name}>"
        p = Problem(file, line, col, fname, msg)
        if p not in self.problems:
            self.problems.append(p)

    def _at(self, info: NodeInfo, sub: tuple, msg: str) -> None:
        base = ("nodes", info.loop, "loop", "nodes", info.name) if info.loop else ("nodes", info.name)
        self.problem(base + sub, base, msg)

    # ----- agents --------------------------------------------------------------------------------
    def agent(self, ref: str | AgentSpec | None) -> AgentSpec | None:
        if ref is None or isinstance(ref, AgentSpec):
            return ref
        if ref in self.design.agents:
            return self.design.agents[ref]
        try:
            if self.library is not None and self.library.has("agent", ref):
                return self.library.agent(ref)
        except SpecError:
            return None
        return None

    # ----- the pass ------------------------------------------------------------------------------
    def _run(self) -> None:
        d = self.design
        for p in self.params:
            if p in RESERVED:
                self.problem(("params", p), ("params", p), f"param name {p!r} is reserved in templates")
            elif p in d.nodes:
                self.problem(("params", p), ("params", p), f"ambiguous reference: {p!r} is both a param and a node")
        for i, (name, spec) in enumerate(d.nodes.items()):
            self.top[name] = self._node(name, spec, ("nodes", name), None, i)
        for name, info in self.top.items():
            if info.spec.loop is not None:
                self._loop(info)
        self._channels()
        for info in self.top.values():
            self._resolve_refs(info)
        for lp in self.loops.values():
            for b in lp.body.values():
                self._resolve_refs(b)
            self._check_body(lp)
        self._graph()
        self._output()

    def _node(self, name: str, spec: NodeSpec, path: tuple, loop: str | None, order: int) -> NodeInfo:
        info = NodeInfo(name, spec, path, loop, order)
        if name in RESERVED:
            self._at(info, (), f"node name {name!r} is reserved in templates (question, inputs, item, index, "
                               "candidates, round, history)")
        kind = spec.kind
        if kind == "agent":
            info.agent = self.agent(spec.agent)
            if info.agent is None and self.check_refs:
                self._at(info, ("agent",), f"unknown agent {spec.agent!r} (not in this design's agents nor in any "
                                           "agents/ folder)")
        elif kind == "select":
            info.agent = self.agent(spec.select)
            if info.agent is None and self.check_refs:
                self._at(info, ("select",), f"unknown agent {spec.select!r} for select")
            if not spec.inputs:
                self._at(info, (), "select needs candidates: give `from: [nodes...]`")
        elif kind == "majority":
            if not [x for x in spec.inputs if x != "question"]:
                self._at(info, (), "a majority vote needs `from:` naming the nodes whose answers it counts")
        elif kind == "python":
            if spec.python not in PYTHON_FUNCS:
                self._at(info, ("python",), f"unregistered python function {spec.python!r} (registered: "
                                            f"{', '.join(sorted(PYTHON_FUNCS))})")
        elif kind == "design":
            self._subdesign(info)
        elif kind == "loop" and loop is not None:
            self._at(info, ("loop",), "loops cannot be nested")
        if spec.system is not None and kind not in ("agent", "select"):
            self._at(info, ("system",), "a system message applies to agent and select nodes only")
        if spec.output is not None and kind not in ("agent", "select"):
            self._at(info, ("output",), "structured output applies to agent and select nodes only")
        out = spec.output or (info.agent.output if info.agent is not None else None)
        if out is not None and kind in ("agent", "select"):
            info.schema = dict(out.json_)
        if spec.into is not None and loop is not None:
            self._at(info, ("into",), "`into` is not supported inside a loop body")
        # fan-out
        if spec.repeat is not None:
            info.fan = "repeat"
            try:
                k = substitute_params(spec.repeat, self.params)
                k = int(k)
                if not 1 <= k <= MAX_REPEAT:
                    raise ValueError
                info.k = k
            except KeyError as exc:
                self._at(info, ("repeat",), f"unknown param {exc.args[0]!r} in repeat")
            except (TypeError, ValueError):
                self._at(info, ("repeat",), f"repeat must be an integer in 1..{MAX_REPEAT} (got {spec.repeat!r})")
        elif spec.map is not None:
            info.fan = "map"
            src = spec.map.strip()
            try:
                v = substitute_params(src, self.params)
            except KeyError as exc:
                self._at(info, ("map",), f"unknown param {exc.args[0]!r} in map")
                v = None
            if v is not None and not (isinstance(v, str) and v == src):
                if isinstance(v, (list, tuple)):
                    info.map_param = list(v)
                else:
                    self._at(info, ("map",), f"map over param {src}: not a list (got {type(v).__name__})")
            elif isinstance(v, str):
                if v in self.params:
                    pv = self.params[v]
                    if isinstance(pv, (list, tuple)):
                        info.map_param = list(pv)
                    else:
                        self._at(info, ("map",), f"map over param {v!r}: not a list")
                else:
                    m = re.fullmatch(r"([A-Za-z_][\w\-]*)(?:\.([A-Za-z_][\w\-]*))?", v)
                    if not m:
                        self._at(info, ("map",), f"map must be `node.field`, `node` or `{{param}}` (got {v!r})")
                    else:
                        info.map_src = (m.group(1), m.group(2))
        return info

    def _subdesign(self, info: NodeInfo) -> None:
        name = info.spec.design
        lib = self.library
        if lib is None or not lib.has("design", name):
            if self.check_refs:
                self._at(info, ("design",), f"unknown design {name!r}")
            return
        if name == self.design.name:
            if self.check_refs:
                self._at(info, ("design",), "a design cannot call itself")
            return
        if _WALKING.get():
            return  # nested load during another design's recursion walk: that walk reports cycles
        # transitive recursion: does `name` (eventually) call this design?
        token = _WALKING.set(True)
        try:
            self._walk(info, name)
        finally:
            _WALKING.reset(token)

    def _walk(self, info: NodeInfo, name: str) -> None:
        lib = self.library
        seen: set[str] = set()
        stack = [(name, [name])]
        while stack:
            cur, chain = stack.pop()
            if cur in seen:
                continue
            seen.add(cur)
            try:
                spec = lib.design(cur)
            except SpecError:
                if self.check_refs:
                    self._at(info, ("design",), f"design {cur!r} is invalid")
                return
            for sub in _design_refs(spec):
                if sub == self.design.name:
                    self._at(info, ("design",), "cycle of sub-designs: " + " → ".join([self.design.name] + chain + [sub]))
                    return
                stack.append((sub, chain + [sub]))
        try:
            sub_spec = lib.design(name)
        except SpecError:
            return
        for p in info.spec.params:
            if p not in sub_spec.params:
                self._at(info, ("params", p), f"design {name!r} has no param {p!r} (has: "
                                              f"{', '.join(sub_spec.params) or 'none'})")

    def _loop(self, info: NodeInfo) -> None:
        spec = info.spec.loop
        assert spec is not None
        L = info.name
        rounds = 1
        try:
            r = int(substitute_params(spec.max_rounds, self.params))
            if not 1 <= r <= MAX_ROUNDS:
                raise ValueError
            rounds = r
        except KeyError as exc:
            self._at(info, ("loop", "max_rounds"), f"unknown param {exc.args[0]!r} in max_rounds")
        except (TypeError, ValueError):
            self._at(info, ("loop", "max_rounds"), f"max_rounds must be an integer in 1..{MAX_ROUNDS} "
                                                   f"(got {spec.max_rounds!r})")
        body: dict[str, NodeInfo] = {}
        for i, (bname, bspec) in enumerate(spec.nodes.items()):
            if bname in self.design.nodes:
                self.problem(("nodes", L, "loop", "nodes", bname), ("nodes", L, "loop", "nodes", bname),
                             f"ambiguous reference: body node {bname!r} has the name of a top-level node")
            body[bname] = self._node(bname, bspec, ("nodes", L, "loop", "nodes", bname), L, i)
        until = None
        if spec.until is not None:
            u = spec.until.strip()
            if u == "converged":
                until = Until(None, converged=True)
            else:
                m = _UNTIL.match(u)
                if not m or (m.group("field") and m.group("word")) or (m.group("not") and m.group("word")):
                    self._at(info, ("loop", "until"), f"cannot read until {u!r} (use `node.field`, `not node.field`, "
                                                      "`node contains WORD` or `converged`)")
                else:
                    until = Until(m.group("node"), m.group("field"), m.group("word"), bool(m.group("not")))
                    if until.node not in body:
                        self._at(info, ("loop", "until"), f"until names {until.node!r}, which is not a node of this "
                                                          "loop's body")
                        until = None
                    elif until.field and until.field not in VAL_FIELDS:
                        sch = body[until.node].schema
                        if sch is not None and until.field not in sch:
                            self._at(info, ("loop", "until"), f"until reads {until.node}.{until.field}, but "
                                     f"{until.node!r} has no field {until.field!r} (fields: {', '.join(sch)})")
                        elif sch is None and body[until.node].kind not in ("python", "design"):
                            self._at(info, ("loop", "until"), f"until reads {until.node}.{until.field}, but "
                                     f"{until.node!r} has no structured output (use `{until.node} contains WORD`)")
        if spec.output not in body:
            self._at(info, ("loop", "output"), f"missing output: loop output {spec.output!r} is not a node of its body "
                                               f"(body: {', '.join(body)})")
        if spec.init is not None and spec.init not in self.design.nodes:
            self._at(info, ("loop", "init"), f"unknown node {spec.init!r} in init")
        elif spec.init == L:
            self._at(info, ("loop", "init"), "a loop cannot start from itself")
        self.loops[L] = LoopInfo(L, rounds, until, spec.init, spec.output, body)

    def _channels(self) -> None:
        d = self.design
        for name, info in self.top.items():
            if info.spec.into is not None:
                self.channels.setdefault(info.spec.into, []).append(name)
        for ch, writers in self.channels.items():
            info = self.top[writers[0]]
            if ch in d.nodes or ch in self.params or ch in RESERVED:
                self._at(info, ("into",), f"channel name {ch!r} clashes with a node, param or reserved name")
                continue
            if len(writers) > 1 and ch not in d.reducers:
                for w in writers:
                    self._at(self.top[w], ("into",), f"parallel writes: channel {ch!r} is written by "
                             f"{', '.join(writers)} with no reducer (declare `reducers: {{{ch}: append}}`)")
        for ch in d.reducers:
            if ch not in self.channels:
                self.problem(("reducers", ch), ("reducers", ch), f"reducer for {ch!r}, which no node writes "
                                                                f"(`into: {ch}`)")

    # ----- references ----------------------------------------------------------------------------
    def _templates(self, info: NodeInfo) -> list[tuple[tuple, str | None]]:
        """(yaml sub-path, template text) of every template the node renders."""
        out: list[tuple[tuple, str | None]] = []
        a = info.agent
        if info.spec.prompt is not None:
            out.append((("prompt",), info.spec.prompt))
        elif a is not None and info.kind in ("agent", "select"):
            out.append((("agent" if info.kind == "agent" else "select",), a.prompt))
        if info.spec.system is not None:
            out.append((("system",), info.spec.system))
        elif a is not None and info.kind in ("agent", "select"):
            out.append((("agent" if info.kind == "agent" else "select",), a.system))
        return out

    def _fields_of(self, name: str, info_ctx: NodeInfo) -> set[str] | None:
        """Fields a reference to ``name`` may use (None: any)."""
        lp = self.loops.get(info_ctx.loop) if info_ctx.loop else None
        target: NodeInfo | None = None
        if lp is not None and name in lp.body:
            target = lp.body[name]
        elif name in self.top:
            target = self.top[name]
        if name in self.loops:
            return set(VAL_FIELDS) | {"history"}
        if target is None:
            return None if name in self.channels else set(VAL_FIELDS)
        if target.kind in ("python",):
            return None
        if target.schema is not None:
            return set(VAL_FIELDS) | set(target.schema)
        return set(VAL_FIELDS)

    def _check_ref(self, info: NodeInfo, name: str, fld: str | None, sub: tuple, what: str) -> bool:
        """Is ``name[.fld]`` visible from ``info``? Reports a problem if not."""
        lp = self.loops.get(info.loop) if info.loop else None
        if name in ("question", "inputs"):
            ok = fld is None
        elif name in ("item", "index"):
            if info.fan is None:
                self._at(info, sub, f"{what} uses {{{name}}}, which only exists in repeat/map nodes")
                return False
            ok = fld is None or name == "item"
        elif name == "candidates":
            if info.kind != "select":
                self._at(info, sub, f"{what} uses {{candidates}}, which only exists in select nodes")
                return False
            ok = fld is None
        elif name in ("round", "history"):
            if lp is None:
                self._at(info, sub, f"{what} uses {{{name}}}, which only exists inside a loop body")
                return False
            ok = fld is None
        elif name in self.params:
            pv = self.params[name]
            ok = fld is None or (isinstance(pv, dict) and fld in pv)
        elif (lp is not None and (name in lp.body or name == lp.name)) or name in self.top or name in self.channels:
            fields = self._fields_of(name, info)
            if fld is not None and fields is not None and fld not in fields:
                self._at(info, sub, f"{what} reads {name}.{fld}, but {name!r} has no field {fld!r} "
                                    f"(fields: {', '.join(sorted(fields))})")
                return True  # the node itself is known: keep the dependency
            if name == info.name and info.loop is None:
                self._at(info, sub, f"cycle: node {name!r} reads itself (only loop bodies may read their "
                                    "previous round)")
                return False
            return True
        else:
            hint = ""
            for L, l2 in self.loops.items():
                if name in l2.body:
                    hint = f" ({name!r} is inside loop {L!r}; read the loop's value {{{L}}} instead)"
            self._at(info, sub, f"unknown reference {{{name}{'.' + fld if fld else ''}}} in {what}: no node, "
                                f"param or built-in of that name{hint}")
            return False
        if not ok:
            self._at(info, sub, f"{what} reads {name}.{fld}: {name!r} has no such field")
        return ok

    def _resolve_refs(self, info: NodeInfo) -> None:
        spec = info.spec
        found: list[tuple[str, str | None]] = []
        for i, entry in enumerate(spec.inputs):
            m = re.fullmatch(r"([A-Za-z_][\w\-]*)(?:\.([A-Za-z_][\w\-]*))?", entry.strip())
            sub = ("from", i) if isinstance(spec.from_, list) else ("from",)
            if not m:
                self._at(info, sub, f"from entry {entry!r} must be a node name (or node.field)")
                continue
            if m.group(1) in ("inputs", "item", "index", "candidates", "round", "history"):
                self._at(info, sub, f"from entry {entry!r} must name a node or question")
                continue
            if self._check_ref(info, m.group(1), m.group(2), sub, "from"):
                found.append((m.group(1), m.group(2)))
        for sub, text in self._templates(info):
            what = "prompt" if sub == ("prompt",) else "system" if sub == ("system",) else f"agent {info.agent.name!r}" if info.agent else "template"
            for name, fld in template_refs(text):
                if name in self.params and fld is None:
                    continue
                if self._check_ref(info, name, fld, sub, what):
                    found.append((name, fld))
        if info.map_src is not None:
            name, fld = info.map_src
            if self._check_ref(info, name, fld, ("map",), "map"):
                found.append((name, fld))
                self._check_map(info, name, fld)
        info.refs = found
        lp = self.loops.get(info.loop) if info.loop else None
        for name, _ in found:
            if name in ("question", "inputs", "item", "index", "candidates", "round", "history") or name in self.params:
                continue
            if lp is not None:
                if name in lp.body:
                    if lp.body[name].order < info.order:
                        info.deps.add(name)
                    else:
                        info.back.add(name)
                    continue
                if name == lp.name:
                    continue
                info.ext.update(self._producers(name))
            else:
                info.deps.update(self._producers(name))

    def _producers(self, name: str) -> list[str]:
        if name in self.channels and name not in self.top:
            return list(self.channels[name])
        return [name]

    def _check_map(self, info: NodeInfo, name: str, fld: str | None) -> None:
        lp = self.loops.get(info.loop) if info.loop else None
        target = lp.body.get(name) if lp is not None and name in lp.body else self.top.get(name)
        if target is None:
            return
        if fld is None:
            if target.fan is None and target.kind not in ("python", "loop", "design") and name not in self.channels:
                self._at(info, ("map",), f"map over {name!r}: not a list (map a list field such as {name}.items, "
                                         "or a repeat/map node)")
        elif target.schema is not None and fld in target.schema and not target.schema[fld].startswith("list"):
            self._at(info, ("map",), f"map over {name}.{fld}: field type is {target.schema[fld]}, not a list")

    def _check_body(self, lp: LoopInfo) -> None:
        read: set[str] = set()
        for b in lp.body.values():
            read |= b.deps | b.back
        for b in lp.body.values():
            if b.name not in read and b.name != lp.output and (lp.until is None or lp.until.node != b.name):
                self._at(b, (), f"unreachable: nothing in loop {lp.name!r} reads {b.name!r} and it is neither the "
                                "loop's output nor its until node")

    # ----- graph ---------------------------------------------------------------------------------
    def _graph(self) -> None:
        g = self.graph
        for name, info in self.top.items():
            g.add_node(name)
            deps = set(info.deps)
            if name in self.loops:
                lp = self.loops[name]
                for b in lp.body.values():
                    deps |= b.ext
                if lp.init:
                    deps.add(lp.init)
                deps.discard(name)
                info.deps = deps
            for dep in deps:
                if dep in self.top:
                    g.add_edge(dep, name)
        cycles = []
        try:
            for c in nx.simple_cycles(g):
                cycles.append(c)
                if len(cycles) >= 5:
                    break
        except nx.NetworkXException:  # pragma: no cover
            pass
        for c in cycles:
            c = _rotate(c)
            self._at(self.top[c[0]], (), "cycle: " + " → ".join(c + [c[0]]) +
                     " (only declared `loop:` nodes may repeat)")
        if not cycles:
            self.order = list(nx.lexicographical_topological_sort(g, key=lambda n: self.top[n].order))
        else:
            self.order = list(self.top)

    def _output(self) -> None:
        d = self.design
        out = d.output
        if out not in self.top:
            if out in self.channels:
                if len(self.channels[out]) > 1:
                    self.problem(("output",), "output", f"ambiguous output: channel {out!r} has several writers "
                                 f"({', '.join(self.channels[out])}); add a vote or select node and name it")
                    return
                out = self.channels[out][0]
            else:
                where = next((L for L, lp in self.loops.items() if out in lp.body), None)
                msg = (f"output {out!r} is inside loop {where!r}; name the loop ({where!r}) instead" if where else
                       f"missing output: no node named {out!r} (nodes: {', '.join(self.top)})")
                self.problem(("output",), "output", msg)
                return
        live = nx.ancestors(self.graph, out) | {out}
        for name, info in self.top.items():
            if name not in live:
                self._at(info, (), f"unreachable: {name!r} never reaches the output {out!r} (nothing downstream "
                                   "reads it; an extra final node makes the output ambiguous)")


def _rotate(c: list[str]) -> list[str]:
    i = c.index(min(c))
    return c[i:] + c[:i]


def _design_refs(spec: DesignSpec) -> list[str]:
    out: list[str] = []
    for n in spec.nodes.values():
        if n.design is not None:
            out.append(n.design)
        if n.loop is not None:
            for b in n.loop.nodes.values():
                if b.design is not None:
                    out.append(b.design)
    return out
