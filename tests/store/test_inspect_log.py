"""``masbench export --format inspect`` read back by inspect_ai's own reader: the quickstart's
designs and CoT-SC pool on a SIMULATED model (priced, with some permanent server errors so cells
fail), exported by the command, every log read with ``inspect_ai.log.read_eval_log``; samples are
the store's cells, model events its calls, role usage its per-agent tokens and cost (summed here
by SQL on the store, not by the exporter's code); planted breakages fail the reader; the bundle
``inspect view bundle`` makes of the export shows a sample in headless Chromium."""

from __future__ import annotations

import ast
import copy
import functools
import http.server
import json
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import duckdb
import pytest
import yaml
from typer.testing import CliRunner

from masbench.cli import app
from masbench.harness import RunOptions, run_suite
from masbench.store import POOL_DESIGN, Store
from masbench.store.inspect_log import POOL_LABEL, export_inspect

from chromium import browser  # noqa: F401 - fixture
from simsuite import write_suite

from inspect_ai import log as inspect_log  # the `inspect` extra (scripts/setup.sh installs it): missing FAILS

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "runs" / "artifacts" / "inspect"


def _q(store: Path, sql: str, params: list | None = None) -> list[tuple]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


@pytest.fixture(scope="module")
async def exported(tmp_path_factory):
    """The quickstart suite on a priced simulated model (3 tasks of each level), exported by the CLI."""
    tmp = tmp_path_factory.mktemp("inspect")
    data = yaml.safe_load((ROOT / "tasks" / "quickstart.yaml").read_text(encoding="utf-8"))
    data["models"] = {"default": {"id": "sim/quickstart-shape", "input_usd_per_mtok": 0.15, "output_usd_per_mtok": 0.6,
                                  "max_attempts": 1,  # a failed call fails at once (no backoff)
                                  "sim": {"accuracy": {"default": 0.3}, "completion_tokens": {"mean": 12, "sd": 2},
                                          "faults": {"rate": 0.15, "permanent": True, "kinds": ["server_error"]}}}}
    data["store"] = str(tmp / "q.duckdb")
    (tmp / "tasks").mkdir()
    suite = tmp / "tasks" / "quickstart.yaml"
    suite.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    s = await run_suite(RunOptions(suite=str(suite), limit=3))
    out = tmp / "logs"
    res = CliRunner().invoke(app, ["export", "--format", "inspect", "--store", str(s.store), "--out", str(out),
                                   "--run", s.run_id])
    assert res.exit_code == 0, res.output
    paths = sorted(out.glob("*.json"))
    assert [p.as_posix() for p in paths] == sorted(res.output.split())
    return Path(s.store), s.run_id, paths


def _logs(exported) -> dict[str, object]:
    """solver label → the log as inspect_ai reads it."""
    _, _, paths = exported
    logs = {}
    for p in paths:
        log = inspect_log.read_eval_log(str(p))
        logs[log.eval.metadata["masbench"]["design"]] = log
    return logs


@pytest.mark.slow  # the fixture runs a whole (simulated) suite
def test_every_log_reads_back_samples_are_cells_and_events_are_calls(exported):
    store, run, _ = exported
    logs = _logs(exported)
    designs = [r[0] for r in _q(store, "SELECT DISTINCT design FROM results WHERE run_id = ?", [run])]
    assert sorted(logs) == sorted(designs + [POOL_LABEL]) and len(designs) == 3
    for label, log in logs.items():
        pool = label == POOL_LABEL
        purpose, design = ("pool", POOL_DESIGN) if pool else ("design", label)
        assert log.status == "success" and log.eval.task == f"quickstart/{label}"
        assert log.eval.dataset.name == "quickstart"
        # samples = cells (the pool: one per draw, the draws as epochs)
        cells = _q(store, "SELECT task_id, seed, sample_index + 1 FROM pool WHERE run_id = ?" if pool else
                   "SELECT task_id, seed, 1 FROM results WHERE run_id = ? AND design = ?",
                   [run] if pool else [run, design])
        assert sorted((s.id, s.epoch) for s in log.samples) == sorted((t, e) for t, _, e in cells)
        assert log.eval.config.epochs == (max(e for *_, e in cells) if pool else 1)
        assert log.results.total_samples == len(cells)
        # events = calls: every call once, as a model event carrying its agent as the role
        calls = _q(store, "SELECT call_id, agent, model, error FROM calls "
                          "WHERE run_id = ? AND purpose = ? AND design = ?", [run, purpose, design])
        events = [e for s in log.samples for e in s.events if e.event == "model"]
        assert len(events) == len(calls) > 0
        by_id = {c[0]: c for c in calls}
        assert sorted(e.metadata["call_id"] for e in events) == sorted(by_id)
        for e in events:
            _, agent, model, error = by_id[e.metadata["call_id"]]
            assert (e.role, e.model, e.error) == (agent, model, error)
            assert e.input and e.output.choices[0].message.role == "assistant"
        # nodes as spans: every model event sits in an open span named after its call's node
        for s in log.samples:
            names, open_ = {}, []
            for e in s.events:
                if e.event == "span_begin":
                    names[e.id] = e.name
                    open_.append(e.id)
                elif e.event == "span_end":
                    assert open_ and open_[-1] == e.id
                    open_.pop()
                elif e.event == "model":
                    assert e.span_id in open_ and names[e.span_id] == e.metadata["node"]
            assert not open_
        # failures as sample errors
        if not pool:
            failed = {r[0] for r in _q(store, "SELECT task_id FROM results WHERE run_id = ? AND design = ? "
                                              "AND status = 'failed'", [run, design])}
            assert {s.id for s in log.samples if s.error} == failed
            assert all(s.error.message for s in log.samples if s.error)
    # the simulated faults made at least one failed call and one failed cell (else the checks above are idle)
    assert any(e.error for log in logs.values() for s in log.samples for e in s.events if e.event == "model")
    assert any(s.error for log in logs.values() for s in log.samples)


@pytest.mark.slow  # the fixture runs a whole (simulated) suite
def test_role_usage_is_the_stores_per_agent_tokens_and_cost(exported):
    store, run, _ = exported
    logs = _logs(exported)
    for label, log in logs.items():
        purpose, design = ("pool", POOL_DESIGN) if label == POOL_LABEL else ("design", label)
        want = {a: (p, c, k, usd) for a, p, c, k, usd in _q(store, """
            SELECT agent, sum(prompt_tokens), sum(completion_tokens), sum(cached_tokens), sum(cost_usd)
            FROM calls WHERE run_id = ? AND purpose = ? AND design = ? GROUP BY agent""", [run, purpose, design])}
        assert set(log.stats.role_usage) == set(want) == set(log.eval.model_roles)
        for agent, (prompt, completion, cached, usd) in want.items():
            u = log.stats.role_usage[agent]
            assert u.input_tokens + u.input_tokens_cache_read + u.input_tokens_cache_write == prompt
            assert (u.output_tokens, u.total_tokens) == (completion, prompt + completion)
            assert u.input_tokens_cache_read == cached
            assert u.total_cost == pytest.approx(usd) and usd > 0
        # the samples' role usage adds up to the log's
        per_sample = Counter()
        for s in log.samples:
            for agent, u in s.role_usage.items():
                per_sample[agent] += u.total_tokens
        assert dict(per_sample) == {a: p + c for a, (p, c, _, _) in want.items()}
        # tokens by class on each sample: the store's call_classes of that cell
        if label != POOL_LABEL:
            classes = {t: (f, v, r) for t, f, v, r in _q(store, """
                SELECT task_id, sum(fresh_tokens), sum(visible_tokens), sum(reasoning_tokens) FROM call_classes
                WHERE run_id = ? AND purpose = 'design' AND design = ? GROUP BY task_id""", [run, design])}
            for s in log.samples:
                tok = s.metadata.get("tokens")
                got = (tok["fresh_tokens"], tok["visible_tokens"], tok["reasoning_tokens"]) if tok else None
                assert got == classes.get(s.id)


@pytest.mark.slow  # the fixture runs a whole (simulated) suite
def test_scores_verdicts_and_the_curve_are_the_stores(exported):
    store, run, _ = exported
    logs = _logs(exported)
    for label, log in logs.items():
        if label == POOL_LABEL:
            curve = _q(store, "SELECT k, accuracy FROM cot_sc_curve WHERE run_id = ? AND axis = 'all'", [run])
            metrics = log.results.scores[0].metrics
            assert {m: metrics[m].value for m in metrics} == pytest.approx({f"maj@{k}": a for k, a in curve})
            n_curve = _q(store, "SELECT count(*) FROM cot_sc_curve WHERE run_id = ?", [run])[0][0]
            assert len(log.eval.metadata["cot_sc_curve"]) == n_curve
            continue
        right = {r[0]: r[1] for r in _q(store, "SELECT task_id, correct FROM results WHERE run_id = ? AND design = ?",
                                        [run, label])}
        assert {s.id: s.scores["correct"].value == "C" for s in log.samples} == right
        verdicts = _q(store, "SELECT against, unit, verdict FROM paired_tests WHERE run_id = ? AND design = ? "
                             "AND is_verdict", [run, label])
        assert verdicts and sorted((v["against"], v["unit"], v["verdict"]) for v in log.eval.metadata["verdicts"]) \
            == sorted(verdicts)
        acc = _q(store, "SELECT accuracy FROM design_comparison WHERE run_id = ? AND design = ? AND axis = 'all'",
                 [run, label])[0][0]
        assert log.results.scores[0].metrics["accuracy"].value == pytest.approx(acc)


@pytest.mark.slow  # the fixture runs a whole (simulated) suite
def test_token_counts_are_json_integers(exported):
    """The reader coerces a numeric string ("12") to an int, so the file's own types are checked here."""
    for p in exported[2]:
        raw = json.loads(p.read_text(encoding="utf-8"))
        usages = [raw["stats"]["role_usage"], raw["stats"]["model_usage"]]
        for s in raw["samples"]:
            usages += [s["role_usage"], s["model_usage"], {"output": s["output"]["usage"]}]
            usages += [{"event": e["output"]["usage"]} for e in s["events"] if e["event"] == "model"]
        counts = [v for u in usages for one in u.values() if one for k, v in one.items() if k.endswith("_tokens")]
        assert counts and all(type(v) is int for v in counts)


@pytest.mark.slow  # the fixture runs a whole (simulated) suite
@pytest.mark.parametrize("plant", ["tokens as words", "no eval.dataset", "unknown message role", "no sample epoch"])
def test_a_broken_export_fails_the_reader(exported, tmp_path, plant):
    path = next(p for p in exported[2] if "debate" in p.name)
    good = json.loads(path.read_text(encoding="utf-8"))
    bad = copy.deepcopy(good)
    if plant == "tokens as words":
        agent = next(iter(bad["stats"]["role_usage"]))
        usage = bad["stats"]["role_usage"][agent]
        usage["input_tokens"] = f"{usage['input_tokens']} tokens"
    elif plant == "no eval.dataset":
        del bad["eval"]["dataset"]
    elif plant == "unknown message role":
        bad["samples"][0]["messages"][0]["role"] = "narrator"
    else:
        del bad["samples"][0]["epoch"]
    for name, doc in (("good.json", good), ("bad.json", bad)):
        (tmp_path / name).write_text(json.dumps(doc), encoding="utf-8")
    assert len(inspect_log.read_eval_log(str(tmp_path / "good.json")).samples) == len(good["samples"])
    with pytest.raises(ValueError):  # pydantic's ValidationError is a ValueError
        inspect_log.read_eval_log(str(tmp_path / "bad.json"))


def test_the_exporter_does_not_import_inspect_ai():
    """The log format is the contract: the exporter's modules never import inspect_ai."""
    for mod in ("inspect_log", "inspect_events"):
        tree = ast.parse((ROOT / "masbench" / "store" / f"{mod}.py").read_text(encoding="utf-8"))
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert names and not [n for n in names if n.split(".")[0] == "inspect_ai"], (mod, names)


@pytest.mark.slow  # runs a whole (simulated) suite
async def test_several_seeds_are_several_samples_of_one_task(tmp_path):
    s = await run_suite(RunOptions(suite=str(write_suite(tmp_path, n=2, seeds="[0, 1]", k_max=3))))
    with Store(s.store, read_only=True) as st:
        paths = export_inspect(st, tmp_path / "logs", s.run_id)
    for p in paths:
        log = inspect_log.read_eval_log(str(p))
        label = log.eval.metadata["masbench"]["design"]
        if label == POOL_LABEL:
            want = _q(s.store, "SELECT task_id || '@seed' || seed, sample_index + 1 FROM pool WHERE run_id = ?",
                      [s.run_id])
        else:
            want = _q(s.store, "SELECT task_id || '@seed' || seed, 1 FROM results WHERE run_id = ? AND design = ?",
                      [s.run_id, label])
        assert sorted((x.id, x.epoch) for x in log.samples) == sorted(want) and len(want) > 4


def _tool_store(path: Path) -> Path:
    """A hand-built store of one tool-using cell: a model call that asks for two tool calls (one
    with arguments that failed their schema), the tool calls' rows, and the call that reads them."""
    from masbench.store import CallRow, MessageRow, NodeRow, ResultRow, StoreWriter, TextRow, ToolCallRow, text_hash

    cell = {"run_id": "tools", "purpose": "design", "design": "react", "task_id": "hop-0", "seed": 0}
    st = Store(path)
    st.sql("INSERT INTO runs(run_id, suite, status, created_at) VALUES ('tools', 'hand', 'finished', now())")
    w = StoreWriter(st)

    def text(t: str) -> str:
        w.put(TextRow(text_hash=text_hash(t), text=t, chars=len(t)))
        return text_hash(t)

    asked = [{"id": "tc-a", "type": "function", "function": {"name": "search", "arguments": '{"query": "Vell"}'}},
             {"id": "tc-b", "type": "function", "function": {"name": "calculator", "arguments": "2 +"}}]
    w.put(ResultRow(answer="the Vell", gold="the Vell", correct=True, status="ok", calls=2, wall_s=10.0, ts=1010.0,
                    **{k: v for k, v in cell.items() if k != "purpose"}))
    w.put(NodeRow(node="act", op="react", agent="searcher", status="ok", t_start=1000.0, t_end=1009.0, ts=1009.0,
                  **{k: v for k, v in cell.items() if k != "purpose"}))
    for i, (t, reply) in enumerate([(1000.0, ""), (1005.0, "Answer: the Vell")]):
        w.put(CallRow(call_id=f"c{i}", model_alias="m", model="openai/fake", node="act", agent="searcher", status="ok",
                      prompt_tokens=50, completion_tokens=10, cost_usd=0.001, t_start=t, ts=t + 1, latency_s=1.0,
                      finish_reason="tool_calls" if i == 0 else "stop", **cell))
        w.put(MessageRow(call_id=f"c{i}", direction="input", position=0, text_hash=text("Which river?"), role="user",
                         content_type="text", **cell))
        if i == 1:
            w.put(MessageRow(call_id="c1", direction="input", position=1, text_hash=text(""), role="assistant",
                             content_type="text", extra=json.dumps({"tool_calls": asked}), **cell))
            w.put(MessageRow(call_id="c1", direction="input", position=2, text_hash=text("[d7] the Vell"), role="tool",
                             content_type="text", extra=json.dumps({"tool_call_id": "tc-a", "name": "search"}), **cell))
        w.put(MessageRow(call_id=f"c{i}", direction="output", position=0, text_hash=text(reply), role="assistant",
                         content_type="text", extra=json.dumps({"tool_calls": asked}) if i == 0 else None, **cell))
    w.put(ToolCallRow(tool="search", status="ok", call_id="c0", tool_call_id="tc-a", node="act", step=0, position=0,
                      arguments='{"query": "Vell"}', latency_s=0.01, bytes_out=13, text_hash=text("[d7] the Vell"),
                      t_start=1002.0, ts=1002.5, **cell))
    w.put(ToolCallRow(tool="calculator", status="invalid_args", call_id="c0", tool_call_id="tc-b", node="act", step=0,
                      position=1, arguments=json.dumps("2 +"), error="expr: not an expression", t_start=1002.0,
                      ts=1002.1, **cell))
    w.flush()
    st.close()
    return path


def test_tool_calls_are_tool_events_and_asked_tool_calls_are_on_the_reply(tmp_path):
    with Store(_tool_store(tmp_path / "t.duckdb"), read_only=True) as st:
        (path,) = export_inspect(st, tmp_path / "logs")
    (sample,) = inspect_log.read_eval_log(str(path)).samples
    tools = [e for e in sample.events if e.event == "tool"]
    assert [(e.id, e.function, e.arguments, e.result, e.failed) for e in tools] == [
        ("tc-a", "search", {"query": "Vell"}, "[d7] the Vell", False), ("tc-b", "calculator", {}, "", True)]
    assert tools[1].error.type == "parsing" and tools[1].metadata["raw_arguments"] == "2 +"
    node_span = next(e.id for e in sample.events if e.event == "span_begin" and e.name == "act")
    assert {e.span_id for e in sample.events if e.event in ("tool", "model")} == {node_span}
    first, second = [e for e in sample.events if e.event == "model"]
    asked = first.output.choices[0].message.tool_calls
    assert [(c.id, c.function, c.arguments, c.parse_error is None) for c in asked] == [
        ("tc-a", "search", {"query": "Vell"}, True), ("tc-b", "calculator", {}, False)]
    assert first.output.choices[0].stop_reason == "tool_calls" and first.tool_choice == "auto"
    assert [m.role for m in second.input] == ["user", "assistant", "tool"]
    assert (second.input[2].tool_call_id, second.input[2].function) == ("tc-a", "search")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


@pytest.mark.slow
def test_the_inspect_view_bundle_of_an_export_shows_a_sample(exported, browser, tmp_path):  # noqa: F811
    """``inspect view bundle`` (inspect's own viewer, static) over the export, served on 127.0.0.1,
    opened in headless Chromium: the log list names each design, the debate's log lists its cells,
    and a cell's messages tab shows a debater's reply as stored."""
    _, _, paths = exported
    bundle = tmp_path / "bundle"
    inspect_cli = Path(sys.executable).with_name("inspect")
    subprocess.run([str(inspect_cli), "view", "bundle", "--log-dir", str(paths[0].parent), "--output-dir",
                    str(bundle)], check=True, capture_output=True, timeout=300)
    listing = json.loads((bundle / "logs" / "listing.json").read_text(encoding="utf-8"))
    assert sorted(v["task"] for v in listing.values()) == sorted(
        json.loads(p.read_text(encoding="utf-8"))["eval"]["task"] for p in paths)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(bundle)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        log = json.loads(next(p for p in paths if "debate" in p.name).read_text(encoding="utf-8"))
        sample = next(s for s in log["samples"] if not s.get("error") and all(
            m["content"].strip() for m in s["messages"] if m["role"] == "assistant"))
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"http://127.0.0.1:{srv.server_address[1]}/")
        page.get_by_text(log["eval"]["task"], exact=True).first.click(timeout=60000)  # log list → the debate's log
        page.get_by_text(sample["id"], exact=True).first.click(timeout=60000)  # its sample list → one cell
        page.get_by_text("Messages", exact=True).first.click(timeout=60000)
        reply = next(m for m in sample["messages"] if m["role"] == "assistant")["content"].strip()
        page.get_by_text(reply.splitlines()[-1]).first.wait_for(timeout=60000)  # a debater's reply, as stored
        assert page.get_by_text(sample["id"]).count() > 0
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "sample.png"))
        assert not errors, errors
        page.close()
    finally:
        srv.shutdown()
