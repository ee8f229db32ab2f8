"""metered_call: the worst case it reserves (prompt bound + max_tokens, priced only under a USD
cap), what it passes to the gateway, what it settles, and the reservation it gives back when the
call raises. Worst cases are recomputed here from the message text and the model's YAML prices."""

from __future__ import annotations

import math
from typing import Any

import pytest

from masbench.budget import BudgetMeter
from masbench.llm import Reply
from masbench.llm.metered import metered_call
from masbench.llm.scripted import ScriptedGateway
from masbench.spec import Budget
from masbench.spec.model import ModelSpec

MSGS = [{"role": "system", "content": "You add."}, {"role": "user", "content": "What is 2 + 2? Say it."}]
# the simulator's prompt count: ceil(chars / 4) + 3 per message (31 chars -> 8 + 6)
PROMPT = math.ceil(sum(len(m["content"]) for m in MSGS) / 4) + 3 * len(MSGS)
IN_USD, OUT_USD = 3.0e-6, 11.0e-6  # per token: unequal, so swapping them changes the worst case
REPLY = "Answer: 4"  # 9 chars -> 3 completion tokens


class Recording(ScriptedGateway):
    """Keeps the keyword arguments of every complete() call."""

    def __init__(self, fail: BaseException | None = None, missing: bool = False):
        super().__init__(lambda i: REPLY, {"default": ModelSpec(id="sim/perfect", input_usd_per_mtok=IN_USD * 1e6,
                                                                 output_usd_per_mtok=OUT_USD * 1e6)})
        self.kw: list[dict[str, Any]] = []
        self.fail = fail
        if missing:  # the provider reports no usage: the gateway counts the call at its worst case
            script = self.backend

            async def no_usage(a):
                r = await script(a)
                return Reply(r.text, 0, 0, finish_reason=r.finish_reason, simulated=True, usage_status="missing")

            self.backend = no_usage

    async def complete(self, model, messages, **kw):
        self.kw.append({"model": model, "messages": messages, **kw})
        if self.fail is not None:
            raise self.fail
        return await super().complete(model, messages, **kw)


async def call(gw: Recording, meter: BudgetMeter, max_tokens: int = 50, **kw: Any):
    return await metered_call(gw, meter, "default", MSGS, max_tokens=max_tokens, temperature=0.3, sample_index=7,
                              tags={"node": "n1"}, metadata={"sim": {"gold": ["4"]}}, where="n1", **kw)


async def test_unlimited_meter_calls_and_accounts() -> None:
    gw, m = Recording(), BudgetMeter()
    res = await call(gw, m)
    assert res is not None and res.text == REPLY and (res.prompt_tokens, res.completion_tokens) == (PROMPT, 3)
    assert gw.kw == [{"model": "default", "messages": MSGS, "sample_index": 7, "temperature": 0.3, "max_tokens": 50,
                      "tags": {"node": "n1"}, "metadata": {"sim": {"gold": ["4"]}}, "params": None}]
    assert (m.prompt, m.completion, m.calls) == (PROMPT, 3, 1)
    assert m.usd == pytest.approx(PROMPT * IN_USD + 3 * OUT_USD, rel=1e-12) == res.cost_usd
    assert m.search.calls == 0
    await call(gw, m, search=True)
    assert (m.search.calls, m.search.tokens) == (1, PROMPT + 3)


async def test_limited_meter_reserves_the_worst_case_then_settles_the_actual() -> None:
    worst = PROMPT + 50
    gw, m = Recording(), BudgetMeter(Budget(per_task_tokens=worst))  # exactly the worst case fits
    res = await call(gw, m, search=True)
    assert res is not None and len(gw.kw) == 1 and gw.kw[0]["max_tokens"] == 50
    assert gw.kw[0]["sample_index"] == 7 and gw.kw[0]["temperature"] == 0.3 and gw.kw[0]["tags"] == {"node": "n1"}
    assert gw.kw[0]["metadata"] == {"sim": {"gold": ["4"]}}
    assert (m.r_tokens, m.r_usd, m.r_calls) == (0, 0.0, 0)  # the reservation is gone
    assert (m.prompt, m.completion, m.calls, m.search.calls) == (PROMPT, 3, 1, 1)
    assert m.usd == pytest.approx(res.cost_usd, rel=1e-12) and m.usd > 0


async def test_a_call_whose_worst_case_does_not_fit_is_not_made() -> None:
    worst = PROMPT + 50
    gw, m = Recording(), BudgetMeter(Budget(per_task_tokens=worst - 1))
    assert await call(gw, m) is None
    assert gw.kw == [] and m.exhausted and m.calls == 0
    assert m.refused == [{"where": "n1", "cap": "tokens", "spent_tokens": 0, "worst_tokens": worst,
                          "worst_usd": 0.0, "reserved_tokens": 0}]


async def test_usd_cap_prices_the_worst_case_with_input_and_output_prices() -> None:
    worst_usd = PROMPT * IN_USD + 50 * OUT_USD
    gw, m = Recording(), BudgetMeter(Budget(per_task_usd=worst_usd * (1 - 1e-9)))
    assert await call(gw, m) is None and gw.kw == []
    r = m.refused[0]
    assert r["cap"] == "usd" and r["worst_tokens"] == PROMPT + 50
    assert r["worst_usd"] == pytest.approx(worst_usd, rel=1e-12)
    gw, m = Recording(), BudgetMeter(Budget(per_task_usd=worst_usd * (1 + 1e-9)))
    assert await call(gw, m) is not None and m.r_usd == pytest.approx(0.0, abs=1e-18) and m.calls == 1


async def test_a_raising_call_gives_its_reservation_back() -> None:
    gw, m = Recording(fail=RuntimeError("boom")), BudgetMeter(Budget(per_task_tokens=10_000, per_task_usd=1.0))
    with pytest.raises(RuntimeError, match="boom"):
        await call(gw, m)
    assert (m.r_tokens, m.r_usd, m.r_calls, m.calls, m.exhausted) == (0, 0.0, 0, 0, False)
    assert m.reserve(10_000, 1.0) is True  # everything is available again


async def test_defaults_no_metadata_no_place_not_search() -> None:
    gw, m = Recording(), BudgetMeter(Budget(per_task_calls=1))
    await metered_call(gw, m, "default", MSGS, max_tokens=5, temperature=None, sample_index=0, tags={})
    assert gw.kw[0]["metadata"] is None and gw.kw[0]["temperature"] is None and m.search.calls == 0
    assert await metered_call(gw, m, "default", MSGS, max_tokens=5, temperature=None, sample_index=1, tags={}) is None
    assert m.refused[0]["where"] == "" and m.refused[0]["cap"] == "calls"


async def test_missing_usage_is_charged_at_the_worst_case_never_zero() -> None:
    # unlimited meter: the prompt bound + max_tokens, priced at the model's input / output prices
    gw, m = Recording(missing=True), BudgetMeter()
    await call(gw, m, max_tokens=50, search=True)
    assert (m.prompt, m.completion, m.calls, m.search.calls) == (PROMPT, 50, 1, 1)
    assert m.usd == pytest.approx(PROMPT * IN_USD + 50 * OUT_USD, rel=1e-12)
    # limited meter (USD cap, so the worst case is priced): the same worst case is settled
    gw, m = Recording(missing=True), BudgetMeter(Budget(per_task_usd=1.0))
    await call(gw, m, max_tokens=50, search=True)
    assert (m.prompt, m.completion, m.calls, m.r_calls, m.search.calls) == (PROMPT, 50, 1, 0, 1)
    assert m.usd == pytest.approx(PROMPT * IN_USD + 50 * OUT_USD, rel=1e-12) and m.r_usd == pytest.approx(0.0)
    # limited meter with only a token cap (the reservation is not priced): the settled USD is still
    # the priced worst case, never $0
    gw, m = Recording(missing=True), BudgetMeter(Budget(per_task_tokens=10_000))
    await call(gw, m, max_tokens=50)
    assert (m.prompt, m.completion, m.calls, m.r_calls, m.r_tokens) == (PROMPT, 50, 1, 0, 0)
    assert m.usd == pytest.approx(PROMPT * IN_USD + 50 * OUT_USD, rel=1e-12) and m.r_usd == 0.0


async def test_completion_basis_reserves_only_max_tokens() -> None:
    gw, m = Recording(), BudgetMeter(Budget(per_task_tokens=50, basis="completion"))
    assert await call(gw, m, max_tokens=50) is not None  # the prompt does not count on this basis
    assert m.counted == 3 and m.tokens == PROMPT + 3
    assert await call(gw, m, max_tokens=48) is None and m.refused[0]["worst_tokens"] == 48


async def test_request_params_reach_the_gateway_on_both_paths() -> None:
    stop = {"stop": ["\n\n", "Question:"]}
    for meter in (BudgetMeter(), BudgetMeter(Budget(per_task_tokens=10_000))):  # unlimited, then limited
        gw = Recording()
        assert await call(gw, meter, params=stop) is not None
        assert gw.kw[0]["params"] == {"stop": ["\n\n", "Question:"]}


async def test_tools_schemas_are_reserved_as_prompt_tokens() -> None:
    # a one-tool schema; its bound is its UTF-8 bytes as compact JSON, counted here by hand:
    # [{"type":"function","function":{"name":"add","parameters":{}}}] is 63 bytes
    tools = [{"type": "function", "function": {"name": "add", "parameters": {}}}]
    text = '[{"type":"function","function":{"name":"add","parameters":{}}}]'
    assert len(text.encode()) == 63
    worst = PROMPT + 63 + 50
    gw, m = Recording(), BudgetMeter(Budget(per_task_tokens=worst - 1))  # fits without the schema, not with it
    assert await call(gw, m, params={"tools": tools}) is None and gw.kw == []
    assert m.refused[0]["worst_tokens"] == worst
    gw, m = Recording(), BudgetMeter(Budget(per_task_tokens=worst))  # exactly the worst case fits
    assert await call(gw, m, params={"tools": tools}) is not None and gw.kw[0]["params"] == {"tools": tools}
    gw, m = Recording(), BudgetMeter(Budget(per_task_tokens=PROMPT + 50))  # no tools: the schema is not counted
    assert await call(gw, m, params={"stop": ["x"]}) is not None
