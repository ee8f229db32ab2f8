"""Plugins by entry point in the one Registry type: a registry made with ``plugins=GROUP`` holds the
entry points installed distributions declare in that group — listed without importing them, imported
on first use, a name already taken is a conflict naming both. Read from real distribution metadata
(a ``.dist-info`` folder on ``sys.path``), as ``importlib.metadata`` finds an installed plugin."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from masbench.registry import Plugin, PluginConflict, Registry, RegistryError, entry_points_of

GROUP = "masbench.test-plugins"


def install_metadata(site: Path, dist: str, entries: dict[str, str], group: str = GROUP) -> None:
    """A distribution's metadata as an installer writes it: ``DIST-0.1.dist-info/{METADATA, entry_points.txt}``."""
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = "".join(f"{k} = {v}\n" for k, v in entries.items())
    (info / "entry_points.txt").write_text(f"[{group}]\n{lines}")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A site folder on ``sys.path`` (metadata and modules), taken off afterwards."""
    d = tmp_path / "site"
    d.mkdir()
    monkeypatch.syspath_prepend(str(d))
    yield d
    for mod in [m for m in sys.modules if m.startswith("toyplug")]:
        del sys.modules[mod]


def test_entry_points_are_read_from_installed_metadata_without_import(site: Path) -> None:
    install_metadata(site, "toy-plugin", {"double": "toyplug.funcs:double", "half": "toyplug.funcs:half"})
    assert sorted(entry_points_of(GROUP), key=lambda p: p.name) == [
        Plugin("double", "toyplug.funcs:double", "toy-plugin"), Plugin("half", "toyplug.funcs:half", "toy-plugin")]
    r: Registry[object] = Registry("python function", {"identity": "masbench.runtime.pyfuncs:identity",
                                                       "dumps": json.dumps}, plugins=GROUP)
    assert r.names() == ["identity", "dumps", "double", "half"]  # the registry's own first, then the plugins'
    assert "toyplug.funcs" not in sys.modules  # listed, not imported
    assert [r.origin(n) for n in r] == ["bundled", "code (json)", "plugin toy-plugin", "plugin toy-plugin"]


def test_a_plugin_entry_is_imported_on_first_use(site: Path) -> None:
    (site / "toyplug").mkdir()
    (site / "toyplug" / "__init__.py").write_text("")
    (site / "toyplug" / "funcs.py").write_text("def double(x):\n    return 2 * x\n")
    install_metadata(site, "toy-plugin", {"double": "toyplug.funcs:double"})
    r: Registry[object] = Registry("python function", plugins=GROUP)
    fn = r["double"]
    assert callable(fn) and fn(21) == 42 and "toyplug.funcs" in sys.modules


def test_a_plugin_whose_module_is_gone_names_the_plugin(site: Path) -> None:
    install_metadata(site, "toy-plugin", {"gone": "toyplug_missing.mod:thing"})
    r: Registry[object] = Registry("op", plugins=GROUP)
    with pytest.raises(RegistryError, match=r"op 'gone' \(plugin toy-plugin\) points at 'toyplug_missing.mod:thing'"):
        r["gone"]


def test_a_name_taken_by_a_bundled_entry_is_an_error_naming_both(site: Path) -> None:
    install_metadata(site, "toy-plugin", {"majority": "toyplug.ops:MAJ"})
    r: Registry[object] = Registry("op", {"majority": "masbench.runtime.ops.vote:OP"}, plugins=GROUP)
    msg = ("op 'majority' of plugin toy-plugin (toyplug.ops:MAJ) conflicts with the bundled op 'majority' "
           "(masbench.runtime.ops.vote:OP)")
    for use in (lambda: r["majority"], lambda: "majority" in r, r.names, lambda: r.get("majority")):
        with pytest.raises(PluginConflict) as e:
            use()  # every use, not only the first; Mapping.get does not swallow it (not a KeyError)
        assert str(e.value).startswith(msg)


def test_two_plugins_with_one_name_name_both_distributions(site: Path) -> None:
    install_metadata(site, "toy-a", {"mine": "toya:FMT"})
    install_metadata(site, "toy-b", {"mine": "toyb:FMT"})
    r: Registry[object] = Registry("task format", plugins=GROUP)
    with pytest.raises(PluginConflict) as e:
        r.names()
    text = str(e.value)
    assert "toy-a" in text and "toy-b" in text and "toya:FMT" in text and "toyb:FMT" in text


def test_code_registering_a_plugins_name_is_a_conflict(site: Path) -> None:
    install_metadata(site, "toy-plugin", {"double": "toyplug.funcs:double"})
    r: Registry[object] = Registry("python function", plugins=GROUP)
    assert "double" in r
    with pytest.raises(PluginConflict, match=r"python function 'double' of plugin toy-plugin .* conflicts with the "
                                             r"code \(json\) python function 'double'"):
        r.add("double", json.dumps, replace=True)


def test_a_plugin_module_registering_itself_by_decorator_is_not_a_conflict(site: Path) -> None:
    (site / "toyplug").mkdir()
    (site / "toyplug" / "__init__.py").write_text("")
    (site / "toyplug" / "deco.py").write_text(
        "import tests_registry_target as t\n"
        "@t.R.register('triple')\ndef triple(x):\n    return 3 * x\n")
    install_metadata(site, "toy-plugin", {"triple": "toyplug.deco:triple"})
    r: Registry[object] = Registry("python function", plugins=GROUP)
    target = type(sys)("tests_registry_target")
    target.R = r  # type: ignore[attr-defined]
    sys.modules["tests_registry_target"] = target
    try:
        assert r["triple"](2) == 6
    finally:
        del sys.modules["tests_registry_target"]


def test_an_entry_point_that_is_not_module_attr_is_reported(site: Path) -> None:
    install_metadata(site, "toy-plugin", {"bare": "toyplug"})
    r: Registry[object] = Registry("tool", plugins=GROUP)
    with pytest.raises(PluginConflict, match="plugin toy-plugin: entry point 'bare' .* must point at 'package.module:attr'"):
        len(r)


def test_adapt_shapes_a_plugin_entry_only(site: Path) -> None:
    (site / "toyplug").mkdir()
    (site / "toyplug" / "__init__.py").write_text("")
    (site / "toyplug" / "vals.py").write_text("N = 5\n")
    install_metadata(site, "toy-plugin", {"five": "toyplug.vals:N"})
    r: Registry[object] = Registry("number", {"one": 1}, plugins=GROUP, adapt=lambda name, obj: (name, obj))
    assert r["five"] == ("five", 5) and r["one"] == 1


def test_the_bundled_registries_read_their_groups(site: Path) -> None:
    from masbench.bench import FORMATS, GENERATORS, READERS, SCORERS
    from masbench.llm import BACKENDS
    from masbench.runtime import OPS, PYTHON_FUNCS
    from masbench.tools import TOOLS

    groups = {r.plugins for r in (OPS, FORMATS, READERS, BACKENDS, SCORERS, TOOLS, PYTHON_FUNCS, GENERATORS)}
    assert groups == {"masbench.ops", "masbench.formats", "masbench.readers", "masbench.backends", "masbench.scorers",
                      "masbench.tools", "masbench.python_funcs", "masbench.generators"}


def test_rescan_reads_a_plugin_installed_after_first_use(site: Path) -> None:
    r: Registry[object] = Registry("tool", {"calculator": "masbench.tools.calculator:TOOL"}, plugins=GROUP)
    assert r.names() == ["calculator"]
    install_metadata(site, "toy-plugin", {"double": "toyplug.funcs:double"})
    assert r.names() == ["calculator"]  # read once per process...
    r.rescan()
    assert r.names() == ["calculator", "double"]  # ...until asked again
    for f in site.glob("*.dist-info/entry_points.txt"):
        f.unlink()
    r.rescan()
    assert r.names() == ["calculator"]


def test_where_names_what_an_entry_was_given_as_before_and_after_loading(site: Path) -> None:
    (site / "toyplug").mkdir()
    (site / "toyplug" / "__init__.py").write_text("")
    (site / "toyplug" / "funcs.py").write_text("def double(x):\n    return 2 * x\n")
    install_metadata(site, "toy-plugin", {"double": "toyplug.funcs:double"})
    r: Registry[object] = Registry("python function", {"dumps": "json:dumps", "loads": json.loads}, plugins=GROUP)
    before = [r.where(n) for n in r]
    r["dumps"], r["double"]  # loaded: the objects replace the strings
    assert [r.where(n) for n in r] == before == ["json:dumps", "json:loads", "toyplug.funcs:double"]
