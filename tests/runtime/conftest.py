"""Runtime tests start from an empty compile cache: mutmut reruns the tests in one process, and a
graph compiled (and cached) by an earlier run would hide a mutant of the step factories."""

from __future__ import annotations

import pytest

from masbench.runtime.cache import clear_cache


@pytest.fixture(autouse=True)
def _fresh_compile_cache():
    clear_cache()
    yield
