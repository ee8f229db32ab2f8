"""Task loaders: generators, GSM8K-style JSONL, MASBench-layout parquet, and whole suites.

Field names are configurable through the source's ``fields`` (``question``, ``answer``, ``id``,
``intermediates``, ``axis``, ``axis_value``); ``params`` may set ``scorer``, ``extract``,
``skills`` and ``axis`` for file sources.

- JSONL (GSM8K style): ``{"question": ..., "answer": "... #### 42"}``; the gold is what follows
  the last ``####`` (the whole answer when there is none). A list answer gives several positions.
- Parquet (HF ``Salesforce/MASBench`` layout, configs depth/horizon/breadth/parallel/robustness/
  combine): a question column and an answer column (a scalar, a list, or a JSON list string).
  Column names are guessed among common ones unless ``fields`` names them. The axis comes from
  ``params.axis``, an ``axis`` column, or a file stem starting with an axis name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from ..text import normalize_answer
from .registry import GENERATORS
from .sources import load_source, source_kind
from .sources.masbench import CONFIGS, masbench_tasks
from .types import TaskInstance

AXES = ("depth", "horizon", "breadth", "parallel", "robustness")

_GUESS = {
    "question": ["question", "problem", "prompt", "input", "query", "instruction"],
    "answer": ["answer", "answers", "gold", "final_answer", "target", "solution", "label", "output"],
    "id": ["id", "uid", "task_id", "qid", "idx"],
    "intermediates": ["intermediates", "intermediate_answers", "sub_answers"],
    "axis_value": ["axis_value", "level", "value", "difficulty"],
}
_FILE_PARAMS = {"scorer", "extract", "skills", "axis", "field"}


def _gold_list(value: Any) -> list[str]:
    """Gold answers from a cell: GSM8K ``#### 42``, a list, a JSON list string, or a scalar."""
    if value is None:
        return []
    if hasattr(value, "tolist"):  # numpy / pyarrow arrays
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [normalize_answer(str(v)) for v in value]
    text = str(value)
    if "####" in text:
        text = text.rsplit("####", 1)[1]
    stripped = text.strip()
    if stripped.startswith("[") and stripped.endswith("]"):
        try:
            parsed = json.loads(stripped)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            return [normalize_answer(str(v)) for v in parsed]
    return [normalize_answer(stripped)]


def _int_value(value: Any) -> int | None:
    """An axis value as an integer where it is one (``"3"``, 3); anything else (``"3-4"``) is None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    text = str(value).strip()
    return int(text) if text.lstrip("-").isdigit() else None


def _column(row: dict[str, Any], fields: dict[str, str], key: str, required: bool, where: str) -> Any:
    if key in fields:
        if fields[key] not in row:
            raise ValueError(f"{where}: no field {fields[key]!r} (fields.{key}); has {sorted(row)}")
        return row[fields[key]]
    for name in _GUESS.get(key, [key]):
        if name in row:
            return row[name]
    if required:
        raise ValueError(f"{where}: no {key} field among {sorted(row)}; set fields.{key}")
    return None


def _rows_to_tasks(rows: Iterable[dict[str, Any]], label: str, fields: dict[str, str],
                   params: dict[str, Any], where: str, default_axis: str | None) -> list[TaskInstance]:
    unknown = set(params) - _FILE_PARAMS
    if unknown:
        raise ValueError(f"{where}: unknown params {sorted(unknown)} for a file source "
                         f"(allowed: {sorted(_FILE_PARAMS)})")
    tasks = []
    for i, row in enumerate(rows):
        at = f"{where} row {i + 1}"
        question = _column(row, fields, "question", True, at)
        answers = _gold_list(_column(row, fields, "answer", True, at))
        if not answers:
            raise ValueError(f"{at}: empty answer")
        ident = _column(row, fields, "id", False, at)
        axis = _column(row, fields, "axis", False, at) if "axis" in fields else None
        axis = str(axis) if axis else params.get("axis", default_axis)
        axis_value = _column(row, fields, "axis_value", False, at) if axis else None
        inter = _column(row, fields, "intermediates", False, at)
        meta: dict[str, Any] = {"row": i}
        for key in ("extract", "field"):
            if key in params:
                meta[key] = params[key]
        tasks.append(TaskInstance(
            id=f"{label}-{ident}" if ident is not None else f"{label}-{i:04d}",
            source=label,
            question=str(question),
            answers=answers,
            intermediates=_gold_list(inter) if inter is not None else [],
            axis=axis,
            axis_value=_int_value(axis_value),
            skills=list(params.get("skills", ["math.word_problem"])),
            scorer=params.get("scorer", "numeric"),
            meta=meta,
        ))
    return tasks


def load_jsonl(path: Path, n: int | None = None, fields: dict[str, str] | None = None,
               name: str | None = None, params: dict[str, Any] | None = None) -> list[TaskInstance]:
    """Tasks from a GSM8K-style JSONL file (blank lines skipped), at most ``n``."""
    path = Path(path)
    rows = []
    with path.open(encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"{path}:{line_no}: invalid JSON: {exc}") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path}:{line_no}: each line must be a JSON object")
            rows.append(row)
            if n is not None and len(rows) >= n:
                break
    return _rows_to_tasks(rows, name or path.stem, fields or {}, params or {}, str(path), None)


def load_parquet(path: Path, n: int | None = None, fields: dict[str, str] | None = None,
                 name: str | None = None, params: dict[str, Any] | None = None) -> list[TaskInstance]:
    """Tasks from a MASBench-layout parquet file, at most ``n`` rows."""
    import pyarrow.parquet as pq

    path = Path(path)
    table = pq.read_table(path)
    if n is not None:
        table = table.slice(0, n)
    stem = path.stem.lower()
    axis = next((a for a in AXES if stem.startswith(a)), None)
    if not fields and {"prompt_json", "reward_model_json", "extra_info_json"} <= set(table.column_names):
        # a file of the published MASBench layout: read it as the masbench source does
        config = path.parent.name if path.parent.name in CONFIGS else (axis or "masbench")
        split = stem.split("-", 1)[0]
        rows = [(path, i, r) for i, r in enumerate(table.to_pylist(), start=1)]
        return masbench_tasks(rows, config, split, name or "masbench")
    return _rows_to_tasks(table.to_pylist(), name or path.stem, fields or {}, params or {}, str(path), axis)


def load_tasks(source: Any, base_dir: Path | None = None) -> list[TaskInstance]:
    """Tasks of one :class:`~masbench.spec.suite.TaskSource` (file paths resolve against ``base_dir``)."""
    if source_kind(source) is not None:
        return load_source(source, base_dir)
    if source.generator:
        try:
            fn = GENERATORS[source.generator]
        except KeyError:
            raise ValueError(f"unknown generator {source.generator!r}; "
                             f"registered: {', '.join(sorted(GENERATORS))}") from None
        tasks = fn(source.values, source.n, source.seed, source.split, **source.params)
        if source.name and source.name != source.generator:
            tasks = [t.model_copy(update={"id": f"{source.name}-{t.id}", "source": source.name})
                     for t in tasks]
        return tasks
    rel = source.jsonl or source.parquet
    path = Path(rel)
    if not path.is_absolute() and base_dir is not None:
        path = Path(base_dir) / path
    if not path.exists():
        raise FileNotFoundError(f"task file not found: {path}")
    loader = load_jsonl if source.jsonl else load_parquet
    return loader(path, n=source.n, fields=source.fields, name=source.name, params=source.params)


def load_suite_tasks(suite: Any, base_dir: Path | None = None) -> list[TaskInstance]:
    """All tasks of a :class:`~masbench.spec.suite.SuiteSpec`, in source order; ids must be unique."""
    tasks: list[TaskInstance] = []
    seen: dict[str, int] = {}
    for k, source in enumerate(suite.tasks):
        for task in load_tasks(source, base_dir):
            if task.id in seen:
                raise ValueError(f"suite {suite.name!r}: task id {task.id!r} appears in sources "
                                 f"#{seen[task.id] + 1} and #{k + 1}; give the sources distinct names")
            seen[task.id] = k
            tasks.append(task)
    return tasks
