"""Compile a design into a langgraph ``StateGraph`` and run it on one task.

Graph shape (one langgraph node per design node, plus):
- a fan-out node (``repeat``/``map``) is fanned out with ``Send`` — one branch per sample / item —
  from its single upstream node, or from a ``<node>#send`` dispatcher when it waits on several;
  branches append ``(round, index, value)`` to a list-reducer key, so parallel writes are safe;
- a loop ``L`` becomes ``L#round`` (the round controller: start a round or exit), its body nodes
  ``L.<name>`` (inlined; the body's sinks lead back to ``L#round``), and ``L`` (the exit node,
  which writes the loop's value). That back edge is the only cycle, and it is bounded;
- several upstream nodes join with a waiting edge (``add_edge([a, b], c)``).

State holds one small key per node (its value); everything else (rounds, stop flags, tallies,
statuses) lives in the per-run :class:`~masbench.runtime.executor.Scope`, passed as langgraph's
runtime context. Graphs are compiled once per (design, params) and reused across tasks.
"""

from __future__ import annotations

import json
import operator
import re
import time
from typing import Annotated, Any, Callable, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from ..spec.agent import AgentSpec
from ..spec.design import DesignSpec
from ..spec.problems import SpecError
from ._deps import normalize_answer
from .analysis import Analysis, LoopInfo, NodeInfo
from .executor import (EMPTY, SEED_STRIDE, SKIP, Br, Env, Scope, Shared, Stats, guarded, hist_text,
                       render_inputs)
from .pyfuncs import PYTHON_FUNCS, majority_vote
from .template import compile_template, param_text, substitute_params
from .types import DesignResult, RunContext
from .values import OK, Val, fmt_data, pyfield, pyval, read, vtext

MAP_LIMIT = 64
"""Most items a ``map`` node fans out over (the rest are dropped, and that is recorded)."""

_OPS = {"agent": "agent", "majority": "majority", "select": "select", "python": "python", "design": "design",
        "loop": "loop"}


class Plan:
    """Everything one node needs at run time, resolved at compile time."""

    def __init__(self, info: NodeInfo):
        spec = info.spec
        self.info = info
        self.name = info.name
        self.key = info.key
        self.kind = info.kind
        self.fan = info.fan
        self.loop = info.loop
        self.order = info.order
        self.op = info.fan if info.fan else _OPS[info.kind]
        a: AgentSpec | None = info.agent
        self.agent = a
        self.agent_name = a.name if a is not None else (spec.python if spec.python else spec.design)
        self.model: str | None = None
        if a is not None:
            self.model = a.model if isinstance(a.model, str) else None
        self.max_tokens = spec.max_tokens or (a.max_tokens if a is not None else 0)
        self.temperature = spec.temperature if spec.temperature is not None else (a.temperature if a else None)
        self.schema = info.schema
        out = spec.output or (a.output if a is not None else None)
        self.retries = out.retries if out is not None else 0
        self.fields_desc = ", ".join(f"{k} ({t})" for k, t in (self.schema or {}).items())
        self.json_hint = ""
        self.skills = list(a.skills) if a is not None else []
        self.judge = bool(a is not None and a.judge)
        # answer extraction
        self.how: str | None = None
        self.field: str | None = None
        if a is not None and self.kind == "agent":
            ans = a.answer
            if self.schema is not None:
                fld = ans.field or next((f for f in ("answer", "final", "result") if f in self.schema), None)
                if fld is not None:
                    self.how, self.field = "json", fld
            else:
                self.how, self.field = ans.extract, ans.field
        self.prompt = None
        self.system = None
        self.extra_inputs: list[tuple[str, Callable]] = []
        self.input_texts: list[tuple[str, Callable]] = []
        self.py_args: list[Callable] = []
        self.input_vals: list[tuple[str, Callable]] = []
        self.pyfn = PYTHON_FUNCS.get(spec.python) if spec.python else None
        self.pykw: dict[str, Any] = {}
        self.sub: CompiledDesign | None = None
        self.until = None
        self.until_rx = None
        self.loop_cur: Callable | None = None
        self.items: Callable | None = None


class CompiledDesign:
    """A design compiled for one params set: the langgraph graph plus the node plans."""

    def __init__(self, design: DesignSpec, library: Any, params: dict[str, Any] | None = None,
                 _stack: tuple[str, ...] = ()):
        self.design = design
        self.library = library
        an = Analysis(design, None, library, params)
        if an.problems:
            raise SpecError(an.problems)
        self.analysis = an
        self.params = an.params
        self.name = design.name
        self.plans: dict[str, Plan] = {}
        self._stack = _stack + (design.name,)
        for info in an.top.values():
            self.plans[info.key] = Plan(info)
        for lp in an.loops.values():
            for b in lp.body.values():
                self.plans[b.key] = Plan(b)
        for p in self.plans.values():
            self._prepare(p)
        out = design.output
        if out not in an.top and out in an.channels:
            out = an.channels[out][0]
        self.output = out
        self.fan_keys = {k for k, p in self.plans.items() if p.fan} | set(an.channels)
        self.recursion_limit = self._recursion_bound()
        self.graph = self._build()
        # A design that is one plain agent node (CoT, every CoT-SC pool sample) runs that node's
        # body directly: the one-node graph would add langgraph's ~0.3 ms fixed cost per run and
        # nothing else (same body, same rows, same result).
        only = next(iter(self.plans.values())) if len(self.plans) == 1 else None
        self._direct = only if (only is not None and not an.loops and only.fan is None and only.loop is None
                                and only.op == "agent" and only.info.spec.into is None) else None

    # ----- getters -------------------------------------------------------------------------------
    def _val_getter(self, name: str, ctx: NodeInfo) -> Callable[[Env], Val | None]:
        an = self.analysis
        lp = an.loops.get(ctx.loop) if ctx.loop else None
        if lp is not None and name in lp.body:
            key = lp.body[name].key
            fan = lp.body[name].fan is not None
            return lambda e: read(e.state, key, fan)
        if lp is not None and name == lp.name:
            return self._loop_cur(lp)
        if name in an.top:
            fan = an.top[name].fan is not None
            return lambda e: read(e.state, name, fan)
        if name in an.channels:
            return lambda e: read(e.state, name, True)
        if name == "question":
            return lambda e: Val(text=e.sc.question)
        raise KeyError(name)  # pragma: no cover - analysis rejected it

    def _loop_cur(self, lp: LoopInfo) -> Callable[[Env], Val | None]:
        okey = lp.body[lp.output].key
        ofan = lp.body[lp.output].fan is not None
        init = lp.init
        if init is not None:
            ifan = self.analysis.top[init].fan is not None

            def cur(e: Env) -> Val | None:
                v = read(e.state, okey, ofan)
                return v if v is not None else read(e.state, init, ifan)
        else:
            def cur(e: Env) -> Val | None:
                return read(e.state, okey, ofan)
        return cur

    def _str_getter(self, name: str, field: str | None, info: NodeInfo, plan: Plan) -> Callable[[Env], str]:
        an = self.analysis
        if name == "question":
            return lambda e: e.sc.question
        if name == "item":
            def item(e: Env) -> str:
                it = e.br.item if e.br is not None else None
                if it is None or it is EMPTY or it is SKIP:
                    return ""
                if isinstance(it, Val):
                    return vtext(it, field)
                if field is not None and isinstance(it, dict):
                    return fmt_data(it.get(field))
                return fmt_data(it)
            return item
        if name == "index":
            return lambda e: str(e.br.i + 1) if e.br is not None else ""
        if name == "round":
            L = info.loop
            return lambda e: str(e.sc.rounds.get(L, 0))
        if name == "history":
            L = info.loop
            return lambda e: hist_text(e.sc, L)
        if name == "inputs":
            return lambda e: render_inputs(plan.input_texts, e)
        if name == "candidates":
            return lambda e: "\n\n".join(f"Candidate {i}:\n{c.text or fmt_data(c.data)}"
                                         for i, c in enumerate(e.cands or [], 1))
        if name in an.params:
            s = param_text(an.params[name].get(field) if field and isinstance(an.params[name], dict)
                           else an.params[name])
            return lambda e: s
        if field == "history" and name in an.loops and not (info.loop and name in an.loops[info.loop].body):
            return lambda e: hist_text(e.sc, name)
        vg = self._val_getter(name, info)
        if field is None:
            return lambda e: vtext(vg(e))
        return lambda e: vtext(vg(e), field)

    # ----- plans ---------------------------------------------------------------------------------
    def _prepare(self, p: Plan) -> None:
        info = p.info
        spec = info.spec
        an = self.analysis
        params = an.params
        # inputs (from)
        p.input_vals = []
        p.input_texts = []
        p.py_args = []
        for entry in spec.inputs:
            name, _, fld = entry.strip().partition(".")
            fld = fld or None
            label = "Question" if name == "question" else entry.strip().replace(".", " ")
            if info.loop is not None:
                lp0 = an.loops[info.loop]
                if name == info.loop:
                    label = "Current solution"
                elif name in lp0.body and lp0.body[name].order >= info.order:
                    label = f"{entry.strip()} (previous round)"
            if name == "question":
                p.input_vals.append((name, self._val_getter("question", info)))
                p.input_texts.append((label, lambda e: e.sc.question))
                p.py_args.append(lambda e: e.sc.question)
                continue
            vg = self._val_getter(name, info) if name not in an.params else \
                (lambda e, v=an.params[name]: Val(text=param_text(v), data=v))
            p.input_vals.append((name, vg))
            p.py_args.append((lambda e, vg=vg: pyval(vg(e))) if fld is None else
                             (lambda e, vg=vg, f=fld: pyfield(vg(e), f)))
            p.input_texts.append((label, self._str_getter(name, fld, info, p)))
        # templates
        a = p.agent
        resolve = lambda n, f: self._str_getter(n, f, info, p)  # noqa: E731
        referenced: set[str] = set()
        if p.kind in ("agent", "select"):
            text = spec.prompt if spec.prompt is not None else a.prompt  # type: ignore[union-attr]
            p.prompt = compile_template(text, params, resolve)
            referenced |= p.prompt.names
            system = spec.system if spec.system is not None else (a.system if a is not None else None)
            if system:
                p.system = compile_template(system, params, resolve)
                referenced |= p.system.names
            if p.schema is not None and "json" not in text.lower():
                p.json_hint = f"\n\nReply with only a JSON object with these fields: {p.fields_desc}."
        elif p.kind == "design" and spec.prompt is not None:
            p.prompt = compile_template(spec.prompt, params, resolve)
            referenced |= p.prompt.names
        if "inputs" not in referenced:
            p.extra_inputs = [(lbl, g) for (lbl, g), entry in zip(p.input_texts, spec.inputs)
                              if entry.strip().partition(".")[0] not in referenced
                              and (p.kind != "select" or entry.strip() == "question")]  # select: from = candidates
            if p.kind == "select" and "candidates" not in referenced:
                cand = self._str_getter("candidates", None, info, p)
                p.extra_inputs.append(("Candidates", cand))
        # python kwargs
        if p.kind == "python":
            p.pykw = {k: substitute_params(v, params) if isinstance(v, str) else v for k, v in spec.params.items()}
        # sub-design
        if p.kind == "design":
            if spec.design in self._stack:  # pragma: no cover - analysis rejects recursion
                raise SpecError([])
            sub_params = {k: substitute_params(v, params) if isinstance(v, str) else v for k, v in spec.params.items()}
            p.sub = _compile(self.library.design(spec.design), self.library, sub_params, self._stack)
        # loops
        if p.kind == "loop":
            lp = an.loops[p.name]
            p.loop_cur = self._loop_cur(lp)
            if lp.until is not None and lp.until.node is not None:
                up = self.plans[lp.body[lp.until.node].key]
                up.until = lp.until
                if lp.until.word:
                    up.until_rx = re.compile(rf"(?<!\w){re.escape(lp.until.word.strip())}(?!\w)", re.I)
        # fan-out items
        if p.fan == "repeat":
            k = info.k
            p.items = lambda state, sc: range(k)
        elif p.fan == "map":
            if info.map_param is not None:
                items = list(info.map_param)
                p.items = lambda state, sc: items
            else:
                name, fld = info.map_src  # type: ignore[misc]
                vg = self._val_getter(name, info)

                def items_of(state: dict, sc: Scope, vg=vg, fld=fld, key=p.key) -> list:
                    v = vg(Env(state, sc))
                    if v is None:
                        return []
                    if v.items is not None:
                        out = [m if fld is None else (m.data.get(fld) if isinstance(m.data, dict) else None)
                               for m in v.items if m.status == OK]
                        flat: list = []
                        for x in out:
                            if x is None:
                                continue
                            flat.extend(x if isinstance(x, list) and fld is not None else [x])
                        out = flat
                    elif fld is None:
                        out = list(v.data) if isinstance(v.data, (list, tuple)) else []
                    else:
                        d = v.data.get(fld) if isinstance(v.data, dict) else None
                        out = list(d) if isinstance(d, (list, tuple)) else ([] if d is None else [d])
                    if len(out) > MAP_LIMIT:
                        sc.notes.append(f"{key}: mapped over the first {MAP_LIMIT} of {len(out)} items")
                        out = out[:MAP_LIMIT]
                    return out
                p.items = items_of

    def _recursion_bound(self) -> int:
        an = self.analysis
        n = 2 * len(an.top) + 4
        for lp in an.loops.values():
            n += (lp.max_rounds + 1) * (2 * len(lp.body) + 2)
        return 2 * n + 10

    # ----- langgraph ---------------------------------------------------------------------------
    def _build(self):
        an = self.analysis
        fields: dict[str, Any] = {}
        for key, p in self.plans.items():
            fields[key] = Annotated[list, operator.add] if p.fan else Any
        for ch in an.channels:
            fields[ch] = Annotated[list, operator.add]
        State = TypedDict("State", fields)  # type: ignore[misc]
        g = StateGraph(State)
        self._g = g
        self._fan_nodes: set[str] = {k for k, p in self.plans.items() if p.fan}
        for key, p in self.plans.items():
            if p.kind == "loop":
                g.add_node(key, self._exit_fn(p))
                g.add_node(f"{key}#round", self._controller_fn(p))
            elif p.fan:
                g.add_node(key, self._branch_fn(p))
            else:
                g.add_node(key, self._single_fn(p))
        for name in an.order:
            info = an.top[name]
            p = self.plans[name]
            srcs = sorted(d for d in info.deps if d in an.top)
            if p.kind == "loop":
                self._edges(srcs, f"{name}#round")
                self._wire_loop(p, an.loops[name])
            elif p.fan:
                self._fan_edges(p, srcs)
            else:
                self._edges(srcs, name)
        g.add_edge(self.output, END)
        return g.compile()

    def _edges(self, srcs: list[str], target: str) -> None:
        if not srcs:
            self._g.add_edge(START, target)
        elif len(srcs) == 1:
            self._g.add_edge(srcs[0], target)
        else:
            self._g.add_edge(srcs, target)

    def _fan_edges(self, p: Plan, srcs: list[str]) -> None:
        router = self._router(p)
        if not srcs:
            self._g.add_conditional_edges(START, router, [p.key])
        elif len(srcs) == 1 and srcs[0] not in self._fan_nodes:
            self._g.add_conditional_edges(srcs[0], router, [p.key])
        else:
            disp = f"{p.key}#send"

            async def dispatch(state: dict) -> dict:
                return {}
            self._g.add_node(disp, dispatch)
            self._edges(srcs, disp)
            self._g.add_conditional_edges(disp, router, [p.key])

    def _sends(self, p: Plan, state: dict, sc: Scope) -> list[Send]:
        key = p.key
        if p.loop is not None and p.loop in sc.stop:
            return [Send(key, Br(state, 0, SKIP))]
        items = p.items(state, sc)  # type: ignore[misc]
        if not items:
            return [Send(key, Br(state, 0, EMPTY))]
        if isinstance(items, range):
            return [Send(key, Br(state, i, None)) for i in items]
        return [Send(key, Br(state, i, it)) for i, it in enumerate(items)]

    def _router(self, p: Plan):
        def route(state: dict, runtime: Runtime) -> list[Send]:
            return self._sends(p, state, runtime.context)
        route.__name__ = f"send:{p.key}"
        return route

    def _wire_loop(self, p: Plan, lp: LoopInfo) -> None:
        g = self._g
        ctrl = f"{lp.name}#round"
        roots = [b for b in lp.body.values() if not b.deps]
        plain = [b.key for b in roots if b.fan is None]
        fans = [self.plans[b.key] for b in roots if b.fan is not None]
        exit_key = lp.name

        def route(state: dict, runtime: Runtime) -> list:
            sc: Scope = runtime.context
            if not sc.go.get(exit_key):
                return [exit_key]
            out: list = list(plain)
            for fp in fans:
                out.extend(self._sends(fp, state, sc))
            return out
        route.__name__ = f"round:{lp.name}"
        g.add_conditional_edges(ctrl, route, plain + [f.key for f in fans] + [exit_key])
        readers: set[str] = set()
        for b in lp.body.values():
            readers |= b.deps
            if not b.deps:
                continue
            srcs = sorted(lp.body[d].key for d in b.deps)
            bp = self.plans[b.key]
            if b.fan is not None:
                self._fan_edges(bp, srcs)
            else:
                self._edges(srcs, b.key)
        sinks = sorted(b.key for b in lp.body.values() if b.name not in readers)
        self._edges(sinks, ctrl)

    # ----- node functions ------------------------------------------------------------------------
    def _single_fn(self, p: Plan):
        key = p.key
        into = p.info.spec.into
        L = p.loop
        order = p.order

        async def node(state: dict, runtime: Runtime) -> dict:
            sc: Scope = runtime.context
            if L is not None and L in sc.stop:
                return {}
            val = await guarded(p, sc, Env(state, sc), None)
            if L is not None and not val.present:
                return {}  # a failed round keeps the previous round's value (the best so far)
            if into is not None:
                return {key: val, into: [(0, order * 100_000, val)]}
            return {key: val}
        node.__name__ = key
        return node

    def _branch_fn(self, p: Plan):
        key = p.key
        into = p.info.spec.into
        L = p.loop
        order = p.order

        async def branch(br: Br, runtime: Runtime) -> dict:
            sc: Scope = runtime.context
            it = br.item
            if it is SKIP:
                return {}
            r = sc.rounds.get(L, 0) if L is not None else 0
            if it is EMPTY:
                val = Val(status="empty", error="nothing to map over (the upstream list is empty or missing)")
                sc.record(key, val, 0)
                sc.emit(key, p.op, p.agent_name, p.model, Stats(), val, time.perf_counter())
            else:
                val = await guarded(p, sc, Env(br.state, sc, br), br.i)
            if into is not None:
                return {key: [(r, br.i, val)], into: [(0, order * 100_000 + br.i, val)]}
            return {key: [(r, br.i, val)]}
        branch.__name__ = key
        return branch

    def _controller_fn(self, p: Plan):
        lp = self.analysis.loops[p.name]
        L = lp.name
        cur = p.loop_cur
        until = lp.until
        until_plan = self.plans[lp.body[until.node].key] if until is not None and until.node else None
        ufan = until_plan is not None and until_plan.fan is not None

        async def controller(state: dict, runtime: Runtime) -> dict:
            sc: Scope = runtime.context
            r = sc.rounds.get(L, 0)
            v = cur(Env(state, sc))  # type: ignore[misc]
            if r == 0:
                if v is not None:
                    sc.hist.setdefault(L, []).append((0, lp.init or "start", vtext(v)))
            else:
                if ufan and L not in sc.stop:  # a fanned-out until node is judged once all branches are in
                    from .executor import check_until
                    uv = read(state, until_plan.key, True)
                    if uv is not None:
                        check_until(until_plan, sc, uv)
                if until is not None and until.converged and L not in sc.stop:
                    if v is not None and v.answers is not None and v.answers == sc.prev.get(L):
                        sc.stop[L] = "converged"
            if v is not None:
                sc.prev[L] = v.answers if v.items is None else tuple(
                    a for m in v.items for a in (m.answers or ()))
            if L in sc.stop:
                go = False
            elif r >= lp.max_rounds:
                sc.stop[L] = "max_rounds"
                go = False
            elif sc.sh.tracker.exhausted:
                sc.stop[L] = "budget"
                go = False
            else:
                go = True
                sc.rounds[L] = r + 1
            sc.go[L] = go
            return {}
        controller.__name__ = f"{L}#round"
        return controller

    def _exit_fn(self, p: Plan):
        lp = self.analysis.loops[p.name]
        L = lp.name
        cur = p.loop_cur

        async def exit_(state: dict, runtime: Runtime) -> dict:
            sc: Scope = runtime.context
            t0 = time.perf_counter()
            v = cur(Env(state, sc))  # type: ignore[misc]
            if v is None:
                v = Val(status="empty", error="the loop produced no value")
            elif v.items is not None:
                v = Val(items=v.items, status=v.status, error=v.error)
            else:
                v = Val(text=v.text, answers=v.answers, data=v.data, status=OK if v.status == OK else v.status,
                        error=v.error)
            sc.loops[sc.prefix + L] = {"rounds": sc.rounds.get(L, 0), "max_rounds": lp.max_rounds,
                                       "stopped": sc.stop.get(L)}
            sc.record(L, v)
            sc.emit(L, "loop", None, None, Stats(), v, t0)
            return {L: v}
        exit_.__name__ = L
        return exit_

    # ----- running -------------------------------------------------------------------------------
    async def run(self, task: Any, ctx: RunContext) -> DesignResult:
        """Run on one task (see :func:`masbench.runtime.run_design`)."""
        sh = Shared(ctx)
        gold = [str(a) for a in (getattr(task, "answers", None) or [])]
        sc = Scope(self, sh, task.question, gold, list(getattr(task, "skills", None) or []),
                   ctx.seed * SEED_STRIDE)
        return await self.run_scope(sc)

    async def run_scope(self, sc: Scope) -> DesignResult:
        t0 = time.perf_counter()
        tr = sc.sh.tracker
        error = None
        final: dict | None = None
        try:
            if self._direct is not None:
                final = {self._direct.key: await guarded(self._direct, sc, Env({}, sc), None)}
            else:
                final = await self.graph.ainvoke({}, config={"recursion_limit": self.recursion_limit}, context=sc)
        except Exception as exc:  # noqa: BLE001 - an internal error still yields a result row
            error = f"{type(exc).__name__}: {exc}"[:1000]
        wall = time.perf_counter() - t0
        out_val = read(final, self.output, self.output in self.fan_keys) if final else None
        detail: dict[str, Any] = {"nodes": sc.status}
        for key, value in (("branches", sc.branches), ("votes", sc.votes), ("loops", sc.loops),
                           ("selects", sc.selects), ("parse_failures", sc.parse_failures), ("errors", sc.errors),
                           ("subdesigns", sc.subs), ("notes", sc.notes)):
            if value:
                detail[key] = value
        text = ""
        answers: tuple[str, ...] | None = None
        if out_val is not None:
            if out_val.items is not None:
                winner, tally, tie = sc.sh.vote([m.answers for m in out_val.items], "output")
                answers = winner
                text = vtext(out_val)
                if len(out_val.items) > 1:
                    detail["output_vote"] = {"tally": {", ".join(k): c for k, c in tally.items()},
                                             "tie": [", ".join(t) for t in tie] or None}
            else:
                text = out_val.text or fmt_data(out_val.data)
                answers = out_val.answers
        if final is not None and (out_val is None or (not answers and out_val.status != OK)):
            fb = self._fallback(final)
            if fb is not None:
                node, v_text, v_answers = fb
                detail["fallback"] = node
                text, answers = v_text, v_answers
        ans = list(answers or ())
        n = sc.n
        ans = (ans + [""] * n)[:n] if len(ans) != n else ans
        degraded = sc.bad > 0
        if tr.exhausted and tr.refused:
            status = "budget_exhausted"
        elif error is not None or not any(ans):
            status = "failed"
        elif degraded or "fallback" in detail:
            status = "degraded"
        else:
            status = "ok"
        if status == "failed" and error is None:
            error = (out_val.error if out_val is not None and out_val.error else "no answer")
        if tr.limited:
            detail["budget"] = tr.summary()
        detail["simulated"] = sc.sh.simulated
        return DesignResult(text=text, answers=ans, status=status, prompt_tokens=sc.prompt,
                            completion_tokens=sc.completion, tokens=sc.prompt + sc.completion, cost_usd=sc.cost,
                            calls=sc.calls, wall_s=wall, error=error, detail=detail)

    def _fallback(self, final: dict) -> tuple[str, str, tuple[str, ...]] | None:
        """Best answer so far: the nearest upstream node of the output that has an answer."""
        import networkx as nx

        an = self.analysis
        anc = nx.ancestors(an.graph, self.output)
        for name in reversed(an.order):
            if name not in anc:
                continue
            v = read(final, name, name in self.fan_keys)
            if v is None:
                continue
            if v.items is None:
                if v.answers:
                    return name, v.text, v.answers
                continue
            winner, _t, _tie = majority_vote([m.answers for m in v.items])
            if winner:
                pick = next(m for m in v.items if m.answers == winner)
                return name, pick.text, winner
        return None


# --------------------------------------------------------------------------- cache

_CACHE: dict[tuple, tuple[DesignSpec, Any, CompiledDesign]] = {}
_CACHE_MAX = 512


def _params_key(params: dict[str, Any] | None) -> str:
    return json.dumps(params or {}, sort_keys=True, default=str)


def _compile(design: DesignSpec, library: Any, params: dict[str, Any] | None,
             stack: tuple[str, ...] = ()) -> CompiledDesign:
    key = (design.name, _params_key(params), id(library))
    hit = _CACHE.get(key)
    if hit is not None and hit[1] is library and (hit[0] is design or hit[0] == design):
        return hit[2]
    cd = CompiledDesign(design, library, params, stack)
    if len(_CACHE) >= _CACHE_MAX:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = (design, library, cd)
    return cd


def compile_design(design: DesignSpec | str, library: Any, params: dict[str, Any] | None = None) -> CompiledDesign:
    """Validate and compile a design (cached by design name, params and library; a changed design
    of the same name is recompiled). Raises :class:`~masbench.spec.problems.SpecError` if invalid."""
    if isinstance(design, str):
        design = library.design(design)
    return _compile(design, library, params)


def clear_cache() -> None:
    """Forget every compiled graph."""
    _CACHE.clear()


__all__ = ["CompiledDesign", "MAP_LIMIT", "Plan", "clear_cache", "compile_design", "normalize_answer"]
