"""masbench: does this multi-agent system beat CoT-SC at the same budget? Measured, in DuckDB.

The Python API (:mod:`masbench.api`) is imported on first use, so ``import masbench`` stays cheap::

    import masbench
    summary = masbench.run("quickstart", models={"default": "sim/p60"}, limit=4)   # SIMULATED
    verdicts = masbench.compare(summary.store)                                   # a DataFrame
    store = masbench.open_store(summary.store)                                   # read-only
"""

from typing import TYPE_CHECKING

from .version import DISTRIBUTION, __version__

if TYPE_CHECKING:
    from .api import compare, open_store, run

_API = ("run", "compare", "open_store")


def __getattr__(name: str) -> object:
    """``masbench.run``, ``masbench.compare``, ``masbench.open_store``: imported from
    :mod:`masbench.api` (the harness, pandas, DuckDB) the first time one is asked for."""
    if name in _API:
        from . import api  # deferred: the API imports the harness, pandas and DuckDB; `import masbench` must not

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])


__all__ = ["DISTRIBUTION", "__version__", "compare", "open_store", "run"]
