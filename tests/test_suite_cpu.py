"""benchmarks/plugins/cpu_plugin.py, which benchmarks/suite_cpu.py reads: a test's own CPU, the CPU
of the subprocesses it waited for, its wall time and its kind land in the right columns."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TESTS = '''
import subprocess, sys, time
import pytest

def test_sleeps():
    time.sleep(0.6)

@pytest.mark.slow
def test_spins_here():
    t = time.process_time()
    while time.process_time() - t < 0.4:
        pass

@pytest.mark.embedded
def test_spins_in_a_child():
    subprocess.run([sys.executable, "-c",
                    "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.4: pass"], check=True)
'''


@pytest.mark.slow
def test_each_test_gets_its_own_cpu_its_childrens_cpu_its_wall_time_and_its_kind(tmp_path):
    (tmp_path / "test_probe.py").write_text(TESTS)
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "MASBENCH_TEST_CPU_DIR": str(out), "PYTHONPATH": str(ROOT / "benchmarks" / "plugins")}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "cpu_plugin",
                        "-p", "no:xdist", "-c", os.devnull, "--rootdir", str(tmp_path), "-W", "ignore",
                        str(tmp_path / "test_probe.py")], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {line.split("\t")[0].split("::")[1]: line.split("\t")[1:]
            for f in out.glob("*.tsv") for line in f.read_text().splitlines()}
    assert set(rows) == {"test_sleeps", "test_spins_here", "test_spins_in_a_child"}
    kind = {name: r[0] for name, r in rows.items()}
    own, kids, wall = ({name: float(r[i]) for name, r in rows.items()} for i in (1, 2, 3))
    assert kind == {"test_sleeps": "other", "test_spins_here": "slow", "test_spins_in_a_child": "embedded"}
    assert wall["test_sleeps"] >= 0.6 and own["test_sleeps"] < 0.3 and kids["test_sleeps"] == 0
    assert own["test_spins_here"] >= 0.4 and kids["test_spins_here"] == 0
    assert kids["test_spins_in_a_child"] >= 0.4 and own["test_spins_in_a_child"] < 0.3


def _suite_cpu():
    import importlib.util
    spec = importlib.util.spec_from_file_location("suite_cpu", ROOT / "benchmarks" / "suite_cpu.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_summary_spreads_the_trees_cpu_over_the_cores_and_splits_it_by_kind_and_module():
    tests = [("tests/a.py::x", "embedded", 30.0, 10.0, 40.5),
             ("tests/a.py::y", "other", 1.0, 0.0, 1.5),
             ("tests/b.py::z", "slow", 2.0, 3.0, 20.0)]
    lines = _suite_cpu().summary(tests, wall=50.0, user=70.0, sys_=10.0, cores=2, top=2)
    assert lines[0] == "CPU of the process tree: 80 core-s (user 70, system 10) = 80% of 2 cores over the wall time"
    assert lines[1].startswith("floor: 40 s ")
    assert lines[2].startswith("in tests: 46 core-s (own 33, waited-for subprocesses 13)") and lines[2].endswith(": 34")
    assert [line.split()[:4] for line in lines[3:6]] == [["embedded", "1", "tests", "40"], ["slow", "1", "tests", "5"],
                                                        ["other", "1", "tests", "1"]]
    modules = lines[lines.index("\nlargest modules by CPU (core-s, wall s):") + 1:][:2]
    assert [m.split() for m in modules] == [["41.0", "42.0", "tests/a.py"], ["5.0", "20.0", "tests/b.py"]]
    waiting = lines[lines.index("\nmostly waiting (wall − CPU, s):") + 1:]
    assert [w.split() for w in waiting] == [["15.0", "tests/b.py::z"]]  # a.py::x and y waited 0.5 s: under 1 s, not listed
