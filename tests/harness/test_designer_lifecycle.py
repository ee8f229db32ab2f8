"""A designer run's lifecycle is the run session's: a run that crashes mid-way (its backend
raises, or a model turns out misconfigured) is marked ``failed`` with the reason, not
``finished``; the rows acknowledged before the crash stay."""

from __future__ import annotations

from pathlib import Path

import pytest

from masbench.design.holistic import HolisticConfig
from masbench.design.scripted import ScriptedDesignerGateway
from masbench.design.session import holistic_session
from masbench.harness import run_designer_suite
from masbench.harness.failures import RunAborted
from masbench.harness.suite_run import RunOptions, prepare
from masbench.store import Store

SUITE = """name: tiny
models:
  default: {{id: sim/p60, input_usd_per_mtok: 1.0, output_usd_per_mtok: 2.0}}
tasks:
  - {{generator: masbench.depth, values: [1], n: 3, seed: 0}}
designs: [cot]
cot_sc: {{k_max: 2, bootstrap: 0}}
budget: {{per_task_tokens: 20000}}
store: {store}
"""
PLAN = "name: just-cot\nnodes:\n  s: {agent: cot-solver}\noutput: s\n"
DECOMPOSE = '{"subtasks": [{"id": "s1", "task": "Solve it.", "block": "cot"}]}'


def _prep(tmp_path: Path):
    (tmp_path / "tasks").mkdir()
    p = tmp_path / "tasks" / "tiny.yaml"
    p.write_text(SUITE.format(store=tmp_path / "s.duckdb"))
    return prepare(RunOptions(suite=str(p)))


def _runs(path: Path) -> list[tuple]:
    with Store(path, read_only=True) as st:
        return st.sql("SELECT status, reason FROM runs")


class CrashingBackend(ScriptedDesignerGateway):
    """The scripted gateway, whose backend goes down at the ``at``-th call (it raises)."""

    def __init__(self, *a, at: int, **kw):
        super().__init__(*a, **kw)
        self.__dict__["n"], self.__dict__["at"] = 0, at

    async def complete(self, *a, **kw):
        self.__dict__["n"] += 1
        if self.n == self.at:
            raise RuntimeError("backend down")
        return await self.gateway.complete(*a, **kw)


@pytest.mark.slow
async def test_a_crashed_holistic_search_is_marked_failed_with_its_reason(tmp_path) -> None:
    prep = _prep(tmp_path)
    gw = CrashingBackend({"holistic": PLAN}, models=prep.models, at=2)
    with pytest.raises(RuntimeError, match="backend down"):
        await holistic_session(prep, tmp_path / "s.duckdb", HolisticConfig(n=3), gateway=gw)
    assert _runs(tmp_path / "s.duckdb") == [("failed", "RuntimeError: backend down")]
    with Store(tmp_path / "s.duckdb", read_only=True) as st:
        assert st.sql("SELECT count(*) FROM designs")[0][0] == 1  # the one design before the crash was kept


@pytest.mark.slow
async def test_a_meta_designer_run_stopped_by_a_misconfigured_model_is_marked_failed(tmp_path) -> None:
    prep = _prep(tmp_path)
    gw = ScriptedDesignerGateway({"decompose": DECOMPOSE}, models=prep.models)

    def misconfigured(info):  # the first cell's verifier call reveals a bad key; the run must stop
        gw.__dict__["fatal"] = ("default", "sim/p60", "AuthenticationError: invalid api key")
        return None

    gw.others = misconfigured
    with pytest.raises(RunAborted) as exc:
        await run_designer_suite(prep, tmp_path / "s.duckdb", "meta-designer", {"max_rounds": 1},
                                 concurrency=1, gateway=gw)
    assert _runs(tmp_path / "s.duckdb") == [("failed", str(exc.value))]
    assert "misconfigured" in str(exc.value)


@pytest.mark.slow
async def test_a_designer_run_that_ends_normally_is_finished(tmp_path) -> None:
    prep = _prep(tmp_path)
    gw = ScriptedDesignerGateway({"holistic": PLAN}, models=prep.models)
    res = await holistic_session(prep, tmp_path / "s.duckdb", HolisticConfig(n=2), gateway=gw)
    assert len(res.records) == 2 and _runs(tmp_path / "s.duckdb") == [("finished", None)]
