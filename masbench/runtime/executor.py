"""Node bodies and the per-run scope.

Every node body catches its own errors (everything but cancellation), records them, and returns
a value with a status, so one failed branch never loses its siblings' work. Every model call is
budget-checked first (worst case = prompt bound + ``max_tokens``), reserved, made through the
gateway, and settled with what it really used.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import time
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..llm.gateway import CallResult, prompt_token_bound
from ._deps import extract_answers, json_objects, normalize_answer
from .budget import Tracker
from .pyfuncs import majority_vote
from .values import OK, Val, fmt_data, pyval, truthy, vtext

if TYPE_CHECKING:  # pragma: no cover
    from .compiler import CompiledDesign, Plan
    from .types import RunContext

SEED_STRIDE = 1_000_003
ROUND_STRIDE = 10_007
OUTPUT_CHARS = 2000
NODE_TAGS = ("run_id", "design", "task_id", "seed")
"""The run tags a node row carries (its other columns are the node's own: node, op, agent, …).
Call rows carry every tag; the ``nodes`` table has no ``purpose`` column."""


class Shared:
    """State shared by a run and its sub-design runs."""

    __slots__ = ("tracker", "simulated", "sink", "row_base", "tags", "gateway", "route", "library", "tie", "seed")

    def __init__(self, ctx: "RunContext"):
        self.tracker = Tracker(ctx.budget)
        self.simulated = False
        self.sink = ctx.node_sink
        self.tags = dict(ctx.tags)
        self.row_base = {k: self.tags[k] for k in NODE_TAGS if k in self.tags}
        self.gateway = ctx.gateway
        self.route = ctx.route
        self.library = ctx.library
        self.tie = ctx.tie
        self.seed = int(self.tags.get("seed", ctx.seed) or 0)

    def vote(self, answers: list, node: str) -> tuple:
        """``majority_vote`` under the run's tie rule, keyed by the cell (seed, task) and node."""
        return majority_vote(answers, self.tie, seed=self.seed, task_id=str(self.tags.get("task_id", "")), node=node)


class Scope:
    """One run of one design on one task (sub-designs get their own scope, sharing ``shared``)."""

    __slots__ = ("cd", "sh", "question", "gold", "n", "skills", "seed_base", "prefix", "rounds", "stop", "go",
                 "hist", "prev", "status", "branches", "votes", "loops", "selects", "parse_failures", "errors",
                 "subs", "notes", "parent", "calls", "prompt", "completion", "cost", "bad")

    def __init__(self, cd: "CompiledDesign", sh: Shared, question: str, gold: list[str], skills: list[str],
                 seed_base: int, prefix: str = "", parent: "Scope | None" = None):
        self.cd = cd
        self.parent = parent
        """The scope of the design that called this one as a sub-design."""
        self.bad = 0
        """Node executions (any round, any branch) that did not end ``ok``."""
        self.calls = 0
        self.prompt = 0
        self.completion = 0
        self.cost = 0.0
        self.sh = sh
        self.question = question
        self.gold = gold
        self.n = max(1, len(gold))
        self.skills = skills
        self.seed_base = seed_base
        self.prefix = prefix
        self.rounds: dict[str, int] = {}
        self.stop: dict[str, str] = {}
        self.go: dict[str, bool] = {}
        self.hist: dict[str, list[tuple[int, str, str]]] = {}
        self.prev: dict[str, Any] = {}
        self.status: dict[str, str] = {}
        self.branches: dict[str, list[str]] = {}
        self.votes: dict[str, dict] = {}
        self.loops: dict[str, dict] = {}
        self.selects: dict[str, dict] = {}
        self.parse_failures: list[dict] = []
        self.errors: dict[str, str] = {}
        self.subs: dict[str, Any] = {}
        self.notes: list[str] = []

    # ----- recording -----------------------------------------------------------------------------
    def emit(self, display: str, op: str, agent: str | None, model: str | None, st: "Stats", val: Val,
             t0: float) -> None:
        sink = self.sh.sink
        if sink is None:
            return
        if val.answers:
            out = ", ".join(val.answers)
        else:
            out = val.text if val.text else (fmt_data(val.data) if val.data is not None else None)
        if out is not None and len(out) > OUTPUT_CHARS:
            out = out[:OUTPUT_CHARS]
        row = dict(self.sh.row_base)
        row["node"] = self.prefix + display
        row["op"] = op
        row["agent"] = agent
        row["model"] = st.model or model
        row["calls"] = st.calls
        row["tokens"] = st.tokens
        row["cost_usd"] = st.cost
        row["latency_s"] = time.perf_counter() - t0
        row["status"] = val.status
        row["error"] = val.error
        row["output"] = out
        row["ts"] = time.time()
        sink(row)

    def record(self, display: str, val: Val, branch: int | None = None) -> None:
        if val.status != OK:
            self.bad += 1
        if branch is None:
            self.status[display] = val.status
        else:
            lst = self.branches.setdefault(display, [])
            if len(lst) <= branch:
                lst.extend([""] * (branch + 1 - len(lst)))
            lst[branch] = val.status
        if val.error and val.status != OK:
            key = display if branch is None else f"{display}[{branch}]"
            self.errors[key] = val.error[:500]


class Stats:
    """Usage of one node execution."""

    __slots__ = ("calls", "tokens", "cost", "model")

    def __init__(self) -> None:
        self.calls = 0
        self.tokens = 0
        self.cost = 0.0
        self.model: str | None = None


class Env:
    """What templates read during one node execution."""

    __slots__ = ("state", "sc", "br", "cands")

    def __init__(self, state: dict, sc: Scope, br: "Br | None" = None):
        self.state = state
        self.sc = sc
        self.br = br
        self.cands: list[Val] | None = None


class Br:
    """A ``Send`` payload: one branch of a fan-out."""

    __slots__ = ("state", "i", "item")

    def __init__(self, state: dict, i: int, item: Any):
        self.state = state
        self.i = i
        self.item = item


EMPTY = object()
"""Map item marker: the list to map over was empty (the node still runs once, to record it)."""
SKIP = object()
"""Branch marker: the loop's stop condition already held this round."""


# --------------------------------------------------------------------------- calls


class BudgetRefused(Exception):
    """A call was not made: its worst case might exceed what is left of the budget."""


async def call_model(plan: "Plan", sc: Scope, messages: list[dict[str, Any]], meta: dict[str, Any], idx: int,
                     st: Stats) -> CallResult:
    """One budget-checked model call. Raises :class:`BudgetRefused` if it does not fit."""
    sh = sc.sh
    gw = sh.gateway
    model = plan.model
    if model is None:  # routed agent
        model = "default"
        if sh.route is not None:
            r = sh.route(plan.agent, messages)
            model = await r if inspect.isawaitable(r) else r
    tags = {**sh.tags, "node": sc.prefix + plan.key, "agent": plan.agent_name}
    tr = sh.tracker
    max_tokens = plan.max_tokens
    if tr.limited:
        worst = prompt_token_bound(gw, model, messages) + max_tokens
        worst_usd = 0.0
        if tr.max_usd is not None:
            worst_usd = gw.prices(model).cost(worst - max_tokens, max_tokens)
        if not tr.reserve(worst, worst_usd, sc.prefix + plan.key):
            raise BudgetRefused()
        try:
            res = await gw.complete(model, messages, sample_index=idx, temperature=plan.temperature,
                                    max_tokens=max_tokens, tags=tags, metadata=meta)
        except BaseException:
            tr.release(worst, worst_usd)
            raise
        tr.settle(worst, worst_usd, res.prompt_tokens, res.completion_tokens, res.cost_usd)
    else:
        res = await gw.complete(model, messages, sample_index=idx, temperature=plan.temperature,
                                max_tokens=max_tokens, tags=tags, metadata=meta)
        tr.add(res.prompt_tokens, res.completion_tokens, res.cost_usd)
    st.calls += 1
    st.tokens += res.prompt_tokens + res.completion_tokens
    st.cost += res.cost_usd
    st.model = res.model
    s: Scope | None = sc
    while s is not None:  # usage of this run and of every design that called it
        s.calls += 1
        s.prompt += res.prompt_tokens
        s.completion += res.completion_tokens
        s.cost += res.cost_usd
        s = s.parent
    if res.simulated:
        sh.simulated = True
    return res


def sample_index(plan: "Plan", sc: Scope, i: int) -> int:
    if plan.loop is not None:
        return sc.seed_base + sc.rounds.get(plan.loop, 0) * ROUND_STRIDE + i
    return sc.seed_base + i


# --------------------------------------------------------------------------- structured output

def _coerce(v: Any, t: str) -> Any:
    if t == "str":
        if isinstance(v, (dict, list)):
            raise ValueError
        return v if isinstance(v, str) else ("true" if v is True else "false" if v is False else str(v))
    if t == "bool":
        if isinstance(v, bool):
            return v
        if isinstance(v, str) and v.strip().lower() in ("true", "false", "yes", "no"):
            return v.strip().lower() in ("true", "yes")
        raise ValueError
    if t == "int":
        if isinstance(v, bool):
            raise ValueError
        if isinstance(v, int):
            return v
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, str) and re.fullmatch(r"\s*-?\d+\s*", v):
            return int(v)
        raise ValueError
    if t == "float":
        if isinstance(v, bool):
            raise ValueError
        if isinstance(v, (int, float)):
            return float(v)
        if isinstance(v, str):
            return float(v.strip())
        raise ValueError
    if t.startswith("list["):
        inner = t[5:-1]
        if not isinstance(v, list):
            if inner == "str" and isinstance(v, str) and v.strip():
                return [v]
            raise ValueError
        return [_coerce(x, inner) for x in v]
    return v  # pragma: no cover


def parse_structured(text: str, schema: dict[str, str]) -> tuple[dict | None, str | None]:
    """The JSON object in ``text`` with every schema field, coerced to its type; or an error."""
    objs = [o for o in json_objects(text) if isinstance(o, dict)]
    if not objs:
        return None, "no JSON object found in the reply"
    err = None
    for obj in reversed(objs):
        out = dict(obj)
        for f, t in schema.items():
            if f not in obj:
                err = f"missing field {f!r}"
                break
            try:
                out[f] = _coerce(obj[f], t)
            except (ValueError, TypeError):
                err = f"field {f!r} must be {t}, got {json.dumps(obj[f], default=str)[:60]}"
                break
        else:
            return out, None
    return None, err


# --------------------------------------------------------------------------- rendering


def render_inputs(inputs: list, env: Env) -> str:
    parts = []
    for label, getter in inputs:
        t = getter(env)
        if t:
            parts.append(f"{label}:\n{t}")
    return "\n\n".join(parts)


_BLANKS = re.compile(r"\n\s*\n(?:\s*\n)+")


def build_messages(plan: "Plan", env: Env) -> list[dict[str, Any]]:
    user = plan.prompt.render(env) if plan.prompt is not None else ""
    if plan.extra_inputs:
        block = render_inputs(plan.extra_inputs, env)
        if block:
            user = f"{user}\n\n{block}" if user else block
    if "\n\n\n" in user:
        user = _BLANKS.sub("\n\n", user)
    if plan.json_hint:
        user += plan.json_hint
    if plan.system is not None:
        return [{"role": "system", "content": plan.system.render(env)}, {"role": "user", "content": user}]
    return [{"role": "user", "content": user}]


def sim_meta(plan: "Plan", sc: Scope, env: Env) -> dict[str, Any]:
    skills = sc.skills + plan.skills if plan.skills else sc.skills
    m: dict[str, Any] = {"gold": sc.gold, "skills": skills}
    if plan.judge:
        m["mode"] = "judge"
        cand = judged(plan, env)
        m["candidate"] = ",".join(cand.answers) if cand is not None and cand.answers else ""
        if plan.schema is not None:
            m["json"] = True
    elif plan.schema is not None:
        m["mode"] = "json"
        m["schema"] = plan.schema
        m["n_items"] = max(2, sc.n)
    else:
        m["mode"] = "answer"
    return {"sim": m}


def judged(plan: "Plan", env: Env) -> Val | None:
    """The candidate a judge looks at: the first ``from`` input that has an answer."""
    for name, vg in plan.input_vals:
        if name == "question":
            continue
        v = vg(env)
        if v is None:
            continue
        for m in reversed(v.members()):
            if m.answers:
                return m
    return None


def extract(plan: "Plan", sc: Scope, text: str, data: Any) -> tuple[str, ...] | None:
    how = plan.how
    if how is None:
        return None
    if how == "json" and isinstance(data, dict) and plan.field in data:
        v = data[plan.field]
        vals = v if isinstance(v, list) else [v]
        out = tuple(normalize_answer(str(x)) for x in vals[: sc.n])
        return out or None
    return _extract_cached(text, sc.n, how, plan.field)


@lru_cache(maxsize=8192)
def _extract_cached(text: str, n: int, how: str, field: str | None) -> tuple[str, ...] | None:
    found = extract_answers(text, n, how, field)
    return tuple(found) if found else None


# --------------------------------------------------------------------------- node bodies


async def agent_body(plan: "Plan", sc: Scope, env: Env, idx: int, st: Stats) -> Val:
    messages = build_messages(plan, env)
    meta = sim_meta(plan, sc, env)
    res = await call_model(plan, sc, messages, meta, idx, st)
    if res.error is not None:
        return Val(status="error", error=res.error)
    text = res.text
    data = None
    if plan.schema is not None:
        attempt = 0
        while True:
            data, err = parse_structured(text, plan.schema)
            if err is None:
                break
            sc.parse_failures.append({"node": sc.prefix + plan.key, "attempt": attempt, "error": err})
            if attempt >= plan.retries:
                return Val(text=text, status="parse_failed", error=f"structured output: {err} "
                                                                 f"(after {attempt + 1} attempts)")
            attempt += 1
            messages = messages + [
                {"role": "assistant", "content": text},
                {"role": "user", "content": f"Your reply could not be used: {err}. Reply again with only a JSON "
                                            f"object with the fields: {plan.fields_desc}."}]
            res = await call_model(plan, sc, messages, meta, idx, st)
            if res.error is not None:
                return Val(status="error", error=res.error)
            text = res.text
    return Val(text=text, answers=extract(plan, sc, text, data), data=data)


_CHOICE = re.compile(r"choice\s*[:#]?\s*\**\s*(\d+)", re.I)


async def select_body(plan: "Plan", sc: Scope, env: Env, idx: int, st: Stats) -> Val:
    cands = [m for name, vg in plan.input_vals if name != "question" for v in [vg(env)] if v is not None
             for m in v.members() if m.present and m.status == OK]
    if not cands:
        return Val(status="empty", error="no candidates to select from")
    env.cands = cands
    messages = build_messages(plan, env)
    meta = {"sim": {"gold": sc.gold, "skills": sc.skills + plan.skills, "mode": "choice",
                    "candidates": [",".join(c.answers) if c.answers else c.text for c in cands]}}
    res = await call_model(plan, sc, messages, meta, idx, st)
    choice = None
    if res.error is None:
        m = _CHOICE.search(res.text)
        if m:
            choice = int(m.group(1)) - 1
        else:
            nums = [int(x) - 1 for x in re.findall(r"\b(\d{1,3})\b", res.text)]
            nums = [x for x in nums if 0 <= x < len(cands)]
            choice = nums[-1] if nums else None
        if choice is not None and not 0 <= choice < len(cands):
            choice = None
    rec = {"n": len(cands), "choice": None if choice is None else choice + 1, "fallback": choice is None}
    sc.selects[sc.prefix + plan.key] = rec
    if choice is None:  # the selector failed or gave no usable choice: majority over the candidates
        keys = [c.answers for c in cands]
        winner, _t, _tie = majority_vote(keys)
        pick = next((c for c in cands if c.answers == winner), cands[0])
        err = res.error or "no usable choice in the selector's reply; fell back to majority"
        return Val(text=pick.text, answers=pick.answers, data=pick.data, status="degraded", error=err)
    pick = cands[choice]
    return Val(text=pick.text, answers=pick.answers, data=pick.data)


_TIE_LABEL = {"first": "first-seen", "split": "split (seeded uniform draw)", "random": "random priority"}


def vote_body(plan: "Plan", sc: Scope, env: Env) -> Val:
    cands = [m for name, vg in plan.input_vals if name != "question" for v in [vg(env)] if v is not None
             for m in v.members()]
    keys = [c.answers if c.answers else None for c in cands]
    winner, tally, tie = sc.sh.vote(keys, sc.prefix + plan.key)
    rec = {"tally": {", ".join(k): c for k, c in tally.items()}, "winner": ", ".join(winner) if winner else None,
           "tie": [", ".join(t) for t in tie] or None, "tie_break": _TIE_LABEL.get(sc.sh.tie) if tie else None,
           "voters": len(keys) - keys.count(None), "missing": keys.count(None)}
    sc.votes[sc.prefix + plan.key] = rec
    if winner is None:
        return Val(status="empty", error="no answers to vote on")
    pick = next(c for c in cands if c.answers == winner)
    return Val(text=pick.text, answers=winner, data=rec)


def _answers_of(ret: Any, n: int) -> tuple[str, ...] | None:
    if ret is None:
        return None
    if isinstance(ret, (list, tuple)):
        if ret and all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in ret):
            if len(ret) == n or n == 1 and len(ret) == 1:
                return tuple(normalize_answer(str(x)) for x in ret)
        return None
    if isinstance(ret, dict):
        for k in ("answer", "answers", "result"):
            if k in ret:
                return _answers_of(ret[k], n)
        return None
    if isinstance(ret, bool):
        return None
    return (normalize_answer(str(ret)),)


async def python_body(plan: "Plan", sc: Scope, env: Env) -> Val:
    if env.br is not None:
        item = env.br.item
        args = [pyval(item) if isinstance(item, Val) else item]
    else:
        args = [g(env) for g in plan.py_args]
    ret = plan.pyfn(*args, **plan.pykw)
    if inspect.isawaitable(ret):
        ret = await ret
    text = ret if isinstance(ret, str) else fmt_data(ret) if not isinstance(ret, (list, dict)) else \
        json.dumps(ret, ensure_ascii=False, default=str)
    return Val(text=text, answers=_answers_of(ret, sc.n), data=ret)


async def design_body(plan: "Plan", sc: Scope, env: Env, idx: int, st: Stats) -> Val:
    if plan.prompt is not None:
        q = plan.prompt.render(env)
    elif env.br is not None and env.br.item is not None and env.br.item is not EMPTY and plan.fan == "map":
        it = env.br.item
        q = vtext(it) if isinstance(it, Val) else fmt_data(it)
    elif plan.extra_inputs and any(name != "question" for name, _ in plan.input_vals):
        q = render_inputs(plan.extra_inputs, env)
    else:
        q = sc.question
    sub = plan.sub
    assert sub is not None
    child = Scope(sub, sc.sh, q, sc.gold, sc.skills, sc.seed_base + (idx + 1) * 7919 + (plan.order + 1) * 104729,
                  prefix=f"{sc.prefix}{plan.key}/", parent=sc)
    res = await sub.run_scope(child)
    st.calls += res.calls
    st.tokens += res.tokens
    st.cost += res.cost_usd
    sc.subs[f"{sc.prefix}{plan.key}" + (f"[{idx}]" if plan.fan else "")] = {
        "status": res.status, "answers": res.answers, "error": res.error}
    status = {"ok": OK, "degraded": "degraded", "budget_exhausted": "budget_exhausted"}.get(res.status, "error")
    answers = tuple(a for a in res.answers if a) or None
    return Val(text=res.text, answers=answers, status=status, error=res.error)


def loop_value(plan: "Plan", state: dict, sc: Scope) -> Val | None:
    """Current value of a loop: its body output's latest value, else its init value."""
    return plan.loop_cur(Env(state, sc))


def hist_text(sc: Scope, loop: str) -> str:
    h = sc.hist.get(loop)
    if not h:
        return ""
    return "\n\n".join(f"[round {r}] {name}:\n{text}" for r, name, text in h if text)


def check_until(plan: "Plan", sc: Scope, val: Val) -> None:
    u = plan.until
    if u is None or val.status != OK:
        return
    if u.word is not None:
        rx = plan.until_rx
        hit = all(rx.search(m.text or "") for m in val.members())
    elif u.field is not None:
        if u.field == "answer":
            hit = all(bool(m.answers) for m in val.members())
        elif u.field == "text":
            hit = all(bool(m.text) for m in val.members())
        else:
            hit = all(isinstance(m.data, dict) and truthy(m.data.get(u.field)) for m in val.members())
    else:
        hit = all(truthy(m.data) if m.data is not None else bool(m.text) for m in val.members())
    if u.negate:
        hit = not hit
    if hit:
        sc.stop[plan.loop] = "until"  # type: ignore[index]


async def guarded(plan: "Plan", sc: Scope, env: Env, i: int | None) -> Val:
    """Run one node execution: never raises (except cancellation); records and emits it."""
    t0 = time.perf_counter()
    st = Stats()
    kind = plan.kind
    try:
        if kind == "agent":
            val = await agent_body(plan, sc, env, sample_index(plan, sc, i or 0), st)
        elif kind == "majority":
            val = vote_body(plan, sc, env)
        elif kind == "select":
            val = await select_body(plan, sc, env, sample_index(plan, sc, 0), st)
        elif kind == "python":
            val = await python_body(plan, sc, env)
        elif kind == "design":
            val = await design_body(plan, sc, env, i or 0, st)
        else:  # pragma: no cover - loops are built from controller/exit nodes
            raise RuntimeError(f"unknown node kind {kind}")
    except asyncio.CancelledError:
        raise
    except BudgetRefused:
        val = Val(status="budget_exhausted", error="budget exhausted: call not made")
    except Exception as exc:  # noqa: BLE001 - a node records its own failure
        val = Val(status="error", error=f"{type(exc).__name__}: {exc}"[:1000])
    if plan.loop is not None:
        if val.status == OK or val.present:
            sc.hist.setdefault(plan.loop, []).append((sc.rounds.get(plan.loop, 0),
                                                      plan.name + (f"[{i + 1}]" if plan.fan else ""),
                                                      val.text or fmt_data(val.data)))
        if plan.until is not None and not plan.fan:
            check_until(plan, sc, val)
    sc.record(plan.key, val, i if plan.fan else None)
    sc.emit(plan.key, plan.op, plan.agent_name, plan.model, st, val, t0)
    return val
