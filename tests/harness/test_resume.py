"""Resume bookkeeping on a hand-built store: which run a rerun continues, which cells count as
done, and which rows of unfinished cells are deleted (and which are kept). Each expected row set
is written out from the rows inserted, not read back from the code."""

from __future__ import annotations

from masbench.harness.cells import Cell
from masbench.harness.prepare import POOL_DESIGN
from masbench.harness.resume import clean_unfinished, done_cells, find_run, nothing_cleaned

K = 3  # k_max


def ins(store, table: str, **row) -> None:
    cols = ", ".join(row)
    store.con.execute(f"INSERT INTO {table} ({cols}) VALUES ({', '.join('?' * len(row))})", list(row.values()))


def rows(store, q: str) -> set[tuple]:
    return set(store.sql(q))


def test_find_run_takes_the_newest_run_of_the_same_suite_and_config(store) -> None:
    ins(store, "runs", run_id="old", suite="s", config_hash="h1", created_at="2026-01-01 00:00:00")
    ins(store, "runs", run_id="new", suite="s", config_hash="h1", created_at="2026-01-02 00:00:00")
    ins(store, "runs", run_id="other-config", suite="s", config_hash="h2", created_at="2026-01-03 00:00:00")
    ins(store, "runs", run_id="other-suite", suite="t", config_hash="h1", created_at="2026-01-04 00:00:00")
    assert find_run(store, "s", "h1") == "new"
    assert find_run(store, "s", "h2") == "other-config"
    assert find_run(store, "t", "h1") == "other-suite"
    assert find_run(store, "s", "h3") is None and find_run(store, "u", "h1") is None


def _seed_store(store) -> None:
    # run r: design cell (cot, t1, 0) finished; (cot, t2, 0) in flight; pool (t1, 0) complete, (t2, 0) partial.
    ins(store, "results", run_id="r", design="cot", task_id="t1", seed=0)
    ins(store, "results", run_id="r", design="cot", task_id="t1", seed=1)  # another seed, also done
    for cid, (purpose, design, task, seed) in {
        "c-done": ("design", "cot", "t1", 0), "c-flight": ("design", "cot", "t2", 0),
        "c-other-seed": ("design", "cot", "t1", 2), "c-search": ("search", "cot", "t2", 0),
        "c-search-done": ("search", "cot", "t1", 1), "c-no-task": ("design", "cot", None, 0),
        "c-routing": ("routing", "cot", "t2", 0),
        "p-t1-0": ("pool", POOL_DESIGN, "t1", 0), "p-t1-1": ("pool", POOL_DESIGN, "t1", 0),
        "p-t1-2": ("pool", POOL_DESIGN, "t1", 0), "p-t2-0": ("pool", POOL_DESIGN, "t2", 0),
        "p-orphan": ("pool", POOL_DESIGN, "t3", 0),
    }.items():
        ins(store, "calls", call_id=cid, run_id="r", purpose=purpose, design=design, task_id=task, seed=seed)
    ins(store, "calls", call_id="x-other-run", run_id="q", purpose="design", design="cot", task_id="t2", seed=0)
    for i in range(K):
        ins(store, "pool", run_id="r", task_id="t1", seed=0, sample_index=i)
    ins(store, "pool", run_id="r", task_id="t2", seed=0, sample_index=0)
    ins(store, "pool", run_id="q", task_id="t9", seed=0, sample_index=0)  # another run: untouched
    for design, task, seed in (("cot", "t1", 0), ("cot", "t2", 0), (POOL_DESIGN, "t1", 0), (POOL_DESIGN, "t2", 0)):
        ins(store, "nodes", run_id="r", design=design, task_id=task, seed=seed, node="n")
    ins(store, "nodes", run_id="q", design="cot", task_id="t2", seed=0, node="n")
    ins(store, "designs", design_id="d-done", run_id="r", task_id="t1")
    ins(store, "designs", design_id="d-flight", run_id="r", task_id="t2")
    ins(store, "designs", design_id="d-suite", run_id="r", task_id=None)
    ins(store, "routing_decisions", decision_id="rd-done", run_id="r", design="cot", task_id="t1", seed=0)
    ins(store, "routing_decisions", decision_id="rd-flight", run_id="r", design="cot", task_id="t2", seed=0)


def test_clean_unfinished_deletes_exactly_the_rows_of_unfinished_cells(store) -> None:
    _seed_store(store)
    n = clean_unfinished(store, "r", K)
    # design/search calls of cells without a result; pool calls of the partial and the orphan pool cell
    assert n == {"calls": 3, "nodes": 1, "pool_calls": 2, "pool": 1}
    assert rows(store, "SELECT call_id FROM calls") == {
        ("c-done",), ("c-search-done",), ("c-no-task",), ("c-routing",), ("p-t1-0",), ("p-t1-1",), ("p-t1-2",),
        ("x-other-run",)}
    assert rows(store, "SELECT run_id, task_id, sample_index FROM pool") == {
        ("r", "t1", 0), ("r", "t1", 1), ("r", "t1", 2), ("q", "t9", 0)}
    assert rows(store, "SELECT run_id, design, task_id FROM nodes") == {
        ("r", "cot", "t1"), ("r", POOL_DESIGN, "t1"), ("q", "cot", "t2")}
    assert rows(store, "SELECT design_id FROM designs") == {("d-done",), ("d-suite",)}
    assert rows(store, "SELECT decision_id FROM routing_decisions") == {("rd-done",)}
    # idempotent: a second pass finds nothing left to delete
    assert clean_unfinished(store, "r", K) == {"calls": 0, "nodes": 0, "pool_calls": 0, "pool": 0}


def test_a_new_run_reports_what_cleaning_a_run_without_rows_reports(store) -> None:
    """A run id minted by ``run_suite`` is not queried (it has no rows): its summary's counts must be
    the ones cleaning such a run reports, read here from the store beside another run's rows."""
    _seed_store(store)
    assert nothing_cleaned() == clean_unfinished(store, "never-ran", K) == {"calls": 0, "nodes": 0,
                                                                             "pool_calls": 0, "pool": 0}
    assert done_cells(store, "never-ran", K) == set()


def test_a_pool_cell_with_k_max_samples_is_kept_and_one_short_is_not(store) -> None:
    for i in range(K - 1):
        ins(store, "pool", run_id="r", task_id="short", seed=0, sample_index=i)
        ins(store, "calls", call_id=f"s{i}", run_id="r", purpose="pool", design=POOL_DESIGN, task_id="short", seed=0)
    ins(store, "nodes", run_id="r", design=POOL_DESIGN, task_id="short", seed=0, node="n")
    for i in range(K + 1):  # more than k_max also counts as complete
        ins(store, "pool", run_id="r", task_id="full", seed=0, sample_index=i)
    ins(store, "nodes", run_id="r", design=POOL_DESIGN, task_id="full", seed=0, node="n")
    assert clean_unfinished(store, "r", K) == {"calls": 0, "nodes": 0, "pool_calls": K - 1, "pool": K - 1}
    assert rows(store, "SELECT DISTINCT task_id FROM pool") == {("full",)}
    assert rows(store, "SELECT task_id FROM nodes") == {("full",)}


def test_done_cells_are_results_and_complete_pools_of_this_run(store) -> None:
    _seed_store(store)
    ins(store, "results", run_id="q", design="cot", task_id="t5", seed=0)
    assert done_cells(store, "r", K) == {Cell("design", "t1", 0, "cot").key, Cell("design", "t1", 1, "cot").key,
                                         Cell("pool", "t1", 0).key}
    assert done_cells(store, "r", K + 1) == {Cell("design", "t1", 0, "cot").key, Cell("design", "t1", 1, "cot").key}
    assert done_cells(store, "nobody", K) == set()
