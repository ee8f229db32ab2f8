"""The CoT-SC pool's node may be another op (``cot_sc.kind``, e.g. a ReAct run on tool tasks):
the pool then draws k_max runs of that op; an op the pool cannot run stops the run before any
call, at the suite's line; and a suite that leaves the new fields unset hashes as before."""

from __future__ import annotations

import hashlib
import json

import pytest

from masbench.harness import RunOptions, run_suite
from masbench.harness.cells import config_hash
from masbench.harness.engine_inprocess import CellRunner
from masbench.harness.prepare import POOL_DESIGN, pool_design, prepare
from masbench.store import Store, StoreWriter
from masbench.spec.problems import SpecError

from simsuite import write_suite


def _stats_as_before(data: dict) -> None:
    """The stats block as it was dumped before issue 24 (its new fields unset, the old default unit)."""
    assert data.pop("judge") is None  # the judge block (a later field, unset): left out of the hash too
    stats = data["stats"]
    assert stats.pop("test") == "sign-flip" and stats.pop("bet") == "agrapa" and stats["match"] == "budget"
    stats["match"] = "tokens"
    for source in data["tasks"]:  # and the task sources before `distinct` (unset: as before)
        assert source.pop("distinct") is False


def test_stats_fields_of_issue_24_hash_as_before_and_stats_never_split_a_run(tmp_path):
    """A suite that leaves the statistics at their defaults hashes as before issue 24 (new default
    unit `budget` included), so its run resumes; an explicit `match: tokens` is the same run."""
    suite = prepare(RunOptions(suite=str(write_suite(tmp_path, name="s24")))).suite
    data = suite.model_dump(mode="json", by_alias=True, exclude={"transcripts"})
    for key in ("kind", "params"):
        data["cot_sc"].pop(key)
    _stats_as_before(data)
    blob = json.dumps({"suite": data, "overrides": {}, "limit": None}, sort_keys=True, default=str)
    assert config_hash(suite, {}, None, None) == hashlib.sha256(blob.encode()).hexdigest()[:16]
    tokens = suite.model_copy(update={"stats": suite.stats.model_copy(update={"match": "tokens"})})
    assert config_hash(tokens, {}, None, None) == config_hash(suite, {}, None, None)
    calls = suite.model_copy(update={"stats": suite.stats.model_copy(update={"match": "calls"})})
    assert config_hash(calls, {}, None, None) != config_hash(suite, {}, None, None)


def test_unset_pool_kind_hashes_as_before_and_a_set_one_changes_the_hash(tmp_path):
    suite = prepare(RunOptions(suite=str(write_suite(tmp_path, name="h")))).suite
    data = suite.model_dump(mode="json", by_alias=True, exclude={"transcripts"})
    data["cot_sc"].pop("kind")
    data["cot_sc"].pop("params")
    _stats_as_before(data)
    # the hash as it was computed before the fields existed (harness/cells.py config_hash then)
    blob = json.dumps({"suite": data, "overrides": {}, "limit": None}, sort_keys=True, default=str)
    assert config_hash(suite, {}, None, None) == hashlib.sha256(blob.encode()).hexdigest()[:16]
    with_kind = suite.model_copy(update={"cot_sc": suite.cot_sc.model_copy(update={"kind": "agent"})})
    assert config_hash(with_kind, {}, None, None) != config_hash(suite, {}, None, None)


def test_the_pool_design_is_built_once_in_prepare_and_kept_out_of_the_library(tmp_path):
    prep = prepare(RunOptions(suite=str(write_suite(tmp_path, name="p"))))
    cs = prep.suite.cot_sc
    assert prep.pool == pool_design(cs.agent, cs.temperature, cs.kind, cs.params)
    assert prep.pool.name == POOL_DESIGN and prep.pool.nodes["sample"].agent == cs.agent
    store = Store(tmp_path / "p.duckdb")
    try:
        CellRunner(prep, store, "r", None, StoreWriter(store))
    finally:
        store.close()
    assert not prep.library.has("design", POOL_DESIGN)  # the shared library is left as loaded


def test_pool_design_carries_the_kind_and_params():
    d = pool_design("cot-solver", 0.7, "agent", {"note": 1})
    node = d.nodes["sample"]
    assert node.kind == "agent" and node.params == {"note": 1} and node.temperature == 0.7
    assert pool_design("cot-solver").nodes["sample"].kind == "agent"


@pytest.mark.slow
async def test_a_pool_of_an_explicit_kind_runs_k_max_samples_per_task(tmp_path):
    p = write_suite(tmp_path, name="pk", n=2, designs="[cot]", k_max=3)
    p.write_text(p.read_text().replace("cot_sc: {k_max: 3, bootstrap: 200}",
                                       "cot_sc: {k_max: 3, bootstrap: 200, kind: agent}"))
    s = await run_suite(RunOptions(suite=str(p)))
    import duckdb
    con = duckdb.connect(str(s.store), read_only=True)
    try:
        n = con.execute("SELECT count(*) FROM pool WHERE run_id = ?", [s.run_id]).fetchall()[0][0]
    finally:
        con.close()
    assert n == 2 * 2 * 3  # 2 levels × n = 2 tasks × k_max = 3


def test_a_pool_kind_that_cannot_run_stops_before_any_call_at_its_line(tmp_path):
    p = write_suite(tmp_path, name="bad", n=2, designs="[cot]", k_max=3)
    p.write_text(p.read_text().replace("cot_sc: {k_max: 3, bootstrap: 200}",
                                       "cot_sc: {k_max: 3, bootstrap: 200, kind: no-such-op}"))
    with pytest.raises(SpecError) as e:
        prepare(RunOptions(suite=str(p)))
    msg = str(e.value)
    assert "cot_sc.kind" in msg and "no-such-op" in msg and f"{p}:" in msg


def test_models_with_specs_hash_as_before_the_tool_fields(tmp_path):
    """function_calling (every model) and sim.tools (a sim profile) came with issue 27: a suite
    that sets neither hashes as it did before they existed."""
    p = write_suite(tmp_path, name="m", model="{id: sim/x, sim: {accuracy: {default: 0.6}}}")
    suite = prepare(RunOptions(suite=str(p))).suite
    data = suite.model_dump(mode="json", by_alias=True, exclude={"transcripts"})
    for key in ("kind", "params"):
        data["cot_sc"].pop(key)
    _stats_as_before(data)
    model = data["models"]["default"]
    assert model.pop("function_calling") is None and model["sim"].pop("tools") is None
    assert model["sim"].pop("grading") is None  # the simulated judge's rates: a later field, unset
    assert model.pop("client") == "auto"  # issue 25's field: never part of the identity
    assert model.pop("sdk_wire") is True  # likewise (how a client: litellm call is sent)
    blob = json.dumps({"suite": data, "overrides": {}, "limit": None}, sort_keys=True, default=str)
    assert config_hash(suite, {}, None, None) == hashlib.sha256(blob.encode()).hexdigest()[:16]
    spec = suite.models["default"]
    assert not isinstance(spec, str)
    fc = suite.model_copy(update={"models": {"default": spec.model_copy(update={"function_calling": True})}})
    assert config_hash(fc, {}, None, None) != config_hash(suite, {}, None, None)


def test_a_models_client_is_not_part_of_the_runs_identity(tmp_path):
    """``client:`` changes how calls are sent, not what is recorded (docs/backends.md): a run
    started on one client resumes on the other, and a suite from before the field hashes as before."""
    from masbench.spec import ModelSpec

    suite = prepare(RunOptions(suite=str(write_suite(tmp_path, name="cl")))).suite
    spec = ModelSpec(id="openai/m", api_base="http://127.0.0.1:9/v1", price=0)
    hashes = {c: config_hash(suite.model_copy(update={"models": {"default": spec.model_copy(update={"client": c})}}),
                             {}, None, None) for c in ("auto", "openai", "litellm")}
    off = spec.model_copy(update={"client": "litellm", "sdk_wire": False})
    hashes["litellm, sdk_wire off"] = config_hash(suite.model_copy(update={"models": {"default": off}}), {}, None, None)
    assert len(set(hashes.values())) == 1
    # the hash as computed before the field existed: the model's dump without `client`
    with_model = suite.model_copy(update={"models": {"default": spec}})
    data = with_model.model_dump(mode="json", by_alias=True, exclude={"transcripts"})
    assert data["models"]["default"].pop("client") == "auto"
    assert data["models"]["default"].pop("sdk_wire") is True
    for key in ("kind", "params"):
        data["cot_sc"].pop(key)
    data["models"]["default"].pop("function_calling")
    _stats_as_before(data)
    blob = json.dumps({"suite": data, "overrides": {}, "limit": None}, sort_keys=True, default=str)
    assert hashes["auto"] == hashlib.sha256(blob.encode()).hexdigest()[:16]
    other = suite.model_copy(update={"models": {"default": spec.model_copy(update={"id": "openai/n"})}})
    assert config_hash(other, {}, None, None) != hashes["auto"]
