"""``command:`` programs: one process per cell, the task on stdin, the answer on stdout, and an
environment that holds the endpoint but no provider key (a canary key reaches no program, no
table, no text and no cache file)."""

from __future__ import annotations

import os

import duckdb
import pytest

from masbench.harness import RunOptions, run_suite
from masbench.testing.openai_server import FakeOpenAIServer

from program_fixtures import COMMAND, q, write_program, write_suite

CANARY = "sk-canary-7f3e9d1b2c"


def _every_text(store) -> str:
    """Every value of every table of a store, as one text."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        tables = [t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        return "\n".join(str(con.execute(f'SELECT * FROM "{t}"').fetchall()) for t in tables)
    finally:
        con.close()


@pytest.mark.slow
async def test_a_canary_provider_key_reaches_no_program_table_text_or_cache(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MY_PROVIDER_API_KEY", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY",
                "MASBENCH_CANARY_KEY"):
        monkeypatch.setenv(var, CANARY)
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.openai.com/v1")  # overridden for the program
    monkeypatch.setenv("SOME_PLAIN_SETTING", "kept")
    write_program(tmp_path, "cmd_prog", None, """
        name: cmd
        kind: program
        command: ["{python}", cmd_prog.py]
        agents: [lead, worker]
        default_agent: lead
    """)
    (tmp_path / "cmd_prog.py").write_text(COMMAND)
    async with FakeOpenAIServer() as srv:
        suite = write_suite(tmp_path, "canary", "[cmd]", model="openai/fake", n=2)
        text = suite.read_text().replace("{default: openai/fake}",
                                         "{default: {id: openai/fake, api_key_env: MASBENCH_CANARY_KEY}}")
        suite.write_text(text)
        s = await run_suite(RunOptions(suite=str(suite), lib=[str(tmp_path)], api_base={"default": srv.base_url},
                                       free=["default"]))
        sent = str(srv.stats.messages)
        auth = srv.stats.auth_headers
    assert s.failed == 0
    rows = q(s.store, "SELECT status, answer, calls FROM results WHERE run_id = ?", [s.run_id])
    assert rows == [("ok", "5", 2), ("ok", "5", 2)]
    # the program saw its own environment (the endpoint, the plain setting), and no key
    assert "Everything I can see" in sent and "SOME_PLAIN_SETTING" in sent and "MASBENCH_BASE_URL" in sent
    assert "api.openai.com" not in sent
    assert CANARY not in sent
    assert all(a == f"Bearer {CANARY}" for a in auth)  # the gateway, and only it, used the key
    assert CANARY not in _every_text(s.store)
    caches = list(tmp_path.rglob("*.sqlite*"))
    assert caches and all(CANARY.encode() not in c.read_bytes() for c in caches)
    agents = q(s.store, "SELECT agent, count(*) FROM calls WHERE run_id = ? AND purpose = 'design' GROUP BY ALL "
                        "ORDER BY agent", [s.run_id])
    assert agents == [("lead", 2), ("worker", 2)]


@pytest.mark.slow
async def test_a_failing_or_hung_command_is_the_cells_failure(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cmd_prog.py").write_text(COMMAND)
    write_program(tmp_path, "cmd_fail", None, """
        name: cmd-fail
        kind: program
        command: ["{python}", cmd_prog.py]
        params: {fail: true}
    """)
    write_program(tmp_path, "cmd_hang", None, """
        name: cmd-hang
        kind: program
        command: ["{python}", cmd_prog.py]
        params: {hang: true}
        timeout_s: 4
    """)
    suite = write_suite(tmp_path, "cmdfail", "[cmd-fail, cmd-hang]", n=1)
    s = await run_suite(RunOptions(suite=str(suite), lib=[str(tmp_path)]))
    rows = dict(q(s.store, "SELECT design, status || ' | ' || error FROM results WHERE run_id = ?", [s.run_id]))
    assert rows["cmd-fail"].startswith("failed | command exited with status 3: something broke in the program")
    assert rows["cmd-hang"].startswith("failed | timeout: the program ran past timeout_s = 4 s")
    pid = int((tmp_path / "hung.pid").read_text())
    with pytest.raises(ProcessLookupError):  # killed, and reaped
        os.kill(pid, 0)
