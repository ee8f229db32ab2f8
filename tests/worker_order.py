"""The order the test workers take the tests in (tests/conftest.py applies it; its own module, so a
test can import it: ``conftest`` names a different module under every folder that has one)."""

from __future__ import annotations

from typing import Any


def longest_first(items: list[Any]) -> list[Any]:
    """``items`` with the modules that hold a test marked ``embedded`` moved to the front (a stable
    sort: every module's tests stay together and in order)."""
    heavy = {item.path for item in items if item.get_closest_marker("embedded") is not None}
    return sorted(items, key=lambda item: item.path not in heavy)
