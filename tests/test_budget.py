"""The budget meter's own arithmetic: caps at their exact boundary, reservations, settlement,
refusal records, sub-run absorption, what is left for a sub-run, and the summary a result records.
Expected values are worked out by hand from the calls made, not read back from the meter."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from masbench.budget import BASES, BudgetMeter, spend_on
from masbench.charge import Charge, Tally
from masbench.spec import Budget


def test_an_unlimited_meter_starts_empty_and_caps_nothing() -> None:
    m = BudgetMeter()
    assert m.budget is None and (m.max_tokens, m.max_usd, m.max_calls) == (None, None, None)
    assert m.limited is False and m.needs_usd is False and m.exhausted is False
    assert (m.prompt, m.completion, m.usd, m.calls, m.tokens) == (0, 0, 0.0, 0, 0)
    assert (m.r_tokens, m.r_usd, m.r_calls) == (0, 0.0, 0)
    assert (m.search.tokens, m.search.cost, m.search.calls) == (0, 0.0, 0) and m.refused == []
    assert m.reserve(10**9, 1e9) is True  # nothing is capped
    assert m.remaining() is None
    assert m.summary() == {"max_tokens": None, "max_usd": None, "max_calls": None, "tokens": 0, "usd": 0.0,
                           "calls": 0, "exhausted": False, "refused": [], "basis": "tokens", "spent": 0}


@pytest.mark.parametrize("kw,limited,needs_usd", [({"per_task_tokens": 5}, True, False),
                                                   ({"per_task_usd": 0.5}, True, True),
                                                   ({"per_task_calls": 2}, True, False), ({}, False, False)])
def test_each_cap_alone_makes_the_meter_limited(kw, limited, needs_usd) -> None:
    b = Budget(**kw)
    m = BudgetMeter(b)
    assert m.budget is b and m.limited is limited and m.needs_usd is needs_usd
    assert (m.max_tokens, m.max_usd, m.max_calls) == (kw.get("per_task_tokens"), kw.get("per_task_usd"),
                                                       kw.get("per_task_calls"))


def test_token_cap_is_inclusive_at_the_boundary() -> None:
    m = BudgetMeter(Budget(per_task_tokens=100))
    assert m.reserve(60, where="a") is True
    assert (m.r_tokens, m.r_calls) == (60, 1)
    assert m.reserve(40, where="b") is True  # 60 + 40 == 100 fits exactly
    assert (m.r_tokens, m.r_calls) == (100, 2) and not m.exhausted
    m.settle(40, 0.0, Charge(10, 20, 0.25))  # the second call really used 30 tokens
    assert (m.prompt, m.completion, m.tokens, m.calls, m.usd) == (10, 20, 30, 1, 0.25)
    assert (m.r_tokens, m.r_calls) == (60, 1)
    assert m.reserve(10, where="c") is True  # 30 spent + 60 reserved + 10 == 100
    assert m.reserve(1, where="d") is False  # one over
    assert m.exhausted is True
    assert m.refused == [{"where": "d", "cap": "tokens", "spent_tokens": 30, "worst_tokens": 1, "worst_usd": 0.0,
                          "reserved_tokens": 70}]
    assert (m.r_tokens, m.r_calls) == (70, 2)  # a refusal reserves nothing
    assert m.reserve(0, where="e") is False and len(m.refused) == 1  # exhausted: refused without a new record


def test_call_cap_counts_spent_and_reserved_calls() -> None:
    m = BudgetMeter(Budget(per_task_calls=2))
    assert m.reserve(5) and m.reserve(5)
    assert m.reserve(5, where="third") is False
    assert m.refused[0]["cap"] == "calls" and m.refused[0]["where"] == "third"
    m2 = BudgetMeter(Budget(per_task_calls=2))
    m2.add(Charge(1, 1, 0.0))  # one call already spent
    assert m2.reserve(5) is True and m2.reserve(5) is False


def test_usd_cap_is_inclusive_and_release_gives_back_everything() -> None:
    m = BudgetMeter(Budget(per_task_usd=1.0))
    assert m.reserve(0, 0.75) is True
    assert m.r_usd == 0.75
    m.release(0, 0.75)
    assert (m.r_tokens, m.r_usd, m.r_calls) == (0, 0.0, 0)
    assert m.reserve(3, 1.0) is True  # exactly the cap
    m.release(3, 1.0)
    m.add(Charge(0, 0, 0.5))
    assert m.reserve(0, 0.5) is True and m.reserve(0, 0.01, where="x") is False
    assert m.refused[0]["cap"] == "usd" and m.refused[0]["worst_usd"] == 0.01


def test_caps_are_checked_calls_then_tokens_then_usd() -> None:
    m = BudgetMeter(Budget(per_task_calls=1, per_task_tokens=1, per_task_usd=0.001))
    m.add(Charge(1, 1, 1.0))
    assert m.reserve(5, 5.0) is False and m.refused[0]["cap"] == "calls"
    m = BudgetMeter(Budget(per_task_tokens=1, per_task_usd=0.001))
    assert m.reserve(5, 5.0) is False and m.refused[0]["cap"] == "tokens"


def test_add_accounts_search_spend_separately() -> None:
    m = BudgetMeter()
    m.add(Charge(3, 4, 0.5))
    m.add(Charge(4, 5, 1.0), search=True)
    m.add(Charge(6, 15, 0.5), search=True)
    assert (m.prompt, m.completion, m.tokens, m.usd, m.calls) == (13, 24, 37, 2.0, 3)
    assert (m.search.tokens, m.search.cost, m.search.calls) == (30, 1.5, 2)
    s = m.summary()
    assert (s["search_tokens"], s["search_usd"], s["search_calls"]) == (30, 1.5, 2)
    assert (s["tokens"], s["usd"], s["calls"]) == (37, 2.0, 3)
    m2 = BudgetMeter()
    m2.settle(9, 0.2, Charge(1, 2, 0.1), search=True)  # settle passes the search flag on
    assert (m2.search.tokens, m2.search.calls, m2.search.cost) == (3, 1, 0.1) and m2.r_calls == -1


def test_absorb_adds_a_sub_run_and_inherits_its_refusal() -> None:
    m = BudgetMeter(Budget(per_task_tokens=1000))
    sub = SimpleNamespace(usage=Tally(calls=4, prompt=100, completion=50, cost=0.3),
                          detail={"budget": {"exhausted": True, "refused": [{"cap": "tokens"}, {"cap": "calls"}]}})
    m.absorb(sub)
    assert (m.prompt, m.completion, m.usd, m.calls) == (100, 50, 0.3, 4)
    assert m.exhausted is True and m.refused == [{"where": "sub-run", "cap": "tokens", "spent_tokens": 150}]
    ok = SimpleNamespace(usage=Tally(calls=1, prompt=1, completion=2),
                         detail={"budget": {"exhausted": False, "refused": [{"cap": "x"}]}})
    m2 = BudgetMeter()
    m2.absorb(ok)
    assert m2.exhausted is False and m2.refused == [] and m2.tokens == 3
    for detail in (None, {}, {"budget": None}, {"budget": {"exhausted": True, "refused": []}}):
        m3 = BudgetMeter()
        m3.absorb(SimpleNamespace(usage=Tally(), detail=detail))
        assert m3.exhausted is False, detail


def test_remaining_is_what_is_left_of_each_cap() -> None:
    b = Budget(per_task_tokens=100, per_task_usd=1.0, per_task_calls=5)
    m = BudgetMeter(b)
    m.add(Charge(30, 0, 0.25))
    m.add(Charge(0, 10, 0.0))
    left = m.remaining()
    assert (left.per_task_tokens, left.per_task_usd, left.per_task_calls) == (60, 0.75, 3)
    only_tokens = BudgetMeter(Budget(per_task_tokens=10))
    only_tokens.add(Charge(4, 0, 0.0))
    left = only_tokens.remaining()
    assert (left.per_task_tokens, left.per_task_usd, left.per_task_calls) == (6, None, None)
    assert BudgetMeter(Budget()).remaining() == Budget()
    for kw, spend in (({"per_task_tokens": 10}, (10, 0, 0.0)), ({"per_task_calls": 1}, (0, 0, 0.0)),
                      ({"per_task_usd": 0.5}, (0, 0, 0.5))):
        m = BudgetMeter(Budget(**kw))
        m.add(Charge(*spend[:3]))
        with pytest.raises(ValueError, match="budget used up"):
            m.remaining()
    m = BudgetMeter(Budget(per_task_tokens=10))
    m.add(Charge(9, 0, 0.0))
    assert m.remaining().per_task_tokens == 1  # one left is not used up


def test_summary_keeps_the_first_five_refusals() -> None:
    m = BudgetMeter(Budget(per_task_tokens=10, per_task_usd=2.0, per_task_calls=9))
    m.add(Charge(2, 3, 0.5))
    for i in range(7):
        m.refuse(f"n{i}", "tokens")
    s = m.summary()
    assert s == {"max_tokens": 10, "max_usd": 2.0, "max_calls": 9, "tokens": 5, "usd": 0.5, "calls": 1,
                 "exhausted": True, "refused": [{"where": f"n{i}", "cap": "tokens", "spent_tokens": 5}
                                                for i in range(5)], "basis": "tokens", "spent": 5}
    assert len(m.refused) == 7


def test_reservations_accumulate_and_settle_releases_the_usd_too() -> None:
    m = BudgetMeter(Budget(per_task_usd=10.0))
    assert m.reserve(1, 0.25) and m.reserve(2, 0.5)
    assert (m.r_tokens, m.r_usd, m.r_calls) == (3, 0.75, 2)
    m.settle(2, 0.5, Charge(1, 1, 0.125))  # not a search call by default
    assert (m.r_tokens, m.r_usd, m.r_calls) == (1, 0.25, 1) and m.usd == 0.125
    assert (m.search.tokens, m.search.cost, m.search.calls) == (0, 0.0, 0)
    m.release(1)  # no USD given: only the tokens and the call are given back
    assert (m.r_tokens, m.r_usd, m.r_calls) == (0, 0.25, 0)


def test_search_spend_accumulates_over_calls() -> None:
    m = BudgetMeter()
    m.add(Charge(1, 2, 0.5), search=True)
    m.add(Charge(1, 1, 0.125), search=True)
    m.add(Charge(2, 3, 0.125), search=True)
    assert (m.search.tokens, m.search.cost, m.search.calls) == (10, 0.75, 3)


def test_an_unnamed_refusal_records_an_empty_place_and_used_up_says_so() -> None:
    m = BudgetMeter(Budget(per_task_calls=1))
    m.add(Charge(0, 0, 0.0))
    assert m.reserve(1) is False and m.refused[0]["where"] == ""
    with pytest.raises(ValueError, match=r"^budget used up$"):
        m.remaining()


# ----- the budget basis (issue 15): what the token cap counts --------------------------------------


def test_spend_on_each_basis() -> None:
    assert BASES == ("tokens", "completion", "usd")
    assert spend_on("tokens", 3, 4, 0.5) == 7
    assert spend_on("completion", 3, 4, 0.5) == 4
    assert spend_on("usd", 3, 4, 0.5) == 0.5


def test_completion_basis_counts_only_completion_tokens() -> None:
    m = BudgetMeter(Budget(per_task_tokens=10, basis="completion"))
    assert m.basis == "completion" and BudgetMeter().basis == "tokens"
    assert m.worst_tokens(100, 6) == 6 and BudgetMeter().worst_tokens(100, 6) == 106
    m.add(Charge(500, 4, 0.25))  # prompt tokens do not count
    assert (m.tokens, m.counted) == (504, 4)
    assert m.reserve(6) is True  # 4 spent + 6 == 10
    m.release(6)
    assert m.reserve(7, where="big") is False and m.refused[0]["cap"] == "tokens"
    assert m.refused[0]["spent_tokens"] == 504  # the record keeps all tokens spent
    assert m.summary()["basis"] == "completion" and m.summary()["spent"] == 4 and m.summary()["tokens"] == 504


def test_remaining_counts_on_the_basis() -> None:
    m = BudgetMeter(Budget(per_task_tokens=10, basis="completion"))
    m.add(Charge(50, 3, 0.0))
    assert m.remaining().per_task_tokens == 7
    m = BudgetMeter(Budget(per_task_tokens=100))
    m.add(Charge(50, 3, 0.0))
    assert m.remaining().per_task_tokens == 47


def test_usd_basis_summary_spends_dollars() -> None:
    m = BudgetMeter(Budget(per_task_usd=1.0, basis="usd"))
    m.add(Charge(10, 20, 0.375))
    s = m.summary()
    assert (s["basis"], s["spent"], s["tokens"], m.counted) == ("usd", 0.375, 30, 30)
