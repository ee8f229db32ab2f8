"""The embedded engine's scheduling across decoders (no model: calls carry ready-made requests)."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, cast

import pytest

from masbench.llm.embedded import EmbeddedUnavailableError
from masbench.llm.embedded.decode import SampleRequest
from masbench.llm.embedded.engine import _EmbeddedEngine, _Job, _Pending, engine_decoders

P, Q, R = [1, 2, 3], [1, 2, 4], [9, 9]


def call(prompt: list[int]) -> _Pending:
    req = SampleRequest(prompt=prompt, n_max=4, stops=[], temperature=0.8, top_p=0.95, seed=0, finish=lambda r: None)
    return _Pending([], {}, Future(), req)


def job() -> _Job:
    return _Job(lambda: None, Future())


class _Cache:
    """A decoder stand-in whose prefix cache holds one prompt."""

    def __init__(self, prompt: list[int]) -> None:
        self.prompt = prompt

    def holds(self, prompt: list[int]) -> bool:
        return prompt[:-1] == self.prompt[:-1]


def engine(*items: _Pending | _Job, busy: dict[int, list[int] | None] | None = None,
           caches: list[list[int] | None] | None = None) -> _EmbeddedEngine:
    e = _EmbeddedEngine()
    e._backlog.extend(items)
    e._busy.update(busy or {})
    e._decoders = cast(Any, [None if c is None else _Cache(c) for c in (caches or [])])
    return e


def test_an_idle_worker_takes_the_oldest_call_whose_prompt_no_other_worker_decodes():
    a, b, c = call(P), call(Q), call(P)
    e = engine(a, b, c, busy={0: P})
    assert e._pick(1) is b  # a and c wait to join worker 0's group of P
    assert list(e._backlog) == [a, c]
    assert e._pick(2) is None  # nothing left that no worker decodes
    assert list(e._backlog) == [a, c]


def test_with_no_worker_busy_calls_are_taken_in_arrival_order():
    a, b = call(Q), call(P)
    e = engine(a, b)
    assert e._pick(0) is a
    assert e._pick(1) is b
    assert e._pick(0) is None and not e._backlog


def test_a_job_waits_for_running_groups_and_the_calls_after_it_wait_for_the_job():
    a, j, b = call(P), job(), call(Q)
    e = engine(a, j, b, busy={0: R})
    assert e._pick(1) is a  # before the job in arrival order: served
    assert e._pick(1) is None  # the job waits for worker 0; b waits behind the job
    assert list(e._backlog) == [j, b]
    e._busy.clear()
    assert e._pick(1) is j
    e._busy[1] = None  # the job runs: no worker takes a call meanwhile
    assert e._pick(0) is None and list(e._backlog) == [b]


def test_a_call_is_left_to_the_idle_worker_whose_prefix_cache_holds_its_prompt():
    a = call(P)
    e = engine(a, caches=[[7, 7, 7], P])
    assert e._pick(0) is None  # worker 1 is idle and holds P: its next group evaluates one token
    assert e._pick(1) is a
    b = call(P)
    e = engine(b, busy={1: R}, caches=[[7, 7, 7], P])
    assert e._pick(0) is b  # that worker is busy with another prompt: do not wait for it
    c = call(P)
    e = engine(c, caches=[P, P])
    assert e._pick(0) is c  # both hold it: the first to look takes it


def test_a_call_that_cannot_be_prepared_is_dropped_with_its_error(monkeypatch: pytest.MonkeyPatch):
    bad, good = _Pending([], {}, Future()), call(Q)

    def refuse(p: _Pending) -> Any:
        raise ValueError("too long")

    e = engine(bad, good)
    monkeypatch.setattr(e, "_request", refuse)
    assert e._pick(0) is good
    assert isinstance(bad.future.exception(), ValueError) and not e._backlog


def test_decoders_default_to_the_engine_threads_and_follow_the_env(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("MASBENCH_EMBEDDED_DECODERS", raising=False)
    monkeypatch.setenv("MASBENCH_EMBEDDED_THREADS", "3")
    assert engine_decoders() == 3
    monkeypatch.setenv("MASBENCH_EMBEDDED_DECODERS", "1")
    assert engine_decoders() == 1
    monkeypatch.setenv("MASBENCH_EMBEDDED_DECODERS", "two")
    with pytest.raises(EmbeddedUnavailableError, match="MASBENCH_EMBEDDED_DECODERS"):
        engine_decoders()
