"""Benchmark suites: which tasks, which designs, which models, under which budget."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from .base import Spec
from .budget import Budget
from .judge import JudgeSpec
from .model import ModelSpec
from .stats import StatsSpec

SUGAR: dict[str, tuple[str, str | None]] = {
    "jsonl": ("legacy-jsonl", "guess"),
    "parquet": ("legacy-parquet", "guess"),
    "masbench": ("masbench-dir", "masbench"),
    "smfr": ("file", "smfr"),
    "gsm8k": ("file", "gsm8k"),
    "math": ("file", "math"),
    "aime": ("file", "aime"),
    "choice": ("file", "choice"),
    "table": ("file", "table"),
    "hf": ("hf", None),
}
"""The short source keys, each sugar for a (reader, format) pair of the general form: ``{gsm8k: F}``
is ``{reader: file, path: F, format: gsm8k}``. ``hf:`` takes its format from ``format:`` (default
``table``). Names only: the readers and formats are registered in ``masbench.bench.sources``. A new
format needs no key here — it is used through ``path:`` + ``format:``."""

SOURCE_KEYS = ("generator", *SUGAR, "path")
"""The keys that name a task source; a ``tasks:`` entry sets exactly one of them."""

_NAME = r"^[A-Za-z0-9_.\-]+$"

GENERATOR_N = 10
"""Instances per axis value a generator makes when a source leaves ``n`` unset."""


class SourceRoute(NamedTuple):
    """A data source in its general form: which reader reads ``path`` into rows, which format turns
    the rows into tasks, and the default task label."""

    reader: str
    path: str
    format: str
    label: str


class TaskSource(Spec):
    """Where a suite's tasks come from: exactly one of the :data:`SOURCE_KEYS` (docs/benchmarks.md).

    The general form of a data source is ``{path: P, reader: R, format: F}``; the short keys
    (``masbench: DIR``, ``smfr: FILE``, ``gsm8k: FILE``, …, :data:`SUGAR`) stay as sugar over it.
    Reader and format names are checked against their registries when the suite is checked or its
    tasks are loaded, so code may register new ones (``masbench.bench.FORMATS``/``READERS``)."""

    generator: str | None = None
    """Registered generator name, e.g. ``masbench.depth`` or ``smfr``."""
    values: list[int] | None = None
    """Axis values to generate (generators only)."""
    n: int | None = Field(default=None, ge=1)
    """Generators: instances per axis value (default 10). Data sources (every other key): a cap on the
    rows read — per config for ``masbench:``/``hf:`` with ``configs:``, in all for a file, folder or glob;
    unset, every row of the split or files is read (the published depth test split: 1,609). A cap that
    cuts rows is reported when the tasks load (``read 10 of 1,609 rows of depth/test: capped by n: 10``).
    There is no ``limit:`` alias: ``n`` is the one name (``masbench run --limit N`` caps every source
    from the command line instead)."""
    seed: int = 0
    """Generator seed: the same seed regenerates byte-identical tasks."""
    split: str = Field(default="test", pattern=r"^[A-Za-z0-9_.\-]+$")
    """Generators: template split (``train``/``test``, disjoint templates). Published data: the split read."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Extra generator parameters, or the format's parameters (``table``: ``scorer``, ``skills``, …)."""
    path: str | None = None
    """General form: what ``reader`` reads — a file, folder or glob (relative to the suite file), a
    hub dataset id, … Goes with ``format:`` (required) and ``reader:`` (default ``file``)."""
    reader: str | None = Field(default=None, pattern=_NAME)
    """General form: the registered reader that turns ``path`` into rows: ``file`` (by suffix),
    ``jsonl``, ``json``, ``csv``, ``parquet``, ``hf`` (``datasets``), ``masbench-dir`` (a local copy of
    ``Salesforce/MASBench``) or one registered by code. Default ``file``."""
    jsonl: str | None = None
    """Path to a GSM8K-style JSONL file (relative to the suite file)."""
    parquet: str | None = None
    """Path to a MASBench-layout parquet file (relative to the suite file)."""
    masbench: str | None = None
    """A local copy of ``Salesforce/MASBench``: the folder holding ``<config>/<split>-*.parquet``."""
    smfr: str | None = None
    """The Illusion paper's SMFR rows: a jsonl file, a folder of them or a glob pattern."""
    gsm8k: str | None = None
    """GSM8K rows (jsonl/csv/parquet): ``question`` and an ``answer`` ending ``#### <gold>``."""
    math: str | None = None
    """MATH rows: ``problem`` and a ``solution`` whose last ``\\boxed{}`` is the gold."""
    aime: str | None = None
    """AIME-style rows: ``problem`` and an integer ``answer``."""
    choice: str | None = None
    """GPQA-style multiple-choice rows (options shuffled by ``seed``, the permutation recorded)."""
    table: str | None = None
    """Any jsonl/csv/parquet file, read through ``fields`` (dotted paths) and ``gold_sep``."""
    hf: str | None = None
    """A Hugging Face dataset (hub id or local dataset folder) read with ``datasets`` (extra ``hf``)."""
    format: str | None = Field(default=None, pattern=_NAME)
    """The registered format that turns rows into tasks: ``masbench``, ``smfr``, ``gsm8k``, ``math``,
    ``aime``, ``choice``, ``table``, ``guess`` or one registered by code. Required with ``path:``;
    with ``hf:`` it defaults to ``table``; the other short keys name their own format."""
    configs: list[str] | None = None
    """MASBench configs to read (default: all of the split), or the ``hf`` dataset configs."""
    gold_sep: str | None = None
    """Splits one gold string into several answers (``table``/``hf``), e.g. ``"<<horizon>>"``."""
    fields: dict[str, str] = Field(default_factory=dict)
    """Field names or dotted paths into JSON columns, e.g. ``{question: prompt.0.content}``."""
    name: str | None = None
    """Label for this task group in reports (default: generator, format or file stem)."""
    distinct: bool = False
    """Generators: draw until every axis value has ``n`` tasks whose questions no earlier task of the
    source asks (a generator of small-number problems draws ``What is 5 plus 5?`` twice easily). Left
    false, a repeated question is kept and reported when the tasks load."""

    @model_validator(mode="after")
    def _one_source(self) -> "TaskSource":
        given = [k for k in SOURCE_KEYS if getattr(self, k)]
        if len(given) != 1:
            raise ValueError(f"a task source needs exactly one of {', '.join(SOURCE_KEYS)}"
                             + (f" (got {', '.join(given)})" if given else ""))
        if self.reader is not None and self.path is None:
            raise ValueError("reader: goes with path: (the general form {path, reader, format})")
        if self.path is not None and self.format is None:
            raise ValueError("a path: source needs format: (a registered task format, e.g. gsm8k or table)")
        key = given[0]
        if self.distinct and key != "generator":
            raise ValueError("distinct: goes with generator: (a data source reads its rows as they are)")
        if key == "generator" and self.n is None:
            self.n = GENERATOR_N  # generators make tasks: their count stays a number, hashed as before
        own = SUGAR[key][1] if key in SUGAR else None  # the format a short key already names
        if self.format is not None and key not in ("path", "hf") and self.format != own:
            raise ValueError(f"format: goes with path: or hf: ({key}: already says how its rows are read)")
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # the general form's keys are left out when unset, so a suite written with the short keys
        # dumps (and hashes into its run's configuration identity) exactly as before they existed
        data = handler(self)
        for key in ("path", "reader"):
            if data.get(key) is None:
                data.pop(key, None)
        return data

    def route(self) -> SourceRoute | None:
        """This data source in its general form (None for a generator)."""
        if self.generator:
            return None
        if self.path is not None:
            assert self.format is not None  # checked by the validator
            return SourceRoute(self.reader or "file", self.path, self.format, self.name or self.format)
        key = next(k for k in SUGAR if getattr(self, k))
        reader, fmt = SUGAR[key]
        default = (self.format or "hf") if key == "hf" else key
        return SourceRoute(reader, getattr(self, key), fmt or self.format or "table", self.name or default)


class DesignRef(Spec):
    """A design with parameter overrides, e.g. ``{design: cot-sc, params: {k: 9}, label: cot-sc@9}``."""

    design: str
    """Design name."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Parameter overrides."""
    label: str | None = None
    """Name in reports (default: the design name plus its overrides)."""


class CotScSpec(Spec):
    """The CoT-SC reference curve, drawn once as a pool of samples per task."""

    k_max: int = Field(default=16, ge=1, le=256)
    """Samples per task in the pool; maj@k for every k ≤ k_max comes from subsampling it."""
    agent: str = "cot-solver"
    """The agent that draws the samples."""
    kind: str | None = None
    """The op of the pool's one node per sample (a registered op, like a node's ``kind:``). Unset:
    one call of ``agent`` (CoT). ``react``: one bounded ReAct run of ``agent`` with its tools, so
    on tool tasks the single-agent reference is Self-Consistency over ReAct (k runs, voted)."""
    params: dict[str, Any] = Field(default_factory=dict)
    """The pool node's ``params`` (e.g. ``{max_steps: 6}`` for ``kind: react``)."""
    bootstrap: int = Field(default=500, ge=0)
    """Bootstrap resamples for the curve's confidence intervals."""
    enabled: bool = True
    """Set false to skip the pool (no iso-cost metrics then)."""
    tie: Literal["split", "random", "first"] = "split"
    """How majority votes break ties, in every design's ``majority`` node and in the curve alike:
    ``split`` (the curve credits a t-way tie 1/t; the vote draws uniformly among the tied, seeded),
    ``random`` (a seeded priority over answers per task wins), ``first`` (the first seen wins).
    ``split`` makes ``cot-sc[k]`` an unbiased draw of the curve at k and gives the smoothest curve."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    """Sampling temperature of the pool (default: the agent's). Illusion: 1.0; MASBench: 0.5."""
    vote: Literal["normalized", "raw"] = "normalized"
    """What the curve's majority vote counts: ``normalized`` answers (``1,000`` = ``1000``) or the
    ``raw`` answer strings, stripped (both papers vote on raw strings; empty and "None" never win)."""
    k: int | Literal["cost-matched"] | None = None
    """The protocol's CoT-SC point on the curve: a fixed k (both papers: 5) or ``cost-matched``:
    k = the mean model calls per task of the design named in ``match`` (Illusion), clamped to k_max.
    Unset: 5, or k_max when that is smaller."""
    match: str | None = None
    """The design label whose mean calls per task set k when ``k: cost-matched``."""

    @model_validator(mode="after")
    def _protocol(self) -> "CotScSpec":
        if self.k == "cost-matched" and not self.match:
            raise ValueError("k: cost-matched needs `match:` naming the design whose calls set k")
        if isinstance(self.k, int) and not 1 <= self.k <= self.k_max:
            raise ValueError(f"k = {self.k} must be between 1 and k_max = {self.k_max}")
        return self


TranscriptMode = Literal["full", "errors", "none"]
"""What a run keeps of its calls' transcripts (messages and replies, ``call_messages``/``texts``):
every call's (``full``), only the calls whose status is not ``ok`` (``errors``), or none."""

TRANSCRIPT_MODES: tuple[TranscriptMode, ...] = ("full", "errors", "none")
"""The transcript modes, in the order the CLI lists them."""


class SuiteSpec(Spec):
    """A benchmark suite: designs × tasks × seeds (× models), compared with CoT-SC at equal budget."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$")
    """Suite name."""
    description: str | None = None
    """What the suite measures."""
    models: dict[str, str | ModelSpec] = Field(default_factory=lambda: {"default": "embedded/smollm2"})
    """Alias → litellm id or full model spec. Agents use ``model: <alias>``; ``default`` is the fallback."""
    tasks: list[TaskSource] = Field(min_length=1)
    """Task sources."""
    designs: list[str | DesignRef] = Field(min_length=1)
    """Designs to compare (names or refs with params)."""
    seeds: list[int] = Field(default_factory=lambda: [0])
    """Seeds: each (design, task) cell runs once per seed."""
    cot_sc: CotScSpec = Field(default_factory=CotScSpec)
    """The CoT-SC reference pool."""
    stats: StatsSpec = Field(default_factory=StatsSpec)
    """Paired tests and verdicts against the curve: matching unit, α, bootstrap, power."""
    budget: Budget = Field(default_factory=Budget)
    """Per-task budget, enforced for every design."""
    concurrency: int = Field(default=8, ge=1)
    """Cells (design × task × seed) in flight at once per worker."""
    store: str = "runs/masbench.duckdb"
    """DuckDB file (relative to the working directory)."""
    cache: bool = True
    """Use the durable response cache (reruns hit it)."""
    judge: JudgeSpec | None = None
    """The model judge that scores the tasks whose scorer is ``judge`` (open-ended tasks without a
    rule-checkable gold): agent, rubric, scale, k samples. Its calls are purpose ``scoring``: never a
    design's cost. Unset: a judged task is an error when the suite is prepared."""
    transcripts: TranscriptMode = "full"
    """Keep each call's messages and reply in the store: ``full`` (every call), ``errors`` (calls
    whose status is not ``ok``) or ``none``; ``masbench run --transcripts`` overrides it. A setting
    of what is recorded, not of what is measured: it is not part of the run's configuration
    identity (a run resumes whichever mode it is given). Keys and headers are never stored."""
