"""A program design run on one task: the user's own MAS code, its every model call made through the
metering endpoint (:mod:`masbench.llm.endpoint`) as a budgeted gateway call of this cell.

The program gets the task — ``{"id", "question", "meta", "params"}``, ``meta`` without what holds
the gold answer (:data:`HIDDEN_META`) — and an endpoint:
an ``entry`` function is called in this process as ``function(task, endpoint)`` (awaited if it
is async, else run in a thread) with an :class:`Endpoint`; a ``command`` runs once per task with
the task as JSON on stdin, an environment without provider key variables, and
``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` (and ``MASBENCH_*``) set to the endpoint. It returns the
answer: a text (its answer extracted as the design's ``answer`` says), or structured — a list of
answers, or ``{"answer": ..., "text": ...}`` (a command prints it as JSON).

How a cell ends: ``ok``; ``budget_exhausted`` when a request was refused for the budget (whether
the program then answered, raised or exited non-zero); ``failed`` when it raised, exited non-zero
or ran past ``timeout_s`` (the reason, a command's stderr tail, is the result's error). Calls made
before any of these are recorded and counted. One ``nodes`` row per agent says what it spent."""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import os
import re
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .. import telemetry
from ..budget import BudgetMeter
from ..llm.endpoint import AGENT_HEADER, MeteringEndpoint, shared_endpoint
from ..llm.program_cell import ProgramCell
from ..runtime import DesignResult, RunContext
from ..runtime.scope import SEED_STRIDE  # a cell's seed base, as for a YAML design's calls
from ..spec.program import ProgramSpec
from ..store.rows import NodeRow
from ..text import extract_answers, normalize_answer
from .program_entry import command_argv, load_entry, program_root
from .records import DesignSink

DRAIN_S = 10.0
"""How long a finished cell waits for its calls still in flight to settle before its result is made."""

STDERR_TAIL = 2000
"""Characters of a failed command's stderr kept as the cell's error."""

_SECRET = re.compile(r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH)($|_)", re.IGNORECASE)
_PROVIDER_PREFIXES = ("OPENAI_", "ANTHROPIC_", "AZURE_", "GEMINI_", "GOOGLE_", "VERTEX", "MISTRAL_", "COHERE_",
                      "GROQ_", "TOGETHER", "DEEPSEEK_", "XAI_", "OPENROUTER_", "HUGGINGFACE", "HF_", "AWS_",
                      "FIREWORKS_", "REPLICATE_", "PERPLEXITY", "LITELLM_", "OLLAMA_", "VLLM_")


HIDDEN_META = frozenset({"dag", "answer", "answers", "gold", "gold_names", "solution", "value", "evidence", "hops",
                         "permutation", "label", "target"})
"""Task metadata a program is never handed: what holds or leads to the gold answer (a generated
task's solution graph, a search task's gold evidence, a choice task's permutation)."""


def public_meta(meta: dict[str, Any] | None) -> dict[str, Any]:
    """A task's metadata as a program sees it: JSON data, without :data:`HIDDEN_META`."""
    return json.loads(json.dumps({k: v for k, v in (meta or {}).items() if k not in HIDDEN_META}, default=str))


class ProgramFailed(Exception):
    """The program raised, or its command exited non-zero (the message is the reason)."""


@dataclass(frozen=True, slots=True)
class AgentAccess:
    """One agent's way to the endpoint: its own token (calls it makes are attributed to it)."""

    name: str
    """The agent's name."""
    base_url: str
    """The endpoint's OpenAI base URL."""
    api_key: str
    """This agent's bearer token."""

    @property
    def headers(self) -> dict[str, str]:
        """The header that names the agent (for a client that shares the cell's token)."""
        return {AGENT_HEADER: self.name}


@dataclass(slots=True)
class Endpoint:
    """What an entry program is given to reach its models: an OpenAI base URL and a token of its
    own, the model aliases it may name, the cell's seed base, and :meth:`agent` for per-agent
    credentials. ``OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key)`` works as is."""

    base_url: str
    """``http://127.0.0.1:PORT/v1``."""
    api_key: str
    """This task's bearer token (calls with it and no agent named are the default agent's)."""
    models: list[str]
    """The model aliases the program may name."""
    seed: int
    """This cell's seed base: a request's ``seed`` is its sample index (one without gets this base
    plus how many identical requests came before it)."""
    agents: list[str]
    """The declared agent names (empty: any)."""
    _server: MeteringEndpoint = field(repr=False)
    _cell: ProgramCell = field(repr=False)
    _agents: dict[str, AgentAccess] = field(default_factory=dict, repr=False)

    @property
    def token(self) -> str:
        """Same as :attr:`api_key`."""
        return self.api_key

    @property
    def model(self) -> str:
        """The first alias (``default`` unless the design says otherwise)."""
        return self.models[0]

    def agent(self, name: str) -> AgentAccess:
        """Credentials whose calls are attributed to agent ``name`` (a ValueError if the program
        declared agents and this is not one)."""
        if self.agents and name not in self.agents:
            raise ValueError(f"agent {name!r} is not one of this program's agents ({', '.join(self.agents)})")
        a = self._agents.get(name)
        if a is None:
            a = self._agents[name] = AgentAccess(name, self.base_url, self._server.grant(self._cell, name))
        return a


def program_env(base_url: str, token: str, models: list[str], agent_tokens: dict[str, str], seed: int,
                extra_secret_names: list[str] | None = None) -> dict[str, str]:
    """A command program's environment: this process's, without any provider key or provider
    configuration variable (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``OPENAI_*``, ``AWS_*``, …,
    and every model's ``api_key_env``), with the endpoint's in their place."""
    drop = set(extra_secret_names or [])
    env = {k: v for k, v in os.environ.items()
           if k not in drop and not _SECRET.search(k) and not k.upper().startswith(_PROVIDER_PREFIXES)}
    env.update(OPENAI_BASE_URL=base_url, OPENAI_API_BASE=base_url, OPENAI_API_KEY=token, MASBENCH_BASE_URL=base_url,
               MASBENCH_API_KEY=token, MASBENCH_MODELS=",".join(models), MASBENCH_SEED=str(seed),
               MASBENCH_AGENT_KEYS=json.dumps(agent_tokens))
    return env


@dataclass(frozen=True, slots=True)
class ProgramDesign:
    """A program design of the library, run as a design (see the module docstring)."""

    name: str
    """Design name in the library."""
    spec: ProgramSpec
    """The validated program design."""
    root: Path
    """The library root its file is in (where a command runs and an entry module is also looked for)."""
    kind: str = "program"
    """Always ``program``."""

    async def run(self, task: Any, ctx: RunContext, params: dict[str, Any] | None = None, *,
                  design_sink: DesignSink | None = None) -> DesignResult:
        spec = self.spec
        server = await shared_endpoint()
        meter = BudgetMeter(ctx.budget)
        gold = [str(a) for a in (getattr(task, "answers", None) or [])]
        cell = ProgramCell(ctx.gateway, meter, tags=dict(ctx.tags), aliases=spec.models, agents=spec.agents,
                           default_agent=spec.default_agent, max_tokens=spec.max_tokens,
                           seed_base=ctx.seed * SEED_STRIDE,
                           sim={"gold": gold, "skills": list(getattr(task, "skills", None) or []),
                                "task": ctx.tags.get("task_id") or task.question})
        endpoint = Endpoint(server.base_url, server.grant(cell), list(spec.models), cell.seed_base, list(spec.agents),
                            server, cell)
        payload = {"id": getattr(task, "id", None), "question": task.question,
                   "meta": public_meta(getattr(task, "meta", None)),
                   "params": {**spec.params, **(params or {})}}
        t0 = time.perf_counter()
        output: Any = None
        error: str | None = None
        with telemetry.workflow(self.name, ctx.tags) as span:
            cell.context = contextvars.copy_context()  # the endpoint's calls: children of this span
            try:
                output = await asyncio.wait_for(self._call(payload, endpoint, ctx), spec.timeout_s)
            except asyncio.TimeoutError:
                error = f"timeout: the program ran past timeout_s = {spec.timeout_s:g} s and was stopped"
            except ProgramFailed as exc:
                error = str(exc)
            except Exception as exc:  # noqa: BLE001 - the user's code raised: the cell's failure
                error = _exception_text(exc)
            finally:
                server.revoke(cell)
                await cell.drain(DRAIN_S)
            res = self._result(task, cell, output, error, time.perf_counter() - t0)
            span.design_result(res)
        if ctx.node_sink is not None:
            for row in self._node_rows(cell, ctx.tags):
                ctx.node_sink(row)
        return res

    async def _call(self, payload: dict[str, Any], endpoint: Endpoint, ctx: RunContext) -> Any:
        spec = self.spec
        if spec.entry is not None:
            fn = load_entry(spec.entry, self.root)
            if inspect.iscoroutinefunction(fn):
                return await fn(payload, endpoint)
            out = await asyncio.to_thread(fn, payload, endpoint)
            return await out if inspect.isawaitable(out) else out
        assert spec.command is not None
        return await self._command(payload, endpoint, ctx)

    async def _command(self, payload: dict[str, Any], endpoint: Endpoint, ctx: RunContext) -> Any:
        spec = self.spec
        assert spec.command is not None
        argv = command_argv(spec.command, self.root)
        agent_tokens = {a: endpoint.agent(a).api_key for a in spec.agents}
        key_envs = [m.api_key_env for m in ctx.gateway.models.values() if m.api_key_env]
        env = program_env(endpoint.base_url, endpoint.api_key, endpoint.models, agent_tokens, endpoint.seed, key_envs)
        proc = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                    env=env, cwd=str(self.root), start_new_session=True)
        try:
            out, err = await proc.communicate(json.dumps(payload).encode())
        except BaseException:  # timed out or cancelled: the process (group) goes with it
            _kill(proc)
            await proc.wait()
            raise
        if proc.returncode != 0:
            tail = err.decode("utf-8", "replace").strip()[-STDERR_TAIL:]
            raise ProgramFailed(f"command exited with status {proc.returncode}" + (f": {tail}" if tail else ""))
        text = out.decode("utf-8", "replace").strip()
        try:
            data = json.loads(text)
        except ValueError:
            return text
        return data if isinstance(data, (dict, list)) else text

    def _answers(self, task: Any, output: Any) -> tuple[str, list[str]]:
        """(text, answers) of what the program returned."""
        n = max(1, len(getattr(task, "answers", None) or []))
        if isinstance(output, dict):
            text = str(output.get("text") or "")
            given = output.get("answers", output.get("answer"))
            if given is None:
                return text, extract_answers(text, n, self.spec.answer.extract, self.spec.answer.field)
            vals = given if isinstance(given, list) else [given]
            return text or ", ".join(str(v) for v in vals), [normalize_answer(str(v)) for v in vals[:n]]
        if isinstance(output, list):
            return ", ".join(str(v) for v in output), [normalize_answer(str(v)) for v in output[:n]]
        text = "" if output is None else str(output)
        return text, extract_answers(text, n, self.spec.answer.extract, self.spec.answer.field)

    def _result(self, task: Any, cell: ProgramCell, output: Any, error: str | None, wall: float) -> DesignResult:
        prompt, completion, usd, calls = cell.totals
        meter = cell.meter
        text, answers = ("", []) if error is not None else self._answers(task, output)
        if meter.exhausted:
            status = "budget_exhausted"
        elif error is not None:
            status = "failed"
        else:
            status = "ok"
        agents = {a: {"calls": t.calls, "tokens": t.tokens, "cost_usd": t.cost, "errors": t.errors,
                      "refused": t.refused} for a, t in cell.by_agent.items()}
        detail = {"program": {"entry": self.spec.entry} if self.spec.entry else {"command": self.spec.command},
                  "agents": agents, "budget": meter.summary(), "simulated": cell.simulated}
        if error is not None:
            detail["error"] = error
        return DesignResult(text=text, answers=answers, status=status, prompt_tokens=prompt,
                            completion_tokens=completion, tokens=prompt + completion, cost_usd=usd, calls=calls,
                            wall_s=wall, error=error, detail=detail)

    def _node_rows(self, cell: ProgramCell, tags: dict[str, Any]) -> list[NodeRow]:
        base = {k: tags.get(k) for k in ("run_id", "design", "task_id", "seed")}
        rows = []
        for agent, t in cell.by_agent.items():
            status = "refused" if t.refused and not t.calls else ("error" if t.errors else "ok")
            rows.append(NodeRow(**base, node=agent, op="program", agent=agent, model=",".join(t.models) or None,
                                calls=t.calls, tokens=t.tokens, cost_usd=t.cost, latency_s=t.latency_s,
                                status=status, error=t.last_error, output=None, ts=time.time(), t_start=t.t_start,
                                t_end=t.t_end))
        return rows


def _kill(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None:
        return
    try:
        os.killpg(proc.pid, 9)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass


def _exception_text(exc: BaseException) -> str:
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-3))
    return f"{type(exc).__name__}: {exc}\n{tb}"[-STDERR_TAIL:]


__all__ = ["AgentAccess", "Endpoint", "HIDDEN_META", "ProgramDesign", "ProgramFailed", "program_env", "program_root",
           "public_meta"]
