"""Compile each checked node into its op's node (:meth:`~masbench.runtime.ops.base.Op.compile`),
with the getters it needs bound now: how its inputs, template references, fan-out items and loop
value are read from the state and the run's scope (no name lookups at run time). What differs by
op (which templates, which inputs, a function, a sub-design, a loop's value) is the op's own
compile hook; this module is the :class:`~masbench.runtime.ops.base.Binding` it reads through."""

from __future__ import annotations

from typing import Any, Callable

from .design_analysis import Analysis
from .info import LoopInfo, NodeInfo
from .ops import op_of
from .ops.base import Getter, Items, Node, SubRun, head
from .ops.prompted import render_inputs
from .ops.until import StopRule
from .scope import EMPTY, SKIP, Env, Scope
from .template import Template, compile_template, param_text, substitute_params
from .values import OK, Val, fmt_data, pyfield, pyval, read, vtext

MAP_LIMIT = 64
"""Most items a ``map`` node fans out over (the rest are dropped, and that is recorded)."""

SubDesigns = Callable[[str, dict[str, Any]], SubRun]
"""Compiles a sub-design (name, params) and returns its runner."""


class Binder:
    """Compiles the nodes of one analysed design."""

    def __init__(self, an: Analysis, sub_designs: SubDesigns):
        self.an = an
        self._sub_designs = sub_designs
        self._inputs: dict[str, tuple[tuple, tuple, tuple]] = {}

    def node(self, info: NodeInfo) -> Node:
        """``info`` compiled by its op."""
        return op_of(info.kind).compile(self, info)

    def base(self, info: NodeInfo) -> dict[str, Any]:
        """The :class:`~masbench.runtime.ops.base.Node` base fields of ``info``."""
        a = info.agent
        return {"key": info.key, "name": info.name, "loop": info.loop, "fan": info.fan, "order": info.order,
                "actor": op_of(info.kind).actor(info), "agent_name": a.name if a is not None else None,
                "model": a.model if a is not None and isinstance(a.model, str) else None,
                "row_op": info.fan or info.kind, "into": info.spec.into,
                "items": self._items(info) if info.fan is not None else None, "until": self._stop_rule(info)}

    def sub_design(self, name: str, params: dict[str, Any]) -> SubRun:
        """A sub-design compiled with ``params``: its runner."""
        return self._sub_designs(name, params)

    # ----- getters -------------------------------------------------------------------------------
    def val_getter(self, name: str, ctx: NodeInfo) -> Callable[[Env], Val | None]:
        an = self.an
        lp = an.loops.get(ctx.loop) if ctx.loop else None
        if lp is not None and name in lp.body:
            key = lp.body[name].key
            fan = lp.body[name].fan is not None
            return lambda e: read(e.state, key, fan)
        if lp is not None and name == lp.name:
            return self.loop_cur(lp)
        if name in an.top:
            fan = an.top[name].fan is not None
            return lambda e: read(e.state, name, fan)
        if name in an.channels:
            return lambda e: read(e.state, name, True)
        if name == "question":
            return lambda e: Val(text=e.sc.question)
        raise KeyError(name)  # pragma: no cover - the checker rejected it

    def loop_cur(self, lp: LoopInfo) -> Callable[[Env], Val | None]:
        """A loop's current value: its body output's latest value, else its init node's value."""
        okey = lp.body[lp.output].key
        ofan = lp.body[lp.output].fan is not None
        init = lp.init
        if init is not None:
            ifan = self.an.top[init].fan is not None

            def cur(e: Env) -> Val | None:
                v = read(e.state, okey, ofan)
                return v if v is not None else read(e.state, init, ifan)
        else:
            def cur(e: Env) -> Val | None:
                return read(e.state, okey, ofan)
        return cur

    def str_getter(self, name: str, field: str | None, info: NodeInfo) -> Callable[[Env], str]:
        an = self.an
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
            assert L is not None, "the check allows {round} only inside a loop body"
            return lambda e: str(e.sc.rounds.get(L, 0))
        if name == "history":
            L = info.loop
            assert L is not None, "the check allows {history} only inside a loop body"
            return lambda e: e.sc.history(L)
        if name == "inputs":
            texts = self.input_texts(info)
            return lambda e: render_inputs(texts, e)
        if name == "candidates":
            return lambda e: "\n\n".join(f"Candidate {i}:\n{c.text or fmt_data(c.data)}"
                                         for i, c in enumerate(e.cands or [], 1))
        if name in an.params:
            s = param_text(an.params[name].get(field) if field and isinstance(an.params[name], dict)
                           else an.params[name])
            return lambda e: s
        if field == "history" and name in an.loops and not (info.loop and name in an.loops[info.loop].body):
            return lambda e: e.sc.history(name)
        vg = self.val_getter(name, info)
        if field is None:
            return lambda e: vtext(vg(e))
        return lambda e: vtext(vg(e), field)

    def compile(self, info: NodeInfo, text: str) -> Template:
        """``text`` compiled as a template of ``info``'s node."""
        return compile_template(text, self.an.params, lambda n, f: self.str_getter(n, f, info))

    def node_params(self, info: NodeInfo) -> dict[str, Any]:
        """The node's ``params`` with ``{param}`` references to design params filled in."""
        params = self.an.params
        return {k: substitute_params(v, params) if isinstance(v, str) else v for k, v in info.spec.params.items()}

    # ----- inputs (``from``) -----------------------------------------------------------------------
    def input_texts(self, info: NodeInfo) -> tuple[tuple[str, Getter], ...]:
        """The ``from`` inputs as labelled texts (label, getter)."""
        return self._from(info)[0]

    def input_vals(self, info: NodeInfo) -> tuple[tuple[str, Getter], ...]:
        """The ``from`` inputs as values (name, getter)."""
        return self._from(info)[1]

    def py_args(self, info: NodeInfo) -> tuple[Getter, ...]:
        """The ``from`` inputs as a python function's arguments."""
        return self._from(info)[2]

    def unmentioned(self, info: NodeInfo, referenced: set[str]) -> tuple[tuple[str, Getter], ...]:
        """The labelled ``from`` inputs the node's templates do not mention."""
        return tuple((lbl, g) for (lbl, g), entry in zip(self.input_texts(info), info.spec.inputs)
                     if head(entry) not in referenced)

    def _from(self, info: NodeInfo) -> tuple[tuple, tuple, tuple]:
        hit = self._inputs.get(info.key)
        if hit is not None:
            return hit
        an = self.an
        texts: list[tuple[str, Getter]] = []
        vals: list[tuple[str, Getter]] = []
        args: list[Getter] = []
        for entry in info.spec.inputs:
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
                vals.append((name, self.val_getter("question", info)))
                texts.append((label, lambda e: e.sc.question))
                args.append(lambda e: e.sc.question)
                continue
            vg = self.val_getter(name, info) if name not in an.params else \
                (lambda e, v=an.params[name]: Val(text=param_text(v), data=v))
            vals.append((name, vg))
            args.append((lambda e, vg=vg: pyval(vg(e))) if fld is None else
                        (lambda e, vg=vg, f=fld: pyfield(vg(e), f)))
            texts.append((label, self.str_getter(name, fld, info)))
        out = (tuple(texts), tuple(vals), tuple(args))
        self._inputs[info.key] = out
        return out

    # ----- fan-out and loop ------------------------------------------------------------------------
    def _stop_rule(self, info: NodeInfo) -> StopRule | None:
        """The loop's stop condition, if it reads this body node's value."""
        lp = self.an.loops.get(info.loop) if info.loop is not None else None
        if lp is None or lp.until is None or lp.until.node != info.name:
            return None
        return StopRule.of(lp.name, lp.until)

    def _items(self, info: NodeInfo) -> Items:
        if info.fan == "repeat":
            k = info.k
            return lambda state, sc: range(k)
        if info.map_param is not None:
            items = list(info.map_param)
            return lambda state, sc: items
        assert info.map_src is not None  # a map over neither a param nor a node output fails the check
        name, fld = info.map_src
        vg = self.val_getter(name, info)
        key = info.key

        def items_of(state: dict, sc: Scope) -> list:
            v = vg(Env(state, sc))
            if v is None:
                return []
            if v.items is not None:
                out: list = []
                for m in v.items:
                    if m.status != OK:
                        continue
                    x = m if fld is None else (m.data.get(fld) if isinstance(m.data, dict) else None)
                    if x is not None:
                        out.extend(x if isinstance(x, list) and fld is not None else [x])
            elif fld is None:
                out = list(v.data) if isinstance(v.data, (list, tuple)) else []
            else:
                d = v.data.get(fld) if isinstance(v.data, dict) else None
                out = list(d) if isinstance(d, (list, tuple)) else ([] if d is None else [d])
            if len(out) > MAP_LIMIT:
                sc.notes.append(f"{key}: mapped over the first {MAP_LIMIT} of {len(out)} items")
                out = out[:MAP_LIMIT]
            return out
        return items_of


__all__ = ["MAP_LIMIT", "Binder", "SubDesigns"]
