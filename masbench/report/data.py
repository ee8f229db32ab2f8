"""Reading what a report needs from the store. Every number comes from a SQL view or table;
nothing here recomputes a metric.

- :func:`open_store` opens a store file (read-write so the views are current; read-only if
  another process holds the write lock).
- :func:`run_info` / :func:`resolve_run`: the run (default: the latest) and its labels.
- :func:`comparison`: rows of ``design_comparison`` for one group, with the CoT-SC curve's CI
  interpolated at each design's cost, and the design's paired test against the curve
  (``paired_tests`` on the suite's matching unit: ``paired_*`` columns, the verdict); for a
  ``--until-decided`` run, the design's sequential decision (``sequential_decisions``: ``seq_*``
  columns, on the 'all' group only).
- :func:`paired`: every stored paired test of a run (against the curve, CoT, other designs).
- :func:`curve`, :func:`curve_frontier`, :func:`axis_groups`: the CoT-SC curve and the Pareto
  frontier's curve points.
- :func:`cost_lines`: the run's budget basis and its calls by status and cost source (from the
  ``call_status_counts`` and ``call_classes`` views).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..store import Store, has_run, latest_run, recent_runs, suite_config

BASELINES = ("cot", "cot-sc")
"""``design_name`` values of the single-agent baselines (no verdict is given for them)."""

EMBEDDED_SMOLLM2 = "embedded/smollm2"


class ReportError(Exception):
    """A store or run that cannot be reported (missing file, no runs, unknown run id)."""


@dataclass(frozen=True)
class TraceLinks:
    """Where a report links to its run's traces (the trace viewer, live or exported; the CLI
    builds this with :mod:`masbench.view.links`)."""

    designs: dict[str, str]
    """Design label → href of that design's traces (its task grid)."""
    run: str | None = None
    """Href of the run's page in the viewer."""
    note: str = ""
    """What the reader needs to know to follow the links (e.g. the command that starts the viewer)."""


@dataclass
class RunInfo:
    run_id: str
    suite: str
    status: str
    created_at: Any
    finished_at: Any
    models: dict[str, str]
    simulated: bool
    k_max: int | None = None

    @property
    def embedded_smollm2(self) -> bool:
        return any(str(m).startswith(EMBEDDED_SMOLLM2) for m in self.models.values())

    @property
    def label(self) -> str:
        """What every plot title and the page header must say about where the numbers come from."""
        parts = []
        if self.simulated:
            parts.append("SIMULATED (sim/ models)")
        if self.embedded_smollm2:
            parts.append("embedded SmolLM2-135M (real model, weak by design)")
        return " · ".join(parts)

    @property
    def models_text(self) -> str:
        return ", ".join(f"{a}={m}" for a, m in self.models.items()) or "(none recorded)"


def open_store(path: str | Path) -> Store:
    p = Path(path)
    if not p.exists():
        raise ReportError(f"no store at {p}")
    try:
        return Store(p)
    except Exception as exc:  # another process writes it: read what is committed
        if "lock" not in str(exc).lower():
            raise
        return Store(p, read_only=True)


def resolve_run(store: Store, run_id: str | None) -> str:
    if run_id:
        if not has_run(store, run_id):
            known = recent_runs(store, 10)
            raise ReportError(f"no run {run_id!r} in {store.path}; runs: {', '.join(known) or '(none)'}")
        return run_id
    latest = latest_run(store)
    if latest is None:
        raise ReportError(f"no runs in {store.path}")
    return latest


def _json(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, (dict, list)):
        return v
    try:
        return json.loads(v)
    except (TypeError, ValueError):
        return None


def run_info(store: Store, run_id: str | None = None) -> RunInfo:
    rid = resolve_run(store, run_id)
    suite, status, created, finished, models, simulated, config = store.sql(
        "SELECT suite, status, created_at, finished_at, models, simulated, config FROM runs WHERE run_id = ?", [rid])[0]
    models = _json(models) or {}
    # a run without the flag (older writer) is simulated if any of its results or calls say so
    sim = bool(simulated) or bool(store.sql(
        "SELECT coalesce(bool_or(simulated), false) FROM results WHERE run_id = ?", [rid])[0][0])
    k_max = store.sql("SELECT max(k) FROM cot_sc_curve WHERE run_id = ? AND axis = 'all'", [rid])[0][0]
    return RunInfo(rid, suite or "?", status or "?", created, finished, {str(a): str(m) for a, m in models.items()},
                   sim, int(k_max) if k_max is not None else None)


# The CoT-SC curve's 95% band at the design's cost (``curve_ci_lo/hi_at_tokens``) is a column of
# ``design_comparison``, interpolated like its iso-cost gap. Used only by the verdict's overlap test.
_COMPARISON = """
WITH k1 AS (SELECT * FROM cot_sc_curve WHERE k = 1)
SELECT d.*,
       k1.accuracy AS k1_accuracy, k1.tokens AS k1_tokens,
       rd.design_name,
       pt.unit AS paired_unit, pt.position AS paired_position, pt.k_match AS paired_k_match,
       pt.n_tasks AS paired_n_tasks, pt.n_cells AS paired_n_cells, pt.mean_diff AS paired_diff,
       pt.ci_lo AS paired_ci_lo, pt.ci_hi AS paired_ci_hi, pt.p_value AS paired_p, pt.p_holm AS paired_p_holm,
       pt.family_size AS paired_family, pt.level_holm AS paired_level, pt.ci_lo_holm AS paired_ci_lo_holm,
       pt.ci_hi_holm AS paired_ci_hi_holm, pt.n_needed AS paired_n_needed, pt.verdict AS paired_verdict,
       pt.reason AS paired_reason, pt.alpha AS paired_alpha, pt.n_needed_hi AS paired_n_needed_hi,
       pt.family AS paired_family_scope,
       sd.verdict AS seq_verdict, sd.decided AS seq_decided, sd.n_tasks AS seq_n_tasks, sd.max_tasks AS seq_max_tasks,
       sd.saved_calls AS seq_saved_calls, sd.at_cap AS seq_at_cap, sd.calls AS seq_calls
FROM design_comparison d
LEFT JOIN paired_tests pt ON pt.run_id = d.run_id AND pt.axis = d.axis
       AND pt.axis_value IS NOT DISTINCT FROM d.axis_value AND pt.design = d.design AND pt.against = 'curve'
       AND pt.unit = (SELECT coalesce(any_value(p2.unit) FILTER (WHERE p2.is_verdict), 'tokens') FROM paired_tests p2
                      WHERE p2.run_id = d.run_id AND p2.against = 'curve')
LEFT JOIN k1 ON k1.run_id = d.run_id AND k1.axis = d.axis AND k1.axis_value IS NOT DISTINCT FROM d.axis_value
LEFT JOIN {sequential} sd ON sd.run_id = d.run_id AND sd.design = d.design AND d.axis = 'all'
LEFT JOIN (SELECT run_id, design, any_value(design_name) AS design_name FROM results GROUP BY ALL) rd
       ON rd.run_id = d.run_id AND rd.design = d.design
WHERE d.run_id = ? {where}
"""

_NO_SEQUENTIAL = ("(SELECT NULL::VARCHAR AS run_id, NULL::VARCHAR AS design, NULL::VARCHAR AS verdict, "
                  "NULL::BOOLEAN AS decided, NULL::INTEGER AS n_tasks, NULL::INTEGER AS max_tasks, "
                  "NULL::DOUBLE AS saved_calls, NULL::BOOLEAN AS at_cap, NULL::BIGINT AS calls WHERE false)")
"""Stands in for ``sequential_decisions`` in a store from before it, opened read-only."""


def comparison(store: Store, run_id: str, axis: str | None = "all") -> pd.DataFrame:
    """``design_comparison`` rows of a run (``axis=None``: every group), plus ``design_name``,
    ``baseline`` and the curve's CI at the design's cost. Baselines first, then by tokens."""
    where, params = ("AND d.axis = ?", [run_id, axis]) if axis is not None else ("", [run_id])
    have = store.sql("SELECT count(*) FROM information_schema.tables WHERE table_name = 'sequential_decisions'")[0][0]
    df = store.df(_COMPARISON.format(where=where, sequential="sequential_decisions" if have else _NO_SEQUENTIAL),
                  params)
    if df.empty:
        df["baseline"] = pd.Series(dtype=bool)
        return df
    df["design_name"] = df["design_name"].where(df["design_name"].notna(), df["design"].str.split("[").str[0])
    df["baseline"] = df["design_name"].isin(BASELINES)
    df = df.sort_values(["axis", "axis_value", "baseline", "tokens", "design"],
                        ascending=[True, True, False, True, True], na_position="first").reset_index(drop=True)
    return df


def curve(store: Store, run_id: str, axis: str = "all", axis_value: int | None = None) -> pd.DataFrame:
    """The CoT-SC curve of one group, by k (empty if the run has no pool)."""
    return store.df("""SELECT k, n_tasks, accuracy, ci_lo, ci_hi, tokens, calls, cost_usd FROM cot_sc_curve
                       WHERE run_id = ? AND axis = ? AND axis_value IS NOT DISTINCT FROM ? ORDER BY k""",
                    [run_id, axis, axis_value])


def curve_by_axis(store: Store, run_id: str) -> pd.DataFrame:
    """Curve points at k = 1 (CoT) and k = k_max of every task group (with or without an axis value)."""
    return store.df("""
        SELECT axis, axis_value,
               max(accuracy) FILTER (WHERE k = 1) AS cot_accuracy,
               arg_max(accuracy, k) AS kmax_accuracy, max(k) AS k_max
        FROM cot_sc_curve WHERE run_id = ? AND axis <> 'all'
        GROUP BY ALL ORDER BY axis, axis_value""", [run_id])


def curve_frontier(store: Store, run_id: str, axis: str = "all", axis_value: int | None = None) -> pd.DataFrame:
    """Curve points of the group that no design and no other curve point dominates on
    (tokens, accuracy) — the same dominance rule as ``design_comparison.pareto``."""
    return store.df("""
        SELECT c.k, c.tokens, c.accuracy FROM cot_sc_curve c
        WHERE c.run_id = ? AND c.axis = ? AND c.axis_value IS NOT DISTINCT FROM ?
          AND NOT EXISTS (SELECT 1 FROM design_metrics o WHERE o.run_id = c.run_id AND o.axis = c.axis
                AND o.axis_value IS NOT DISTINCT FROM c.axis_value AND o.tokens <= c.tokens
                AND o.accuracy >= c.accuracy AND (o.tokens < c.tokens OR o.accuracy > c.accuracy))
          AND NOT EXISTS (SELECT 1 FROM cot_sc_curve o WHERE o.run_id = c.run_id AND o.axis = c.axis
                AND o.axis_value IS NOT DISTINCT FROM c.axis_value AND o.k <> c.k AND o.tokens <= c.tokens
                AND o.accuracy >= c.accuracy AND (o.tokens < c.tokens OR o.accuracy > c.accuracy))
        ORDER BY c.tokens""", [run_id, axis, axis_value])


def axis_groups(store: Store, run_id: str) -> pd.DataFrame:
    """Task groups of the run other than 'all': (axis, axis_value, n designs)."""
    return store.df("""SELECT axis, axis_value, count(*) AS designs FROM design_metrics
                       WHERE run_id = ? AND axis <> 'all' GROUP BY ALL ORDER BY axis, axis_value""", [run_id])


_BASIS_TEXT = {"tokens": "every prompt and completion token", "completion": "completion + reasoning tokens only",
               "usd": "USD"}


def cost_lines(store: Store, run_id: str) -> list[str]:
    """What the report says about the budget basis and about calls that are not plain answers."""
    suite, _ = suite_config(store, run_id)
    basis = suite.budget.basis if suite is not None else "tokens"
    lines = [f"budget basis: {basis} — the per-task cap and the equal-budget matching (iso_gap_budget) count "
             f"{_BASIS_TEXT.get(basis, basis)}"]
    n, ok, err, missing, trunc, empty, est, unpriced = store.sql("""
        SELECT coalesce(sum(calls), 0), coalesce(sum(ok), 0), coalesce(sum(error), 0), coalesce(sum(usage_missing), 0),
               coalesce(sum(truncated), 0), coalesce(sum(empty), 0), coalesce(sum(usage_estimated), 0),
               coalesce(sum(unpriced), 0)
        FROM call_status_counts WHERE run_id = ?""", [run_id])[0]
    sources = store.sql("SELECT string_agg(DISTINCT cost_source, ', ' ORDER BY cost_source) FROM call_classes "
                        "WHERE run_id = ?", [run_id])[0][0]
    lines.append(f"calls: {int(n)} — {int(ok)} ok, {int(trunc)} truncated (finish_reason = length), {int(empty)} empty, "
                 f"{int(missing)} without usage (usage_missing), {int(err)} failed; {int(est)} with estimated usage; "
                 f"cost source: {sources or 'none'}")
    if unpriced:
        lines.append(f"{int(unpriced)} calls UNPRICED: their cost is unknown, not $0")
    return lines


def judge_lines(store: Store, run_id: str) -> list[str]:
    """For a run whose verdicts rest on a model judge: each judge with its latest ``judge check``
    (agreement on N checked tasks) or "not checked", and the judge's calls per design (purpose
    ``scoring``, in no design's cost). Nothing for a run scored by rules only (or an older store)."""
    have = {r[0] for r in store.sql("SELECT table_name FROM information_schema.tables "
                                     "WHERE table_name IN ('judge_checks', 'judge_usage')")}
    if len(have) < 2:
        return []
    judges = store.sql("""SELECT judge, judge_model, count(*) FROM (
                              SELECT judge, judge_model FROM results WHERE run_id = $1 AND judge IS NOT NULL
                              UNION ALL SELECT judge, judge_model FROM pool WHERE run_id = $1 AND judge IS NOT NULL)
                          GROUP BY ALL ORDER BY ALL""", [run_id])
    lines = []
    for judge, model, n in judges:
        check = store.sql("""SELECT agreement, agreement_lo, agreement_hi, n_tasks, false_pass, false_fail, k, run_id
                             FROM judge_checks WHERE judge = ? AND judge_model IS NOT DISTINCT FROM ?
                             ORDER BY ts DESC LIMIT 1""", [judge, model])
        head = f"verdicts of {int(n)} judged replies rest on a model judge: judged by {judge} ({model})"
        if not check:
            lines.append(f"{head}, not checked — measure it: masbench judge check SUITE --judge {judge}")
            continue
        agree, lo, hi, tasks, fp, ff, k, rid = check[0]
        pct = (lambda v: "n/a" if v is None else f"{100 * float(v):.1f}%")
        ci = f" [{100 * lo:.1f}, {100 * hi:.1f}]" if lo is not None and hi is not None else ""
        lines.append(f"{head}, agreement {pct(agree)} on {int(tasks or 0)} checked tasks{ci} (false pass {pct(fp)}, "
                     f"false fail {pct(ff)}; k = {k}; judge check {rid})")
    usage = store.sql("""SELECT design, judge_calls, judge_tokens, judge_usd, cache_hits FROM judge_usage
                         WHERE run_id = ? ORDER BY design""", [run_id])
    if usage:
        parts = [f"{d} {int(c)} calls, {int(t):,} tokens, ${float(u):.4f}" + (f" ({int(h)} cached)" if h else "")
                 for d, c, t, u, h in usage]
        lines.append("judge calls (purpose scoring, in no design's cost, budget or curve): " + "; ".join(parts))
    return lines


def agent_costs(store: Store, run_id: str) -> pd.DataFrame:
    """What each agent of each design spent in a run (the ``agent_costs`` view), dearest first."""
    return store.df("SELECT design, agent, calls, tokens, cost_usd, tasks, calls_per_task, tokens_per_task, "
                    "usd_per_task, token_share FROM agent_costs WHERE run_id = ? ORDER BY design, tokens DESC, agent",
                    [run_id])


def tool_lines(store: Store, run_id: str) -> list[str]:
    """What the report says about the run's tool calls (the ``tool_usage`` view) and, for tasks
    with gold evidence, each design's retrieval recall (``retrieval_recall``); nothing for a run
    that called no tool."""
    have = {r[0] for r in store.sql("SELECT table_name FROM information_schema.tables "
                                     "WHERE table_name IN ('tool_usage', 'retrieval_recall')")}
    if "tool_usage" not in have:  # a store from before tool calls, opened read-only
        return []
    rows = store.sql("""SELECT sum(tool_calls), sum(ok), sum(invalid_args), sum(unknown_tool + not_allowed),
                               sum(error), sum(refused), sum(truncated), sum(mean_latency_s * tool_calls) / sum(tool_calls)
                        FROM tool_usage WHERE run_id = ? AND purpose <> 'pool'""", [run_id])
    if not rows or not rows[0][0]:
        return []
    n, ok, bad_args, unknown, err, refused, cut, lat = rows[0]
    lines = [f"tool calls: {int(n)} — {int(ok)} ok, {int(bad_args)} invalid arguments, {int(unknown)} unknown or "
             f"not allowed, {int(err)} raised, {int(refused)} refused (step or budget limit); {int(cut)} results cut "
             f"to their cap; mean tool latency {1000 * float(lat or 0):.1f} ms"]
    rec = store.sql("""SELECT design, recall, full_recall, n FROM retrieval_recall
                       WHERE run_id = ? AND axis = 'all' ORDER BY design""", [run_id]) if "retrieval_recall" in have else []
    if rec:
        lines.append("retrieval recall (gold evidence documents a design's tools returned, all tasks): " + "; ".join(
            f"{d} {100 * r:.1f}% (all found in {100 * f:.0f}% of {int(k)} cells)" for d, r, f, k in rec))
    return lines


def paired(store: Store, run_id: str, axis: str | None = "all", against: str | None = None) -> pd.DataFrame:
    """Rows of ``paired_tests`` of a run (one group unless ``axis`` is None; one reference
    — 'curve', 'cot' or a design label — unless ``against`` is None)."""
    sql = "SELECT * FROM paired_tests WHERE run_id = ?"
    params: list[Any] = [run_id]
    if axis is not None:
        sql += " AND axis = ?"
        params.append(axis)
    if against is not None:
        sql += " AND against = ?"
        params.append(against)
    return store.df(sql + " ORDER BY axis, axis_value, against, unit, design", params)
