"""A pytest plugin for benchmarks/suite_cpu.py: one line per test with its CPU and wall time.

Loaded with ``-p cpu_plugin`` (its folder on ``PYTHONPATH``); writes to the folder named by
``MASBENCH_TEST_CPU_DIR``, one tab-separated file per process (an xdist worker each):
nodeid, kind (``embedded``, ``slow`` or ``other``, from the test's markers), its own CPU seconds
(this process's), the CPU seconds of the subprocesses it waited for (``RUSAGE_CHILDREN``: a CLI
run, a worker process; not Ray's daemons, which nobody waits for), wall seconds."""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Generator
from typing import IO

import pytest

_out: IO[str] | None = None


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    global _out
    if _out is None:
        _out = open(os.path.join(os.environ["MASBENCH_TEST_CPU_DIR"], f"{os.getpid()}.tsv"), "a")
    kind = ("embedded" if item.get_closest_marker("embedded") else
            "slow" if item.get_closest_marker("slow") else "other")
    c0, p0, w0 = _children_cpu(), time.process_time(), time.monotonic()
    yield
    own, kids, wall = time.process_time() - p0, _children_cpu() - c0, time.monotonic() - w0
    _out.write(f"{item.nodeid}\t{kind}\t{own:.3f}\t{kids:.3f}\t{wall:.3f}\n")
    _out.flush()
