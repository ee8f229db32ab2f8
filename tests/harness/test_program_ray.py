"""Program designs on the Ray engine: each Ray worker's loop starts its own metering endpoint; the
rows are an in-process run's."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
ray = pytest.importorskip("ray")

from masbench.harness import RunOptions, run_suite  # noqa: E402
from program_fixtures import SOLVER_CRITIC, q, write_program, write_suite  # noqa: E402
from simsuite import counts  # noqa: E402

CALLS = ("SELECT design, task_id, seed, agent, sample_index, prompt_tokens, completion_tokens FROM calls "
         "WHERE run_id = ? AND purpose = 'design' ORDER BY ALL")


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray (or the one this process already has)."""
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    yield ray.get_runtime_context().gcs_address
    if started:
        ray.shutdown()


@pytest.mark.slow
async def test_program_designs_run_on_ray_like_in_process(tmp_path, monkeypatch, local_ray):
    monkeypatch.chdir(tmp_path)
    rows = {}
    for engine in ("local", "ray"):
        root = tmp_path / engine
        write_program(root, "sc_ray", SOLVER_CRITIC,
                      "name: solver-critic\nkind: program\nentry: sc_ray:solve\nagents: [solver, critic]\n")
        suite = write_suite(root, "rayprog", "[cot, solver-critic]", n=4)
        opts = RunOptions(suite=str(suite), lib=[str(root)], cache=False, engine=engine,
                          workers=2 if engine == "ray" else 1)
        if engine == "ray":
            opts.address = local_ray
        s = await run_suite(opts)
        assert s.failed == 0
        rows[engine] = (counts(s.store, s.run_id), q(s.store, CALLS, [s.run_id]))
    assert rows["ray"] == rows["local"]
    assert {r[3] for r in rows["ray"][1] if r[0] == "solver-critic"} == {"solver", "critic"}
