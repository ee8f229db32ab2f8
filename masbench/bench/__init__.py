"""Benchmark tasks: published-data sources (MASBench, SMFR, GSM8K, MATH, AIME, GPQA-style choice, any
table, ``hf:``), generators (iGSM-style MASBench, SMFR as published, the local-corpus search benchmark, and our simple ones), and
benchmark-true scorers. See docs/benchmarks.md.

Never calls a model. Public API::

    load_tasks(source, base_dir)          # one TaskSource → [TaskInstance] (TaskDataError on bad data)
    READERS / FORMATS                     # task-source registries: path → rows, rows → tasks (RowGroup)
    load_suite_tasks(suite, base_dir)     # a SuiteSpec → [TaskInstance]
    load_suite(suite, base_dir, limit)    # → SuiteTasks: the tasks and what each source read (SourceRead)
    extract_answers(text, n, how, field)  # reply → normalized answers
    normalize_answer(s)                   # canonical answer string (voting equality)
    score(task, prediction, reply=None)   # → Score (the task's scorer; benchmark scorers read the reply)
    raw_vote_key(task, reply)             # the raw answer string the papers' CoT-SC votes on
    GENERATORS / generator(name)          # generator registry
    SCORERS / scorer(name)                # scorer registry
    MODEL_SCORERS                         # scorers that ask a model (``judge``; scored inside a run)
"""

from __future__ import annotations

from ..text import extract_answers, extract_raw, normalize_answer
from . import arith as _arith  # noqa: F401  (registers masbench.arith)
from . import axes as _axes  # noqa: F401  (registers the masbench.* generators)
from . import scoring as _scoring  # noqa: F401  (registers the benchmark scorers)

# iGSM (masbench.igsm.*), the search benchmark (its generator and scorer), smfr and smfr.paper are
# declared by name in .registry and imported when a suite first uses one of them.
from .dag import from_json as dag_from_json
from .dag import measure as measure_axis
from .dag import stats as dag_stats
from .errors import TaskDataError
from .loaders import SuiteTasks, load_jsonl, load_parquet, load_suite, load_suite_tasks, load_tasks
from .reads import SourceRead, read_lines
from .registry import GENERATORS, MODEL_SCORERS, REPLY_SCORERS, SCORERS, ModelScorer, generator, scorer
from .scorers import score
from .scoring import math_equal, raw_vote_key
from .sources import FORMATS, READERS, RowGroup
from .types import Score, TaskInstance

__all__ = [
    "FORMATS", "GENERATORS", "MODEL_SCORERS", "ModelScorer", "READERS", "RowGroup", "REPLY_SCORERS", "SCORERS", "Score", "SourceRead", "SuiteTasks", "TaskDataError", "TaskInstance", "dag_from_json", "dag_stats", "extract_answers",
    "extract_raw", "generator", "load_jsonl", "load_parquet", "load_suite", "load_suite_tasks", "load_tasks",
    "math_equal", "measure_axis", "normalize_answer", "raw_vote_key", "read_lines", "score", "scorer",
]
