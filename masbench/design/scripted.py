"""Scripted designer replies, for tests and demonstrations.

:class:`ScriptedDesignerGateway` is a real :class:`~masbench.llm.Gateway` (call rows, usage,
cost, cache, retries): *designer* calls — those whose request metadata says
``{"sim": {"mode": "design", "role": ...}}`` — are answered from a script (valid, invalid or
hostile designs, decompositions, anything), and every other call (the agents of the designs being
run, the verifier) goes to the seeded simulator of the model as usual. Production code does not
change: designers always call ``gateway.complete``.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from ..llm import CallResult, Gateway, prompt_token_bound
from ..spec.model import ModelSpec

Reply = str | Callable[[dict[str, Any]], str]


class ScriptedDesignerGateway(Gateway):
    """``script``: role → a reply, a list of replies (used in order; the last one repeats), or a
    function of the request info ``{"role", "messages", "metadata", "sample_index", "n"}``.
    A plain list or string applies to every role. ``others``: an optional function answering the
    non-designer calls (return None to leave a call to the simulator)."""

    def __init__(self, script: dict[str, Reply | list[Reply]] | list[Reply] | Reply,
                 models: dict[str, ModelSpec] | None = None,
                 others: Callable[[dict[str, Any]], str | None] | None = None, **kw: Any):
        kw.setdefault("retry_base_s", 0.0001)
        kw.setdefault("retry_max_s", 0.001)
        super().__init__(models or {"default": ModelSpec(id="sim/perfect", input_usd_per_mtok=1.0,
                                                         output_usd_per_mtok=2.0)}, **kw)
        self.script = script if isinstance(script, dict) else {"*": script}
        self.others = others
        self.counts: dict[str, int] = {}
        self.requests: list[dict[str, Any]] = []
        """Every designer request: role, messages, metadata."""
        self.all_requests: list[dict[str, Any]] = []
        """Messages and metadata of every call (designer or not), e.g. to check where gold flows."""

    def _reply(self, role: str, info: dict[str, Any], correct: bool = True) -> str:
        entry = self.script.get(role, self.script.get("*"))
        if entry is None:
            return pick_reply((info.get("metadata") or {}).get("sim") or {}, correct, info.get("sample_index", 0))
        i = self.counts.get(role, 0)
        self.counts[role] = i + 1
        info["n"] = i
        if isinstance(entry, list):
            entry = entry[min(i, len(entry) - 1)] if entry else ""
        return entry(info) if callable(entry) else str(entry)

    async def _once(self, alias: str, spec: ModelSpec, messages: list[dict[str, Any]], req: dict[str, Any],
                    sample_index: int, attempt: int, metadata: dict[str, Any] | None, call_id: str,
                    tags: dict[str, Any] | None = None) -> CallResult:
        self.all_requests.append({"messages": messages, "metadata": dict(metadata or {})})
        sim = (metadata or {}).get("sim") or {}
        info = {"messages": messages, "metadata": metadata, "sample_index": sample_index}
        if sim.get("mode") != "design":
            text = self.others(info) if self.others is not None else None
            if text is None:
                return await super()._once(alias, spec, messages, req, sample_index, attempt, metadata, call_id, tags)
        else:
            info["role"] = role = str(sim.get("role", "design"))
            from ..llm.sim import profile_for, skill_accuracy

            p = skill_accuracy(profile_for(spec.id, spec.sim), []) if spec.provider == "sim" else 1.0
            correct = _draw(sim, sample_index) < p
            text = self._reply(role, info, correct)
            self.requests.append(info)
        pt = prompt_token_bound(self, alias, messages)
        ct = max(1, math.ceil(len(text) / 4))
        mt = req.get("max_tokens")
        finish = "stop"
        if mt is not None and ct > mt:
            ct, finish = mt, "length"
            text = text[: mt * 4]
        cost = self.prices(alias).cost(pt, ct)
        return CallResult(text, pt, ct, 0, cost, 0.0, False, attempt, None, spec.id, alias, True, finish, call_id)


def _draw(meta: dict[str, Any], sample_index: int, salt: str = "correct") -> float:
    import hashlib
    import json

    h = hashlib.blake2b(json.dumps([salt, meta.get("role"), meta.get("candidates"), sample_index], sort_keys=True,
                                   default=str).encode(), digest_size=8).digest()
    return int.from_bytes(h, "big") / 2 ** 64


def pick_reply(meta: dict[str, Any], correct: bool, sample_index: int = 0) -> str:
    """What a simulated designer answers (the reference for a simulator ``design`` mode): one of
    ``meta["candidates"]`` when the draw is correct, else one of ``meta["wrong"]``."""
    good = [str(x) for x in meta.get("candidates") or []]
    bad = [str(x) for x in meta.get("wrong") or []]
    pool = good if (correct and good) or not bad else bad
    if not pool:
        return "I have no design for this."
    return pool[int(_draw(meta, sample_index, "pick") * len(pool)) % len(pool)]


__all__ = ["ExecutionGuard", "ScriptedDesignerGateway", "pick_reply"]


# --------------------------------------------------------------------------- an execution guard

_SPAWN_EVENTS = ("os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "pty.spawn",
                 "subprocess.Popen", "os.startfile")
_GUARDS: list["ExecutionGuard"] = []
_HOOKED = False


def _audit(event: str, args: tuple) -> None:
    if not _GUARDS:
        return
    for g in list(_GUARDS):
        g._see(event, args)


class ExecutionGuard:
    """Records, while active, every attempt to start a process and every ``compile``/``exec`` of
    source text containing one of ``markers`` (strings planted in hostile designer output). Uses
    :func:`sys.addaudithook`, so it sees ``eval``/``exec``/``compile``, ``os.system``,
    ``subprocess`` and friends wherever they are called from."""

    def __init__(self, markers: list[str] | tuple[str, ...] = ()):
        self.markers = tuple(markers)
        self.events: list[tuple[str, str]] = []

    def _see(self, event: str, args: tuple) -> None:
        if event.startswith(_SPAWN_EVENTS):
            self.events.append((event, repr(args)[:200]))
        elif event in ("compile", "exec") and self.markers:
            blob = args[0] if args else None
            if isinstance(blob, bytes):
                blob = blob.decode("utf-8", "replace")
            elif not isinstance(blob, str):
                blob = getattr(getattr(blob, "co_consts", None), "__repr__", lambda: "")()
            if any(m in blob for m in self.markers):
                self.events.append((event, blob[:200]))

    def __enter__(self) -> "ExecutionGuard":
        import sys

        global _HOOKED
        if not _HOOKED:
            sys.addaudithook(_audit)
            _HOOKED = True
        _GUARDS.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _GUARDS.remove(self)
