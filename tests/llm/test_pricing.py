"""Price resolution (masbench.llm.pricing) without a gateway: costs worked by hand with unequal
prices per class, map prices read from litellm's bundled JSON file itself, the registration entry
litellm is given, and the run-stopping check on unpriced models."""

from __future__ import annotations

import importlib.resources
import json

import pytest

from masbench.llm import pricing
from masbench.llm.pricing import Prices, from_litellm_map, require_prices, resolve_prices
from masbench.spec import ModelSpec
from masbench.spec.problems import SpecError
from masbench.spec.yamlpos import parse_yaml

# USD per token, all different, so any swapped or dropped class changes a cost
P = Prices(input=2e-6, output=7e-6, cached_input=0.5e-6, cache_write=3e-6, reasoning=11e-6)


def _json_map() -> dict:
    return json.loads(importlib.resources.files("litellm").joinpath(
        "model_prices_and_context_window_backup.json").read_text())


def test_cost_of_totals_bills_cached_tokens_at_the_cached_rate() -> None:
    # 1000 prompt of which 300 cached, 40 completion: 700·2 + 300·0.5 + 40·7 (µ$)
    assert P.cost(1000, 40, 300) == pytest.approx((700 * 2 + 300 * 0.5 + 40 * 7) * 1e-6, rel=1e-12)
    assert P.cost(1000, 40) == pytest.approx((1000 * 2 + 40 * 7) * 1e-6, rel=1e-12)  # nothing cached by default
    # a cached count above the prompt (reported exclusive) bills the prompt once, at the cached rate
    assert P.cost(100, 0, 250) == pytest.approx(100 * 0.5e-6, rel=1e-12)


def test_unset_classes_fall_back_to_their_base_class() -> None:
    bare = Prices(input=2e-6, output=7e-6)
    assert bare.cost(1000, 40, 300) == pytest.approx((1000 * 2 + 40 * 7) * 1e-6, rel=1e-12)
    assert bare.per_mtok() == pytest.approx({"input_usd_per_mtok": 2.0, "cached_input_usd_per_mtok": 2.0,
                                             "cache_write_usd_per_mtok": 2.0, "output_usd_per_mtok": 7.0,
                                             "reasoning_usd_per_mtok": 7.0}, rel=1e-12)


def test_per_mtok_is_each_class_per_million_tokens() -> None:
    assert P.per_mtok() == pytest.approx({"input_usd_per_mtok": 2.0, "cached_input_usd_per_mtok": 0.5,
                                          "cache_write_usd_per_mtok": 3.0, "output_usd_per_mtok": 7.0,
                                          "reasoning_usd_per_mtok": 11.0}, rel=1e-12)


def test_yaml_prices_per_mtok_with_fallbacks() -> None:
    full = resolve_prices(ModelSpec(id="openai/yaml-full-xyz", input_usd_per_mtok=2.0, output_usd_per_mtok=7.0,
                                    cached_input_usd_per_mtok=0.5, cache_write_usd_per_mtok=3.0,
                                    reasoning_usd_per_mtok=11.0))
    assert (full.input, full.output, full.cached_input, full.cache_write, full.reasoning) == \
        pytest.approx((2e-6, 7e-6, 0.5e-6, 3e-6, 11e-6), rel=1e-12)
    assert full.source == "yaml"
    only_in = resolve_prices(ModelSpec(id="openai/yaml-input-only-xyz", input_usd_per_mtok=4.0))
    assert (only_in.input, only_in.output, only_in.source) == (pytest.approx(4e-6), 0.0, "yaml")
    assert (only_in.cached_input, only_in.cache_write, only_in.reasoning) == (None, None, None)
    assert (only_in.cached_rate, only_in.write_rate) == (pytest.approx(4e-6), pytest.approx(4e-6))
    only_out = resolve_prices(ModelSpec(id="openai/yaml-output-only-xyz", output_usd_per_mtok=9.0))
    assert (only_out.input, only_out.output, only_out.reasoning_rate) == (0.0, pytest.approx(9e-6), pytest.approx(9e-6))
    only_reasoning = resolve_prices(ModelSpec(id="openai/yaml-reasoning-only-xyz", reasoning_usd_per_mtok=5.0))
    assert only_reasoning.source == "yaml" and only_reasoning.reasoning == pytest.approx(5e-6)


def test_price_zero_beats_the_map_and_the_yaml_prices() -> None:
    # deepseek-reasoner is in the map, and the YAML even names prices: `price: 0` still declares it free
    # (models registered at prices of their own here are used by no other test: litellm keeps the first
    # registration of an id for the process, and streamed calls are billed by litellm from it)
    assert from_litellm_map("deepseek/deepseek-reasoner") is not None
    p = resolve_prices(ModelSpec(id="deepseek/deepseek-reasoner", price=0, input_usd_per_mtok=5.0))
    assert (p.input, p.output, p.cached_input, p.cache_write, p.reasoning, p.source) == \
        (0.0, 0.0, 0.0, 0.0, 0.0, "zero-declared")


@pytest.mark.parametrize("model_id", ["sim/perfect", "embedded/smollm2"])
def test_simulator_and_embedded_model_are_free_by_declaration(model_id) -> None:
    p = resolve_prices(ModelSpec(id=model_id))
    assert (p.input, p.output, p.cached_input, p.cache_write, p.reasoning, p.source) == \
        (0.0, 0.0, 0.0, 0.0, 0.0, "zero-declared")
    assert require_prices({"m": ModelSpec(id=model_id)})["m"].source == "zero-declared"


def test_map_prices_come_from_the_bundled_json() -> None:
    m = _json_map()
    e = m["gpt-4o-mini"]
    for model_id in ("openai/gpt-4o-mini", "gpt-4o-mini"):  # with its provider, and without
        p = from_litellm_map(model_id)
        assert p is not None and p.source == "litellm-map"
        assert (p.input, p.output, p.cached_input) == (e["input_cost_per_token"], e["output_cost_per_token"],
                                                       e["cache_read_input_token_cost"])
        assert p.cache_write == e.get("cache_creation_input_token_cost")
        assert p.reasoning == e.get("output_cost_per_reasoning_token")
    # entries that price cache writes, or reasoning, apart from their base class (found in the file)
    for cls, base in (("cache_creation_input_token_cost", "input_cost_per_token"),
                      ("output_cost_per_reasoning_token", "output_cost_per_token")):
        key = next(k for k, v in m.items() if isinstance(v, dict) and v.get(cls) and v.get(base)
                   and v[cls] != v[base] and v.get("input_cost_per_token") != v.get("output_cost_per_token"))
        p, v = from_litellm_map(key), m[key]
        assert (p.input, p.output, p.cached_input, p.cache_write, p.reasoning) == (
            v.get("input_cost_per_token") or 0.0, v.get("output_cost_per_token") or 0.0,
            v.get("cache_read_input_token_cost"), v.get("cache_creation_input_token_cost"),
            v.get("output_cost_per_reasoning_token")), key
    # an entry of the file that has no token prices at all is not a price
    unpriced_key = next(k for k, v in m.items() if isinstance(v, dict) and k != "sample_spec"
                        and "input_cost_per_token" not in v and "output_cost_per_token" not in v)
    assert from_litellm_map(unpriced_key) is None
    assert from_litellm_map("openai/no-such-model-in-any-map-xyz") is None


def test_a_model_registered_at_yaml_prices_is_not_read_back_as_a_map_price() -> None:
    m = _json_map()["gpt-4.1-nano"]
    yaml = resolve_prices(ModelSpec(id="openai/gpt-4.1-nano", input_usd_per_mtok=123.0, output_usd_per_mtok=456.0))
    assert yaml.source == "yaml" and yaml.input == pytest.approx(123e-6)
    again = from_litellm_map("openai/gpt-4.1-nano")
    assert (again.input, again.output) == (m["input_cost_per_token"], m["output_cost_per_token"])


@pytest.mark.parametrize("model_id, provider", [("anthropic/reg-test-model-xyz", "anthropic"),
                                                ("hosted_vllm/org/reg-test-model-xyz", "hosted_vllm"),
                                                ("reg-test-bare-model-xyz", "openai")])
def test_every_real_model_is_registered_with_litellm_at_our_price(model_id, provider, monkeypatch) -> None:
    from masbench.llm._litellm import litellm

    # registration is once per id per process: start from no registration (the test must not pass
    # on an entry an earlier run in this process left behind)
    monkeypatch.setattr(pricing, "_registered", set())
    for key in (model_id, model_id.split("/", 1)[-1]):
        monkeypatch.delitem(litellm.model_cost, key, raising=False)
    resolve_prices(ModelSpec(id=model_id, input_usd_per_mtok=2.0, output_usd_per_mtok=7.0))
    for key in (model_id, model_id.split("/", 1)[-1]):  # the id, and the id without its provider
        entry = litellm.model_cost[key]
        assert entry["litellm_provider"] == provider, key
        assert entry["input_cost_per_token"] == pytest.approx(2e-6) and entry["output_cost_per_token"] == pytest.approx(7e-6)
        assert entry["mode"] == "chat"


def test_an_unknown_model_is_unpriced_never_a_silent_zero(monkeypatch, caplog) -> None:
    monkeypatch.setattr(pricing, "_warned", set())
    with caplog.at_level("WARNING", logger="masbench.llm"):
        p = resolve_prices(ModelSpec(id="openai/unknown-price-model-xyz"))
        resolve_prices(ModelSpec(id="openai/unknown-price-model-xyz"))
    assert (p.input, p.output, p.cached_input, p.cache_write, p.reasoning, p.source) == \
        (0.0, 0.0, None, None, None, "unpriced")
    warnings = [r.getMessage() for r in caplog.records if "no price known" in r.getMessage()]
    assert warnings == [("no price known for openai/unknown-price-model-xyz: its calls are recorded as cost source "
                         "'unpriced' (set input_usd_per_mtok/output_usd_per_mtok, or price: 0, in the model's YAML)")]


def test_require_prices_names_every_unpriced_model() -> None:
    models = {"good": ModelSpec(id="openai/gpt-4o-mini"), "bad": ModelSpec(id="openai/nope-model-xyz"),
              "free": ModelSpec(id="openai/nope-model-xyz", price=0), "sim": ModelSpec(id="sim/perfect"),
              "worse": ModelSpec(id="anthropic/nope-model-abc"),
              "mine": ModelSpec(id="openai/nope-model-xyz", output_usd_per_mtok=3.0)}
    with pytest.raises(SpecError) as exc:
        require_prices(models, "suite.yaml")
    probs = exc.value.problems
    assert [(p.file, p.line, p.col, p.field) for p in probs] == [("suite.yaml", 1, 1, "models.bad"),
                                                                 ("suite.yaml", 1, 1, "models.worse")]
    assert probs[0].message == ("no price known for model 'bad' (openai/nope-model-xyz): set input_usd_per_mtok and "
                                "output_usd_per_mtok in its YAML, or price: 0 if it is free (on the command line: "
                                "--free bad)")
    assert "'worse' (anthropic/nope-model-abc)" in probs[1].message
    ok = require_prices({k: v for k, v in models.items() if k not in ("bad", "worse")})
    assert {k: p.source for k, p in ok.items()} == {"good": "litellm-map", "free": "zero-declared",
                                                    "sim": "zero-declared", "mine": "yaml"}
    assert ok["mine"].output == pytest.approx(3e-6) and ok["mine"].input == 0.0
    e = _json_map()["gpt-4o-mini"]
    assert (ok["good"].input, ok["good"].output) == (e["input_cost_per_token"], e["output_cost_per_token"])
    s = ok["sim"]
    assert (s.input, s.output, s.cached_input, s.cache_write, s.reasoning) == (0.0, 0.0, 0.0, 0.0, 0.0)
    with pytest.raises(SpecError) as exc:  # no file named: the problem says "suite"
        require_prices({"bad": ModelSpec(id="openai/nope-model-xyz")})
    assert str(exc.value).startswith("suite:1:1: models.bad: no price known for model 'bad'")
    with pytest.raises(SpecError) as exc:  # a model a flag named: the problem names the flag, not a file
        require_prices({k: models[k] for k in ("bad", "worse")}, "suite.yaml", {"bad": "--model bad=openai/nope"})
    assert [str(p).split(":")[0] for p in exc.value.problems] == ["--model bad=openai/nope", "suite.yaml"]
    assert exc.value.problems[0].message == (
        "no price known for model 'bad' (openai/nope-model-xyz): if it is a free local server add --free bad (and "
        "--api-base bad=URL for its address); else name a model YAML that prices it: --model bad=NAME "
        "(models/NAME.yaml) or --model bad=PATH.yaml")
    assert exc.value.problems[1].message.startswith("no price known for model 'worse' (anthropic/nope-model-abc): set")


def test_a_client_that_does_not_apply_is_a_problem_at_the_models_client_and_the_rest_are_still_checked() -> None:
    models = {"s": ModelSpec(id="sim/perfect", client="openai"), "ok": ModelSpec(id="sim/perfect"),
              "e": ModelSpec(id="embedded/smollm2", client="litellm")}
    with pytest.raises(SpecError) as exc:
        require_prices(models, "suite.yaml")
    assert [(p.file, p.line, p.col, p.field, p.message) for p in exc.value.problems] == [
        ("suite.yaml", 1, 1, "models.s.client", "client: openai does not apply to 'sim/perfect': its provider 'sim' "
                                                "has a backend of its own (leave client at auto)"),
        ("suite.yaml", 1, 1, "models.e.client", "client: litellm does not apply to 'embedded/smollm2': its provider "
                                                "'embedded' has a backend of its own (leave client at auto)")]


def test_require_prices_points_at_the_model_in_the_suite_file() -> None:
    located = parse_yaml("name: s\nmodels:\n  ok:\n    id: sim/perfect\n  bad:\n    id: openai/nope-model-xyz\n",
                         file="suite.yaml")
    models = {a: ModelSpec(**m) for a, m in located.data["models"].items()}
    with pytest.raises(SpecError) as exc:
        require_prices(models, located)
    (prob,) = exc.value.problems
    # the mapping under "bad:" (line 5) begins on line 6, where a located path points
    assert (prob.file, prob.line, prob.col, prob.field) == ("suite.yaml", 6, 5, "models.bad")
    assert "'bad' (openai/nope-model-xyz)" in prob.message


def test_registration_is_once_per_model_and_never_for_the_simulator(monkeypatch) -> None:
    from masbench.llm._litellm import litellm

    calls = []
    monkeypatch.setattr(pricing, "_registered", set())
    monkeypatch.setattr(litellm, "register_model", lambda entries: calls.append(sorted(entries)))
    resolve_prices(ModelSpec(id="openai/once-model-xyz", input_usd_per_mtok=1.0))
    resolve_prices(ModelSpec(id="openai/once-model-xyz", input_usd_per_mtok=1.0))
    resolve_prices(ModelSpec(id="sim/perfect"))
    assert calls == [["once-model-xyz", "openai/once-model-xyz"]]


def test_a_failed_registration_is_logged_and_not_fatal(monkeypatch, caplog) -> None:
    from masbench.llm._litellm import litellm

    def boom(entries):
        raise ValueError("boom")

    monkeypatch.setattr(pricing, "_registered", set())
    monkeypatch.setattr(litellm, "register_model", boom)
    with caplog.at_level("DEBUG", logger="masbench.llm"):
        p = resolve_prices(ModelSpec(id="openai/fails-to-register-xyz", input_usd_per_mtok=1.0))
    assert p.source == "yaml" and p.input == pytest.approx(1e-6)
    assert "litellm.register_model(openai/fails-to-register-xyz) failed: boom" in [r.getMessage() for r in caplog.records]


def test_the_map_snapshot_is_taken_before_registration_and_is_a_copy(monkeypatch) -> None:
    from masbench.llm._litellm import litellm

    fresh = _json_map()
    monkeypatch.setattr(litellm, "model_cost", {k: dict(v) for k, v in fresh.items() if isinstance(v, dict)})
    monkeypatch.setattr(pricing, "_BUNDLED", None)
    monkeypatch.setattr(pricing, "_registered", set())
    p = resolve_prices(ModelSpec(id="openai/gpt-4o-mini", price=0))  # registers gpt-4o-mini at $0 into the map
    assert p.source == "zero-declared" and litellm.model_cost["gpt-4o-mini"]["input_cost_per_token"] == 0.0
    again = from_litellm_map("openai/gpt-4o-mini")  # still the bundled price, not our $0
    assert (again.input, again.output) == (fresh["gpt-4o-mini"]["input_cost_per_token"],
                                           fresh["gpt-4o-mini"]["output_cost_per_token"])
    litellm.model_cost["gpt-4o-mini"]["output_cost_per_token"] = 99.0  # mutating the map later changes nothing
    assert from_litellm_map("gpt-4o-mini").output == fresh["gpt-4o-mini"]["output_cost_per_token"]


def test_map_entries_with_one_price_only() -> None:
    m = _json_map()
    out_only = next(k for k, v in m.items() if isinstance(v, dict) and v.get("output_cost_per_token")
                    and "input_cost_per_token" not in v)
    in_only = next(k for k, v in m.items() if isinstance(v, dict) and v.get("input_cost_per_token")
                   and "output_cost_per_token" not in v)
    p = from_litellm_map(out_only)
    assert (p.input, p.output) == (0.0, m[out_only]["output_cost_per_token"])  # a missing price is 0, not skipped
    p = from_litellm_map(in_only)
    assert (p.input, p.output) == (m[in_only]["input_cost_per_token"], 0.0)


def test_the_fallback_key_drops_only_the_first_provider_segment() -> None:
    # a map key that itself holds a "/" (e.g. "azure/..."), behind one more routing prefix; its last
    # segment alone is not a key, so only the id minus its first segment finds it
    m = _json_map()
    key = next(k for k, v in m.items() if isinstance(v, dict) and "/" in k and v.get("input_cost_per_token")
               and k.split("/")[-1] not in m and f"myproxy/{k}" not in m)
    p = from_litellm_map(f"myproxy/{key}")
    assert p is not None and p.input == m[key]["input_cost_per_token"]
