"""parse_yaml reads with libyaml when PyYAML has it, and gives what the pure-Python parser gives:
the same data and positions for every bundled file, and on a syntax error the pure-Python
parser's message (it names what it found) at the same position."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from masbench.spec import yamlpos
from masbench.spec.limits import FAST_SAFE_LOADER
from masbench.spec.yamlpos import YamlSyntaxError, parse_yaml

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = sorted(p for d in ("agents", "baselines", "orchestrators", "tasks", "models", "skills")
                 for p in (ROOT / d).rglob("*.yaml"))


def test_the_fast_loader_is_libyamls_where_pyyaml_has_it():
    assert yaml.__with_libyaml__, "PyYAML's wheels carry libyaml; this install has none"
    assert FAST_SAFE_LOADER is yaml.CSafeLoader


def test_every_bundled_file_parses_as_the_pure_python_parser_reads_it(monkeypatch):
    assert len(BUNDLED) > 50
    fast = {p: parse_yaml(p.read_text(), str(p)) for p in BUNDLED}
    monkeypatch.setattr(yamlpos, "FAST_SAFE_LOADER", yaml.SafeLoader)
    for p in BUNDLED:
        slow = parse_yaml(p.read_text(), str(p))
        assert (fast[p].data, fast[p].positions, fast[p].key_positions) == \
               (slow.data, slow.positions, slow.key_positions), p


@pytest.mark.parametrize("text,line,col,words", [
    ("name: a\n\tprompt: x\n", 2, 1, "found character '\\t' that cannot start any token"),
    ("name: a\nprompt: *nope\n", 2, 9, "found undefined alias 'nope'"),
    ("name: a\nprompt: [1, 2\n", 3, 1, "expected ',' or ']', but got '<stream end>'"),
])
def test_a_syntax_error_has_the_pure_python_parsers_words_at_libyamls_position(text, line, col, words):
    with pytest.raises(YamlSyntaxError) as exc:
        parse_yaml(text, "a.yaml")
    assert (exc.value.line, exc.value.col, exc.value.msg) == (line, col, words)
    with pytest.raises(yaml.MarkedYAMLError) as fast:  # libyaml alone: same place, other words
        yaml.compose(text, Loader=FAST_SAFE_LOADER)
    mark = fast.value.problem_mark
    assert mark is not None and (mark.line + 1, mark.column + 1) == (line, col)
    assert fast.value.problem != words
