"""The one Registry type: eager and lazy entries, registration by call or decorator, conflicts,
removal, and the errors a user sees for an unknown name or a lazy entry that cannot load."""

from __future__ import annotations


import sys
from typing import Callable

import pytest

from masbench.registry import Registry, RegistryError, load_ref


def test_eager_entries_read_like_a_mapping() -> None:
    r: Registry[int] = Registry("number", {"one": 1, "two": 2})
    assert r["one"] == 1 and len(r) == 2 and list(r) == ["one", "two"] and "two" in r and "three" not in r
    assert dict(r) == {"one": 1, "two": 2} and r.names() == ["one", "two"]
    assert r.get("three") is None  # Mapping.get works through __getitem__'s KeyError


def test_a_lazy_entry_is_listed_without_import_and_loaded_once_on_use() -> None:
    r: Registry[object] = Registry("thing", {"dumps": "json:dumps", "sql": "SELECT 1 FROM t"})
    assert r.names() == ["dumps", "sql"]
    import json

    assert r["dumps"] is json.dumps
    assert r._entries["dumps"] is json.dumps  # replaced by the object: the import happens once
    assert r["sql"] == "SELECT 1 FROM t"  # a string that is not "module:attr" is an ordinary value


def test_dotted_attributes_load() -> None:
    import os.path

    assert load_ref("os:path.join") is os.path.join
    with pytest.raises(ValueError, match="module:attr"):
        load_ref("no-colon")


def test_unknown_name_names_what_and_the_known_ones() -> None:
    r: Registry[int] = Registry("generator", {"b": 2, "a": 1})
    with pytest.raises(RegistryError) as e:
        r["zzz"]
    assert str(e.value) == "unknown generator 'zzz' (known: a, b)"
    assert isinstance(e.value, KeyError)
    with pytest.raises(RegistryError, match=r"unknown view 'x' \(known: none\)"):
        Registry("view")["x"]


def test_a_lazy_entry_that_cannot_load_says_where_it_points() -> None:
    r: Registry[object] = Registry("op", {"gone": "masbench.no_such_module:Thing", "typo": "json:dumpz"})
    with pytest.raises(RegistryError, match="op 'gone' points at 'masbench.no_such_module:Thing'"):
        r["gone"]
    with pytest.raises(RegistryError, match="op 'typo' points at 'json:dumpz', which cannot be loaded"):
        r["typo"]
    assert "gone" in r  # still listed: the error repeats, it does not vanish


def test_conflicts_replace_and_remove() -> None:
    r: Registry[object] = Registry("format")
    f, g = object(), object()
    r.add("x", f)
    r.add("x", f)  # the same object again is not a conflict
    with pytest.raises(ValueError, match="format 'x' is already registered"):
        r.add("x", g)
    r.add("x", g, replace=True)
    assert r["x"] is g
    r.add("x", "json:dumps", replace=True)  # eager -> lazy
    import json

    assert r["x"] is json.dumps
    r.add("x", "plain text", replace=True)  # lazy -> eager: no import attempted
    assert r["x"] == "plain text"
    r.remove("x")
    r.remove("x")  # absent: no error
    assert "x" not in r and len(r) == 0


def test_register_by_call_and_as_a_decorator() -> None:
    r: Registry[object] = Registry("scorer")

    @r.register("deco")
    def scorer(x: int) -> int:
        return x + 1

    assert r["deco"] is scorer and scorer(1) == 2  # the decorator returns the function unchanged
    obj = object()
    assert r.register("call", obj) is obj and r["call"] is obj
    assert repr(r) == "Registry('scorer', ['deco', 'call'])"


def test_a_lazy_entry_is_filled_by_its_own_module_registering_it_as_it_loads(tmp_path, monkeypatch) -> None:
    """The bundled generators' shape: declared here as ``module:attr``, registered by decorator in
    that module. Importing the module fills the entry (no "already registered"), the entry keeps its
    ``module:attr``, and whatever the decorator registered is what the registry hands out, even when
    it is not the attribute named (a reply scorer's wrapper). Another module's object is still refused."""
    (tmp_path / "regmod_fill.py").write_text(
        "from tests_registry_target import R\n"
        "@R.register('gen')\n"
        "def gen():\n    return 1\n"
        "def declared():\n    return 2\n"
        "R.add('wrapped', lambda: 3, replace=True)\n")
    r: Registry[Callable[[], int]] = Registry("generator", {"gen": "regmod_fill:gen", "wrapped": "regmod_fill:declared",
                                                  "other": "regmod_fill:declared"})
    target = type(sys)("tests_registry_target")
    target.R = r  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tests_registry_target", target)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "regmod_fill", raising=False)
    with pytest.raises(ValueError, match="already registered"):
        r.add("other", lambda: 0)  # this test module's object, not regmod_fill's: a clash as before
    got = r["wrapped"]  # imports regmod_fill: its add(replace=True) wins over the attribute named
    assert got() == 3 and got.__name__ == "<lambda>"
    import regmod_fill  # type: ignore[import-not-found]

    assert r["gen"] is regmod_fill.gen and r.where("gen") == "regmod_fill:gen" and r.origin("gen") == "code (regmod_fill)"
    assert r["other"] is regmod_fill.declared  # not registered by its module: the attribute, as any lazy entry
