"""Models from the command line as complete as in YAML (issue 23, item 6): ``--model ALIAS=NAME``
takes a model YAML by name (the working directory's ``models/`` first, then the bundled one) or by
path; ``--free ALIAS`` and ``--api-base ALIAS=URL`` declare a free local server; the no-price
problem of a model given by a flag names the flag and the flags that fix it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from masbench.harness import RunOptions
from masbench.harness.prepare import prepare
from masbench.library import bundled_root
from masbench.llm import models_from, overrides_json
from masbench.spec import ModelSpec
from masbench.spec.problems import SpecError

LOCAL = {"id": "openai/my-served-model", "api_base": "http://127.0.0.1:8001/v1", "price": 0, "concurrency": 3,
         "timeout_s": 77.0}


def suite_file(tmp_path: Path, models: str = "{default: sim/p60}") -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(f"""name: flags
models: {models}
tasks:
  - {{generator: masbench.depth, values: [1], n: 2, seed: 0}}
designs: [cot]
cot_sc: {{k_max: 2, bootstrap: 10}}
store: {tmp_path / "s.duckdb"}
""")
    return path


def model_yaml(path: Path, data: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_model_yaml_by_name_from_the_working_directory_replaces_the_alias_whole(tmp_path, monkeypatch):
    model_yaml(tmp_path / "models" / "my-local.yaml", LOCAL)
    monkeypatch.chdir(tmp_path)
    prep = prepare(RunOptions(suite=str(suite_file(tmp_path)), overrides={"default": "my-local"}))
    assert prep.models["default"] == ModelSpec.model_validate(LOCAL)
    assert not prep.simulated


@pytest.mark.slow
def test_the_bundled_model_library_is_found_by_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no models/ here: the bundled folder answers
    for name in ("local-server", "smollm2"):
        prep = prepare(RunOptions(suite=str(suite_file(tmp_path)), overrides={"default": name}))
        bundled = yaml.safe_load((bundled_root() / "models" / f"{name}.yaml").read_text())
        assert prep.models["default"] == ModelSpec.model_validate(bundled)
        assert prep.models["default"].price == 0  # both bundled models are free by declaration
    assert prepare(RunOptions(suite=str(suite_file(tmp_path)),
                              overrides={"default": "local-server"})).models["default"].api_base.startswith(
        "http://127.0.0.1:")


def test_a_working_directory_model_shadows_the_bundled_one_of_the_same_name(tmp_path, monkeypatch):
    model_yaml(tmp_path / "models" / "local-server.yaml", LOCAL)
    monkeypatch.chdir(tmp_path)
    prep = prepare(RunOptions(suite=str(suite_file(tmp_path)), overrides={"default": "local-server"}))
    assert prep.models["default"].id == LOCAL["id"]


@pytest.mark.slow
def test_a_model_yaml_by_path_absolute_or_relative(tmp_path, monkeypatch):
    file = model_yaml(tmp_path / "elsewhere" / "gpu-box.yml", {**LOCAL, "id": "openai/other"})
    monkeypatch.chdir(tmp_path)
    for given in (str(file), "elsewhere/gpu-box.yml"):
        prep = prepare(RunOptions(suite=str(suite_file(tmp_path)), overrides={"default": given}))
        assert prep.models["default"] == ModelSpec.model_validate({**LOCAL, "id": "openai/other"})
    with pytest.raises(SpecError) as exc:
        prepare(RunOptions(suite=str(suite_file(tmp_path)), overrides={"default": "elsewhere/missing.yaml"}))
    assert str(exc.value) == "--model default=elsewhere/missing.yaml: no such model YAML file"
    bad = model_yaml(tmp_path / "bad.yaml", {"id": "openai/x", "prices": 3})
    with pytest.raises(SpecError) as exc:  # a bad model YAML is its own file:line problem
        prepare(RunOptions(suite=str(suite_file(tmp_path)), overrides={"default": str(bad)}))
    assert str(exc.value).startswith(f"{bad}:") and "prices" in str(exc.value)


def test_free_and_api_base_declare_a_local_server(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    prep = prepare(RunOptions(suite=str(suite_file(tmp_path)), overrides={"default": "openai/smollm2"},
                              free=["default"], api_base={"default": "http://127.0.0.1:8080/v1"}))
    m = prep.models["default"]
    assert (m.id, m.price, m.api_base) == ("openai/smollm2", 0, "http://127.0.0.1:8080/v1")
    # what a worker is handed (JSON) rebuilds the very same models
    assert models_from(prep.suite.models, overrides_json(prep.overrides)) == prep.models


def test_free_applies_to_a_suite_alias_kept_with_its_settings(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    suite = suite_file(tmp_path, "{default: {id: openai/no-such-model-xyz, concurrency: 2, timeout_s: 9}}")
    with pytest.raises(SpecError):
        prepare(RunOptions(suite=str(suite)))
    prep = prepare(RunOptions(suite=str(suite), free=["default"]))
    m = prep.models["default"]
    assert (m.id, m.price, m.concurrency, m.timeout_s) == ("openai/no-such-model-xyz", 0, 2, 9.0)


def test_free_or_api_base_of_an_alias_nobody_defines_names_the_flag(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SpecError) as exc:
        prepare(RunOptions(suite=str(suite_file(tmp_path)), free=["judge"]))
    assert str(exc.value).startswith("--free judge: no model alias 'judge' (the suite's: default)")
    with pytest.raises(SpecError) as exc:
        prepare(RunOptions(suite=str(suite_file(tmp_path)), api_base={"judge": "http://127.0.0.1:1/v1"}))
    assert str(exc.value).startswith("--api-base judge=http://127.0.0.1:1/v1: no model alias 'judge'")


def test_no_price_for_a_model_from_the_flag_names_the_flag_and_the_fixes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    suite = suite_file(tmp_path)
    with pytest.raises(SpecError) as exc:
        prepare(RunOptions(suite=str(suite), overrides={"default": "openai/no-such-model-xyz"}))
    (problem,) = exc.value.problems
    text = str(problem)
    assert text.startswith("--model default=openai/no-such-model-xyz: no price known for model 'default' "
                           "(openai/no-such-model-xyz)")
    assert "--free default" in text and "--api-base default=URL" in text and "--model default=NAME" in text
    assert str(suite) not in text  # not the suite's line: the model did not come from the suite
    # a model the suite declares keeps its file:line problem, which now also names --free
    unpriced = suite_file(tmp_path, "{default: openai/no-such-model-xyz}")
    with pytest.raises(SpecError) as exc:
        prepare(RunOptions(suite=str(unpriced)))
    assert str(exc.value).startswith(f"{unpriced}:2:") and "price: 0" in str(exc.value) \
        and "--free default" in str(exc.value)
