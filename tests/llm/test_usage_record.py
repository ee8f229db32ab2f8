"""A usage-missing call counts the same in ``results``, the meter and ``design_metrics``: its worst
case (the provider's prompt bound + the request's max_tokens, priced), recomputed here from every
request the backend saw; the ``calls`` rows keep NULL tokens and ``usage_status = 'missing'``."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any, ClassVar

import duckdb
import pytest

from masbench.harness import RunOptions, run_suite
from masbench.llm import BACKENDS, Attempt, ModelBackend, Reply

IN_PER_M, OUT_PER_M = 1.0, 2.0


class NoUsageBackend(ModelBackend):
    """The ``nousage`` provider: answers, but never says how many tokens it used."""

    seen: ClassVar[list[dict[str, Any]]] = []

    async def __call__(self, a: Attempt) -> Reply:
        NoUsageBackend.seen.append({"tags": dict(a.tags), "messages": a.messages, "max_tokens": a.req["max_tokens"]})
        return Reply("Answer: 3", 0, 0, finish_reason="stop", usage_status="missing")


def worst(call: dict[str, Any]) -> tuple[int, float]:
    """The call's worst case: the base backend's prompt bound (UTF-8 bytes + 8 per message) + max_tokens."""
    prompt = sum(len(str(m["content"]).encode()) + 8 for m in call["messages"])
    return prompt + call["max_tokens"], (prompt * IN_PER_M + call["max_tokens"] * OUT_PER_M) / 1e6


SUITE = """name: nousage
models:
  default: {{id: nousage/m, input_usd_per_mtok: {inp}, output_usd_per_mtok: {out}}}
tasks:
  - {{generator: masbench.depth, values: [1], n: 2, seed: 3}}
designs: [cot, debate, {{design: meta-designer, params: {{max_rounds: 1}}}}]
cot_sc: {{k_max: 2, bootstrap: 50}}
budget: {{per_task_tokens: 1000000}}
cache: false
store: {store}
"""


@pytest.fixture
def nousage():
    BACKENDS.register("nousage", NoUsageBackend)
    NoUsageBackend.seen.clear()
    yield NoUsageBackend
    BACKENDS.remove("nousage")


@pytest.mark.slow
async def test_a_usage_missing_call_counts_the_same_in_results_the_meter_and_design_metrics(tmp_path: Path,
                                                                                            nousage):
    (tmp_path / "tasks").mkdir()
    suite = tmp_path / "tasks" / "nousage.yaml"
    suite.write_text(SUITE.format(inp=IN_PER_M, out=OUT_PER_M, store=tmp_path / "runs" / "nousage.duckdb"))
    s = await run_suite(RunOptions(suite=str(suite)))
    want_tokens: dict[tuple, int] = defaultdict(int)
    want_usd: dict[tuple, float] = defaultdict(float)
    for c in nousage.seen:
        t, usd = worst(c)
        key = ("pool" if c["tags"]["purpose"] == "pool" else c["tags"]["design"]), c["tags"]["task_id"]
        want_tokens[key] += t
        want_usd[key] += usd
    con = duckdb.connect(str(s.store), read_only=True)
    q = lambda sql: con.execute(sql, [s.run_id]).fetchall()  # noqa: E731
    results = q("SELECT design, task_id, tokens, prompt_tokens + completion_tokens, cost_usd, calls, detail "
                "FROM results WHERE run_id = ?")
    metrics = dict(q("SELECT design, tokens FROM design_metrics WHERE run_id = ? AND axis = 'all'"))
    pool = q("SELECT task_id, sum(tokens), sum(cost_usd) FROM pool WHERE run_id = ? GROUP BY 1")
    calls = q("SELECT count(*), count(prompt_tokens), count(completion_tokens), count(cost_usd), "
              "count(*) FILTER (WHERE usage_status = 'missing' AND status = 'usage_missing') FROM calls "
              "WHERE run_id = ?")[0]
    con.close()
    assert calls[0] == len(nousage.seen) > 0 and calls[1:4] == (0, 0, 0) and calls[4] == calls[0]
    designs = {r[0] for r in results}
    assert {"cot", "debate"} <= designs and any(d.startswith("meta-designer") for d in designs)
    for design, task_id, tokens, split, usd, n_calls, detail in results:
        meter = json.loads(detail)["budget"]
        assert tokens == split == meter["tokens"] == want_tokens[design, task_id] > 0, design
        assert usd == pytest.approx(meter["usd"]) == pytest.approx(want_usd[design, task_id]), design
        assert n_calls == meter["calls"] == sum(1 for c in nousage.seen if (c["tags"]["design"], c["tags"]["task_id"])
                                                == (design, task_id))
    for design in designs:
        mine = [r[2] for r in results if r[0] == design]
        assert metrics[design] == pytest.approx(sum(mine) / len(mine))
    for task_id, tokens, usd in pool:
        assert tokens == want_tokens["pool", task_id] > 0 and usd == pytest.approx(want_usd["pool", task_id])
    # the gateway's running totals read the same counted usage
    assert s.stats["prompt_tokens"] + s.stats["completion_tokens"] == sum(want_tokens.values())
    assert s.stats["cost_usd"] == pytest.approx(sum(want_usd.values()))
