"""The library's name index: a file's declared name is read from its content, parsed once per content."""

from __future__ import annotations

import os

import pytest

from masbench.library import Library, declared_name
from masbench.spec import declared as declared_mod
from masbench.spec.limits import YamlLimits


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory, monkeypatch):
    """Names kept between processes go to a folder of this test's own, read afresh: a name another
    run kept must not stand in for the parse a test counts."""
    monkeypatch.setenv("MASBENCH_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    declared_mod.forget()
    yield
    declared_mod.forget()


def _agent(root, stem: str, name: str | None) -> os.PathLike:
    (root / "agents").mkdir(parents=True, exist_ok=True)
    f = root / "agents" / f"{stem}.yaml"
    f.write_text((f"name: {name}\n" if name else "") + "prompt: Solve it.\n")
    return f


def test_the_declared_name_or_none(tmp_path):
    assert declared_name(_agent(tmp_path, "a", "alpha")) == "alpha"
    assert declared_name(_agent(tmp_path, "b", None)) is None
    bad = tmp_path / "agents" / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    assert declared_name(bad) is None
    assert declared_name(tmp_path / "agents" / "missing.yaml") is None
    latin = tmp_path / "agents" / "latin.yaml"
    latin.write_bytes("name: caf\xe9\n".encode("latin-1"))
    assert declared_name(latin) is None
    numeric = tmp_path / "agents" / "numeric.yaml"
    numeric.write_text("name: 7\n")
    assert declared_name(numeric) is None


def test_a_file_over_the_size_limit_is_not_read(tmp_path, monkeypatch):
    f = _agent(tmp_path, "big", "big-agent-name")
    monkeypatch.setattr(declared_mod, "USER_FILE_LIMITS", YamlLimits(max_bytes=os.stat(f).st_size - 1))
    assert declared_name(f) is None
    monkeypatch.setattr(declared_mod, "USER_FILE_LIMITS", YamlLimits(max_bytes=os.stat(f).st_size))
    assert declared_name(f) == "big-agent-name"


def test_an_edit_is_seen_even_with_the_same_size_and_modification_time(tmp_path):
    f = _agent(tmp_path, "solver", "alpha")
    lib = Library([tmp_path], include_cwd=False, include_bundled=False)
    assert lib.has("agent", "alpha") and "alpha" in lib.names("agent")
    st = os.stat(f)
    f.write_text("name: bravo\nprompt: Solve it.\n")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(f).st_size == st.st_size
    fresh = Library([tmp_path], include_cwd=False, include_bundled=False)
    assert fresh.has("agent", "bravo") and not fresh.has("agent", "alpha")
    assert fresh.names("agent") == ["bravo"]
    assert fresh.has("agent", "solver")  # the stem always answers too


def test_the_same_content_is_parsed_once(tmp_path, monkeypatch):
    parsed = []
    real = declared_mod.parse_yaml
    monkeypatch.setattr(declared_mod, "parse_yaml", lambda text, file: parsed.append(file) or real(text, file))
    a = _agent(tmp_path / "one", "x", "unique-name-for-this-test")
    b = _agent(tmp_path / "two", "y", "unique-name-for-this-test")
    assert declared_name(a) == declared_name(b) == "unique-name-for-this-test"
    assert declared_name(a) == "unique-name-for-this-test"
    assert parsed == [str(a)]
