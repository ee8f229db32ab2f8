"""``masbench run SUITE --model …`` end to end against a local OpenAI-compatible server over real
HTTP on 127.0.0.1 (our fake server): a model YAML by name and by path, the free-local-server flags,
and the no-price message of a model that came from the flag (issue 23, item 6)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import yaml
from typer.testing import CliRunner

import pytest

from masbench.cli import app


def suite_file(tmp_path: Path, name: str) -> Path:
    """A suite on the simulator (priced), whose default model the flags replace."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"""name: {name}
models: {{default: sim/p60}}
tasks:
  - {{generator: masbench.depth, values: [1], n: 2, seed: 0}}
designs: [cot]
cot_sc: {{k_max: 2, bootstrap: 10}}
cache: false
store: {tmp_path / (name + ".duckdb")}
""")
    return path


def calls(store: Path) -> list[tuple[str, float, str]]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        return con.execute("SELECT model, cost_usd, cost_source FROM calls").fetchall()
    finally:
        con.close()


def one_line_error(output: str) -> str:
    lines = [ln for ln in output.splitlines() if ln.strip()]
    assert len(lines) == 1, output
    return lines[0]


@pytest.mark.slow
def test_the_free_local_server_flags_run_a_suite_at_price_zero(tmp_path, http_server):
    srv = http_server(prompt_tokens=11, completion_tokens=3, reply="Answer: 4")
    suite = suite_file(tmp_path, "free")
    res = CliRunner().invoke(app, ["run", str(suite), "--model", "default=openai/smollm2", "--free", "default",
                                   "--api-base", f"default={srv.base_url}"])
    assert res.exit_code == 0, res.output
    rows = calls(tmp_path / "free.duckdb")
    # 2 tasks × (2 pool samples + cot, which is pool sample 0 when the cache is on; here it is off)
    assert srv.stats.requests == len(rows) > 0
    assert {(m, c, s) for m, c, s in rows} == {("openai/smollm2", 0.0, "zero-declared")}
    assert "SIMULATED" not in res.output


@pytest.mark.slow
def test_a_model_yaml_by_name_and_by_path(tmp_path, http_server, monkeypatch):
    srv = http_server(prompt_tokens=7, completion_tokens=2, reply="Answer: 4")
    spec = {"id": "openai/served-name", "api_base": srv.base_url, "price": 0}
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "box.yaml").write_text(yaml.safe_dump(spec))
    (tmp_path / "priced.yml").write_text(yaml.safe_dump({**{k: v for k, v in spec.items() if k != "price"},
                                                         "input_usd_per_mtok": 1.0, "output_usd_per_mtok": 4.0}))
    monkeypatch.chdir(tmp_path)
    by_name = CliRunner().invoke(app, ["run", str(suite_file(tmp_path, "byname")), "--model", "default=box"])
    assert by_name.exit_code == 0, by_name.output
    rows = calls(tmp_path / "byname.duckdb")
    assert rows and {(m, c) for m, c, _ in rows} == {("openai/served-name", 0.0)}
    by_path = CliRunner().invoke(app, ["run", str(suite_file(tmp_path, "bypath")), "--model", "default=priced.yml"])
    assert by_path.exit_code == 0, by_path.output
    rows = calls(tmp_path / "bypath.duckdb")
    per_call = (7 * 1.0 + 2 * 4.0) / 1e6  # the YAML's prices, per call of 7 prompt + 2 completion tokens
    assert rows and all(abs(c - per_call) < 1e-12 and s == "yaml" for _, c, s in rows)


def test_no_price_from_the_flag_is_one_line_naming_the_flag_and_the_fixes(tmp_path, http_server):
    srv = http_server()
    suite = suite_file(tmp_path, "noprice")
    res = CliRunner().invoke(app, ["run", str(suite), "--model", "default=openai/smollm2",
                                   "--api-base", f"default={srv.base_url}"])
    assert res.exit_code == 2
    line = one_line_error(res.output)
    assert line.startswith("--model default=openai/smollm2: no price known for model 'default' (openai/smollm2)")
    assert "add --free default" in line and str(suite) not in line
    assert srv.stats.requests == 0 and not (tmp_path / "noprice.duckdb").exists()


def test_malformed_flags_are_usage_errors(tmp_path):
    suite = suite_file(tmp_path, "bad")
    for args in (["--api-base", "http://127.0.0.1:8080/v1"], ["--model", "default"], ["--model", "=x"]):
        res = CliRunner().invoke(app, ["run", str(suite), *args])
        assert res.exit_code == 2 and "takes ALIAS=" in res.output, (args, res.output)
