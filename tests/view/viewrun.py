"""The viewer tests' store: a finished simulated run (cot, cot-sc, debate-tiny and the CoT-SC pool on
sim models) and helpers that read what its pages must show. Importable by the tests of tests/view/
(pytest puts this folder on the path).

The transcripts the pages show are the ones the run recorded (``transcripts: full``, the default);
:func:`poison_reply` plants a hostile reply for the escaping test.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: simsuite

from masbench.harness import RunOptions, run_suite  # noqa: E402
from masbench.store import Store, text_hash  # noqa: E402
from simsuite import write_suite  # noqa: E402

DESIGNS = "[cot, {design: cot-sc, params: {k: 3}}, debate-tiny]"
HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>"
"""The reply :func:`poison_reply` plants (and the escaping test looks for, escaped)."""
FIRST_TASK = "depth-1-test-s3-0000"
"""The task whose cot cell gets the hostile reply."""


def build_run(tmp: Path) -> tuple[Path, str]:
    """Run the simulated suite into ``tmp``; (store path, run id)."""
    suite = write_suite(tmp, name="viewsim", n=4, designs=DESIGNS, k_max=5)
    s = asyncio.run(run_suite(RunOptions(suite=str(suite))))
    assert s.failed == 0
    assert untranscribed_calls(Path(s.store), s.run_id) == 0  # the run's own recorded transcripts
    poison_reply(Path(s.store), s.run_id, "cot", FIRST_TASK)
    return Path(s.store), s.run_id


def untranscribed_calls(store: Path, run_id: str) -> int:
    """Calls of ``run_id`` without a ``call_messages`` row (0: the recorder kept every transcript)."""
    st = Store(store, read_only=True)
    try:
        return int(st.sql("""SELECT count(*) FROM calls c WHERE run_id = ? AND NOT EXISTS (
                                 SELECT 1 FROM call_messages m WHERE m.run_id = c.run_id AND m.call_id = c.call_id)""",
                          [run_id])[0][0])
    finally:
        st.close()


def poison_reply(store: Path, run_id: str, design: str, task: str, seed: int = 0) -> str:
    """Make one design call's reply (and the cell's answer) :data:`HOSTILE`; returns the call id."""
    con = duckdb.connect(str(store))
    try:
        call_id = con.execute("SELECT call_id FROM calls WHERE run_id = ? AND design = ? AND task_id = ? AND seed = ? "
                              "ORDER BY ts LIMIT 1", [run_id, design, task, seed]).fetchall()[0][0]
        h = text_hash(HOSTILE)
        con.execute("INSERT INTO texts SELECT ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM texts WHERE text_hash = ?)",
                    [h, HOSTILE, len(HOSTILE), h])  # once, as the writer stores a text
        con.execute("UPDATE call_messages SET text_hash = ? WHERE run_id = ? AND call_id = ? AND direction = 'output'",
                    [h, run_id, call_id])
        con.execute("UPDATE results SET answer = ? WHERE run_id = ? AND design = ? AND task_id = ? AND seed = ?",
                    [HOSTILE, run_id, design, task, seed])
        return str(call_id)
    finally:
        con.close()


def debater_call(store: Path, run_id: str, design: str, task: str, seed: int = 0) -> dict:
    """The first debater call of a cell: its token columns and one of its input message texts and reply."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        cols = ["call_id", "prompt_tokens", "completion_tokens", "prompt_fresh_tokens", "cached_tokens",
                "cache_write_tokens", "completion_visible_tokens", "reasoning_tokens"]
        row = con.execute(f"SELECT {', '.join(cols)} FROM calls WHERE run_id = ? AND design = ? AND task_id = ? "
                          "AND seed = ? AND agent LIKE '%debater%' ORDER BY coalesce(t_start, ts), sample_index LIMIT 1",
                          [run_id, design, task, seed]).fetchall()[0]
        call = dict(zip(cols, row))
        msgs = con.execute("SELECT direction, position, role, t.text FROM call_messages m JOIN texts t USING (text_hash) "
                           "WHERE m.run_id = ? AND m.call_id = ? ORDER BY direction, position",
                           [run_id, call["call_id"]]).fetchall()
        call["inputs"] = [r[3] for r in msgs if r[0] == "input"]
        call["reply"] = next(r[3] for r in msgs if r[0] == "output")
        return call
    finally:
        con.close()


def discordant_cell(store: Path, run_id: str, design: str) -> tuple[str, int]:
    """A (task, seed) where ``design`` is wrong (there must be one)."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        return tuple(con.execute("SELECT task_id, seed FROM results WHERE run_id = ? AND design = ? AND NOT correct "
                                 "ORDER BY task_id, seed LIMIT 1", [run_id, design]).fetchall()[0])  # type: ignore[return-value]
    finally:
        con.close()


@pytest.fixture(scope="session")
def view_run(tmp_path_factory) -> tuple[Path, str]:
    """(store path, run id) of a finished simulated run with transcripts (the tests only read it)."""
    return build_run(tmp_path_factory.mktemp("viewrun"))


ARTIFACTS = Path(__file__).resolve().parents[2] / "runs" / "artifacts" / "view"
"""Where the browser test keeps its screenshots (runs/ is gitignored; CI may collect the folder)."""
