"""Mutation testing of the store's SQL views (``masbench/store/views.py`` ``VIEWS``).

mutmut only rewrites SQL string literals (``"XX...XX"``), which says nothing about the queries, so
this script mutates the SQL itself: every view of the registry, the lazy ``"module:ATTR"`` entries
included, gets the mutants of ``benchmarks/sql_mutants.py`` (flipped comparisons, dropped WHERE
clauses, AND/OR terms and FILTERs, ASC ↔ DESC, swapped select expressions and function arguments,
JOIN ↔ LEFT JOIN, AND ↔ OR, sum/max/min/avg, coalesce defaults, nullif, arithmetic, literals).

How it runs: the parent imports masbench and collects the test files once; per mutant it forks a
child that puts the mutated SQL in the registry (``VIEWS.add(name, sql, replace=True)``, and into
the module attribute a lazy entry points at; every store creates its views from the registry when
it opens, and nothing else holds the text) and runs ``pytest.main`` on the test files mapped to
that view (:data:`TESTS`, plus those of every view that reads it), ``-x``, the tests that killed
earlier mutants of the view first. A mutant is *killed* if a test fails, *timeout* if the child
outlives ``--timeout`` (counted as caught, as in mutmut), else *survived*. A mutant that DuckDB
rejects when the views are created on an empty store (checked first, in one child for all) is
*invalid*: counted apart, and left out of the rate. Survivors listed in :data:`SQL_EQUIVALENT`
(view, operator and changed line, each with its reason) are left out of the adjusted rate.

Run from the checkout's root (one mutant at a time; the machine is shared)::

    python benchmarks/sql_mutation.py                          # every view
    python benchmarks/sql_mutation.py --view paired_diffs --view design_metrics
    python benchmarks/sql_mutation.py --list                   # views, mutants, readers, test files
    python benchmarks/sql_mutation.py --timeout 120            # seconds per mutant (default: 5x the clean run)
    python benchmarks/sql_mutation.py --view run_spend --show-invalid
    python benchmarks/sql_mutation.py --view design_comparison --only 12 --only 40   # rerun two survivors

Needs no extra package (DuckDB and pytest are the project's own).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MASBENCH_EMBEDDED_THREADS", "1")

from mutation import Outcome, _changed_lines, report  # noqa: E402  (the list next to this script)
from mutation_equivalents import Equivalent  # noqa: E402
from sql_mutants import Mutant, diff, mutants, tokenize  # noqa: E402

# view -> the test files that read it; the files of every view that reads this one are added (see
# --list). Only the store-level files: they build their rows by hand and run in seconds. Left out,
# though they read views too: the harness, report and design-store files (tests/harness/test_costs_run.py,
# test_supersede.py, test_run_failfast.py, test_paired_tests.py, stats/test_stats_harness.py,
# test_plan_sequential.py, tests/design/test_design_store.py, tests/report/*.py, tests/cli/test_status_reasons.py):
# each runs simulated suites, 25 s to 4 min per file on this machine, which per mutant (~1200) would
# take the sweep to many hours. What they check of the views is checked over hand-built rows here.
TESTS: dict[str, list[str]] = {
    "run_summary": ["tests/store/test_run_summary_view.py", "tests/store/test_runs_latest.py"],
    "call_usage": ["tests/store/test_spend_views.py"],
    "call_classes": ["tests/store/test_cost_views.py", "tests/store/test_spend_views.py"],
    "call_status_counts": ["tests/store/test_cost_views.py", "tests/store/test_spend_views.py"],
    "call_reprice": ["tests/store/test_cost_views.py", "tests/store/test_spend_views.py"],
    "run_reprice": ["tests/store/test_spend_views.py"],
    "design_reprice": ["tests/store/test_cost_views.py", "tests/store/test_spend_views.py"],
    "run_spend": ["tests/store/test_spend_views.py"],
    "cell_failures": ["tests/store/test_cells.py"],
    "design_metrics": ["tests/store/test_design_metrics_clustered.py", "tests/store/test_design_metrics_view.py"],
    "design_comparison": ["tests/store/test_design_comparison_view.py", "tests/store/test_metrics_views.py",
                          "tests/store/test_same_cost.py"],
    "paired_diffs": ["tests/store/test_paired_views.py"],
    "paired_task_diffs": ["tests/store/test_paired_views.py"],
    "paired_summary": ["tests/store/test_paired_views.py"],
    "design_pair_diffs": ["tests/store/test_paired_views.py"],
    "design_validity": ["tests/store/test_design_views.py"],
    "design_search_cost": ["tests/store/test_design_views.py"],
    "design_cost_search": ["tests/store/test_design_views.py"],
    "retrieval_recall_cells": ["tests/store/test_recall.py"],
    "retrieval_recall": ["tests/store/test_recall.py"],
    "tool_usage": ["tests/store/test_tool_views.py"],
    "sequential_decisions": ["tests/store/test_sequential_store.py"],
    "sequential_run_saving": ["tests/store/test_sequential_store.py"],
    "design_task_outcomes": ["tests/store/test_outcomes.py"],
    "routing_choices": ["tests/store/test_outcomes.py"],
}

# Survivors that cannot change what a view returns, each read and argued. Matched by view
# (`module`), operator (`function`) and the changed line, stripped ("" matches any line).
_SUM_ONLY = ("run_spend reads prompt_tokens and completion_tokens of its union only as their sum "
             "(prompt_tokens + completion_tokens), so which of the two columns holds which does not matter")
# paired_diffs' lines that the equivalents below name (as the view renders them)
_K_IN = "min(s.k) FILTER (WHERE c.c >= s.x AND (c.c <= s.x2 OR (s.x2 IS NULL AND c.c = s.x))) AS k_in,"
_X1 = "min(s.x) FILTER (WHERE s.k = 1) AS x1, max(s.x) AS x_max, max(s.k_max) AS k_max"
_POS = "CASE WHEN k_in IS NOT NULL THEN 'within' WHEN c < x1 THEN 'below' ELSE 'beyond' END AS position,"
_K_LO = "coalesce(k_in, CASE WHEN c < x1 THEN 1 ELSE k_max END) AS k_lo"
_POS_J = ("FROM cost c JOIN seg2 s ON s.run_id = c.run_id AND s.axis = c.axis "
          "AND s.axis_value IS NOT DISTINCT FROM c.axis_value AND s.unit = c.unit")
_M_J = ("FROM m JOIN seg2 s ON s.run_id = m.run_id AND s.axis = m.axis "
        "AND s.axis_value IS NOT DISTINCT FROM m.axis_value")
_MW_J = ("JOIN mw ON mw.run_id = r.run_id AND mw.axis = r.axis AND mw.axis_value IS NOT DISTINCT FROM r.axis_value "
         "AND mw.design = r.design")
_K1_J = "JOIN cot_sc_task_curve k1 ON k1.run_id = r.run_id AND k1.task_id = r.task_id AND k1.seed = r.seed AND k1.k = 1"
# design_comparison (issue 29): the curve's costs in tokens and calls are k x a mean sample cost > 0
# (harness/curve.py), so strictly increasing in k: at most one segment holds a cost strictly inside,
# and a cost on a knot is the end of one segment and the start of the next
_KNOT = ("'< x2' drops segment k only at a cost = its x2 > its x1 (at cost = x1 it matches by '= s.x1'); the next "
         "segment starts there (x1 = the cost: matched by '= s.x1', the last point too) and gives its y1, segment k's "
         "y2: the same value (to the interpolation's last bit); costs never decrease in k (harness/curve.py), a flat "
         "stretch included")
_KNOT_ORDER = ("two segments match only at a knot (costs strictly increase in k), and both give the knot's y "
               "(the end of one, the start of the next): first or last, the same value")
_ISO_KNOT = ("a segment with y1 < accuracy = y2 is skipped only to be found at the next one, which starts at that point "
             "(y1 = accuracy: its x1, the same cost); after the last segment the last point is a segment of its own")


def _dc_at_cost(col: str, le: str = "<=") -> str:
    """design_comparison's iso-cost WHERE on ``col`` (three times on tokens: the accuracy and its band)."""
    one = (f"FROM seg_{col} s WHERE s.run_id = d.run_id AND s.axis = d.axis AND s.axis_value IS NOT DISTINCT FROM "
           f"d.axis_value AND d.{col} >= s.x1 AND (d.{col} {le} s.x2 OR d.{col} = s.x1)")
    return " / ".join([one] * (3 if col == "tokens" else 1))


def _dc_at_acc(col: str, ge: str = ">=") -> str:
    """design_comparison's iso-accuracy WHERE on ``col``."""
    return (f"FROM seg_{col} s WHERE s.run_id = d.run_id AND s.axis = d.axis AND s.axis_value IS NOT DISTINCT FROM "
            f"d.axis_value AND (s.y1 >= d.accuracy OR s.y2 {ge} d.accuracy)")


_DC_ORDER = [Equivalent("design_comparison", "order", f"ORDER BY s.k LIMIT 1) AS {c},", f"ORDER BY s.k DESC LIMIT 1) AS {c},",
                        _KNOT_ORDER)
             for c in ("curve_acc_at_tokens", "curve_acc_at_calls", "curve_ci_lo_at_tokens", "curve_ci_hi_at_tokens")]
_DC_GROUPS = "ON {a}.run_id = {b}.run_id AND {a}.axis = {b}.axis AND {a}.axis_value IS NOT DISTINCT FROM {b}.axis_value"
SQL_EQUIVALENT: list[Equivalent] = [
    Equivalent("run_spend", "swap",
               "SELECT run_id, false AS superseded, prompt_tokens, completion_tokens, cost_usd, cache_hit FROM calls",
               "SELECT run_id, false AS superseded, completion_tokens, prompt_tokens, cost_usd, cache_hit FROM calls",
               _SUM_ONLY),
    Equivalent("run_spend", "swap",
               "SELECT run_id, true, prompt_tokens, completion_tokens, cost_usd, cache_hit FROM calls_superseded)",
               "SELECT run_id, true, completion_tokens, prompt_tokens, cost_usd, cache_hit FROM calls_superseded)",
               _SUM_ONLY),
    Equivalent("design_reprice", "nullif",
               "count(DISTINCT (task_id, seed)) AS tasks, sum(repriced_usd) / nullif(count(DISTINCT (task_id, seed)), 0)",
               "count(DISTINCT (task_id, seed)) AS tasks, sum(repriced_usd) / count(DISTINCT (task_id, seed))",
               "the divisor counts row values (task_id, seed), which are never NULL even when both fields are "
               "(DuckDB counts (NULL, NULL) as 1), and every GROUP BY group has a row, so the count is >= 1 and "
               "nullif(count, 0) is the count itself"),
    # paired_diffs: the curve a view reads is written by harness/curve.py:compute_curve, one row per
    # (run, group, k) for k = 1..k_max, its costs k x a mean sample cost (so >= 0 and nondecreasing in k)
    # and each cell's per-cell curve for the same k = 1..k_max
    Equivalent("paired_diffs", "term", _K_IN, _K_IN.replace("s.x2 IS NULL AND ", ""),
               "c = x at a point that has a next one already passes c >= x AND c <= x2 (x2 >= x: curve costs are "
               "nondecreasing in k), so the last-point clause adds no k without its x2 IS NULL"),
    Equivalent("paired_diffs", "agg", _X1, _X1.replace("min(s.x) FILTER", "max(s.x) FILTER"),
               "one (run, group, unit) has one curve row at k = 1, so min and max over it agree"),
    Equivalent("paired_diffs", "filter", _X1, _X1.replace(" FILTER (WHERE s.k = 1)", ""),
               "the curve's costs are nondecreasing in k, so the minimum over every k is the cost at k = 1"),
    Equivalent("paired_diffs", "agg", _X1, _X1.replace("max(s.x) AS x_max", "sum(s.x) AS x_max"),
               "x_max is read only in WHERE x_max > 0; the costs are >= 0, so their sum is > 0 exactly when "
               "their max is"),
    Equivalent("paired_diffs", "join", _POS_J, _POS_J.replace("c JOIN", "c LEFT JOIN"),
               "a design group with no curve gets x_max NULL, which WHERE x_max > 0 drops, as the inner join does"),
    Equivalent("paired_diffs", "cmp", _POS, _POS.replace("c < x1", "c <= x1"),
               "only read when k_in IS NULL, and then c <> x1: c = x1 passes k = 1's filter (c >= x1 and c <= x2, "
               "x2 >= x1; or the one-point curve's c = x), so k_in would be 1"),
    Equivalent("paired_diffs", "cmp", _K_LO, _K_LO.replace("c < x1", "c <= x1"),
               "only read when k_in IS NULL, and then c <> x1 (as for position)"),
    Equivalent("paired_diffs", "join", _M_J, _M_J.replace("m JOIN", "m LEFT JOIN"),
               "k_lo is always a k of the same (run, group, unit) curve (k_in is one of its k, 1 only when c < x1 "
               "so its k = 1 row exists, else its k_max), so every m row has its seg2 row"),
    Equivalent("paired_diffs", "join", _MW_J, "LEFT " + _MW_J,
               "a result row without an mw row gets mw.k_lo NULL, and the next inner JOIN on t1.k = mw.k_lo drops it"),
    Equivalent("paired_diffs", "join", "LEFT " + _K1_J, _K1_J,
               "the inner JOIN on t1 keeps only cells with a per-cell curve, which compute_curve writes for every "
               "k = 1..k_max, so the k = 1 row is always there"),
    # design_validity / design_search_cost (tests/store/test_design_views.py)
    Equivalent("design_validity", "term",
               "count(*) FILTER (WHERE valid AND repairs IS NOT NULL AND json_array_length(repairs) > 0) AS repaired,",
               "count(*) FILTER (WHERE valid AND json_array_length(repairs) > 0) AS repaired,",
               "json_array_length(NULL) is NULL and NULL > 0 is NULL, which a FILTER counts as false, as it does "
               "the dropped repairs IS NOT NULL"),
    Equivalent("design_search_cost", "term",
               "FROM calls WHERE purpose = 'search' AND task_id IS NOT NULL GROUP BY ALL",
               "FROM calls WHERE purpose = 'search' GROUP BY ALL",
               "sc is read only through the join on sc.task_id = r.task_id, which a NULL task_id never passes"),
    Equivalent("design_search_cost", "where", "FROM designs WHERE task_id IS NOT NULL GROUP BY run_id, task_id",
               "FROM designs  GROUP BY run_id, task_id",
               "tdesigner is read only through the join on td.task_id = r.task_id, which a NULL task_id never passes"),
    *[Equivalent("design_search_cost", "swap", before, after,
                 "n (and s, joined through n) is joined only where sc.run_id IS NULL and td only where sc.run_id IS "
                 "NOT NULL, so at most one side of each coalesce is non-NULL and their order does not matter")
      for before, after in (
          ("coalesce(n.designer, td.designer, 'meta') AS designer,",
           "coalesce(td.designer, n.designer, 'meta') AS designer,"),
          ("coalesce(s.n_candidates, td.n_candidates) AS n_candidates, coalesce(s.n_valid, td.n_valid) AS n_valid",
           "coalesce(td.n_candidates, s.n_candidates) AS n_candidates, coalesce(s.n_valid, td.n_valid) AS n_valid"),
          ("coalesce(s.n_candidates, td.n_candidates) AS n_candidates, coalesce(s.n_valid, td.n_valid) AS n_valid",
           "coalesce(s.n_candidates, td.n_candidates) AS n_candidates, coalesce(td.n_valid, s.n_valid) AS n_valid"))],
    Equivalent("design_search_cost", "term",
               "LEFT JOIN tdesigner td ON td.run_id = r.run_id AND td.task_id = r.task_id AND sc.run_id IS NOT NULL",
               "LEFT JOIN tdesigner td ON td.run_id = r.run_id AND td.task_id = r.task_id",
               "td then also joins suite-scope rows, where it is read only as the second choice of coalesce(n.designer, "
               "...) and coalesce(s.n_candidates, ...): a suite-scope row has n (the WHERE) and so s (named's session "
               "holds at least that valid suite-level design, so sess has it), whose values are never NULL; tdesigner "
               "is unique per (run, task), so no row is duplicated"),
    *[Equivalent("design_search_cost", "coalesce", f"ELSE avg(coalesce(g.t_{c}, 0)) END AS search_{c}_per_task,",
                 f"ELSE avg(coalesce(g.t_{c}, 1)) END AS search_{c}_per_task,",
                 "read when the group's scope is 'task', and a task-scope row is one that matched sc, whose sums are "
                 "never NULL (a design's rows are all of one scope: per-task search calls or a suite session)")
      for c in ("tokens", "usd", "calls")],
    Equivalent("design_search_cost", "join", "FROM grouped g JOIN n_run nr ON nr.run_id = g.run_id AND nr.design = g.design",
               "FROM grouped g LEFT JOIN n_run nr ON nr.run_id = g.run_id AND nr.design = g.design",
               "n_run is grouped from the same rows as grouped, so every (run, design) of grouped has its n_run row"),
    # retrieval_recall_cells / retrieval_recall (tests/store/test_recall.py)
    Equivalent("retrieval_recall_cells", "term",
               "WHERE task_id IS NOT NULL AND coalesce(purpose, 'design') IN ('design', 'search')",
               "WHERE coalesce(purpose, 'design') IN ('design', 'search')",
               "found is read only through the join on f.task_id = g.task_id, which a NULL task_id never passes"),
    *[Equivalent("retrieval_recall_cells", "swap", before,
                 before.replace("g.gold, coalesce(f.ids, CAST([] AS VARCHAR[]))",
                                "coalesce(f.ids, CAST([] AS VARCHAR[])), g.gold"),
                 "both lists are list_distinct'ed, and list_intersect of two duplicate-free lists is their set "
                 "intersection, the same size either way round")
      for before in ('len(list_intersect(g.gold, coalesce(f.ids, CAST([] AS VARCHAR[])))) AS n_found,',)],
    # design_metrics (tests/store/test_design_metrics_view.py)
    *[Equivalent("design_metrics", "join", before, before.replace("a JOIN", "a LEFT JOIN"),
                 "per_task and clustered are grouped from the same base rows as agg, so every agg row has its rows")
      for before in ("FROM agg a JOIN per_task t ON t.run_id = a.run_id AND t.design = a.design AND t.axis = a.axis",
                     "FROM agg a JOIN clustered c ON c.run_id = a.run_id AND c.design = a.design AND c.axis = a.axis")],
    Equivalent("design_metrics", "cmp",
               "SELECT a.*, CASE WHEN c.max_seeds <= 1 OR c.v_clustered <= 0 THEN CAST(a.n AS DOUBLE)",
               "SELECT a.*, CASE WHEN c.max_seeds <= 1 OR c.v_clustered < 0 THEN CAST(a.n AS DOUBLE)",
               "at v_clustered = 0 the ELSE branch is least(n, p(1 - p) / 0) = least(n, inf or NaN), which DuckDB "
               "evaluates to n (NaN sorts above every number), the THEN branch's value"),
    # sequential_decisions (tests/store/test_sequential_store.py)
    Equivalent("sequential_decisions", "nullif", "1 - CAST(l.n_tasks AS DOUBLE) / nullif(l.max_tasks, 0) AS saved_tasks",
               "1 - CAST(l.n_tasks AS DOUBLE) / l.max_tasks AS saved_tasks",
               "max_tasks is the sequence's cap, at least 1: `--max-tasks` has min=1 and plan_sequence refuses a cap "
               "outside 1..n (harness/sequence.py), and the default is the suite's task count"),
    # design_comparison (tests/store/test_design_comparison_view.py, test_same_cost.py)
    Equivalent("design_comparison", "join", "JOIN ref f " + _DC_GROUPS.format(a="f", b="g"),
               "LEFT JOIN ref f " + _DC_GROUPS.format(a="f", b="g"),
               ("every gr row has its ref row: ref holds every (run, axis, axis_value) of design_metrics, and gr and "
                "design_metrics group the same results rows the same way, so the inner and left join keep the same rows")),
    Equivalent("design_comparison", "join", "LEFT JOIN ref r " + _DC_GROUPS.format(a="r", b="d"),
               "JOIN ref r " + _DC_GROUPS.format(a="r", b="d"),
               ("ref has a row for every (run, axis, axis_value) of design_metrics (it is built from their DISTINCT list), "
                "so the inner and left join keep the same rows")),
    Equivalent("design_comparison", "join", "LEFT JOIN cds " + _DC_GROUPS.format(a="cds", b="d"),
               "JOIN cds " + _DC_GROUPS.format(a="cds", b="d"),
               ("every design_metrics row has its cds row: cdt keeps every gr row (its ref join always matches, the "
                "others are left joins) and gr groups the same results rows as design_metrics, so each (run, group, "
                "design) has a cds row, with counts 0 when no cell has a reference; inner and left join keep the same rows")),
    Equivalent("design_comparison", "cmp", _dc_at_cost("tokens"), _dc_at_cost("tokens", "<"), _KNOT),
    *[Equivalent("design_comparison", "cmp", _dc_at_cost(c), _dc_at_cost(c, "<"), _KNOT)
      for c in ("calls", "cost_usd", "budget_spent")],
    *_DC_ORDER,
    Equivalent("design_comparison", "coalesce", "CASE WHEN NOT coalesce(same_cost_tokens, false)",
               "CASE WHEN NOT coalesce(same_cost_tokens, true)",
               ("same_cost_tokens is NULL only on CoT's own row (tokens = cot_tokens: the ratio divides by nullif(0, 0)) "
                "or where tokens or cot_tokens is NULL (the ratio is NULL): the ratio is NULL whichever the default")),
    Equivalent("design_comparison", "cmp", _dc_at_acc("tokens"), _dc_at_acc("tokens", ">"), _ISO_KNOT),
    Equivalent("design_comparison", "cmp", _dc_at_acc("cost_usd"), _dc_at_acc("cost_usd", ">"), _ISO_KNOT),
]


# ----- the views, who reads whom, which tests ---------------------------------------------------

def view_sql() -> dict[str, str]:
    """Every registered view's SQL, lazy entries loaded, in creation order."""
    from masbench.store.views import VIEWS
    return {name: VIEWS[name] for name in VIEWS}


def readers(sql: dict[str, str]) -> dict[str, list[str]]:
    """view -> the views that read it, directly or through others (in creation order)."""
    words = {n: {t.text.lower() for t in tokenize(s) if t.kind == "word"} for n, s in sql.items()}
    direct = {n: [m for m in sql if m != n and n in words[m]] for n in sql}
    out: dict[str, list[str]] = {}
    for n in sql:
        seen: list[str] = []
        todo = list(direct[n])
        while todo:
            m = todo.pop(0)
            if m not in seen:
                seen.append(m)
                todo += direct[m]
        out[n] = [m for m in sql if m in seen]
    return out


def tests_for(view: str, read_by: dict[str, list[str]]) -> list[str]:
    files: list[str] = []
    for v in [view, *read_by[view]]:
        files += [f for f in TESTS.get(v, []) if f not in files]
    return files


# ----- the children -----------------------------------------------------------------------------

def _install(view: str, sql: str, original: str) -> None:
    """Put ``sql`` where the stores read the view from: the registry and the module attribute."""
    from masbench.store import views
    views.VIEWS.add(view, sql, replace=True)
    for name, mod in list(sys.modules.items()):
        if name.startswith("masbench.store") and mod is not None:
            for attr, value in list(vars(mod).items()):
                if value is original:
                    setattr(mod, attr, sql)


def _fork(fn: Any, timeout: float) -> tuple[str, float]:
    """Run ``fn()`` (returning an exit code) in a forked child; ('exit', code) | ('timeout', s)."""
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the child
        code = 3
        try:
            os.setpgid(0, 0)
            code = int(fn())
        finally:
            os._exit(code)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            return (str(code), time.perf_counter() - t0)
        if time.perf_counter() - t0 > timeout:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return ("timeout", time.perf_counter() - t0)
        time.sleep(0.02)


def _quiet() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sys.stdout = sys.stderr = io.StringIO()


def invalid_mutants(sql: dict[str, str], todo: dict[str, list[Mutant]], read_by: dict[str, list[str]]) -> set[tuple[str, int]]:
    """(view, index) of the mutants DuckDB rejects when the views are created on an empty store
    (the mutated view and every view that reads it), found in one child."""
    out_path = Path(tempfile.mkstemp(prefix="sqlmut-invalid-")[1])

    def check() -> int:
        import duckdb

        from masbench.store import Store
        st = Store(":memory:")
        shape = {v: st.sql(f"DESCRIBE {v}") for v in todo}
        bad = []
        for view, ms in todo.items():
            for i, m in enumerate(ms):
                st.con.execute("BEGIN TRANSACTION")
                try:
                    st.con.execute(f"CREATE OR REPLACE VIEW {view} AS {m.apply(sql[view])}")
                    if st.sql(f"DESCRIBE {view}") != shape[view]:  # readers bind to names and types only
                        for v in read_by[view]:
                            st.con.execute(f"CREATE OR REPLACE VIEW {v} AS {sql[v]}")
                except duckdb.Error:
                    bad.append([view, i])
                finally:
                    st.con.execute("ROLLBACK")
        out_path.write_text(json.dumps(bad))
        return 0

    code, _ = _fork(check, timeout=3600)
    try:
        if code != "0":
            raise RuntimeError(f"the validity check failed ({code})")
        return {(v, i) for v, i in json.loads(out_path.read_text())}
    finally:
        out_path.unlink(missing_ok=True)


def run_items(view: str, sql: str, original: str, items: list, killers: list[str],
              timeout: float) -> tuple[str, float]:
    """Run the collected test ``items`` in a forked child with the view's SQL replaced, the tests
    that killed earlier mutants first, stopping at the first failure: ('killed' | 'survived' |
    'timeout', seconds). The killer moves to the front of ``killers``."""
    from _pytest.runner import runtestprotocol
    fd, name = tempfile.mkstemp(prefix="sqlmut-killer-")
    os.close(fd)
    out = Path(name)
    rank = {n: i for i, n in enumerate(killers)}
    ordered = sorted(items, key=lambda it: rank.get(it.nodeid, len(rank)))

    def child() -> int:
        _quiet()
        _install(view, sql, original)
        for item in ordered:
            reports = runtestprotocol(item, nextitem=None, log=False)
            if any(r.failed for r in reports):
                out.write_text(item.nodeid)
                return 1
        return 0

    try:
        code, secs = _fork(child, timeout)
        killer = out.read_text()
    finally:
        out.unlink(missing_ok=True)
    if killer:
        if killer in killers:
            killers.remove(killer)
        killers.insert(0, killer)
    if code == "timeout":
        return "timeout", secs
    return ("survived" if code == "0" and not killer else "killed"), secs


# ----- one view ---------------------------------------------------------------------------------

def _equivalent(view: str, op: str, d: str) -> Equivalent | None:
    before, after = _changed_lines(d)
    for e in SQL_EQUIVALENT:
        if e.module == view and e.function in ("", op) and (not e.before or e.before == before) \
                and (not e.after or e.after == after):
            return e
    return None


def run_view(view: str, sql: str, ms: list[Mutant], invalid: set[int], files: list[str], items: list,
             timeout: float | None, show_invalid: bool, only: set[int] | None = None) -> tuple[Outcome, int]:
    o = Outcome(view)
    t0 = time.perf_counter()
    missing = [f for f in files if not (ROOT / f).exists()]
    if missing or not items:
        o.error = f"missing test files {missing}" if missing else "no tests mapped"
        return o, len(invalid)
    killers: list[str] = []
    clean, secs = run_items(view, sql, sql, items, killers, timeout or 1800)
    if clean != "survived":
        o.error = f"the unmutated tests do not pass ({clean}); no mutant run"
        return o, len(invalid)
    limit = timeout or max(30.0, 5 * secs)
    for i, m in enumerate(ms):
        d = diff(sql, m.apply(sql))
        name = f"{view}#{i} {m.op}"
        if only is not None and i not in only:
            continue
        if i in invalid:
            if show_invalid:
                print(f"   invalid {name}\n" + "\n".join("        " + x for x in d.splitlines()))
            continue
        status, _ = run_items(view, m.apply(sql), sql, items, killers, limit)
        o.counts[status] = o.counts.get(status, 0) + 1
        if status == "survived":
            eq = _equivalent(view, m.op, d)
            if eq is not None:
                o.equivalent.append((name, d, eq.why))
            else:
                o.survivors.append((f"{name} [survived]", d))
    o.seconds = time.perf_counter() - t0
    return o, len(invalid)


class _Sweep:
    """pytest plugin: collect once, then run every view's mutants instead of the tests."""

    def __init__(self, run: Any):
        self.run = run
        self.code = 0

    def pytest_runtestloop(self, session: Any) -> bool:
        self.code = self.run(session.items)
        return True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--view", action="append", help="only this view (repeatable); default: all")
    ap.add_argument("--timeout", type=float, help="seconds per mutant (default: 5x the clean run, at least 30)")
    ap.add_argument("--list", action="store_true", help="list the views, their mutants, readers and test files")
    ap.add_argument("--show-invalid", action="store_true", help="print the mutants DuckDB rejects")
    ap.add_argument("--only", type=int, action="append",
                    help="only the mutant with this index (repeatable; the N of 'view#N'; with one --view): "
                         "to rerun the survivors of a sweep after new tests, not a kill rate of the view")
    args = ap.parse_args()
    os.chdir(ROOT)
    sql = view_sql()
    read_by = readers(sql)
    names = args.view or list(sql)
    unknown = [n for n in names if n not in sql]
    if unknown:
        print(f"unknown view(s) {unknown}; known: {', '.join(sql)}", file=sys.stderr)
        return 2
    todo = {n: mutants(sql[n]) for n in names}
    if args.only and len(names) != 1:
        print("--only needs exactly one --view", file=sys.stderr)
        return 2
    if args.list:
        for n in names:
            print(f"{n}: {len(todo[n])} mutants; read by {', '.join(read_by[n]) or '-'}\n"
                  f"    {' '.join(tests_for(n, read_by))}")
        return 0
    import pytest
    files = sorted({f for n in names for f in tests_for(n, read_by) if (ROOT / f).exists()})
    sweep = _Sweep(lambda items: _sweep(names, sql, read_by, todo, items, args))
    code = pytest.main(["-qq", "-s", "-p", "no:cacheprovider", *files], plugins=[sweep])
    if code not in (0, 5):  # 5: "no tests ran" (the sweep ran them, in children)
        print(f"pytest exited with {code}", file=sys.stderr)
        return 2
    return sweep.code


def _sweep(names: list[str], sql: dict[str, str], read_by: dict[str, list[str]], todo: dict[str, list[Mutant]],
           items: list, args: argparse.Namespace) -> int:
    def say(text: str) -> None:
        print(text, flush=True)

    say("SQL mutation testing of the store's views, one mutant at a time (timings: shared machine, noisy)")
    t0 = time.perf_counter()
    bad = invalid_mutants(sql, todo, read_by)
    say(f"  {sum(map(len, todo.values()))} mutants, {len(bad)} rejected by DuckDB on an empty store "
        f"({time.perf_counter() - t0:.0f}s)")
    results = []
    for n in names:
        files = tests_for(n, read_by)
        mine = [it for it in items if it.nodeid.split("::")[0] in files]
        o, n_invalid = run_view(n, sql[n], todo[n], {i for v, i in bad if v == n}, files, mine,
                                args.timeout, args.show_invalid, set(args.only) if args.only else None)
        report(o)
        say(f"   {n_invalid} invalid (DuckDB rejects them; left out); {len(mine)} tests")
        results.append((o, n_invalid))
    lines = ["", "summary (kill rate = killed or timed out / valid mutants; adjusted leaves out listed equivalents)"]
    for o, n_invalid in results:
        lines.append(f"  {o.module:<24} {o.caught:>4}/{o.total:<4} {o.rate():>7.1%}  adjusted {o.rate(True):>7.1%}"
                     f"  survivors {len(o.survivors):<3} invalid {n_invalid:<3} {o.seconds:>5.0f}s")
    caught = sum(o.caught for o, _ in results)
    total = sum(o.total for o, _ in results)
    eq = sum(len(o.equivalent) for o, _ in results)
    lines.append(f"  {'all views':<24} {caught:>4}/{total:<4} {caught / max(total, 1):>7.1%}  adjusted "
                 f"{caught / max(total - eq, 1):>7.1%}  survivors {sum(len(o.survivors) for o, _ in results):<3} "
                 f"invalid {sum(n for _, n in results):<3} {time.perf_counter() - t0:>5.0f}s")
    say("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
