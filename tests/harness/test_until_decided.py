"""``masbench run --until-decided`` end to end on simulated suites: designs stop receiving tasks
once decided, the task order is the seeded permutation, an interrupted run resumes to the same
decisions at the same n, the per-task differences are what a hand computation gives, and the
options are checked. SIMULATED models only."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from masbench.cli import app
from masbench.harness import RunOptions, run_suite
from masbench.harness.cells import config_hash
from masbench.harness.prepare import SequentialError, prepare
from masbench.harness.stats.sequential import betting_sequence

from simsuite import q, write_sequential_suite, write_suite

BATCH = 10
N_TASKS = 120  # 2 depth values × n = 60


def _opts(suite, tmp_path, **kw) -> RunOptions:
    return RunOptions(suite=str(suite), lib=[tmp_path], until_decided=True, batch=BATCH, **kw)


def _looks(store, run_id) -> list[tuple]:
    """Every stored look, without the run id and the timestamp (what must be equal across runs)."""
    return q(store, """SELECT look, design, unit, n_tasks, n_cells, calls, tokens, budget_spent, k_match, position,
                              mean_diff, cs_lo, cs_hi, p_anytime, family_size, p_holm, level_holm, decided, verdict,
                              reason, max_tasks, batch, method, alpha
                       FROM sequential_looks WHERE run_id = ? ORDER BY look, design""", [run_id])


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    """One uninterrupted run, shared by the read-only tests below."""
    import asyncio

    tmp = tmp_path_factory.mktemp("full")
    suite = write_sequential_suite(tmp)
    s = asyncio.run(run_suite(_opts(suite, tmp)))
    return tmp, suite, s


@pytest.mark.slow
def test_a_decided_design_stops_receiving_tasks_and_its_calls_stop_growing(full_run):
    _tmp, _suite, s = full_run
    per_design = dict(q(s.store, "SELECT design, count(*) FROM results WHERE run_id = ? GROUP BY 1", [s.run_id]))
    (look_decided, n_decided), = q(s.store, """SELECT min(look), min(n_tasks) FROM sequential_looks
                                               WHERE run_id = ? AND design = 'oracle' AND decided""", [s.run_id])
    assert look_decided is not None, "the far better design was never decided"
    # it received exactly the batches up to its decision, one seed: BATCH tasks per look
    assert per_design["oracle"] == n_decided == BATCH * look_decided
    assert per_design["oracle"] < per_design["solo"]
    # the design equal to CoT-SC kept receiving tasks after that; the baseline follows the pool
    last_look = q(s.store, "SELECT max(look) FROM sequential_looks WHERE run_id = ?", [s.run_id])[0][0]
    assert per_design["solo"] == min(N_TASKS, BATCH * last_look) > BATCH * look_decided
    assert per_design["cot"] == per_design["solo"]
    pool_tasks = q(s.store, "SELECT count(DISTINCT task_id) FROM pool WHERE run_id = ?", [s.run_id])[0][0]
    assert pool_tasks == per_design["solo"]
    # call counts: the log holds the oracle's calls of its decided tasks only, and its rows stop growing
    oracle_calls = q(s.store, "SELECT count(*) FROM calls WHERE run_id = ? AND design = 'oracle'", [s.run_id])[0][0]
    rows = q(s.store, "SELECT look, calls, n_tasks, decided FROM sequential_looks WHERE run_id = ? AND design = 'oracle' "
                      "ORDER BY look", [s.run_id])
    assert [r[2] for r in rows if r[0] <= look_decided] == [BATCH * r[0] for r in rows if r[0] <= look_decided]
    assert {(r[1], r[2]) for r in rows if r[0] >= look_decided} == {(oracle_calls, n_decided)}
    assert all(r[3] for r in rows if r[0] >= look_decided) and not any(r[3] for r in rows if r[0] < look_decided)
    solo_calls = q(s.store, "SELECT count(*) FROM calls WHERE run_id = ? AND design = 'solo'", [s.run_id])[0][0]
    assert oracle_calls < solo_calls


def test_tasks_are_drawn_in_the_seeded_permutation(full_run):
    tmp, suite, s = full_run
    ids = [t.id for t in prepare(RunOptions(suite=str(suite), lib=[tmp])).tasks]
    order = [ids[i] for i in np.random.default_rng(0).permutation(len(ids))]  # stats.seed defaults to 0
    n_oracle = q(s.store, "SELECT count(*) FROM results WHERE run_id = ? AND design = 'oracle'", [s.run_id])[0][0]
    got = {r[0] for r in q(s.store, "SELECT task_id FROM results WHERE run_id = ? AND design = 'oracle'", [s.run_id])}
    assert got == set(order[:n_oracle]) and n_oracle < len(order)
    # recorded in the run's config: the order is rebuilt from it
    cfg = q(s.store, "SELECT config FROM runs WHERE run_id = ?", [s.run_id])[0][0]
    assert '"_until_decided": {"max_tasks": 120, "batch": 10, "match": "budget"}' in cfg


def test_the_differences_are_the_hand_computed_ones(full_run):
    """At the oracle's decision look: per task, its correctness minus the pool's maj@1 (the cells
    were matched at k = 1: the oracle costs less than one pool sample), in draw order; the stored
    mean and anytime p-value are the betting test's on them."""
    tmp, suite, s = full_run
    (look_j, k, pos, mean, p_any), = q(s.store, """SELECT look, k_match, position, mean_diff, p_anytime
        FROM sequential_looks WHERE run_id = ? AND design = 'oracle' AND decided ORDER BY look LIMIT 1""", [s.run_id])
    ks = {r[0] for r in q(s.store, "SELECT k_match FROM sequential_looks WHERE run_id = ? AND design = 'oracle' "
                                   "AND k_match IS NOT NULL", [s.run_id])}
    assert ks == {1.0} and pos == "below"  # what makes maj@1 the curve value of every cell
    ids = [t.id for t in prepare(RunOptions(suite=str(suite), lib=[tmp])).tasks]
    order = [ids[i] for i in np.random.default_rng(0).permutation(len(ids))][:BATCH * look_j]
    y = dict(q(s.store, "SELECT task_id, CAST(correct AS DOUBLE) FROM results WHERE run_id = ? AND design = 'oracle'",
               [s.run_id]))
    maj1 = dict(q(s.store, "SELECT task_id, avg(CAST(correct AS DOUBLE)) FROM pool WHERE run_id = ? GROUP BY 1",
                  [s.run_id]))
    diffs = np.array([y[t] - maj1[t] for t in order])
    seq, _ = betting_sequence(diffs)
    assert mean == pytest.approx(diffs.mean(), abs=1e-12)
    assert p_any == pytest.approx(seq.p_value(), rel=1e-9)


@pytest.mark.slow
async def test_an_interrupted_run_resumes_to_the_same_decisions_at_the_same_n(full_run, tmp_path):
    _tmp, _suite, ref = full_run
    suite = write_sequential_suite(tmp_path)

    class Killed(Exception):
        pass

    class Killer:
        """A progress display that kills the run: after look ``after_look``, or after ``after_cells`` cells."""

        def __init__(self, after_look=None, after_cells=None):
            self.after_look, self.after_cells, self.looks, self.state = after_look, after_cells, 0, None

        def start(self, prep, run_id, state):
            self.state, self.done0 = state, state.done

        def attach(self, stats):
            pass

        def stop(self):
            pass

        def update(self):
            assert self.state is not None
            if self.after_cells is not None and self.state.done - self.done0 >= self.after_cells:
                raise Killed("mid-batch")

        def note(self, line):
            self.looks += 1
            if self.looks == self.after_look:
                raise Killed("between looks")

    with pytest.raises(Killed):
        await run_suite(_opts(suite, tmp_path), Killer(after_look=1))
    run_id = q(tmp_path / "runs" / "seq.duckdb", "SELECT run_id FROM runs")[0][0]
    assert q(tmp_path / "runs" / "seq.duckdb", "SELECT max(look) FROM sequential_looks")[0][0] == 1
    # mid-batch: batch 2 has 10 tasks × (pool + cot + oracle + solo) = 40 cells; stop after 15 of them
    with pytest.raises(Killed):
        await run_suite(_opts(suite, tmp_path), Killer(after_cells=15))
    store = tmp_path / "runs" / "seq.duckdb"
    assert q(store, "SELECT max(look) FROM sequential_looks")[0][0] == 1
    ids = [t.id for t in prepare(RunOptions(suite=str(suite), lib=[tmp_path])).tasks]
    batch2 = [ids[i] for i in np.random.default_rng(0).permutation(len(ids))][BATCH:2 * BATCH]
    done2 = q(store, "SELECT count(*) FROM results WHERE list_contains(?, task_id)", [batch2])[0][0] + q(
        store, "SELECT count(*) FROM (SELECT task_id FROM pool WHERE list_contains(?, task_id) GROUP BY 1 "
               "HAVING count(*) = 4)", [batch2])[0][0]
    assert 0 < done2 < 4 * BATCH  # the kill left batch 2 part done
    s = await run_suite(_opts(suite, tmp_path))
    assert s.run_id == run_id
    assert _looks(s.store, s.run_id) == _looks(ref.store, ref.run_id)
    count = "SELECT design, count(*), sum(calls) FROM results WHERE run_id = ? GROUP BY 1 ORDER BY 1"
    assert q(s.store, count, [s.run_id]) == q(ref.store, count, [ref.run_id])
    # a rerun of the finished run makes no look and runs no cell; the looks stay as they were
    again = await run_suite(_opts(suite, tmp_path))
    assert again.ran == 0 and _looks(again.store, again.run_id) == _looks(ref.store, ref.run_id)


def test_a_fixed_n_run_hashes_as_before_and_a_sequential_run_apart(tmp_path):
    suite = write_suite(tmp_path)
    fixed = prepare(RunOptions(suite=str(suite)))
    seq = prepare(RunOptions(suite=str(suite), until_decided=True, max_tasks=6, batch=2))
    assert fixed.config_hash == config_hash(fixed.suite, {}, None, None)
    assert seq.config_hash != fixed.config_hash
    assert seq.config_hash == config_hash(seq.suite, {}, None, None, {"max_tasks": 6, "batch": 2, "match": "budget"})
    assert fixed.sequence is None and seq.sequence is not None and len(seq.sequence.order) == 6


@pytest.mark.parametrize("kw, message", [
    ({"max_tasks": 5}, "give them with --until-decided"),
    ({"batch": 5}, "give them with --until-decided"),
    ({"until_decided": True, "max_tasks": 9}, "the suite has 8 tasks"),
    ({"until_decided": True, "batch": 0}, "at least one task"),
])
def test_sequential_options_are_checked(tmp_path, kw, message):
    suite = write_suite(tmp_path)  # 8 tasks
    with pytest.raises(SequentialError, match=message):
        prepare(RunOptions(suite=str(suite), **kw))


def test_a_suite_without_a_design_to_decide_or_a_curve_is_refused(tmp_path):
    only_baselines = write_suite(tmp_path, name="base", designs="[cot, {design: cot-sc, params: {k: 3}}]")
    with pytest.raises(SequentialError, match="needs a design other than the baselines"):
        prepare(RunOptions(suite=str(only_baselines), until_decided=True))
    no_curve = write_suite(tmp_path, name="nocurve")
    no_curve.write_text(no_curve.read_text().replace("cot_sc: {", "cot_sc: {enabled: false, "))
    with pytest.raises(SequentialError, match="enable cot_sc"):
        prepare(RunOptions(suite=str(no_curve), until_decided=True))


def test_the_cli_refuses_the_sequential_options_without_until_decided(tmp_path):
    suite = write_suite(tmp_path)
    r = CliRunner().invoke(app, ["run", str(suite), "--max-tasks", "4"])
    assert r.exit_code == 2 and "give them with --until-decided" in r.output
    r = CliRunner().invoke(app, ["run", str(suite), "--until-decided", "--max-tasks", "99"])
    assert r.exit_code == 2 and "the suite has 8 tasks" in r.output


@pytest.mark.slow
async def test_worker_processes_run_each_batch_to_the_same_looks(tmp_path):
    suite = write_sequential_suite(tmp_path, n=10)  # 20 tasks: 2 batches of 10
    one = await run_suite(_opts(suite, tmp_path, store=tmp_path / "one.duckdb"))
    two = await run_suite(_opts(suite, tmp_path, store=tmp_path / "two.duckdb", workers=2))
    assert _looks(two.store, two.run_id) == _looks(one.store, one.run_id)
    assert len(_looks(one.store, one.run_id)) >= 2  # a look per batch for each design
    assert not list((tmp_path / "parts").glob("*.duckdb"))  # every batch's parts merged
