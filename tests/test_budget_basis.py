"""BudgetMeter on a budget basis, and metered_call's charge for a call that came back without usage."""

from __future__ import annotations

from masbench.budget import BudgetMeter, spend_on
from masbench.charge import Charge
from masbench.llm import Gateway, Reply, metered_call
from masbench.spec import ModelSpec
from masbench.spec.budget import Budget


def test_completion_basis_caps_completion_tokens_only():
    m = BudgetMeter(Budget(per_task_tokens=100, basis="completion"))
    assert m.worst_tokens(prompt_bound=5000, max_tokens=60) == 60
    assert m.reserve(60)
    m.settle(60, 0.0, Charge(prompt=5000, completion=50, cost=0.0))
    assert (m.tokens, m.counted) == (5050, 50)
    assert m.remaining().per_task_tokens == 50 and m.remaining().basis == "completion"
    assert not m.reserve(60) and m.refused[-1]["cap"] == "tokens"  # 50 + 60 > 100
    assert m.summary()["basis"] == "completion" and m.summary()["spent"] == 50


def test_tokens_basis_counts_the_prompt():
    m = BudgetMeter(Budget(per_task_tokens=100))
    assert m.worst_tokens(prompt_bound=50, max_tokens=60) == 110
    assert not m.reserve(110)


def test_spend_on():
    assert (spend_on("tokens", 10, 5, 0.5), spend_on("completion", 10, 5, 0.5), spend_on("usd", 10, 5, 0.5)) == (15, 5, 0.5)


async def test_usage_missing_call_is_charged_its_worst_case():
    async def no_usage(a):
        return Reply("Answer: 1", 0, 0, usage_status="missing")

    rows = []
    gw = Gateway({"m": ModelSpec(id="sim/perfect", input_usd_per_mtok=1.0, output_usd_per_mtok=1.0)},
                 backend=no_usage, sink=lambda r: rows.append(r.as_dict()))
    meter = BudgetMeter(Budget(per_task_tokens=10_000))
    msgs = [{"role": "user", "content": "What is 1 + 0?"}]
    res = await metered_call(gw, meter, "m", msgs, max_tokens=64, temperature=None, sample_index=0, tags={})
    assert res is not None and not res.ok and res.status == "usage_missing"
    assert meter.completion == 64 and meter.prompt > 0  # the worst case, never 0
    assert rows[0]["prompt_tokens"] is None and rows[0]["status"] == "usage_missing"
