"""Hostile YAML is refused before anything is built, with FILE:LINE — one set of limits
(masbench.spec.limits) for user files and for generated designs (issue 13)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from masbench.design.parse import DesignLimits, Refused, load_data
from masbench.spec.limits import USER_FILE_LIMITS, YamlLimits
from masbench.spec.yamlpos import YamlLimitExceeded, load_yaml_file, parse_yaml


def alias_bomb(levels: int = 9, fan: int = 9) -> str:
    lines = ['a0: &a0 ["lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * fan) + "]")
    return "\n".join(lines) + "\n"


def test_the_alias_bomb_is_refused_at_its_line_by_the_expansion_limit(tmp_path):
    p = tmp_path / "bomb.yaml"
    p.write_text(alias_bomb())
    with pytest.raises(YamlLimitExceeded) as info:
        load_yaml_file(p)
    err = info.value
    assert "expands to more than" in err.msg and str(USER_FILE_LIMITS.max_values) in err.msg
    assert str(err).startswith(f"{p}:") and 2 <= err.line <= 10


def test_a_few_honest_aliases_still_load():
    loc = parse_yaml("base: &b {k: 1}\nx: *b\ny: *b\n")
    assert loc.data == {"base": {"k": 1}, "x": {"k": 1}, "y": {"k": 1}}


def test_a_50_mb_yaml_is_refused_by_the_size_limit_without_being_read(tmp_path):
    p = tmp_path / "big.yaml"
    line = "key_" + "x" * 90 + ": value\n"
    with p.open("w") as fh:
        for i in range(50 * 1024 * 1024 // len(line) + 1):
            fh.write(line)
    assert p.stat().st_size >= 50 * 1024 * 1024
    with pytest.raises(YamlLimitExceeded) as info:
        load_yaml_file(p)
    assert "byte limit" in info.value.msg and info.value.line == USER_FILE_LIMITS.max_bytes // len(line) + 1
    assert str(info.value).startswith(f"{p}:{info.value.line}:")


def test_deep_nesting_is_refused_with_its_line():
    text = "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 80)) + "  " * 80 + "v: 1\n"
    with pytest.raises(YamlLimitExceeded, match="nesting deeper than 64"):
        parse_yaml(text, "deep.yaml")


def test_generated_designs_use_the_same_checks_with_tighter_limits():
    assert isinstance(DesignLimits(), YamlLimits)
    with pytest.raises(Refused, match="aliases are not allowed"):
        load_data("nodes: &n {a: {agent: x}}\nextra: *n\n", DesignLimits())
    with pytest.raises(Refused, match="nesting deeper than 12"):
        load_data("nodes: " + "[" * 20 + "]" * 20, DesignLimits())


@pytest.mark.slow
def test_masbench_validate_rejects_the_bomb_with_file_line_and_exit_2(tmp_path):
    p = tmp_path / "suite.yaml"
    p.write_text(alias_bomb())
    res = subprocess.run([sys.executable, "-m", "masbench.cli", "validate", str(p)], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 2, res.stdout + res.stderr
    out = res.stdout + res.stderr
    assert f"{p}:" in out and "expands to more than" in out
