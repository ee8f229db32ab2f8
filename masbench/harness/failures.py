"""Failed cells: superseding them on resume (so a rerun replaces them without double counting),
the run-stopping error of a misconfigured model, and the closing summary's failure reasons.

A cell *failed* when its result has status ``failed`` (model errors after retries, a harness
error) or, for a pool cell, any of its samples has an error. Budget-exhausted and degraded cells
are results, not failures, and are never rerun. Superseding moves the cell's calls to
``calls_superseded`` (still spent, no longer counted; the ``run_spend`` view tells both) and
deletes its other rows; the cell then runs again like one never run.
"""

from __future__ import annotations

from ..llm.errors import misconfig_hint
from ..store import Store

_FAILED_DESIGN = "SELECT design, task_id, seed FROM results WHERE run_id = ? AND status = 'failed'"
_FAILED_POOL = "SELECT DISTINCT task_id, seed FROM pool WHERE run_id = ? AND error IS NOT NULL"


class RunAborted(Exception):
    """A systemic error (a misconfigured model): the run stops at its first occurrence."""


def aborted_message(gateway) -> str:
    """One line naming the alias, the litellm id, the error and what to set."""
    alias, model_id, reason = gateway.fatal
    spec = gateway.models.get(alias)
    hint = misconfig_hint(model_id, getattr(spec, "api_key_env", None), reason)
    return f"model {alias!r} ({model_id}) is misconfigured: {hint}. First error: {reason}"


def supersede_failed(store: Store, run_id: str) -> dict[str, int]:
    """Move the calls of failed cells to ``calls_superseded`` and delete their results, pool
    samples and nodes, in one transaction. Returns the cells superseded by kind."""
    with store.lock:
        con = store.con
        con.execute("BEGIN TRANSACTION")
        try:
            n_design = con.execute(f"SELECT count(*) FROM ({_FAILED_DESIGN})", [run_id]).fetchone()[0]
            n_pool = con.execute(f"SELECT count(*) FROM ({_FAILED_POOL})", [run_id]).fetchone()[0]
            design_calls = (f"run_id = ? AND coalesce(purpose, 'design') IN ('design', 'search') "
                            f"AND (design, task_id, seed) IN ({_FAILED_DESIGN})")
            pool_calls = f"run_id = ? AND purpose = 'pool' AND (task_id, seed) IN ({_FAILED_POOL})"
            for where in (design_calls, pool_calls):
                con.execute("INSERT INTO calls_superseded BY NAME SELECT *, epoch(current_timestamp) AS superseded_at "
                            f"FROM calls WHERE {where}", [run_id, run_id])
                con.execute(f"DELETE FROM calls WHERE {where}", [run_id, run_id])
            con.execute(f"DELETE FROM nodes WHERE run_id = ? AND (design, task_id, seed) IN ({_FAILED_DESIGN})",
                        [run_id, run_id])
            con.execute(f"DELETE FROM routing_decisions WHERE run_id = ? AND (design, task_id, seed) IN "
                        f"({_FAILED_DESIGN})", [run_id, run_id])
            con.execute(f"DELETE FROM pool WHERE run_id = ? AND (task_id, seed) IN ({_FAILED_POOL})", [run_id, run_id])
            con.execute("DELETE FROM results WHERE run_id = ? AND status = 'failed'", [run_id])
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
    return {"design": int(n_design), "pool": int(n_pool)}


def failure_reasons(store: Store, run_id: str, top: int = 3) -> tuple[int, list[tuple[str, int]]]:
    """(failed cells of the run, the ``top`` most frequent reasons with their counts)."""
    rows = store.sql("""
        WITH f AS (
            SELECT coalesce(error, 'unknown') AS reason FROM results WHERE run_id = ? AND status = 'failed'
            UNION ALL
            SELECT min(error) AS reason FROM pool WHERE run_id = ? AND error IS NOT NULL GROUP BY task_id, seed)
        SELECT left(reason, 160) AS reason, count(*) AS n FROM f GROUP BY 1 ORDER BY n DESC, reason""",
                     [run_id, run_id])
    return sum(int(n) for _, n in rows), [(r, int(n)) for r, n in rows[:top]]


__all__ = ["RunAborted", "aborted_message", "failure_reasons", "supersede_failed"]
