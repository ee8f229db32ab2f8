"""Transcripts in whole runs: every call's messages under the run's mode (suite setting and
``--transcripts``), node and call times, a resumed run without orphan or duplicate rows, supersede,
worker shards merged, and no key in a store written over real HTTP."""

from __future__ import annotations

from pathlib import Path

import duckdb
from typer.testing import CliRunner

import pytest

from masbench.cli import app
from masbench.harness import RunOptions, run_suite
from masbench.harness.cells import config_hash
from masbench.harness.prepare import prepare
from masbench.store import TABLES

from simsuite import q, write_suite, assert_transcripts_consistent as assert_consistent

FAULTY = "{id: sim/p60-faulty, sim: {accuracy: {default: 0.6}, faults: {rate: 0.25, permanent: true, kinds: [bad_request]}}}"


def one(store: Path, sql: str, params: list | None = None):
    return q(store, sql, params)[0][0]


@pytest.mark.slow
async def test_a_full_run_keeps_every_calls_transcript_with_times(tmp_path):
    suite = write_suite(tmp_path, name="tr", n=3, designs="[cot, debate]", k_max=4)
    s = await run_suite(RunOptions(suite=str(suite)))
    store = s.store
    assert_consistent(store)
    assert one(store, "SELECT transcripts FROM runs WHERE run_id = ?", [s.run_id]) == "full"
    calls = one(store, "SELECT count(*) FROM calls")
    assert calls > 0
    # every call has its request (a user message at least) and, when it got a reply, the reply
    assert one(store, "SELECT count(DISTINCT call_id) FROM call_messages WHERE direction = 'input'") == calls
    assert one(store, "SELECT count(*) FROM call_messages WHERE direction = 'output'") == one(
        store, "SELECT count(*) FROM calls WHERE status <> 'error'")
    # the cell tags are the call's
    assert one(store, "SELECT count(*) FROM call_messages m JOIN calls c USING (call_id) WHERE "
                      "(m.run_id, m.purpose, m.design, m.task_id, m.seed) IS DISTINCT FROM "
                      "(c.run_id, c.purpose, c.design, c.task_id, c.seed)") == 0
    # the k_max pool samples of a task share one prompt: its user message is one text per cell
    per_cell = q(store, "SELECT task_id, count(DISTINCT text_hash), count(*) FROM call_messages WHERE "
                        "purpose = 'pool' AND direction = 'input' AND role = 'user' GROUP BY task_id")
    assert per_cell and all(d == 1 and n == 4 for _, d, n in per_cell)
    assert one(store, "SELECT count(*) FROM texts") < one(store, "SELECT count(*) FROM call_messages")
    # times: calls begin before they are recorded; nodes have a timeline
    assert one(store, "SELECT count(*) FROM calls WHERE t_start IS NULL OR t_start > ts") == 0
    assert one(store, "SELECT count(*) FROM calls WHERE request IS NULL") == 0
    assert one(store, "SELECT count(*) FROM nodes WHERE t_start IS NULL OR t_end IS NULL OR t_start > t_end "
                      "OR abs((t_end - t_start) - latency_s) > 1e-3") == 0
    # every call falls inside the span of a row of its node (rounds and branches share the name)
    assert one(store, "SELECT count(*) FROM calls c WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE "
                      "(c.run_id, c.design, c.task_id, c.seed, c.node) = (n.run_id, n.design, n.task_id, n.seed, n.node) "
                      "AND c.t_start >= n.t_start - 0.001 AND c.ts <= n.t_end + 0.001)") == 0


@pytest.mark.slow
async def test_transcripts_none_and_errors_from_the_suite_and_the_flag(tmp_path):
    suite = write_suite(tmp_path, name="modes", model=FAULTY, n=4, designs="[cot]", k_max=3)
    text = suite.read_text()
    base = dict(suite=str(suite), new=True, cache=False)
    none = await run_suite(RunOptions(**base, transcripts="none", store=tmp_path / "none.duckdb"))
    assert one(none.store, "SELECT count(*) FROM calls") > 0
    assert one(none.store, "SELECT count(*) FROM call_messages") == 0 and one(none.store, "SELECT count(*) FROM texts") == 0
    assert one(none.store, "SELECT transcripts FROM runs") == "none"
    suite.write_text(text + "transcripts: errors\n")
    errs = await run_suite(RunOptions(**base, store=tmp_path / "errors.duckdb"))
    st = errs.store
    assert one(st, "SELECT transcripts FROM runs") == "errors"
    bad = {c for c, in q(st, "SELECT call_id FROM calls WHERE status <> 'ok'")}
    assert bad, "the faulty model made no failed call"
    assert {c for c, in q(st, "SELECT DISTINCT call_id FROM call_messages")} == bad
    assert one(st, "SELECT count(*) FROM call_messages WHERE direction = 'output' AND call_id IN "
                   "(SELECT call_id FROM calls WHERE status = 'error')") == 0
    assert_consistent(st)
    # the setting is not part of the configuration identity: both runs are the same configuration
    p1 = prepare(RunOptions(suite=str(suite)))
    suite.write_text(text)
    p2 = prepare(RunOptions(suite=str(suite), transcripts="errors"))
    assert p1.config_hash == p2.config_hash == config_hash(p2.suite, {}, None, None)
    assert (p1.transcripts, p2.transcripts) == ("errors", "errors")


@pytest.mark.slow
def test_cli_transcripts_flag_overrides_the_suite_and_rejects_an_unknown_mode(tmp_path):
    suite = write_suite(tmp_path, name="flag", n=2, designs="[cot]", k_max=2)
    store = tmp_path / "flag.duckdb"
    res = CliRunner().invoke(app, ["run", str(suite), "--store", str(store), "--transcripts", "none"])
    assert res.exit_code == 0, res.output
    assert one(store, "SELECT transcripts FROM runs") == "none" and one(store, "SELECT count(*) FROM texts") == 0
    res = CliRunner().invoke(app, ["run", str(suite), "--store", str(store), "--transcripts", "some"])
    assert res.exit_code == 2 and "not one of full, errors, none" in res.output


@pytest.mark.slow
async def test_a_resumed_run_has_no_orphan_or_duplicate_transcript_rows(tmp_path):
    ref_dir, dir_ = tmp_path / "ref", tmp_path / "run"
    for d in (ref_dir, dir_):
        d.mkdir()
    kw = dict(name="res", n=4, designs="[cot, debate]", k_max=3)
    ref = await run_suite(RunOptions(suite=str(write_suite(ref_dir, **kw)), cache=False))
    suite = write_suite(dir_, **kw)
    s1 = await run_suite(RunOptions(suite=str(suite)))
    store = s1.store
    # the state a kill leaves: some cells' done marks never acknowledged, one of them half written
    # (its later calls and their messages lost, a text flushed alone), the run still 'running'
    con = duckdb.connect(str(store))
    lost = con.execute("SELECT task_id FROM results WHERE design = 'debate' ORDER BY task_id LIMIT 2").fetchall()
    lost = [t for t, in lost]
    con.execute("DELETE FROM results WHERE design = 'debate' AND task_id IN (?, ?)", lost)
    con.execute("DELETE FROM pool WHERE task_id = ? AND sample_index > 0", [lost[0]])
    half = con.execute("SELECT call_id FROM calls WHERE design = 'debate' AND task_id = ? ORDER BY ts DESC LIMIT 2",
                       [lost[1]]).fetchall()
    for cid, in half:
        con.execute("DELETE FROM calls WHERE call_id = ?", [cid])
        con.execute("DELETE FROM call_messages WHERE call_id = ?", [cid])
    con.execute("INSERT INTO texts VALUES ('0123456789abcdef0123456789abcdef', 'flushed alone', 13)")
    con.execute("UPDATE runs SET status = 'running'")
    con.close()
    s2 = await run_suite(RunOptions(suite=str(suite)))
    assert s2.run_id == s1.run_id and s2.ran == 3  # two design cells and one pool cell ran again
    assert_consistent(store)
    for table in ("calls", "call_messages", "texts", "results", "pool"):
        sql = f"SELECT count(*) FROM {table}"
        assert one(store, sql) == one(ref.store, sql), table
    assert {t for t, in q(store, "SELECT text FROM texts")} == {t for t, in q(ref.store, "SELECT text FROM texts")}


@pytest.mark.slow
async def test_supersede_moves_a_failed_cells_messages_and_keeps_their_texts(tmp_path):
    suite = write_suite(tmp_path, name="sup", model=FAULTY, n=4, designs="[cot]", k_max=2)
    s1 = await run_suite(RunOptions(suite=str(suite), cache=False))
    store = s1.store
    failed_calls = {c for c, in q(store, "SELECT call_id FROM calls c WHERE EXISTS (SELECT 1 FROM cell_failures f "
                                         "WHERE f.task_id = c.task_id AND f.seed = c.seed AND (f.kind = 'pool' AND "
                                         "c.purpose = 'pool' OR f.kind = 'design' AND c.design = f.design))")}
    assert failed_calls, "no cell failed"
    moved = q(store, "SELECT * EXCLUDE (run_id) FROM call_messages WHERE call_id IN "
                     f"({', '.join(repr(c) for c in failed_calls)}) ORDER BY ALL")
    # the same run again, with the model fixed: the failed cells are superseded and rerun
    suite.write_text(suite.read_text().replace(FAULTY, "sim/p60"))
    s2 = await run_suite(RunOptions(suite=str(suite), run_id=s1.run_id, cache=False))
    assert s2.run_id == s1.run_id and s2.failed == 0
    assert {c for c, in q(store, "SELECT DISTINCT call_id FROM call_messages_superseded")} == failed_calls
    assert q(store, "SELECT * EXCLUDE (run_id, superseded_at) FROM call_messages_superseded ORDER BY ALL") == moved
    assert one(store, "SELECT count(*) FROM call_messages WHERE call_id IN "
                      f"({', '.join(repr(c) for c in failed_calls)})") == 0
    assert one(store, "SELECT count(*) FROM call_messages_superseded WHERE superseded_at IS NULL") == 0
    assert_consistent(store)


@pytest.mark.slow
async def test_worker_shards_merge_texts_without_duplicates(tmp_path):
    suite = write_suite(tmp_path, name="shard", n=4, k_max=3)
    a = await run_suite(RunOptions(suite=str(suite), store=tmp_path / "one.duckdb"))
    b = await run_suite(RunOptions(suite=str(suite), store=tmp_path / "two.duckdb", workers=2, transcripts="full"))
    assert one(b.store, "SELECT transcripts FROM runs") == "full"
    assert_consistent(b.store)
    key = ("SELECT c.design, c.task_id, c.seed, c.node, c.sample_index, m.direction, m.position, m.role, t.text "
           "FROM call_messages m JOIN calls c USING (call_id) JOIN texts t USING (text_hash) ORDER BY ALL")
    assert q(a.store, key) == q(b.store, key)  # the same transcripts, whichever process wrote them
    assert one(b.store, "SELECT count(*) FROM texts") == one(a.store, "SELECT count(*) FROM texts")
    assert one(b.store, "SELECT count(*) - count(DISTINCT text) FROM texts") == 0


HTTP_SUITE = """name: canary
models:
  default: {{id: openai/fake-model, api_base: "{base}", api_key_env: MASBENCH_CANARY_KEY, max_attempts: 2,
             input_usd_per_mtok: 1.0, output_usd_per_mtok: 2.0, params: {{top_p: 0.9}}}}
tasks:
  - {{generator: masbench.depth, values: [1], n: 3, seed: 3}}
designs: [cot, debate]
cot_sc: {{k_max: 2, bootstrap: 20}}
budget: {{per_task_tokens: 20000}}
store: {store}
"""
CANARY = "sk-canary-2b7e4c9d1f3a58e6"


@pytest.mark.slow
async def test_a_run_over_http_stores_transcripts_but_never_the_key(tmp_path, http_server, monkeypatch):
    monkeypatch.setenv("MASBENCH_CANARY_KEY", CANARY)
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    srv = http_server(reply="Reasoning... Answer: 1")
    path = tmp_path / "canary.yaml"
    path.write_text(HTTP_SUITE.format(base=srv.base_url, store=tmp_path / "c.duckdb"))
    s = await run_suite(RunOptions(suite=str(path)))
    assert srv.stats.auth_headers and all(h == f"Bearer {CANARY}" for h in srv.stats.auth_headers)
    store = s.store
    assert_consistent(store)
    # what the server received is what the store says was sent (order of arrival aside)
    sent = sorted(repr([(m["role"], m["content"]) for m in msgs]) for msgs in srv.stats.messages)
    stored = q(store, "SELECT call_id, role, t.text FROM call_messages JOIN texts t USING (text_hash) "
                      "WHERE direction = 'input' ORDER BY call_id, position")
    by_call: dict[str, list] = {}
    for cid, role, text in stored:
        by_call.setdefault(cid, []).append((role, text))
    assert sorted(repr(v) for v in by_call.values()) == sent
    assert one(store, "SELECT count(*) FROM calls WHERE request NOT LIKE '%top_p%'") == 0
    con = duckdb.connect(str(store))
    con.execute("CHECKPOINT")
    every = "\n".join(repr(con.execute(f"SELECT * FROM {t}").fetchall()) for t in TABLES)
    con.close()
    assert CANARY not in every
    for f in (store, store.with_suffix(".cache.sqlite")):
        assert CANARY.encode() not in f.read_bytes(), f
