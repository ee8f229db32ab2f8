"""Protocol presets (CoT-SC temperature, raw vote, k fixed or cost-matched) and `masbench tasks score`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest
import yaml
from typer.testing import CliRunner

from masbench.bench import load_suite_tasks, raw_vote_key
from masbench.cli.tasks import tasks_app
from masbench.harness import RunOptions, run_suite
from masbench.harness.curve import cell_curve
from masbench.llm.gateway import Gateway
from masbench.spec.suite import CotScSpec, SuiteSpec
from masbench.testing.published import write_masbench_dir, write_smfr_jsonl


def test_cot_sc_presets_validate():
    assert CotScSpec().vote == "normalized" and CotScSpec().k is None and CotScSpec().temperature is None
    assert CotScSpec(k_max=2).k_max == 2  # the default k (5, or k_max if smaller) never conflicts
    with pytest.raises(ValueError, match="needs `match:`"):
        CotScSpec(k="cost-matched")
    with pytest.raises(ValueError, match="k_max"):
        CotScSpec(k=9, k_max=8)
    assert CotScSpec(k="cost-matched", match="smfr-expert", vote="raw", temperature=1.0).match == "smfr-expert"


def test_raw_vote_keys_follow_the_papers():
    class T:
        answers = ["9"]

    assert raw_vote_key(T, "<thinking>x</thinking><answer> 9 </answer>") == "9"
    assert raw_vote_key(T, "<answer>$9$</answer>") == "$9$"  # raw: not normalized
    assert raw_vote_key(T, "Answer: None") is None and raw_vote_key(T, "") is None
    # raw and normalized votes pick different winners on the same pool
    raw = ["1,000", "1000", "$1000", "7", "7"]
    norm = ["1000", "1000", "1000", "7", "7"]
    correct = [True, True, True, False, False]
    acc_raw = cell_curve(raw, correct, 5)[-1]
    acc_norm = cell_curve(norm, correct, 5)[-1]
    assert (acc_raw, acc_norm) == (0.0, 1.0)


SUITE = """name: proto
models: {{default: sim/p60}}
tasks:
  - {{generator: masbench.igsm.depth, values: [2, 3], n: 3, seed: 0}}
designs: [masbench-cot, debate]
cot_sc: {{k_max: 8, agent: masbench-solver, temperature: 1.0, vote: raw, k: cost-matched, match: debate, bootstrap: 50}}
budget: {{per_task_tokens: 50000}}
store: {store}
"""


@pytest.mark.slow
async def test_pool_temperature_and_cost_matched_k_in_a_run(tmp_path, monkeypatch):
    seen: list[tuple[str, float | None]] = []
    real = Gateway.complete

    async def spy(self, model, messages, **kw):
        seen.append(((kw.get("tags") or {}).get("purpose"), kw.get("temperature")))
        return await real(self, model, messages, **kw)

    monkeypatch.setattr(Gateway, "complete", spy)
    (tmp_path / "tasks").mkdir()
    suite = tmp_path / "tasks" / "proto.yaml"
    store = tmp_path / "s.duckdb"
    suite.write_text(SUITE.format(store=store))
    summary = await run_suite(RunOptions(suite=str(suite), store=store, cache=False))
    pool_temps = {t for p, t in seen if p == "pool"}
    design_temps = {t for p, t in seen if p == "design"}
    assert pool_temps == {1.0} and 1.0 not in design_temps  # the preset reaches the pool only
    con = duckdb.connect(str(store), read_only=True)
    debate_calls = con.execute("SELECT avg(calls) FROM results WHERE design = 'debate'").fetchall()[0][0]
    k = round(debate_calls)
    acc = con.execute("SELECT accuracy FROM cot_sc_curve WHERE axis = 'all' AND k = ?", [k]).fetchall()[0][0]
    answers = [a for (a,) in con.execute("SELECT answer FROM pool").fetchall()]
    con.close()
    assert k == 7 and f"k={k} (cost-matched to debate: {debate_calls:.2f} calls per task)" in summary.protocol
    assert f"maj@{k} = {100 * acc:.1f}%" in summary.protocol and "T=1, raw vote" in summary.protocol
    assert answers and all(a is None or a == a.strip() for a in answers)


def test_tasks_score_replies_file(tmp_path):
    root = write_masbench_dir(tmp_path / "MASBench", rows=3, configs=("depth", "horizon"))
    write_smfr_jsonl(tmp_path / "smfr.jsonl", n_rows=4, n=3)
    suite = tmp_path / "pub.yaml"
    suite.write_text(yaml.safe_dump({"name": "pub", "designs": ["cot"], "tasks": [
        {"masbench": str(root), "configs": ["depth", "horizon"], "n": 3}, {"smfr": "smfr.jsonl", "n": 4}]}))
    tasks = load_suite_tasks(SuiteSpec.model_validate(yaml.safe_load(suite.read_text())), tmp_path)
    lines, right = [], 0
    for j, t in enumerate(tasks):
        good = j % 3 != 0
        if t.scorer == "smfr":
            names = t.meta["gold_names"] if good else t.meta["gold_names"] + ["Charlie" if "Charlie" not in
                                                                             t.meta["gold_names"] else "Alice"]
            reply = json.dumps({"answer": names})  # a wrong one is a false tie
        elif len(t.answers) > 1:
            boxes = t.meta["gold"] if good else t.meta["gold"][:-1]  # a wrong one misses a \boxed{}
            reply = "### Final Answers\n" + "\n".join(f"Problem {i + 1}: \\boxed{{{g}}}" for i, g in enumerate(boxes))
        else:
            reply = f"<answer>{t.meta['gold'][0] if good else int(t.meta['gold'][0]) + 1}</answer>"
        right += good
        lines.append(json.dumps({"id": t.id, "reply": reply}))
    replies = tmp_path / "replies.jsonl"
    replies.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(tasks_app, ["score", str(suite), "--replies", str(replies)])
    assert result.exit_code == 0, result.output
    total = len(tasks)
    m = re.search(r"accuracy: (\d+)/(\d+) = ([\d.]+)%", result.output)
    assert m and (int(m.group(1)), int(m.group(2))) == (right, total) and right < total
    assert float(m.group(3)) == round(100 * right / total, 1)
    assert "smfr: " in result.output and "masbench: " in result.output

    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + "\n" + json.dumps({"id": "nope", "reply": "x"}) + "\n")
    out = CliRunner().invoke(tasks_app, ["score", str(suite), "--replies", str(bad)])
    assert out.exit_code == 2 and f"{bad} row 2 field 'id'" in out.output and len(out.output.strip().splitlines()) == 1
    Path(bad).write_text('{"id": "x"}\n')
    out = CliRunner().invoke(tasks_app, ["score", str(suite), "--replies", str(bad)])
    assert out.exit_code == 2 and "row 1 field 'reply'" in out.output


def test_protocol_k_default_and_missing_match(tmp_path):
    from masbench.harness.protocol import protocol_k
    from masbench.store import Store

    def suite(**cot):
        return SuiteSpec(name="s", tasks=[{"generator": "masbench.depth"}], designs=["cot"], cot_sc=cot)

    with Store(tmp_path / "s.duckdb") as st:
        assert protocol_k(st, "r", suite(k_max=3)) == (3, "default")
        assert protocol_k(st, "r", suite(k_max=16)) == (5, "default")
        assert protocol_k(st, "r", suite(k_max=16, k=9)) == (9, "fixed")
        k, how = protocol_k(st, "r", suite(k_max=16, k="cost-matched", match="debate"))
        assert k == 5 and "no results" in how


def test_raw_vote_curve_credits_every_correct_string():
    """A raw vote can be won by "9.0" while the first correct string seen was "9": both are correct."""
    assert cell_curve(["9", "9.0", "9.0", "7"], [True, True, True, False], 4)[-1] == 1.0
    assert cell_curve(["9", "7"], [True, False], 2)[-1] == 0.5  # the split tie rule is unchanged


@pytest.mark.parametrize("suite,designs,how", [("illusion-smfr", {"smfr-expert", "cot"}, "cost-matched to smfr-expert"),
                                               ("masbench-depth", {"masbench-cot", "debate", "reflexion"}, "fixed")])
@pytest.mark.slow
async def test_bundled_paper_suites_run_end_to_end_on_sim(tmp_path, suite, designs, how):
    store = tmp_path / "s.duckdb"
    summary = await run_suite(RunOptions(suite=suite, store=store, overrides={"default": "sim/medium"}, limit=1,
                                         cache=False))
    assert summary.failed == 0 and summary.simulated and how in summary.protocol
    con = duckdb.connect(str(store), read_only=True)
    got = {d for (d,) in con.execute("SELECT DISTINCT design FROM results").fetchall()}
    pool = con.execute("SELECT count(*) FROM pool").fetchall()[0][0]
    con.close()
    assert got == designs and pool > 0
