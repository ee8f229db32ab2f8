"""Scripted designer replies, for tests and demonstrations.

:class:`ScriptedDesignerGateway` is the one scripted gateway (:class:`masbench.llm.scripted.
ScriptedGateway`: a real gateway — call rows, usage, cost, cache, retries) with a script built
here: *designer* calls — those whose request metadata says ``{"sim": {"mode": "design", "role":
...}}`` — are answered from the designer script (valid, invalid or hostile designs,
decompositions, anything), and every other call (the agents of the designs being run, the
verifier) by the seeded simulator of the model, as a ``sim/…`` model would answer it. Production
code does not change: designers always call ``gateway.complete``.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from typing import Any, Callable

from ..llm import is_simulated
from ..llm.scripted import ScriptedGateway
from ..llm.sim import Simulator, profile_for, skill_accuracy
from ..spec.model import ModelSpec

Reply = str | Callable[[dict[str, Any]], str]


def _pick(entry: Reply | list[Reply], i: int) -> Reply:
    """The reply to attempt ``i``: a list's ``i``-th (its last one repeats; an empty list: ""), else the one reply."""
    if isinstance(entry, list):
        return entry[min(i, len(entry) - 1)] if entry else ""
    return entry


class ScriptedDesignerGateway:
    """``script``: role → a reply, a list of replies (used in order; the last one repeats), or a
    function of the request info ``{"role", "messages", "metadata", "sample_index", "n", ...}``.
    A plain list or string applies to every role. ``others``: an optional function answering the
    non-designer calls (return None to leave a call to the simulator). Every other attribute is
    the wrapped :class:`~masbench.llm.scripted.ScriptedGateway`'s."""

    def __init__(self, script: dict[str, Reply | list[Reply]] | list[Reply] | Reply,
                 models: dict[str, ModelSpec] | None = None,
                 others: Callable[[dict[str, Any]], str | None] | None = None, **kw: Any):
        self.script: dict[str, Reply | list[Reply]] = script if isinstance(script, dict) else {"*": script}
        self.others = others
        self.counts: dict[str, int] = {}
        self.requests: list[dict[str, Any]] = []
        """Every designer request: role, messages, metadata."""
        self.all_requests: list[dict[str, Any]] = []
        """Messages and metadata of every call (designer or not), e.g. to check where gold flows."""
        self._sim = Simulator()
        self.gateway = ScriptedGateway(self._answer, models=models or {"default": ModelSpec(
            id="sim/perfect", input_usd_per_mtok=1.0, output_usd_per_mtok=2.0)}, **kw)
        """The scripted gateway every call goes through."""

    def __getattr__(self, name: str) -> Any:  # complete, resolve, prices, stats, ...: the gateway's
        return getattr(self.__dict__["gateway"], name)

    def _answer(self, info: dict[str, Any]) -> str:
        """The script given to the gateway: one reply per attempt."""
        metadata = info.get("metadata") or {}
        self.all_requests.append({"messages": info["messages"], "metadata": dict(metadata)})
        sim = metadata.get("sim") or {}
        spec = self.gateway.resolve(info["alias"])[1]
        if sim.get("mode") != "design":
            text = self.others(info) if self.others is not None else None
            return text if text is not None else self._simulate(spec, info)
        info["role"] = role = str(sim.get("role", "design"))
        p = skill_accuracy(profile_for(spec.id, spec.sim), []) if is_simulated(spec) else 1.0
        text = self._reply(role, info, _draw(sim, info["sample_index"]) < p)
        self.requests.append(info)
        mt = info.get("max_tokens")
        if mt is not None and math.ceil(len(text) / 4) > mt:
            text = text[: mt * 4]  # what a model cut off at max_tokens would have sent
        return text

    def _reply(self, role: str, info: dict[str, Any], correct: bool = True) -> str:
        entry = self.script.get(role, self.script.get("*"))
        if entry is None:
            return pick_reply((info.get("metadata") or {}).get("sim") or {}, correct, info.get("sample_index", 0))
        i = self.counts.get(role, 0)
        self.counts[role] = i + 1
        info["n"] = i
        reply = _pick(entry, i)
        return reply(info) if callable(reply) else str(reply)

    def _simulate(self, spec: ModelSpec, info: dict[str, Any]) -> str:
        """The simulator's reply to a non-designer call (its faults raise, so the attempt fails)."""
        if not is_simulated(spec):
            raise RuntimeError(f"scripted designer gateway: non-designer calls need a sim/… model, "
                               f"{info['alias']!r} is {spec.id!r}")
        coro = self._sim.complete(spec.id, profile_for(spec.id, spec.sim), info["messages"], info.get("max_tokens"),
                                  info["sample_index"], info["attempt"], (info.get("metadata") or {}).get("sim"))
        try:  # the simulator awaits nothing unless a latency is configured: run it to completion here
            coro.send(None)
        except StopIteration as done:
            return done.value.text
        coro.close()
        raise RuntimeError("scripted designer gateway: simulated latency (latency_ms > 0) is not supported")


def _draw(meta: dict[str, Any], sample_index: int, salt: str = "correct") -> float:
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
        global _HOOKED
        if not _HOOKED:
            sys.addaudithook(_audit)
            _HOOKED = True
        _GUARDS.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _GUARDS.remove(self)
