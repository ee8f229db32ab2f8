"""A suite resolved before any call is made: its tasks, design entries (each checked to resolve
to a runnable), models, configuration identity and cells; and the run configuration a store keeps
(written once by :func:`run_config`, read back by :func:`suite_config`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..bench import SourceRead, load_suite
from ..bench.scoring.judge import rule_scorer
from ..bench.types import TaskInstance
from ..design.runnable import Runnable, resolve_runnable
from ..library import Library
from ..llm import ModelOverride, is_simulated, models_from, overrides_json, require_prices
from ..runtime import check_design
from ..spec import AgentSpec, DesignSpec, JudgeSpec, NodeSpec, SuiteSpec, TranscriptMode
from ..spec.problems import SpecError, problem_at
from ..store import POOL_DESIGN  # the pool's design tag: which rows key to a pool cell is the store's
from .cells import Cell, DesignEntry, config_hash, design_entries
from .model_flags import flag_texts, resolve_overrides
from .scoring import JudgeConfigError, judge_for, judged_ids
from .sequence import SequencePlan, SequentialError, plan_sequence

if TYPE_CHECKING:
    from .task_groups import TaskGroups  # numpy: imported by TaskIndex.of (a sharding driver's index only)


@dataclass
class RunOptions:
    """How to run a suite (the CLI's flags)."""

    suite: str
    """Suite name or path."""
    store: Path | None = None
    """Store file (default: the suite's ``store``)."""
    overrides: dict[str, ModelOverride] = field(default_factory=dict)
    """``--model ALIAS=NAME`` overrides: a model YAML's name or path, or a litellm id (a whole spec,
    or its JSON data, as a worker is handed the parent's resolved overrides)."""
    free: list[str] = field(default_factory=list)
    """``--free ALIAS``: these aliases' models are free (``price: 0``), e.g. a local server."""
    api_base: dict[str, str] = field(default_factory=dict)
    """``--api-base ALIAS=URL``: these aliases' models are served at URL."""
    limit: int | None = None
    """Keep only the first N tasks of each task source."""
    new: bool = False
    """Start a fresh run even if a matching one exists."""
    run_id: str | None = None
    """Continue this run id (or create it)."""
    workers: int = 1
    """Workers: processes of the ``processes`` engine (>1 picks it when ``engine`` is unset), Ray
    tasks of the ``ray`` engine (default there: the cluster's CPUs)."""
    engine: str | None = None
    """What runs the cells: ``local``, ``processes`` or ``ray`` (:data:`masbench.registry.ENGINES`);
    None: ``processes`` when ``workers`` > 1, else ``local``."""
    address: str | None = None
    """``ray``: the cluster to join (``auto``, ``HOST:PORT``, ``ray://HOST:10001``); None: ``RAY_ADDRESS``
    if set, else a local Ray started for the run."""
    ray_mode: str | None = None
    """``ray``: how the cells reach the workers — ``tasks`` (one Ray task per shard) or ``actors``
    (one actor per shard, holding its gateway, sent the shard's cells in batches); None: the
    engine's default (``tasks``: the two measured a tie within noise in
    ``benchmarks/harness_scale.py``, and tasks reuse Ray's pooled worker processes; docs/scale.md)."""
    parts: Path | None = None
    """Where the workers write their DuckDB parts (default: ``parts/`` beside the store). On a Ray
    cluster of several machines: a directory every node and the driver see (a shared filesystem)."""
    concurrency: int | None = None
    """Cells in flight per process (default: the suite's)."""
    cache: bool | None = None
    """Use the response cache (default: the suite's ``cache``)."""
    lib: list[Path] = field(default_factory=list)
    """Extra library roots."""
    retry_failed: bool = True
    """On resume, rerun cells that failed (their calls stay recorded as spent, not counted)."""
    shard: tuple[int, int] | None = None
    """Worker mode: run only cells with shard index i of n, into ``store``, no curve."""
    transcripts: TranscriptMode | None = None
    """What to keep of the calls' transcripts (``full | errors | none``; default: the suite's)."""
    until_decided: bool = False
    """Run the tasks in a seeded random order, in batches, with an anytime-valid look after each:
    a design whose verdict is decided stops receiving tasks (docs/sequential.md)."""
    max_tasks: int | None = None
    """``until_decided``: the task cap (default: all the suite's tasks)."""
    batch: int | None = None
    """``until_decided``: tasks per batch, one look after each (default: 20)."""
    judge: str | None = None
    """The judge agent of the suite's judge scorer (``--judge``; replaces the ``judge:`` block's)."""
    judge_k: int | None = None
    """Judge samples per reply (``--k``; replaces the ``judge:`` block's)."""
    judge_check: bool = False
    """``masbench judge check``: keep only the tasks with a rule-checkable gold and score each by
    the judge, the rule's verdict kept beside it (a run of its own: suite ``<name>.judge-check``)."""


@dataclass
class Prepared:
    """A suite resolved to tasks, designs, models and cells."""

    suite: SuiteSpec
    suite_path: Path
    library: Library
    tasks: list[TaskInstance]
    designs: list[DesignEntry]
    models: dict[str, Any]
    config_hash: str
    store_path: Path
    simulated: bool
    pool: DesignSpec
    """The CoT-SC pool's design (:func:`pool_design`, one sample): built and checked here, once; run by
    spec, never added to the library."""
    transcripts: TranscriptMode = "full"
    """The run's transcript mode: ``--transcripts``, else the suite's ``transcripts``."""
    sequence: SequencePlan | None = None
    """A ``--until-decided`` run's task order and batches (None: a fixed-n run of every task)."""
    overrides: dict[str, ModelOverride] = field(default_factory=dict)
    """The command line's models, one override per alias (``--model``/``--free``/``--api-base``
    folded: an id or a whole spec): what the run hashes, records and hands its workers."""
    reads: list[SourceRead] = field(default_factory=list)
    """What loading the tasks read, per source group (rows read of rows there, the cap), in order."""
    judge_agent: AgentSpec | None = None
    """The judge scorer's agent (``suite.judge.agent``), when some task is judged."""
    runnables: dict[str, Runnable] = field(default_factory=dict)
    """What each design entry's name runs (:func:`~masbench.design.runnable.resolve_runnable`)."""
    index: TaskIndex | None = None
    """A sharding driver's tasks (``prepare(..., tasks=False)``): their ids and groups only, and
    ``tasks`` empty; None: ``tasks`` holds them all."""

    @property
    def task_ids(self) -> list[str]:
        """The run's task ids, in source order."""
        return self.index.ids if self.index is not None else [t.id for t in self.tasks]

    def cells(self, task_ids: "list[str] | tuple[str, ...] | None" = None,
              designs: "list[str] | set[str] | None" = None, pool: bool = True) -> list[Cell]:
        """The run's cells (default: every task and design, and the pool); ``task_ids``: only
        these tasks; ``designs``: only these labels; ``pool``: with the pool's cells."""
        ids = self.task_ids if task_ids is None else list(task_ids)
        entries = [d for d in self.designs if designs is None or d.label in designs]
        out = []
        for seed in self.suite.seeds:
            if self.suite.cot_sc.enabled and pool:
                out += [Cell("pool", t, seed) for t in ids]
            for d in entries:
                out += [Cell("design", t, seed, d.label) for t in ids]
        return out


@dataclass
class TaskIndex:
    """What listing a run's cells and drawing its curve read of the suite's tasks, against ≈ 5 KB a
    ``masbench.depth`` task: ids in source order (a list: ≈ 70 bytes a task with its strings),
    each one's group (:class:`~.task_groups.TaskGroups`: the id's bytes + 4; a dict of tuples
    took ≈ 150 more)."""

    suite: SuiteSpec
    """The suite with the command line's judge (:func:`judge_setup`)."""
    ids: list[str]
    groups: TaskGroups
    """task id → (axis, axis value) for tasks with an axis, else (source, None)."""
    reads: list[SourceRead]
    judged: list[str]
    """The ids of the tasks a model scores (a judge)."""

    @classmethod
    def of(cls, suite: SuiteSpec, tasks: list[TaskInstance], reads: list[SourceRead]) -> TaskIndex:
        """The index of loaded ``tasks`` (ids unique: load_suite refuses a repeated id, naming its sources)."""
        from .task_groups import TaskGroups  # deferred: start-up (numpy; a sharding driver's index only)

        return cls(suite, [t.id for t in tasks], TaskGroups.of_tasks(tasks), reads, judged_ids(tasks))


def task_index(suite: SuiteSpec, base: Path, opts: RunOptions) -> TaskIndex:
    """Load the suite's tasks and keep their :class:`TaskIndex` (the tasks are dropped on return)."""
    loaded = load_suite(suite, base, opts.limit)
    suite, tasks = judge_setup(suite, loaded.tasks, opts)
    return TaskIndex.of(suite, tasks, loaded.reads)


def task_index_apart(suite: SuiteSpec, base: Path, opts: RunOptions) -> TaskIndex:
    """:func:`task_index` worked out in a child process, so this one never holds the suite's tasks
    (its heap would keep their high-water mark). Where the child fails (an error in the suite, a
    generator registered only in this process, something that does not pickle) it is worked out
    here instead, which raises the error itself or gives the same index."""
    # deferred: only a sharding driver starts a process here (~5 ms of imports a run does not pay)
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    try:
        with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as ex:
            return ex.submit(task_index, suite, base, opts).result()
    except Exception:  # noqa: BLE001 - the in-process pass below raises the real error, if any
        return task_index(suite, base, opts)


def prepare(opts: RunOptions, tasks: bool = True) -> Prepared:
    """Load and check everything before any call is made. ``tasks=False`` (a sharding driver,
    whose workers prepare their own): keep only the tasks' :class:`TaskIndex`, loaded in a child
    process, with ``Prepared.tasks`` empty."""
    if not opts.until_decided and (opts.max_tasks is not None or opts.batch is not None):
        raise SequentialError("--max-tasks and --batch set a sequential run: give them with --until-decided")
    library = Library(roots=list(opts.lib))
    loaded = library.get("suite", opts.suite)
    suite = loaded.typed(SuiteSpec)
    base = loaded.path.parent
    index = None
    if tasks:  # the tasks themselves: no index (its groups are read with the curve, after the cells ran)
        loaded_tasks = load_suite(suite, base, opts.limit)
        suite, all_tasks = judge_setup(suite, loaded_tasks.tasks, opts)
        ids, judged, reads = [t.id for t in all_tasks], judged_ids(all_tasks), loaded_tasks.reads
    else:
        index = task_index_apart(suite, base, opts)
        suite, ids, judged, reads, all_tasks = index.suite, index.ids, index.judged, index.reads, []
    if not ids:
        raise ValueError(f"suite {suite.name!r} produced no tasks")
    agent = judge_for(judged, suite.judge, library, suite.name)
    designs = design_entries(suite)
    # what each entry runs (a design, a program, a per-task designer), once; raises if nothing
    runnables = {d.name: resolve_runnable(d.name, library) for d in designs}
    cs = suite.cot_sc
    pool = pool_design(cs.agent, cs.temperature, cs.kind, cs.params)
    if cs.enabled and cs.kind is not None:  # a pool of ReAct runs etc.: check it before any call
        problems = check_design(pool, None, library)
        if problems:
            raise SpecError([problem_at(loaded.located, ("cot_sc", "kind"), f"the pool's {cs.kind} node: {p.message}")
                             for p in problems])
    overrides = resolve_overrides(suite.models, opts.overrides, opts.free, opts.api_base, library)
    models = models_from(suite.models, overrides)
    # an unpriced model stops the run here, before any call, naming its suite line or its flag
    require_prices(models, loaded.located, flag_texts(opts.overrides))
    if agent is not None and isinstance(agent.model, str) and agent.model not in models and "/" not in agent.model:
        raise JudgeConfigError(f"judge agent {agent.name!r}: model alias {agent.model!r} is not one of the suite's "
                               f"models ({', '.join(sorted(models))})")
    simulated = any(is_simulated(m) for m in models.values())
    store_path = Path(opts.store or suite.store)
    sequence = None
    if opts.until_decided:
        sequence = plan_sequence(suite, ids, [d.name for d in designs], opts.max_tasks, opts.batch)
    return Prepared(suite, loaded.path, library, all_tasks, designs, models,
                    config_hash(suite, overrides_json(overrides), opts.limit, base,
                                sequence.identity() if sequence else None),
                    store_path, simulated, pool, opts.transcripts or suite.transcripts, sequence, overrides, reads,
                    agent, runnables, index)


JUDGE_CHECK_SUFFIX = ".judge-check"
"""Appended to a suite's name for the runs of ``masbench judge check`` (so they never resume, or
stand in for, the suite's own runs)."""


def judge_setup(suite: SuiteSpec, tasks: list[TaskInstance], opts: RunOptions) -> tuple[SuiteSpec, list[TaskInstance]]:
    """The suite with the command line's judge (``--judge``, ``--k``) in its ``judge:`` block, and
    for ``judge_check`` only the tasks with a rule-checkable gold, each scored by the judge (the
    rule named in ``meta["check"]``) under the suite name :data:`JUDGE_CHECK_SUFFIX` marks."""
    judge = suite.judge
    if opts.judge is not None:
        judge = judge.model_copy(update={"agent": opts.judge}) if judge is not None else JudgeSpec(agent=opts.judge)
    if opts.judge_k is not None:
        if judge is None:
            raise JudgeConfigError(f"suite {suite.name!r}: --k sets judge samples, but there is no judge "
                                   "(give --judge AGENT or a `judge:` block)")
        judge = judge.model_copy(update={"k": opts.judge_k})
    if not opts.judge_check:
        return (suite if judge is suite.judge else suite.model_copy(update={"judge": judge})), tasks
    if judge is None:
        raise JudgeConfigError(f"suite {suite.name!r}: a judge check needs a judge (--judge AGENT or a `judge:` block)")
    checked = [t.model_copy(update={"scorer": "judge", "meta": {**t.meta, "check": rule}})
               for t in tasks if (rule := rule_scorer(t)) is not None]
    if not checked:
        raise JudgeConfigError(f"suite {suite.name!r}: none of its {len(tasks)} tasks has a rule-checkable gold "
                               "(a rule scorer, or `gold` + `check` rows of the open format)")
    # the check measures the judge on the designs' replies: no CoT-SC pool (k_max judged samples per task)
    cot_sc = suite.cot_sc.model_copy(update={"enabled": False})
    return suite.model_copy(update={"judge": judge, "name": suite.name + JUDGE_CHECK_SUFFIX, "cot_sc": cot_sc}), checked


def pool_design(agent: str, temperature: float | None = None, kind: str | None = None,
                params: dict[str, Any] | None = None) -> DesignSpec:
    """One sample of the single agent (a CoT call; with ``kind``, one run of that op, e.g. a ReAct
    run): the pool is k_max runs of this with different sample seeds."""
    node = NodeSpec.model_validate({"agent": agent, "temperature": temperature, "params": params or {},
                                    **({"kind": kind} if kind else {})})
    return DesignSpec(name=POOL_DESIGN, kind="baseline", output="sample", nodes={"sample": node})


__all__ = ["JUDGE_CHECK_SUFFIX", "POOL_DESIGN", "Prepared", "RunOptions", "SequencePlan", "SequentialError", "TaskIndex", "judge_setup", "pool_design", "prepare", "task_index"]
