"""`make test`'s runner, scripts/test.sh: the tests marked `waits` run in a process of their own
beside the xdist workers, and the two pytest runs together are the whole suite (complementary
``-m``); a failure of either run, or of the type checker, fails it with that run's status.

The pytest command given is a stand-in that records its arguments, and the import linter and the
type checker are stand-ins too (LINT_IMPORTS, TYPECHECK), so this checks the runner, not the suite."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from worker_order import longest_first

ROOT = Path(__file__).resolve().parents[1]


def _run(tmp_path: Path, *, waits_rc: int = 0, rest_rc: int = 0, types: str = "true",
         lint: str = "true") -> tuple[int, list[list[str]], str]:
    record = tmp_path / "calls.txt"
    fake = tmp_path / "fake-pytest"
    # one line per call, arguments separated by |; the exit status by which half of the suite it ran
    fake.write_text('#!/usr/bin/env bash\n'
                    f'(IFS="|"; echo "$*") >> {record}\n'
                    'for a in "$@"; do [ "$a" = waits ] && exit "$WAITS_RC"; done\n'
                    'echo "the rest ran"\n'
                    'exit "$REST_RC"\n')
    fake.chmod(0o755)
    env = {**os.environ, "LINT_IMPORTS": lint, "TYPECHECK": types, "WAITS_RC": str(waits_rc),
           "REST_RC": str(rest_rc)}
    p = subprocess.run(["bash", str(ROOT / "scripts" / "test.sh"), str(fake), "-q", "-n", "auto"], env=env,
                       capture_output=True, text=True, timeout=60)
    calls = [ln.split("|") for ln in record.read_text().splitlines()] if record.exists() else []
    return p.returncode, calls, p.stdout


def test_the_waiting_tests_run_in_one_process_and_the_rest_on_the_workers(tmp_path):
    rc, calls, out = _run(tmp_path)
    assert rc == 0
    assert sorted(calls) == sorted([["-q", "-n", "auto", "-n", "0", "-m", "waits"],
                                    ["-q", "-n", "auto", "-m", "not waits"]])
    assert "the rest ran" in out and "pytest -m waits" in out


@pytest.mark.parametrize("waits_rc,rest_rc,types,want", [
    (1, 0, "true", 1),   # a failing waiting test
    (0, 1, "true", 1),   # a failing test on the workers
    (0, 5, "true", 5),   # no test collected is a failure too
    (0, 0, "false", 1),  # a type error
])
def test_any_failing_part_fails_the_run(tmp_path, waits_rc, rest_rc, types, want):
    rc, calls, _ = _run(tmp_path, waits_rc=waits_rc, rest_rc=rest_rc, types=types)
    assert rc == want and len(calls) == 2


def test_a_broken_import_contract_stops_before_any_test(tmp_path):
    rc, calls, _ = _run(tmp_path, lint="false")
    assert rc == 1 and calls == []


# ----- the order the workers take the tests in (tests/worker_order.py, applied by tests/conftest.py) -----

class _Item:
    def __init__(self, path: str, embedded: bool = False):
        self.path, self.embedded = Path(path), embedded

    def get_closest_marker(self, name: str):
        return object() if name == "embedded" and self.embedded else None


def test_modules_of_the_real_model_tests_go_first_each_kept_whole_and_in_order():
    items = [_Item("a.py"), _Item("b.py"), _Item("b.py", embedded=True), _Item("b.py"), _Item("c.py"),
             _Item("d.py", embedded=True), _Item("a2.py")]
    got = [(str(i.path), i.embedded) for i in longest_first(items)]
    assert got == [("b.py", False), ("b.py", True), ("b.py", False), ("d.py", True),
                   ("a.py", False), ("c.py", False), ("a2.py", False)]
