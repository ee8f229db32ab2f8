"""A command imports what it uses: ``validate`` starts without DuckDB, pyarrow, numpy, pandas or any
model client; ``run`` on the simulator without litellm, openai, langgraph, numpy or pandas until its
calls are made. The package facades load each name on first use and still hand out the same
objects as the modules that define them (not a submodule of the same name)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

HEAVY = ("litellm", "openai", "langgraph", "pandas", "pyarrow", "matplotlib", "duckdb", "numpy",
         "tenacity")  # tenacity: only once a call is retried


def _modules_after(code: str) -> list[str]:
    prog = textwrap.dedent(code) + f"\nimport json, sys\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_validate_imports_no_store_no_numpy_and_no_model_client():
    loaded = _modules_after("""
        from masbench.cli import load_all
        import masbench.cli.spec
        from masbench.library import Library
        print(Library().load_path("tasks/quickstart.yaml").kind)
    """)
    assert loaded == []


def test_the_run_command_on_the_simulator_imports_no_client_no_langgraph_and_no_pandas():
    loaded = _modules_after("""
        import masbench.cli.run, masbench.harness.suite_run, masbench.harness.engine_inprocess
        import masbench.harness.engine_processes, masbench.llm.gateway, masbench.llm.sim_backend
    """)
    # the store; pyarrow at the first flush, numpy with the curve (after the cells ran) or the error model's
    # calibration (a sim profile with a difficulty block)
    assert set(loaded) == {"duckdb"}


def test_the_run_command_loads_the_routing_package_only_for_a_suite_that_routes():
    """The in-process engine makes its route hook at the first routed call, so running a suite with
    no routed agent or route node never imports :mod:`masbench.routing` (nor the handbook models)."""
    code = textwrap.dedent("""
        import sys
        import masbench.cli.run, masbench.harness.suite_run, masbench.harness.engine_inprocess
        import masbench.harness.engine_processes, masbench.llm.gateway, masbench.llm.sim_backend
        print(sorted(m for m in sys.modules if m.startswith("masbench.routing")))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_every_facade_name_is_its_modules_object_whatever_was_imported_before():
    code = textwrap.dedent("""
        import importlib, types
        pkgs = ("masbench.store", "masbench.llm", "masbench.harness", "masbench.report")
        # import every defining module first: a submodule named like a function must not shadow it
        for p in pkgs:
            pkg = importlib.import_module(p)
            for mod in set(getattr(pkg, "_EXPORTS", {}).values()):
                importlib.import_module(mod, p) if mod.startswith(".") else importlib.import_module(f"{p}.{mod}")
        bad = []
        for p in pkgs:
            pkg = importlib.import_module(p)
            for name in pkg.__all__:
                value = getattr(pkg, name)
                if isinstance(value, types.ModuleType):
                    bad.append(f"{p}.{name} is a module")
            for name, mod in getattr(pkg, "_EXPORTS", {}).items():
                m = importlib.import_module(mod, p) if mod.startswith(".") else importlib.import_module(f"{p}.{mod}")
                if getattr(pkg, name) is not getattr(m, name):
                    bad.append(f"{p}.{name}")
        print(bad)
        try:
            importlib.import_module("masbench.store").no_such_name
        except AttributeError as exc:
            print(exc)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["[]", "module 'masbench.store' has no attribute 'no_such_name'"]


def test_the_validate_command_imports_neither_the_bench_nor_networkx_nor_asyncio():
    """The whole command, as the console runs it: a suite of generated tasks is checked without the
    generators, the event loop, a graph library, the store's rows or rich."""
    code = textwrap.dedent("""
        import json, sys
        sys.argv = ["masbench", "validate", "tasks/quickstart.yaml"]
        from masbench.cli import app
        try:
            app()
        except SystemExit as exc:
            code = exc.code
        watched = ("masbench.bench", "networkx", "asyncio", "duckdb", "numpy", "pandas", "litellm", "openai", "httpx",
                   "aiohttp", "langgraph",
                   # checking a design loads the ops and the scope's types, not what only a run uses:
                   "masbench.store", "masbench.store.rows", "masbench.budget",
                   "rich")  # validate prints plain lines
        print(json.dumps([code, sorted(m for m in watched if m in sys.modules)]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[0] == "ok  tasks/quickstart.yaml (suite quickstart)"
    assert json.loads(out.splitlines()[-1]) == [0, []]


def test_a_new_simulated_run_reaches_its_first_call_without_what_only_later_steps_use(tmp_path):
    """``masbench run`` of the quickstart on the simulator, off a terminal, up to its first model call
    (read where the simulator is first asked, as ``benchmarks/startup.py`` does): rich (its console is
    made for the first line it would print otherwise than plain; its live bar is drawn only on a
    terminal), the process pool (a sharding driver's), the paired tests and the
    sequential loop (after the cells ran), numpy, pandas and pyarrow (the curve, the statistics and the
    writer's first flush), the generators the quickstart does not name (iGSM, the search benchmark, SMFR) are not
    loaded, and the store was copied from the kept
    template: no schema was built in this process."""
    store, cache = tmp_path / "s.duckdb", tmp_path / "cache"
    code = textwrap.dedent(f"""
        import json, os, sys
        import masbench.llm.sim_backend as sb
        call = sb.SimBackend.__call__

        async def first(self, a):
            from masbench.store import template
            watched = ("rich.console", "rich.progress", "rich.live", "concurrent.futures.process", "multiprocessing",
                       "masbench.harness.paired_tests", "masbench.harness.until_decided",
                       "masbench.harness.stats.clustered", "pandas", "pyarrow", "litellm", "openai", "langgraph",
                       # generators the suite does not name: declared by name in masbench.bench.registry
                       "masbench.bench.igsm", "masbench.bench.search", "masbench.bench.smfr",
                       "masbench.bench.smfr_paper",
                       "masbench.report",  # the verdicts' wording: printed after the run
                       # numpy: the curve's and the statistics' (after the cells ran); sim/medium draws without it
                       "numpy", "masbench.harness.curve", "masbench.llm.sim.exact")
            print(json.dumps([sorted(m for m in watched if m in sys.modules), template._folder is None]), flush=True)
            os._exit(0)

        sb.SimBackend.__call__ = first
        sys.argv = ["masbench", "run", "tasks/quickstart.yaml", "--model", "default=sim/medium", "--limit", "1",
                    "--store", {str(store)!r}, "--new"]
        from masbench.cli import app
        app()
    """)
    env = {**__import__("os").environ, "MASBENCH_CACHE_DIR": str(cache)}
    subprocess.run([sys.executable, "-c", "from masbench.store import Store; import sys; Store(sys.argv[1]).close()",
                    str(tmp_path / "keeps-the-template.duckdb")], env=env, check=True)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert json.loads(out.splitlines()[-1]) == [[], True]


def test_a_second_command_parses_no_library_file_to_learn_its_name(tmp_path):
    """``validate`` looks the quickstart's designs and agents up by the names their files declare.
    The first process parses every file of those kinds and keeps the names
    (``masbench.spec.declared``); a second process with the same cache folder parses none of them
    for their names (it still loads the files it uses)."""
    code = textwrap.dedent("""
        import json, sys
        import masbench.spec.declared as declared
        parsed = []
        real = declared.parse_yaml
        declared.parse_yaml = lambda text, file: parsed.append(file) or real(text, file)
        sys.argv = ["masbench", "validate", "tasks/quickstart.yaml"]
        from masbench.cli import app
        try:
            app()
        except SystemExit as exc:
            code = exc.code
        print(json.dumps([code, len(parsed)]))
    """)
    env = {**__import__("os").environ, "MASBENCH_CACHE_DIR": str(tmp_path / "cache")}
    runs = [json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                                      check=True).stdout.splitlines()[-1]) for _ in range(2)]
    assert runs[0][0] == runs[1][0] == 0
    assert runs[0][1] > 20 and runs[1][1] == 0  # ~80 bundled files of the kinds looked up, then none


def test_a_command_s_modules_are_imported_with_the_gc_paused_then_frozen_and_the_gc_is_on_again():
    """Loading ``validate`` (as the console does) pauses the cyclic GC while its modules are imported
    and freezes what they made: no collection runs during the import, the objects stay out of later
    collections (the freeze count), and the GC is on again for the command itself. A process that
    had turned the GC off keeps it off."""
    code = textwrap.dedent("""
        import gc, json, sys
        collections = []
        gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info["generation"]))
        import typer
        from masbench import cli
        group = typer.main.get_group(cli.app)
        before = len(collections)
        group._load("validate")  # ~40,000 objects: a collection every 700 allocations if the GC ran
        loaded = [len(collections) - before, gc.isenabled(), gc.get_freeze_count() > 10_000]
        gc.unfreeze()
        gc.disable()
        group._load("graph")
        print(json.dumps(loaded + [gc.isenabled(), "masbench.cli.spec" in sys.modules]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.splitlines()[-1]) == [0, True, True, False, True]
