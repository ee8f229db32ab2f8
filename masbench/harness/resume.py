"""Resume bookkeeping: which run a rerun continues, which cells are done, and deleting the rows
of cells that were in flight when a previous process died (so resumed cells leave no duplicates)."""

from __future__ import annotations

from ..store import Store
from .cells import Cell
from .prepare import POOL_DESIGN


def find_run(store: Store, suite: str, chash: str) -> str | None:
    row = store.sql("SELECT run_id FROM runs WHERE suite = ? AND config_hash = ? ORDER BY created_at DESC LIMIT 1",
                    [suite, chash])
    return row[0][0] if row else None


def clean_unfinished(store: Store, run_id: str, k_max: int) -> dict[str, int]:
    """Delete rows of cells that never completed (their calls/nodes without a result; pool cells
    with fewer than k_max samples), so resumed cells leave no duplicates."""
    with store.lock:
        con = store.con
        con.execute("BEGIN TRANSACTION")
        n_calls = con.execute("""
            DELETE FROM calls c WHERE c.run_id = ? AND c.purpose IN ('design', 'search')
              AND c.task_id IS NOT NULL AND NOT EXISTS (
              SELECT 1 FROM results r WHERE r.run_id = c.run_id AND r.design = c.design
                AND r.task_id = c.task_id AND r.seed = c.seed)""", [run_id]).fetchall()[0][0]
        n_nodes = con.execute("""
            DELETE FROM nodes n WHERE n.run_id = ? AND NOT EXISTS (
              SELECT 1 FROM results r WHERE r.run_id = n.run_id AND r.design = n.design
                AND r.task_id = n.task_id AND r.seed = n.seed) AND n.design <> ?""", [run_id, POOL_DESIGN]).fetchall()[0][0]
        con.execute("""
            DELETE FROM designs d WHERE d.run_id = ? AND d.task_id IS NOT NULL AND NOT EXISTS (
              SELECT 1 FROM results r WHERE r.run_id = d.run_id AND r.task_id = d.task_id)""", [run_id])
        con.execute("""
            DELETE FROM routing_decisions d WHERE d.run_id = ? AND NOT EXISTS (
              SELECT 1 FROM results r WHERE r.run_id = d.run_id AND r.design = d.design
                AND r.task_id = d.task_id AND r.seed = d.seed)""", [run_id])
        incomplete = """SELECT task_id, seed FROM pool WHERE run_id = ? GROUP BY ALL HAVING count(*) < ?"""
        n_pool_calls = con.execute(f"""
            DELETE FROM calls c WHERE c.run_id = ? AND c.purpose = 'pool' AND (
              (c.task_id, c.seed) IN ({incomplete}) OR NOT EXISTS (
                SELECT 1 FROM pool p WHERE p.run_id = c.run_id AND p.task_id = c.task_id AND p.seed = c.seed))""",
                                   [run_id, run_id, k_max]).fetchall()[0][0]
        con.execute("DELETE FROM nodes n WHERE n.run_id = ? AND n.design = ? AND (n.task_id, n.seed) NOT IN "
                    "(SELECT task_id, seed FROM pool WHERE run_id = ? GROUP BY ALL HAVING count(*) >= ?)",
                    [run_id, POOL_DESIGN, run_id, k_max])
        n_pool = con.execute(f"DELETE FROM pool WHERE run_id = ? AND (task_id, seed) IN ({incomplete})",
                             [run_id, run_id, k_max]).fetchall()[0][0]
        con.execute("COMMIT")
    return {"calls": int(n_calls), "nodes": int(n_nodes), "pool_calls": int(n_pool_calls), "pool": int(n_pool)}


def done_cells(store: Store, run_id: str, k_max: int) -> set[str]:
    done = {Cell("design", t, s, d).key for d, t, s in
            store.sql("SELECT design, task_id, seed FROM results WHERE run_id = ?", [run_id])}
    done |= {Cell("pool", t, s).key for t, s in
             store.sql("SELECT task_id, seed FROM pool WHERE run_id = ? GROUP BY ALL HAVING count(*) >= ?",
                       [run_id, k_max])}
    return done


__all__ = ["clean_unfinished", "done_cells", "find_run"]
