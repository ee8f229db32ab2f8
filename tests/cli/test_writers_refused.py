"""Every command that writes a store takes the writer lock through the run session: while another
process holds it, each refuses with the one line `masbench run` gives, exits 2 and leaves the
store as it was (byte for byte)."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from masbench.cli import app
from masbench.harness.suite_run import RunOptions, run_suite
from masbench.store import WriterLock

SUITE = """name: tiny
models:
  default: {{id: sim/p60, input_usd_per_mtok: 1.0, output_usd_per_mtok: 2.0}}
tasks:
  - {{generator: masbench.depth, values: [1], n: 2, seed: 0}}
designs: [cot]
cot_sc: {{k_max: 2, bootstrap: 0}}
budget: {{per_task_tokens: 20000}}
store: {store}
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    d = tmp_path_factory.mktemp("busy")
    (d / "tasks").mkdir()
    suite = d / "tasks" / "tiny.yaml"
    store = d / "runs" / "tiny.duckdb"
    suite.write_text(SUITE.format(store=store))
    summary = asyncio.run(run_suite(RunOptions(suite=str(suite))))
    return {"suite": suite, "store": store, "run_id": summary.run_id}


def _digest(store: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(store.parent.glob(store.name + "*")):
        if not p.name.endswith(".lock"):
            h.update(p.name.encode() + p.read_bytes())
    return h.hexdigest()


def _refused(*commands: list[str], store: Path) -> list[str]:
    """Each command's one error line, invoked while the test holds the writer lock."""
    before = _digest(store)
    out = []
    with WriterLock(store, what="the other writer"):
        for args in commands:
            r = CliRunner().invoke(app, args)
            assert r.exit_code == 2, (args, r.output)
            lines = [ln for ln in r.output.splitlines() if ln.startswith("error:")]
            assert len(lines) == 1, (args, r.output)
            out.append(lines[0])
            assert _digest(store) == before, f"{args[0]} touched the store"
    return out


COMMANDS = {
    "stats": lambda w: ["stats", "--store", str(w["store"])],
    "reprice": lambda w: ["reprice", "--store", str(w["store"]), "--own"],
    "route outcomes": lambda w: ["route", "outcomes", "--store", str(w["store"])],
    "design meta": lambda w: ["design", "meta", "--suite", str(w["suite"]), "--store", str(w["store"]), "--limit", "1"],
    "design holistic": lambda w: ["design", "holistic", "--suite", str(w["suite"]), "--store", str(w["store"]),
                                  "--n", "1"],
    "design meta --run": lambda w: ["design", "meta", "--suite", str(w["suite"]), "--store", str(w["store"]),
                                    "--run", w["run_id"], "--limit", "1"],
}


@pytest.mark.slow
def test_masbench_run_refuses_a_second_writer(world) -> None:
    with WriterLock(world["store"], what="the other writer") as lock:
        holder = lock.holder()
    line, = _refused(["run", str(world["suite"])], store=world["store"])
    assert line.startswith(f"error: store {world['store']} is being written by pid ")
    assert line.endswith("(the other writer); wait for it to finish (watch it with `masbench status`) or use "
                         "another --store") and holder.startswith("pid ")


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_writing_command_refuses_with_the_same_line(world, name) -> None:
    run_line, line = _refused(["run", str(world["suite"])], COMMANDS[name](world), store=world["store"])
    assert line == run_line


@pytest.mark.parametrize("name", ["stats", "reprice", "route outcomes"])
def test_the_commands_still_write_when_the_store_is_free(world, name) -> None:
    r = CliRunner().invoke(app, COMMANDS[name](world))
    assert r.exit_code == 0, r.output
