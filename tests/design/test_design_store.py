"""Generated designs in the store and the harness: a holistic search session (designs rows with
lineage and cost), export to orchestrators/generated/*.yaml that `masbench validate` accepts, a
suite run that includes them, the meta-designer joining that run, the search-cost views (amortized
and excluded), diagnostics (collapse, unanimity, verifier choices, ablation) and the CLI."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from masbench.analysis import diagnose, illusion_table
from masbench.cli import app
from masbench.design.holistic import HolisticConfig
from masbench.design.scripted import ScriptedDesignerGateway
from masbench.design.session import holistic_session
from masbench.harness import run_designer_suite
from masbench.harness.suite_run import RunOptions, prepare, run_suite
from masbench.library import Library
from masbench.store import Store, StoreWriter

PLAN = """```yaml
name: plan-or-vote
nodes:
  plan: {agent: planner}
  work: {agent: worker, map: plan.subtasks}
  combine: {agent: synthesizer, from: [plan, work]}
  direct: {agent: cot-solver, repeat: 2}
  pick: {select: selector, from: [combine, direct]}
output: pick
```"""
SC = "name: just-vote\nnodes:\n  s: {agent: cot-solver, repeat: 4}\n  v: {op: majority, from: [s, nowhere]}\n"
CODE = "```python\nimport subprocess\nsubprocess.run(['rm', '-rf', '/'])\n```"
DECOMPOSE = json.dumps({"subtasks": [{"id": "s1", "task": "Solve the whole problem carefully.", "block": "cot-sc"}]})


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """One search session, one suite run with the generated designs, the meta-designer joined."""
    import asyncio

    root = tmp_path_factory.mktemp("lib")
    (root / "tasks").mkdir()
    store_path = root / "s.duckdb"
    suite = {
        "name": "mini", "description": "one-step word problems and two independent ones",
        "models": {"default": {"id": "sim/unit", "input_usd_per_mtok": 1.0, "output_usd_per_mtok": 2.0,
                               "sim": {"accuracy": {"default": 0.6}, "completion_tokens": {"mean": 50, "sd": 10}}}},
        "tasks": [{"generator": "masbench.depth", "values": [1], "n": 3, "seed": 0},
                  {"generator": "masbench.parallel", "values": [2], "n": 2, "seed": 0}],
        "designs": ["cot", {"design": "cot-sc", "params": {"k": 3}}, "debate"],
        "cot_sc": {"k_max": 4, "bootstrap": 0}, "budget": {"per_task_tokens": 20000}, "store": str(store_path)}
    (root / "tasks" / "mini.yaml").write_text(yaml.safe_dump(suite))
    prep = prepare(RunOptions(suite=str(root / "tasks" / "mini.yaml"), lib=[root]))
    st = Store(store_path)
    w = StoreWriter(st)
    gw = ScriptedDesignerGateway({"holistic": [PLAN, CODE, SC]}, models=prep.models, sink=w.put)
    sess = asyncio.run(holistic_session(prep, st, HolisticConfig(n=3), export=root / "orchestrators" / "generated",
                                        suite_out=root / "tasks" / "mini-auto.yaml", gateway=gw))
    w.flush()
    st.close()
    summary = asyncio.run(run_suite(RunOptions(suite=str(root / "tasks" / "mini-auto.yaml"), lib=[root],
                                               store=store_path)))
    prep2 = prepare(RunOptions(suite=str(root / "tasks" / "mini-auto.yaml"), lib=[root]))
    st = Store(store_path)
    w = StoreWriter(st)
    gw = ScriptedDesignerGateway({"decompose": DECOMPOSE}, models=prep2.models, sink=w.put)
    meta = asyncio.run(run_designer_suite(prep2, st, "meta-designer", {
        "max_rounds": 2, "seed_blocks": ["cot", {"design": "cot-sc", "params": {"k": 3}}]},
        run_id=summary.run_id, gateway=gw))
    w.flush()
    yield {"root": root, "store": st, "session": sess, "run_id": summary.run_id, "meta": meta,
           "library": Library(roots=[root])}
    st.close()


@pytest.mark.slow
def test_search_session_rows_and_export(world) -> None:
    st, sess, root = world["store"], world["session"], world["root"]
    rows = st.df("SELECT * FROM designs WHERE run_id = ? ORDER BY ts", [sess.run_id])
    assert list(rows["valid"]) == [True, False, True]
    assert "code (```python)" in rows["rejection"][1]
    assert json.loads(rows["repairs"][2]) == ["dropped dangling reference 'nowhere' from nodes.v.from",
                                              "set output to the unique sink 'v'"]
    assert (rows["tokens"] > 0).all() and (rows["calls"] == 1).all() and rows["parent"].isna().all()
    calls = st.sql("SELECT count(*), sum(prompt_tokens + completion_tokens) FROM calls WHERE run_id = ? "
                   "AND purpose = 'search'", [sess.run_id])[0]
    assert calls == (3, int(rows["tokens"].sum()))
    v = st.df("SELECT * FROM design_validity WHERE run_id = ?", [sess.run_id]).iloc[0]
    assert (v["candidates"], v["valid"], v["rejected"], v["repaired"]) == (3, 2, 1, 1)
    assert v["rejection_rate"] == pytest.approx(1 / 3)
    # exported YAML validates with `masbench validate`, and so does the derived suite
    names = sorted(p.stem for p in sess.exported)
    assert len(names) == 2 and all(n.startswith("gen-") for n in names)
    r = CliRunner().invoke(app, ["validate", "--lib", str(root), str(root / "orchestrators" / "generated"),
                                 str(root / "tasks" / "mini-auto.yaml")])
    assert r.exit_code == 0, r.output
    derived = yaml.safe_load((root / "tasks" / "mini-auto.yaml").read_text())
    assert derived["name"] == "mini-auto" and set(names) <= {d for d in derived["designs"] if isinstance(d, str)}
    exported = yaml.safe_load(sess.exported[0].read_text())
    assert exported["kind"] == "generated" and exported["source"]["designer"] == "holistic"
    assert exported["source"]["run_id"] == sess.run_id and exported["source"]["tokens"] > 0


def test_generated_designs_ran_in_the_suite_and_search_cost_is_reported_both_ways(world) -> None:
    st, run_id, sess = world["store"], world["run_id"], world["session"]
    res = st.df("SELECT design, count(*) AS n, avg(tokens) AS tokens FROM results WHERE run_id = ? GROUP BY ALL",
                [run_id]).set_index("design")
    gen = [d for d in res.index if d.startswith("gen-")]
    assert len(gen) == 2 and all(res.loc[d, "n"] == 5 for d in gen) and res.loc["meta-designer", "n"] == 5
    cost = st.df("SELECT * FROM design_search_cost WHERE run_id = ? AND axis = 'all'", [run_id]).set_index("design")
    session_tokens = sum(r.tokens for r in sess.records)
    for d in gen:
        c = cost.loc[d]
        assert c["scope"] == "suite" and c["designer"] == "holistic"
        assert c["search_tokens"] == session_tokens and c["n_run_tasks"] == 5
        assert c["search_tokens_per_task"] == pytest.approx(session_tokens / 5)
        assert (c["n_candidates"], c["n_valid"]) == (3, 2)
    m = cost.loc["meta-designer"]
    search = st.sql("SELECT sum(prompt_tokens + completion_tokens) FROM calls WHERE run_id = ? AND "
                    "design = 'meta-designer' AND purpose = 'search'", [run_id])[0][0]
    assert m["scope"] == "task" and m["search_tokens"] == search > 0
    assert m["search_tokens_per_task"] == pytest.approx(search / 5)
    assert "cot" not in cost.index  # library designs have no search cost
    cmp = st.df("SELECT * FROM design_cost_search WHERE run_id = ? AND axis = 'all'", [run_id]).set_index("design")
    for d in gen:
        assert cmp.loc[d, "tokens_search_excluded"] == pytest.approx(cmp.loc[d, "tokens"])
        assert cmp.loc[d, "tokens_search_amortized"] == pytest.approx(cmp.loc[d, "tokens"] + session_tokens / 5)
    mm = cmp.loc["meta-designer"]
    assert mm["tokens_search_amortized"] == pytest.approx(mm["tokens"])
    assert mm["tokens_search_excluded"] == pytest.approx(mm["tokens"] - search / 5)
    assert cmp.loc["cot", "tokens_search_amortized"] == cmp.loc["cot", "tokens"]
    # the per-task designs of the meta-designer are stored with the run and the task
    rows = st.df("SELECT * FROM designs WHERE run_id = ? AND designer = 'meta'", [run_id])
    assert len(rows) == 10 and rows["task_id"].notna().all() and rows["valid"].all()
    assert world["meta"]["valid_rate"] == 1.0


def test_diagnostics(world) -> None:
    st, run_id, lib = world["store"], world["run_id"], world["library"]
    rows = {r["design"]: r for r in diagnose(st, run_id, library=lib)}
    assert rows["cot"]["collapse"] == "single call" and rows["cot"]["calls_per_task"] == 1
    assert rows["cot-sc[k=3]"]["collapse"] == "cot-sc(k=3)"
    sc = next(r for d, r in rows.items() if d.startswith("gen-just-vote"))
    assert sc["collapse"] == "cot-sc(k=4)" and sc["kind"] == "generated"
    plan = next(r for d, r in rows.items() if d.startswith("gen-plan-or-vote"))
    assert plan["collapse"] is None and plan["nodes"] == 5 and plan["depth"] == 4
    assert rows["debate"]["nodes"] == 3 and rows["debate"]["sequential_depth"] == 3
    for d in ("cot-sc[k=3]", "debate"):
        u = rows[d]["unanimity"]
        assert u["tasks"] == 5 and 0 <= u["share"] <= 1
    assert rows["cot"]["unanimity"]["share"] is None  # nothing fans out
    assert sum(plan["verifier"]["histogram"].values()) == plan["verifier"]["decisions"] == 5
    meta = rows["meta-designer"]
    assert meta["kind"] == "designer" and meta["collapse"] == {"cot-sc(k=3)": 10}
    assert meta["verifier"]["decisions"] == 5 and meta["unanimity"]["seeds"]["tasks"] == 5
    # ablation: drop each node of the planner design, rerun on 2 tasks
    ab = diagnose(st, run_id, designs=[plan["design"]], library=lib, ablate_n=2)[0]["ablation"]
    by = {a["node"]: a for a in ab}
    assert by["(full design)"]["n"] == 2 and by["(full design)"]["delta_accuracy"] == 0.0
    assert by["direct"]["valid"] and by["direct"]["n"] == 2 and by["direct"]["delta_tokens"] < 0
    assert not by["plan"]["valid"] and "invalid without it" in by["plan"]["reason"]  # work maps over it
    assert not by["pick"]["valid"] and by["pick"]["reason"] == "the output node"
    table = illusion_table(st, run_id, lib)
    assert list(dict.fromkeys(table["group"])) == ["baseline", "automatic", "cot-sc curve"]
    assert set(table.loc[table["group"] == "automatic", "design"]) == set(gen for gen in table["design"]
                                                                          if gen.startswith("gen-")) | {"meta-designer"}


@pytest.mark.slow
def test_cli(world) -> None:
    st, run_id, root = world["store"], world["run_id"], world["root"]
    path = st.path
    st.con.execute("CHECKPOINT")
    runner = CliRunner()
    out = root / "exported"
    r = runner.invoke(app, ["design", "export", "--store", path, "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert len(list(out.glob("gen-*.yaml"))) == 2
    r = runner.invoke(app, ["validate", "--lib", str(root), str(out)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["design", "list", "--store", path])
    assert r.exit_code == 0 and "rejection rate" in r.output
    r = runner.invoke(app, ["diagnose", "--store", path, "--run", run_id, "--lib", str(root), "--json"])
    assert r.exit_code == 0, r.output
    assert {d["design"] for d in json.loads(r.output)} >= {"cot", "debate", "meta-designer"}
    r = runner.invoke(app, ["design", "table", "--store", path, "--run", run_id, "--lib", str(root)])
    assert r.exit_code == 0 and "CoT-SC@4" in r.output, r.output
