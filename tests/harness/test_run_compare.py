"""Runs against runs (``compare --a RUN[:DESIGN] --b RUN[:DESIGN]``) on a real simulated run split
in two: the cross-run comparison equals the within-run ``--against`` test on the same cells (in one
second store and across two store files), what does not pair is reported and left out, and a
model swap (one suite on two sim models, two stores) reads end to end from the command line."""

from __future__ import annotations

import asyncio
import json
import math
import re
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from masbench.cli import app as cli_app
from masbench.harness import RunOptions, compute_paired, run_suite
from masbench.harness.paired_tests import stats_spec_of
from masbench.harness.run_compare import CHEAPER, COSTLIER, SAME, PairResult, decide_pair
from masbench.harness.stats.decide import INCONCLUSIVE, NOT_SHOWN, NOT_WORTH, WORTH
from masbench.report.run_compare import Asked, run_pairs
from masbench.spec import StatsSpec
from masbench.store import Store
from masbench.store.run_pairs import GOLD_DIFFERS, ONLY_A, Side
from simsuite import write_suite

pytestmark = pytest.mark.slow  # simulated suite runs

DESIGNS = "[cot, {design: cot-sc, params: {k: 3}}, self-refine]"
LABELS = ("cot", "cot-sc[k=3]", "self-refine")


def _run(tmp: Path, name: str, model: str, designs: str = DESIGNS) -> tuple[Path, str]:
    tmp.mkdir(parents=True, exist_ok=True)
    suite = write_suite(tmp, name=name, model=model, n=12, designs=designs, seeds="[0, 1]", k_max=3)
    s = asyncio.run(run_suite(RunOptions(suite=str(suite))))
    assert s.failed == 0
    return Path(s.store), s.run_id


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory) -> tuple[Path, str]:
    """(store, run id) of a finished simulated run of three designs on 12 tasks × 2 seeds."""
    return _run(tmp_path_factory.mktemp("rvr"), "rvr", "sim/p60")


def split(src: Path, run: str, dst: Path, parts: dict[str, str], drop: str = "") -> None:
    """Copy ``run``'s runs row and each design's results into ``dst`` as run ``parts[design]``
    (one design per run), then run ``drop`` (SQL on ``dst``) to take cells away."""
    Store(dst).close()  # a store with the current schema
    con = duckdb.connect(str(dst))
    try:
        con.execute(f"ATTACH '{src}' AS src (READ_ONLY)")
        for rid in dict.fromkeys(parts.values()):
            con.execute("INSERT INTO runs SELECT * REPLACE (? AS run_id) FROM src.runs WHERE run_id = ?", [rid, run])
        for design, rid in parts.items():
            con.execute("INSERT INTO results SELECT * REPLACE (? AS run_id) FROM src.results WHERE run_id = ? "
                        "AND design = ?", [rid, run, design])
        if drop:
            con.execute(drop)
    finally:
        con.close()


def within(store: Path, run: str) -> dict[tuple[str, str], dict]:
    """The stored within-run design-pair tests of the run (computed afresh), by (design, against)."""
    with Store(store) as st:
        compute_paired(st, run, stats_spec_of(json.loads(st.sql("SELECT config FROM runs WHERE run_id = ?",
                                                                  [run])[0][0])))
        df = st.df("SELECT * FROM paired_tests WHERE run_id = ? AND axis = 'all' AND against NOT IN ('curve', 'cot')",
                   [run])
    return {(r["design"], r["against"]): r for r in df.to_dict("records")}


def assert_equal(got: PairResult, row: dict) -> None:
    """A cross-run B − A result equals the within-run row (design a − design b, a < b) of the same
    two designs: the same test, with the sign turned when B is the row's first design."""
    sign = -1.0 if (got.a.design, got.b.design) == (row["design"], row["against"]) else 1.0
    assert got.n_tasks == row["n_tasks"] and got.n_cells == row["n_cells"]
    assert got.mean_diff == pytest.approx(sign * row["mean_diff"], abs=1e-12)
    assert sorted(sign * x for x in got.ci) == pytest.approx([row["ci_lo"], row["ci_hi"]], abs=1e-8)  # a root search
    assert got.p_value == pytest.approx(row["p_value"], abs=1e-12)
    assert got.family_size == row["family_size"]
    assert got.p_holm == pytest.approx(row["p_holm"], abs=1e-12)
    assert sorted(sign * x for x in got.ci_holm) == pytest.approx([row["ci_lo_holm"], row["ci_hi_holm"]], abs=1e-8)
    assert got.method == row["method"]
    plus, minus = (row["n_discordant_minus"], row["n_discordant_plus"]) if sign < 0 else \
        (row["n_discordant_plus"], row["n_discordant_minus"])
    assert (got.n_plus, got.n_minus) == (plus, minus)


def _row(rows: dict, a: str, b: str) -> dict:
    return rows.get((a, b)) or rows[(b, a)]


def test_runs_split_in_two_equal_the_within_run_tests(sim_run, tmp_path):
    store, run = sim_run
    rows = within(store, run)
    assert len(rows) == 3 and any(r["p_value"] < 1 for r in rows.values())  # some discordant pairs to test
    second = tmp_path / "split.duckdb"
    split(store, run, second, {"cot": "ra", "cot-sc[k=3]": "rb", "self-refine": "rc"})
    # every pair of the three, one design per run: Holm across the three pairs, as within the run
    asked = Asked(second, None, ["ra:cot", "ra:cot", "rb:cot-sc[k=3]"],
                  ["rb:cot-sc[k=3]", "rc:self-refine", "rc:self-refine"])
    got = run_pairs(asked).results
    assert len(got) == 3
    for r in got:
        assert not r.unmatched
        assert_equal(r, _row(rows, r.a.design, r.b.design))
    # across two files: A in the original store (the whole run), B in the second one (attached)
    one = run_pairs(Asked(store, second, [f"{run}:self-refine"], ["ra:cot"])).results
    two_designs = tmp_path / "two.duckdb"  # the within-run reference of one pair: a run of just those designs
    split(store, run, two_designs, {"cot": run, "self-refine": run})
    assert_equal(one[0], _row(within(two_designs, run), "cot", "self-refine"))
    assert one[0].b == Side("ra", "cot", "runs_b") and one[0].a == Side(run, "self-refine")


def test_a_task_in_only_one_run_is_reported_and_left_out(sim_run, tmp_path):
    store, run = sim_run
    tasks = [t for (t,) in duckdb.connect(str(store), read_only=True).execute(
        "SELECT DISTINCT task_id FROM results WHERE run_id = ? ORDER BY 1", [run]).fetchall()]
    gone, half, other_gold = tasks[0], tasks[1], tasks[2]
    # B lacks one task entirely and one seed of another; a third task carries another gold in B
    drop = (f"DELETE FROM results WHERE run_id = 'rb' AND (task_id = '{gone}' OR (task_id = '{half}' AND seed = 1)); "
            f"UPDATE results SET gold = gold || '0' WHERE run_id = 'rb' AND task_id = '{other_gold}'")
    second = tmp_path / "split.duckdb"
    split(store, run, second, {"cot": "ra", "self-refine": "rb"}, drop)
    got = run_pairs(Asked(second, None, ["ra:cot"], ["rb:self-refine"])).results[0]
    left = {u.kind: u for u in got.unmatched}
    assert set(left) == {ONLY_A, GOLD_DIFFERS}
    assert (left[ONLY_A].cells, left[ONLY_A].tasks, left[ONLY_A].first_tasks) == (3, 2, sorted([gone, half]))
    assert (left[GOLD_DIFFERS].cells, left[GOLD_DIFFERS].tasks) == (2, 1)
    assert got.n_tasks == len(tasks) - 2 and got.n_cells == 2 * len(tasks) - 5
    # the same cells left out of one run of both designs: the within-run test agrees
    ref = tmp_path / "ref.duckdb"
    split(store, run, ref, {"cot": run, "self-refine": run},
          f"DELETE FROM results WHERE task_id IN ('{gone}', '{other_gold}') OR (task_id = '{half}' AND seed = 1)")
    assert_equal(got, _row(within(ref, run), "cot", "self-refine"))
    # the command says what it left out
    res = CliRunner().invoke(cli_app, ["compare", "--store", str(second), "--a", "ra:cot", "--b", "rb:self-refine"],
                             env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert f"left out 3 cell(s) of 2 task(s) only in A: {', '.join(sorted([gone, half]))}" in out
    assert f"left out 2 cell(s) of 1 task(s) same task id, another gold: {other_gold}" in out


def test_a_model_swap_across_two_stores_from_the_command_line(tmp_path):
    weak, rw = _run(tmp_path / "weak", "swap", "sim/p30", "[cot, {design: cot-sc, params: {k: 3}}]")
    strong, rs = _run(tmp_path / "strong", "swap", "sim/p95", "[cot, {design: cot-sc, params: {k: 3}}]")
    res = CliRunner().invoke(cli_app, ["compare", "--store", str(weak), "--a", rw, "--b-store", str(strong),
                                       "--b", rs], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.output.splitlines() if ln.startswith("B ")]
    assert len(lines) == 2  # every design both runs have, one pair each
    for design, line in zip(("cot", "cot-sc[k=3]"), lines):
        assert line.startswith(f"B {rs}:{design} vs A {rw}:{design}: +")
        assert "(2 pairs)" in line and "24 tasks" in line  # 24 tasks × 2 seeds: seeds clustered per task
        assert line.split(" \u2014 ")[1].startswith(WORTH)  # p95 over p30 on 12 tasks × 2 seeds, same tokens
    assert "left out" not in res.output  # the same generated tasks and seeds: all matched
    out = " ".join(res.output.split())
    assert f"A: run {rw} · suite swap · models default=sim/p30" in out and f"B: run {rs} · suite swap · models " \
        "default=sim/p95" in out and "B: SIMULATED" in out
    bad = CliRunner().invoke(cli_app, ["compare", "--store", str(weak), "--a", f"{rw}:debate", "--b-store",
                                       str(strong), "--b", rs])
    assert bad.exit_code == 2 and "has no design 'debate'" in bad.output
    missing = CliRunner().invoke(cli_app, ["compare", "--store", str(weak), "--a", rw, "--b", "nope"])
    assert missing.exit_code == 2 and "no run 'nope'" in missing.output


@pytest.mark.parametrize("cost,p,ci,expected", [
    (SAME, 0.01, (0.05, 0.2), WORTH), (SAME, 0.01, (-0.2, -0.05), NOT_WORTH), (SAME, 0.5, (-0.1, 0.1), INCONCLUSIVE),
    (CHEAPER, 0.01, (0.05, 0.2), WORTH), (CHEAPER, 0.01, (-0.2, -0.05), INCONCLUSIVE),
    (CHEAPER, 0.5, (-0.1, 0.1), INCONCLUSIVE),
    (COSTLIER, 0.01, (0.05, 0.2), INCONCLUSIVE), (COSTLIER, 0.01, (-0.2, -0.05), NOT_WORTH),
    (COSTLIER, 0.5, (-0.1, 0.1), NOT_SHOWN),
])
def test_the_verdict_table_of_b_against_a(cost, p, ci, expected):
    r = PairResult(Side("r1", "x"), Side("r2", "x"), "tokens", n_tasks=30, mean_diff=sum(ci) / 2, sd=0.3,
                   p_holm=p, ci_holm=ci, cost=cost, cost_ratio={SAME: 1.0, CHEAPER: 0.5, COSTLIER: 2.0}[cost])
    verdict, reason = decide_pair(r, StatsSpec().alpha, StatsSpec().power, ci)
    assert verdict == expected, reason
    if expected == INCONCLUSIVE and p > 0.05:
        assert re.search(r"needs n|no difference shown", reason)
    assert not math.isnan(r.mean_diff)
