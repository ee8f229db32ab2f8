"""The outcome matrix: every model on every task — what routers are learned from and judged on.

One row per (task, model): ``task_id, model, correct, cost_usd, tokens, skills`` (a list of dotted
ids), optionally ``question``, ``latency_s``, ``simulated``. Three ways to get one:

* :func:`aexplore` / :func:`explore` — run each model of a pool on tasks through the Gateway
  (exploration; its cost is the learning cost);
* :func:`matrix_from_store` — from a store's results of single-model runs (each result's calls all
  went to one model), with task skills and questions regenerated from the run's suite;
* :func:`load_matrix` — a Parquet/CSV/JSONL file written by :func:`save_matrix`.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from ..bench import TaskInstance, load_tasks, score
from ..library import bundled_root
from ..llm import Gateway
from ..spec.model import ModelSpec
from ..store import Store, suite_config

COLUMNS = ("task_id", "model", "correct", "cost_usd", "tokens", "skills", "question")

EXPLORE_PROMPT = "{question}\nThink step by step. End with \"Answer: <final answer>\"."


def _as_list(v: Any) -> list[str]:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return []
    if isinstance(v, str):
        s = v.strip()
        if s.startswith("["):
            try:
                return [str(x) for x in json.loads(s)]
            except json.JSONDecodeError:
                pass
        return [x.strip() for x in s.split(",") if x.strip()]
    if isinstance(v, Iterable):
        return [str(x) for x in v]
    raise TypeError(f"skills must be a list or a string, not {type(v).__name__}")


def normalize_matrix(df: pd.DataFrame) -> pd.DataFrame:
    """Check and coerce an outcome matrix (missing optional columns get defaults)."""
    missing = [c for c in ("task_id", "model", "correct", "cost_usd") if c not in df.columns]
    if missing:
        raise ValueError(f"outcome matrix lacks column(s) {missing}; needs task_id, model, correct, cost_usd "
                         "(+ tokens, skills, question)")
    out = df.copy()
    out["task_id"] = out["task_id"].astype(str)
    out["model"] = out["model"].astype(str)
    out["correct"] = out["correct"].astype(float).fillna(0.0)
    out["cost_usd"] = out["cost_usd"].astype(float).fillna(0.0)
    out["tokens"] = out["tokens"].astype(float).fillna(0.0) if "tokens" in out else 0.0
    out["skills"] = [_as_list(v) for v in out["skills"]] if "skills" in out else [[] for _ in range(len(out))]
    out["question"] = out["question"].fillna("").astype(str) if "question" in out else ""
    return out


@dataclass
class Arrays:
    """A complete matrix as arrays: tasks × models."""

    task_ids: list[str]
    models: list[str]
    Y: np.ndarray
    """(n, M) correctness in [0, 1]."""
    C: np.ndarray
    """(n, M) USD per task."""
    T: np.ndarray
    """(n, M) tokens per task."""
    skills: list[list[str]]
    questions: list[str]
    L: np.ndarray | None = None
    """(n, M) latency seconds per task, if known."""

    def subset(self, idx: np.ndarray) -> "Arrays":
        return Arrays([self.task_ids[i] for i in idx], self.models, self.Y[idx], self.C[idx], self.T[idx],
                      [self.skills[i] for i in idx], [self.questions[i] for i in idx],
                      None if self.L is None else self.L[idx])

    def frame(self) -> pd.DataFrame:
        rows = []
        for i, t in enumerate(self.task_ids):
            for j, m in enumerate(self.models):
                rows.append({"task_id": t, "model": m, "correct": self.Y[i, j], "cost_usd": self.C[i, j],
                             "tokens": self.T[i, j], "skills": self.skills[i], "question": self.questions[i]})
        return pd.DataFrame(rows)


def to_arrays(df: pd.DataFrame, models: list[str] | None = None) -> Arrays:
    """Pivot to arrays, averaging repeated (task, model) rows; tasks lacking a model are dropped."""
    m = normalize_matrix(df)
    models = models or sorted(m["model"].unique())
    m = m[m["model"].isin(models)]
    has_lat = "latency_s" in m.columns and m["latency_s"].notna().any()
    values = ["correct", "cost_usd", "tokens"] + (["latency_s"] if has_lat else [])
    if has_lat:
        m = m.assign(latency_s=m["latency_s"].astype(float).fillna(0.0))
    agg = m.groupby(["task_id", "model"], sort=False).agg(**{v: (v, "mean") for v in values}).reset_index()
    # one (task × model) table per value, all on the same sorted task index
    piv = {v: agg.pivot(index="task_id", columns="model", values=v)[models] for v in values}
    complete = piv["correct"].notna().all(axis=1)
    piv = {v: t[complete] for v, t in piv.items()}
    tids = [str(t) for t in piv["correct"].index]
    first = m.drop_duplicates("task_id").set_index("task_id")
    skills, questions = first["skills"].to_dict(), first["question"].to_dict()
    return Arrays(tids, list(models), piv["correct"].to_numpy(float), piv["cost_usd"].to_numpy(float),
                  piv["tokens"].to_numpy(float), [list(skills[t]) for t in tids],
                  [str(questions[t]) for t in tids],
                  piv["latency_s"].to_numpy(float) if has_lat else None)


def save_matrix(df: pd.DataFrame, path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    out = normalize_matrix(df)
    out["skills"] = [json.dumps(s) for s in out["skills"]]
    if p.suffix == ".parquet":
        out.to_parquet(p, index=False)
    elif p.suffix == ".csv":
        out.to_csv(p, index=False)
    else:
        out.to_json(p, orient="records", lines=True)
    return p


def load_matrix(path: str | Path) -> pd.DataFrame:
    p = Path(path)
    if p.suffix == ".parquet":
        df = pd.read_parquet(p)
    elif p.suffix == ".csv":
        df = pd.read_csv(p)
    else:
        df = pd.read_json(p, lines=True)
    return normalize_matrix(df)


# ----- exploration --------------------------------------------------------------------------------
async def aexplore(pool: dict[str, ModelSpec] | Iterable[str], tasks: list[TaskInstance], *,
                   gateway: Gateway | None = None, max_tokens: int = 512, prompt: str = EXPLORE_PROMPT,
                   system: str | None = None, tags: dict[str, Any] | None = None,
                   sample_index: int = 0) -> pd.DataFrame:
    """Run every model of the pool once on every task through the Gateway and score it."""
    specs = dict(pool) if isinstance(pool, dict) else {m: ModelSpec(id=m) for m in pool}
    gw = gateway or Gateway(specs)
    for alias, spec in specs.items():
        gw.add_model(alias, spec)

    async def one(alias: str, task: TaskInstance) -> dict[str, Any]:
        msgs = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": prompt.format(question=task.question)}]
        r = await gw.complete(alias, msgs, sample_index=sample_index, max_tokens=max_tokens,
                              tags={**(tags or {}), "purpose": "routing", "task_id": task.id, "agent": "explore"},
                              metadata={"sim": {"gold": task.answers, "skills": task.skills}})
        sc = score(task, r.text) if r.ok else None
        return {"task_id": task.id, "model": alias, "correct": float(bool(sc and sc.correct)),
                "cost_usd": r.cost_usd, "tokens": r.total_tokens, "latency_s": r.latency_s,
                "skills": list(task.skills), "question": task.question, "simulated": r.simulated,
                "error": r.error}

    rows = await asyncio.gather(*[one(a, t) for t in tasks for a in specs])
    return pd.DataFrame(rows)


def explore(pool: dict[str, ModelSpec] | Iterable[str], tasks: list[TaskInstance], **kw: Any) -> pd.DataFrame:
    """Sync wrapper of :func:`aexplore` (do not call from inside an event loop)."""
    return asyncio.run(aexplore(pool, tasks, **kw))


# ----- from a store ---------------------------------------------------------------------------------
def _tasks_of_runs(store: Store, run_ids: list[str]) -> dict[str, TaskInstance]:
    """Regenerate the tasks of runs from their stored suite config (best effort)."""
    out: dict[str, TaskInstance] = {}
    for run_id in run_ids:
        suite, _ = suite_config(store, run_id)
        if suite is None:
            continue
        for src in suite.tasks:
            for base in (Path.cwd() / "tasks", bundled_root() / "tasks", Path.cwd()):
                try:
                    for t in load_tasks(src, base):
                        out.setdefault(t.id, t)
                    break
                except Exception:
                    continue
    return out


def matrix_from_store(store: Store, run_ids: list[str] | None = None, design: str | None = None,
                      tasks: list[TaskInstance] | None = None) -> pd.DataFrame:
    """Outcome rows from a store: results whose calls all went to one model. If several designs
    are present, ``design`` picks one (default: ``cot`` if present, else the most common)."""
    where, params = "", []
    if run_ids:
        where = f"WHERE r.run_id IN ({','.join('?' * len(run_ids))})"
        params = list(run_ids)
    df = store.df(f"""
        WITH cm AS (
            SELECT run_id, design, task_id, seed, any_value(model_alias) AS alias, any_value(model) AS model_id,
                   count(DISTINCT model) AS n_models, sum(latency_s) AS latency_s
            FROM calls WHERE coalesce(purpose, 'design') = 'design'
            GROUP BY run_id, design, task_id, seed)
        SELECT r.run_id, r.design, r.task_id, r.seed, r.source, r.axis, r.axis_value, r.correct, r.cost_usd, r.tokens,
               cm.model_id AS model, cm.latency_s, r.simulated
        FROM results r JOIN cm ON r.run_id = cm.run_id AND r.design = cm.design AND r.task_id = cm.task_id
                               AND r.seed = cm.seed
        {where} {'AND' if where else 'WHERE'} cm.n_models = 1 AND r.status != 'failed'""", params)
    if df.empty:
        raise ValueError("no single-model results in the store (route eval needs every model run on the same tasks)")
    designs = df["design"].value_counts()
    pick = design or ("cot" if "cot" in designs.index else str(designs.index[0]))
    df = df[df["design"] == pick]
    if df.empty:
        raise ValueError(f"no results for design {pick!r} (designs: {list(designs.index)})")
    tmap = {t.id: t for t in tasks} if tasks else _tasks_of_runs(store, sorted(df["run_id"].unique()))

    def skills_of(row) -> list[str]:
        t = tmap.get(row.task_id)
        if t is not None and t.skills:
            return list(t.skills)
        base = str(row.source or "task")
        return [base] + ([f"{base}.{row.axis}"] if isinstance(row.axis, str) and row.axis else [])

    df = df.assign(skills=[skills_of(r) for r in df.itertuples()],
                   question=[tmap[t].question if t in tmap else "" for t in df["task_id"]])
    return normalize_matrix(df[["task_id", "model", "correct", "cost_usd", "tokens", "skills", "question",
                                "latency_s", "simulated", "run_id", "seed"]])


def matrix_from_designs(store: Store, candidates: list[str], run_id: str | None = None,
                        tasks: list[TaskInstance] | None = None) -> pd.DataFrame:
    """Outcome rows of *designs* (the candidates of a sub-agent route) from one finished run: the
    store's ``design_task_outcomes`` view (mean over seeds per (design, task); skill = the task's
    source and level). ``run_id`` defaults to the latest run holding every candidate. The ``model``
    column names the design. Questions are regenerated from the run's suite (for indicators)."""
    if len(set(candidates)) < 1:
        raise ValueError("--candidates names at least one design")
    cands = list(dict.fromkeys(candidates))
    marks = ",".join("?" * len(cands))
    if run_id is None:
        rows = store.sql(f"""
            SELECT o.run_id FROM design_task_outcomes o JOIN runs r USING (run_id)
            WHERE o.design IN ({marks}) GROUP BY o.run_id, r.created_at
            HAVING count(DISTINCT o.design) = ? ORDER BY r.created_at DESC LIMIT 1""", [*cands, len(cands)])
        if not rows:
            have = [r[0] for r in store.sql("SELECT DISTINCT design FROM design_task_outcomes ORDER BY 1")]
            raise ValueError(f"no run holds results of every candidate {cands} (designs in the store: {have})")
        run_id = str(rows[0][0])
    df = store.df(f"""SELECT task_id, design AS model, correct, cost_usd, tokens, latency_s, skill, simulated, run_id
                      FROM design_task_outcomes WHERE run_id = ? AND design IN ({marks})""", [run_id, *cands])
    missing = [c for c in cands if c not in set(df["model"])]
    if missing:
        have = [r[0] for r in store.sql("SELECT DISTINCT design FROM design_task_outcomes WHERE run_id = ?", [run_id])]
        raise ValueError(f"run {run_id} has no results of {missing} (its designs: {have})")
    tmap = {t.id: t for t in tasks} if tasks else _tasks_of_runs(store, [run_id])
    df["skills"] = pd.Series([[str(s)] for s in df["skill"]], index=df.index, dtype=object)
    df["question"] = [tmap[t].question if t in tmap else "" for t in df["task_id"]]
    return normalize_matrix(df.drop(columns=["skill"]))


def matrix_cost(df: pd.DataFrame) -> dict[str, float]:
    """What a matrix cost to gather: USD, tokens, calls."""
    m = normalize_matrix(df)
    return {"usd": float(m["cost_usd"].sum()), "tokens": float(m["tokens"].sum()), "calls": float(len(m))}


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
