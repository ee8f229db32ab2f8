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
