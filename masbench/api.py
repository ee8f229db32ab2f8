"""masbench from Python: run a suite, read its verdicts, open its store — what ``masbench run`` and
``masbench compare`` do, as functions (``masbench run`` calls :func:`run`; ``masbench compare``
prints the tables and verdict lines read by the same readers, :mod:`masbench.report.data`, that
:func:`compare` reads).

A simulated run of the bundled quickstart suite, its verdicts, and its store read with SQL::

    >>> import masbench
    >>> summary = masbench.run("quickstart", models={"default": "sim/p60"}, store="runs/api.duckdb", limit=4)
    >>> summary.simulated, summary.failed          # sim/ models: every number is SIMULATED
    (True, 0)
    >>> verdicts = masbench.compare("runs/api.duckdb")
    >>> sorted(verdicts["design"])                  # one row per design of the suite
    ['cot', 'debate-tiny', 'expression-calculator']
    >>> verdicts.loc[verdicts["design"] == "debate-tiny", "verdict"].item()   # 8 tasks settle nothing
    'inconclusive'
    >>> with masbench.open_store("runs/api.duckdb") as store:
    ...     store.sql("SELECT count(*) FROM results WHERE design = 'cot'")
    [(8,)]

``import masbench`` stays cheap: these functions (and the harness behind them) are imported the
first time one is used.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict, Unpack

from . import telemetry
from .bench import FORMATS, GENERATORS, READERS, SCORERS
from .harness import RunOptions, RunSummary, run_suite
from .library import Library
from .llm import BACKENDS, ModelOverride
from .registry import DESIGNERS, Registry
from .runtime import OPS, PYTHON_FUNCS
from .spec.suite import TranscriptMode
from .store import Store
from .tools import TOOLS

if TYPE_CHECKING:
    import pandas as pd


class RunSettings(TypedDict, total=False):
    """The rest of :class:`~masbench.harness.RunOptions` (``masbench run``'s flags), as keywords."""

    free: list[str]
    """Aliases whose model is free (``price: 0``), e.g. a local server (``--free``)."""
    api_base: dict[str, str]
    """Alias → the URL of the OpenAI-compatible server that serves its model (``--api-base``)."""
    limit: int | None
    """The first N tasks of each task source (``--limit``)."""
    new: bool
    """Start a new run instead of resuming a matching one (``--new``)."""
    run_id: str | None
    """Resume (or create) this run id (``--run-id``)."""
    workers: int
    """Worker processes (or Ray tasks) (``--workers``)."""
    engine: str | None
    """``local``, ``processes`` or ``ray`` (``--engine``)."""
    address: str | None
    """The Ray cluster to join (``--address``)."""
    ray_mode: str | None
    """``tasks`` or ``actors`` (``--ray-mode``)."""
    parts: Path | None
    """Where workers write their DuckDB parts (``--parts``)."""
    concurrency: int | None
    """Cells in flight per process (``--concurrency``)."""
    cache: bool | None
    """Use the response cache (None: the suite's ``cache``)."""
    lib: list[Path]
    """Extra library roots, searched first (``--lib``)."""
    retry_failed: bool
    """On resume, rerun failed cells (``--no-retry-failed`` sets it False)."""
    transcripts: TranscriptMode | None
    """``full``, ``errors`` or ``none`` (``--transcripts``)."""
    until_decided: bool
    """A sequential run: batches of tasks until every design is decided (``--until-decided``)."""
    max_tasks: int | None
    """With ``until_decided``: the task cap (``--max-tasks``)."""
    batch: int | None
    """With ``until_decided``: tasks per batch (``--batch``)."""
    judge: str | None
    """The judge agent of the suite's judge scorer (replaces the ``judge:`` block's)."""
    judge_k: int | None
    """Judge samples per reply (replaces the ``judge:`` block's)."""


def run_options(suite: str | Path, models: Mapping[str, ModelOverride] | None = None,
                store: str | Path | None = None, **settings: Unpack[RunSettings]) -> RunOptions:
    """The :class:`~masbench.harness.RunOptions` of :func:`run`'s arguments (a path stays a path)."""
    return RunOptions(suite=str(suite), store=Path(store) if store is not None else None,
                      overrides=dict(models or {}), **settings)


def run(suite: str | Path, *, models: Mapping[str, ModelOverride] | None = None, store: str | Path | None = None,
        otel: bool = False, display: Any = None, **settings: Unpack[RunSettings]) -> RunSummary:
    """Run (or resume) a suite into its DuckDB store, as ``masbench run`` does, and return its summary.

    ``suite``: a suite name (``tasks/NAME.yaml`` in the working directory or bundled) or a path.
    ``models``: alias → a model YAML's name or path, a litellm id (``{"default": "sim/p60"}``) or a
    :class:`~masbench.spec.model.ModelSpec`, replacing the suite's. ``store``: the DuckDB file
    (default: the suite's ``store``). ``otel``: export OpenTelemetry spans (docs/telemetry.md).
    ``display``: a progress display (the command's is :class:`masbench.harness.progress.RunDisplay`).
    Every other ``masbench run`` option is a keyword of :class:`RunSettings` (``limit=2``, ``new=True``).

    Rerunning resumes the latest matching run. Raises what the command reports: ``SpecError`` (bad
    YAML: ``.problems`` name file, line and field), ``TaskDataError``, ``StoreBusy``, ``RunAborted``
    (a misconfigured model). It starts its own event loop: from async code, await
    :func:`masbench.harness.run_suite` instead.

        >>> s = masbench.run("quickstart", models={"default": "sim/p60"}, store="runs/api.duckdb", limit=4)
        >>> s.ran + s.skipped == s.total_cells     # resumed: every cell already done
        True
    """
    opts = run_options(suite, models, store, **settings)
    if otel:
        telemetry.configure(why="--otel was given (or otel=True)")
    return asyncio.run(run_suite(opts, display))


VERDICT_COLUMNS = ["run_id", "axis", "axis_value", "design", "design_name", "baseline", "verdict", "diff_pp",
                   "ci_lo_pp", "ci_hi_pp", "p_holm", "n_tasks", "reference", "reason", "accuracy", "tokens",
                   "cost_usd", "x_cot", "simulated"]
"""The columns of :func:`compare`'s frame, in order."""


def compare(store: str | Path, run: str | None = None, axis: str | None = "all") -> pd.DataFrame:
    """The verdict of every design of a run against CoT-SC at equal cost — what ``masbench compare``
    prints — as a DataFrame, one row per design (and axis value), baselines first.

    ``run``: a run id (default: the store's latest run); ``axis``: ``all`` (every task pooled), a task
    axis (``depth``, ``source``: one row per design and value) or None (every group). Columns
    (:data:`VERDICT_COLUMNS`): ``verdict`` (``worth it``, ``not worth it``, ``inconclusive``, ``not
    shown worth it``, ``baseline``, ``no CoT-SC curve``), the paired difference and its Holm-corrected
    CI in points (``diff_pp``, ``ci_lo_pp``, ``ci_hi_pp``), ``p_holm``, ``n_tasks``, what it was
    compared with (``reference``), ``accuracy``, ``tokens`` and ``cost_usd`` per task, ``x_cot``
    (cost over CoT's) and ``simulated`` (numbers from the simulator). Read-only.

        >>> v = masbench.compare("runs/api.duckdb")
        >>> list(v.columns) == masbench.api.VERDICT_COLUMNS and bool(v["simulated"].all())
        True
    """
    # deferred: pandas and the report's readers are compare()'s alone; `masbench run` imports this module
    import pandas as pd

    from .report import data  # deferred with pandas: the report's readers build frames
    from .report.verdict import verdicts  # deferred with the line above

    with open_store(store) as st:
        info = data.run_info(st, run)
        df = data.comparison(st, info.run_id, axis)
    rows = []
    for r, v in zip(df.to_dict("records"), verdicts(df)):
        def pp(col: str) -> float | None:
            x = r.get(col)
            return None if x is None or pd.isna(x) else 100 * float(x)

        rows.append({"run_id": info.run_id, "axis": r.get("axis"), "axis_value": r.get("axis_value"),
                     "design": v.design, "design_name": r.get("design_name"), "baseline": bool(r.get("baseline")),
                     "verdict": v.verdict, "diff_pp": v.gap_pp, "ci_lo_pp": pp("paired_ci_lo_holm"),
                     "ci_hi_pp": pp("paired_ci_hi_holm"), "p_holm": r.get("paired_p_holm"),
                     "n_tasks": r.get("paired_n_tasks"), "reference": v.reference, "reason": v.reason,
                     "accuracy": r.get("accuracy"), "tokens": r.get("tokens"), "cost_usd": r.get("cost_usd"),
                     "x_cot": v.x_cot, "simulated": info.simulated})
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def open_store(path: str | Path) -> Store:
    """A run store, opened read-only (a run writing it meanwhile is not disturbed): query it with
    ``.sql(query, params)`` (rows) or ``.df(query, params)`` (a DataFrame); close it with
    ``.close()`` or a ``with`` block. Tables and views: docs/metrics.md (``results``, ``calls``,
    ``design_comparison``, ``paired_tests``, ``cot_sc_curve``, …). A missing file is a
    ``FileNotFoundError``.

        >>> with masbench.open_store("runs/api.duckdb") as st:
        ...     st.sql("SELECT DISTINCT simulated FROM results")
        [(True,)]
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no store at {p}")
    return Store(p, read_only=True)


class Available(NamedTuple):
    """One thing :func:`available` lists."""

    kind: str
    """``agent``, ``design``, ``suite``, ``model``, ``op``, ``format``, ``reader``, ``backend``, …"""
    name: str
    """The name YAML or the command line uses for it."""
    origin: str
    """Where it comes from: ``bundled``, ``working directory``, ``library root``, ``MASBENCH_PATH``,
    ``plugin DIST`` (an installed distribution's entry point) or ``code (module)``."""
    where: str
    """Its file (relative to its root) or the ``module:attr`` it points at (not imported)."""


LIBRARY_KINDS = {"agents": "agent", "designs": "design", "suites": "suite", "models": "model"}
"""``masbench list`` kinds that are YAML files of the library → the library's kind."""

REGISTRY_KINDS: dict[str, list[tuple[str, Registry[Any]]]] = {
    "designs": [("designer", DESIGNERS)],
    "ops": [("op", OPS)],
    "formats": [("format", FORMATS), ("reader", READERS)],
    "backends": [("backend", BACKENDS)],
    "scorers": [("scorer", SCORERS)],
    "tools": [("tool", TOOLS)],
    "functions": [("function", PYTHON_FUNCS)],
    "generators": [("generator", GENERATORS)],
}
"""``masbench list`` kinds read from registries → (the singular shown, the registry)."""

LIST_KINDS = tuple(dict.fromkeys([*LIBRARY_KINDS, *REGISTRY_KINDS]))
"""Every kind :func:`available` lists, in its order."""


def available(kind: str | None = None, lib: Sequence[str | Path] = ()) -> list[Available]:
    """What exists, one entry each, and where it comes from — ``masbench list [KIND]``. ``kind``: one
    of :data:`LIST_KINDS` (None: all). YAML kinds are searched as a run searches them (``lib``
    roots, ``MASBENCH_PATH``, the working directory, the bundled library; the first file that
    declares a name wins); code kinds come from their registries, installed plugins included
    (listed, not imported).

        >>> [a for a in masbench.api.available("ops") if a.name == "majority"]
        [Available(kind='op', name='majority', origin='bundled', where='masbench.runtime.ops.vote:OP')]
    """
    kinds = LIST_KINDS if kind is None else (kind,)
    unknown = [k for k in kinds if k not in LIST_KINDS]
    if unknown:
        raise ValueError(f"cannot list {unknown[0]!r}: kinds are {', '.join(LIST_KINDS)}")
    library = Library(roots=list(lib))
    out: list[Available] = []
    for k in kinds:
        if k in LIBRARY_KINDS:
            for name, f, root in library.entries(LIBRARY_KINDS[k]):
                out.append(Available(LIBRARY_KINDS[k], name, library.origins[root], str(f.relative_to(root))))
        for shown, reg in REGISTRY_KINDS.get(k, []):
            out += [Available(shown, n, reg.origin(n), reg.where(n)) for n in reg.names()]
    return out


__all__ = ["Available", "LIST_KINDS", "RunSettings", "VERDICT_COLUMNS", "available", "compare", "open_store", "run",
           "run_options"]
