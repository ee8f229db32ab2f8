"""Mutation testing of the modules whose bugs would silently change a reported number.

For each module, a scratch copy of the checkout is made, mutmut (https://mutmut.readthedocs.io)
mutates only that module and runs only the test files that cover it (one mutant at a time: the
machine is shared), and the kill rate and every surviving mutant are printed. Mutants listed in
``EQUIVALENT`` (matched by function and changed line, with the reason they cannot change
behaviour) are shown separately and left out of the adjusted rate; everything else that survives
is a gap in the tests.

Slow (minutes per module). Run::

    python benchmarks/mutation.py                       # every module below
    python benchmarks/mutation.py --module masbench/budget.py --timeout 900
    python benchmarks/mutation.py --module masbench/budget.py --mutant NAME --mutant NAME   # rerun survivors
    python benchmarks/mutation.py --list

Needs ``pip install mutmut`` (the ``mutation`` extra).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from mutation_equivalents import EQUIVALENT, Equivalent  # the list next to this script

ROOT = Path(__file__).resolve().parents[1]
LIBRARIES = ["agents", "baselines", "orchestrators", "skills", "tasks", "notebooks"]

# module -> the test files that cover it (only these run against its mutants)
MODULES: dict[str, list[str]] = {
    "masbench/budget.py": ["tests/test_budget.py", "tests/runtime/test_runtime_budget.py"],
    "masbench/llm/metered.py": ["tests/llm/test_metered.py"],
    "masbench/charge.py": ["tests/test_charge.py", "tests/test_budget.py"],
    "masbench/text.py": ["tests/test_text.py", "tests/bench/test_answers.py"],
    "masbench/bench/scorers.py": ["tests/bench/test_scorers.py", "tests/bench/scoring/test_replies.py", "tests/bench/test_answers.py",
                             "tests/bench/scoring/test_scorers_published.py", "tests/harness/test_protocol.py"],
    "masbench/bench/scoring/mathequal.py": ["tests/bench/test_scorers.py", "tests/bench/scoring/test_replies.py", "tests/bench/test_answers.py",
                                       "tests/bench/scoring/test_scorers_published.py", "tests/harness/test_protocol.py"],
    "masbench/bench/scoring/replies.py": ["tests/bench/test_scorers.py", "tests/bench/scoring/test_replies.py", "tests/bench/test_answers.py",
                                     "tests/bench/scoring/test_scorers_published.py", "tests/harness/test_protocol.py"],
    "masbench/bench/scoring/benchmarks.py": ["tests/bench/test_scorers.py", "tests/bench/scoring/test_replies.py", "tests/bench/test_answers.py",
                                        "tests/bench/scoring/test_scorers_published.py", "tests/harness/test_protocol.py"],
    # not tests/llm/test_gateway_http.py: its retry test runs ~2 min (real timeouts) and every gateway test
    # resolves prices, so each pricing mutant would cost minutes; its price tests have direct
    # counterparts in tests/llm/test_pricing.py
    "masbench/llm/pricing.py": ["tests/llm/test_pricing.py", "tests/llm/test_usage.py", "tests/llm/test_metered.py",
                                "tests/llm/test_costs_wire.py"],
    "masbench/llm/usage.py": ["tests/llm/test_usage.py", "tests/llm/test_costs_wire.py"],
    "masbench/harness/stats/majk.py": ["tests/harness/stats/test_majk.py"],
    "masbench/harness/stats/paired.py": ["tests/harness/stats/test_paired.py"],
    # only the direct tests (hand-built pools, cells and stores): test_stats_harness.py and test_protocol.py reach
    # the curve through whole runs (~27 s a mutant: the first full run stopped at its 1800 s limit after 67 of 435)
    "masbench/harness/curve.py": ["tests/harness/test_curve.py"],
    "masbench/harness/resume.py": ["tests/harness/test_resume.py"],

    # --- issue 29, part A: the statistics that make verdicts (owned by branch i29-stats) ---
    # not tests/report/test_report.py or tests/harness/stats/test_stats_harness.py: they reach these
    # modules only through whole runs (~1 min per mutant); the files below test each rule directly
    "masbench/harness/stats/decide.py": ["tests/harness/stats/test_decide.py", "tests/harness/test_paired_tests.py"],
    "masbench/harness/stats/power.py": ["tests/harness/stats/test_power.py", "tests/harness/stats/test_paired.py",
                                        "tests/harness/stats/test_decide.py", "tests/harness/test_paired_tests.py"],
    # the direct tests (hand-built view frames, recording stand-ins: milliseconds each) and three store tests
    # for compute_paired's own lines; the rest of test_paired_tests.py builds a DuckDB store per test (~15 s
    # a mutant at load 5, ≈3 h for the module)
    "masbench/harness/paired_tests.py": ["tests/harness/test_paired_tests_direct.py",
                                         "tests/harness/test_paired_tests.py::test_rows_against_cot_and_between_designs",
                                         "tests/harness/test_paired_tests.py::test_one_task_stores_no_sd_and_claims_no_n",
                                         "tests/harness/test_paired_tests.py::test_the_verdict_unit_falls_back_to_tokens_only_for_a_budget_match"],
    # the default verdict's p-value and interval
    "masbench/harness/stats/tests/sign_flip.py": ["tests/harness/stats/tests/test_sign_flip.py"],
    "masbench/harness/stats/matched.py": ["tests/harness/stats/test_matched.py"],

    # --- end part A ---

    # --- issue 29, part B: retry, failure and runtime rules (owned by branch i29-rules) ---
    # not tests/llm/test_gateway_http.py (a ~2 min retry test) nor test_backpressure.py (real 2 s Retry-After
    # waits): test_errors.py / test_health.py cover the same rules directly (a fake clock, a raising backend)
    "masbench/llm/errors.py": ["tests/llm/test_errors.py"],
    "masbench/llm/health.py": ["tests/llm/test_health.py", "tests/llm/test_errors.py"],
    "masbench/runtime/ties.py": ["tests/runtime/test_ties.py", "tests/harness/stats/test_majk.py"],
    "masbench/runtime/steps.py": ["tests/runtime/test_steps.py", "tests/runtime/test_ops.py", "tests/runtime/test_failures.py",
                                  "tests/runtime/test_runtime_budget.py"],
    # test_compiled compares every scheduler on every bundled design: a straight-line loop and
    # fan-out here, and which designs the chain takes
    "masbench/runtime/chain.py": ["tests/runtime/test_chain.py",
                                  "tests/runtime/test_compiled.py::test_which_schedulers_take_the_bundled_designs",
                                  "tests/runtime/test_compiled.py::test_bundled_design_same_rows_under_every_scheduler"],
    "masbench/harness/failures.py": ["tests/harness/test_run_aborted.py"],
    # not tests/harness/test_run_failfast.py: it runs the CLI in subprocesses (minutes; mutants do not reach a child)
    "masbench/store/cells.py": ["tests/store/test_cells.py", "tests/harness/test_supersede.py", "tests/harness/test_resume.py"],

    # --- end part B ---

    # --- issue 29, part C: generators and routing metrics (owned by branch i29-gen) ---
    "masbench/bench/axes.py": ["tests/bench/test_axes.py"],
    "masbench/bench/igsm.py": ["tests/bench/test_igsm.py", "tests/bench/test_generators_paper.py"],
    "masbench/bench/smfr_paper.py": ["tests/bench/test_smfr_paper.py", "tests/bench/test_generators_paper.py"],
    # test_routing.py only through its metrics test: the rest of it (54 s: a CLI run with a plot, routed runs
    # through the gateway) reaches metrics.py only via routing_entropy/oracle_choice, which test_metrics.py
    # tests directly over hand-built inputs
    "masbench/routing/metrics.py": ["tests/routing/test_metrics.py", "tests/routing/test_routing.py::test_metrics_by_hand"],
    # only the direct tests: test_study.py's fixture explores 500 tasks through the gateway and
    # test_routing.py's CLI test renders a plot, ~20 s a mutant
    "masbench/routing/evaluation.py": ["tests/routing/test_evaluation.py"],
    # fill_outcomes decides which routing decisions learn an outcome (the handbook's evidence); its views'
    # SQL is covered by sql_mutation.py (design_task_outcomes, routing_choices)
    "masbench/store/outcomes.py": ["tests/store/test_outcomes.py"],

    # --- end part C ---

    # --- the sequential batch loop, rate limits, tools, engines, routing's learning, the viewer ---
    # only the direct tests: the coverage and family-wise-error studies (1,000 simulated streams, ~60 s
    # together) check validity, which the by-hand capital and Holm tests below pin number by number
    "masbench/harness/stats/sequential.py": [
        "tests/harness/stats/test_sequential_by_hand.py",
        "tests/harness/stats/test_sequential.py::test_two_wins_by_hand",
        "tests/harness/stats/test_sequential.py::test_capital_equals_the_brute_force_product",
        "tests/harness/stats/test_sequential.py::test_bets_are_predictable",
        "tests/harness/stats/test_sequential.py::test_chunking_does_not_change_the_answer",
        "tests/harness/stats/test_sequential.py::test_a_long_sequence_is_stable",
        "tests/harness/stats/test_sequential.py::test_look_holm_by_hand_and_frozen_numbers_stay",
        "tests/harness/stats/test_sequential.py::test_verdict_words_are_the_fixed_n_words",
        "tests/harness/test_plan_sequential.py::test_p_paths_is_the_betting_sequences_p_column"],
    "masbench/harness/sequence.py": ["tests/harness/test_sequence.py"],
    # three looks over hand-built store rows (not the batch loop's simulated runs: minutes per mutant)
    "masbench/harness/sequential_look.py": ["tests/harness/test_take_look.py", "tests/harness/test_sequential_look.py"],
    # the loop with recording stand-ins for the engine, curve and looks (milliseconds); not test_until_decided.py:
    # simulated runs end to end, ~1 min a mutant
    "masbench/harness/until_decided.py": ["tests/harness/test_until_decided_loop.py"],
    # not tests/harness/test_engines.py: it runs worker processes (mutants do not reach a child)
    "masbench/llm/limits.py": ["tests/llm/test_rate_windows_by_hand.py", "tests/llm/test_rate_limits.py"],
    "masbench/tools/base.py": ["tests/tools/test_function_tools.py", "tests/tools/test_calculator.py", "tests/tools/test_dispatch.py"],
    "masbench/tools/calculator.py": ["tests/tools/test_calculator.py", "tests/tools/test_dispatch.py"],
    "masbench/store/merge.py": ["tests/store/test_merge.py", "tests/store/test_live.py::test_a_part_is_merged_once"],
    "masbench/harness/engine_parts.py": ["tests/harness/test_engine_parts.py"],
    # not test_llm_taxonomy_proposal_and_classifier_over_http (DESELECT): ~17 s of HTTP per mutant
    "masbench/routing/router.py": ["tests/routing/test_router_by_hand.py", "tests/routing/test_route_hook_by_hand.py",
                                   "tests/routing/test_routing.py"],
    "masbench/routing/handbook.py": ["tests/routing/test_router_by_hand.py", "tests/routing/test_handbook_by_hand.py",
                                     "tests/routing/test_routing.py"],
    "masbench/routing/learn.py": ["tests/routing/test_learn_by_hand.py", "tests/routing/test_routing.py"],
    # filters.py is data (no function: mutmut makes no mutant of it); its predicates are checked filter by
    # filter over hand-built cells by test_grid_page.py, as grid.py's SQL is
    "masbench/view/filters.py": ["tests/view/test_grid_rules.py", "tests/view/test_grid_page.py"],
    "masbench/view/grid.py": ["tests/view/test_grid_rules.py", "tests/view/test_grid_page.py"],
    # runs against runs: hand-built stores (milliseconds), not test_run_compare.py's simulated runs (its verdict
    # table is direct); run_pairs' SQL text is module constants and f-strings of cells_sql
    "masbench/harness/run_compare.py": ["tests/harness/test_run_compare_by_hand.py",
                                        "tests/harness/test_run_compare.py::test_the_verdict_table_of_b_against_a"],
    "masbench/store/run_pairs.py": ["tests/store/test_run_pairs.py", "tests/harness/test_run_compare_by_hand.py"],
    # --- program designs' metering endpoint and the judge ---
    # the endpoint over real HTTP on 127.0.0.1, served in the test's own loop (mutants reach it)
    "masbench/llm/endpoint.py": ["tests/llm/test_endpoint_wire.py", "tests/llm/test_endpoint.py"],
    # only the direct tests: every function of these two is called there (test_endpoint.py's HTTP round
    # trips, ~5-30 s each under load, reach the same lines)
    "masbench/llm/endpoint_anthropic.py": ["tests/llm/test_endpoint_wire.py"],
    # a cell's admission, budget, attribution, seeds and tallies, by hand through a scripted gateway
    "masbench/llm/program_cell.py": ["tests/llm/test_program_cell.py"],
    "masbench/bench/scoring/judge.py": ["tests/bench/scoring/test_judge.py"],
    # only the direct tests (a recording stand-in for the gateway; hand-built stores with run_suite stubbed):
    # tests/harness/test_judge_run.py reaches the same lines through whole judged runs on the simulator,
    # ~5-25 s a test, which would put a module's run past 40 minutes on the shared machine
    "masbench/harness/scoring.py": ["tests/harness/test_scoring.py"],
    "masbench/harness/judge_check.py": ["tests/harness/test_judge_check.py"],
}

# mutmut's per-mutant CPU limit is (the covering tests' clean CPU time + 1 s) x this x 2 (mutmut's default 15).
# A lower one for modules whose mutants can loop for long (a grid search widened, a stop never reached): at 15,
# each such mutant holds the single worker for minutes and a whole run does not fit in the module's limit
MULTIPLIER: dict[str, float] = {
    "masbench/harness/stats/sequential.py": 4.0,
}

# tests left out of a module's runs, with why
DESELECT: dict[str, list[str]] = {
    # --- issue 29, part C (i29-gen) ---
    # runs every generator in two child processes (PYTHONHASHSEED 1 and 2): mutmut's trampolines are not
    # active in a child, and the byte-identity it checks is covered in-process by
    # test_same_seed_same_bytes_and_prefix_stable
    "masbench/bench/axes.py": ["tests/bench/test_axes.py::test_byte_identical_across_processes"],
    # --- end part C ---
    **{m: ["tests/routing/test_routing.py::test_llm_taxonomy_proposal_and_classifier_over_http"]
       for m in ("masbench/routing/router.py", "masbench/routing/handbook.py", "masbench/routing/learn.py")},
}




@dataclass
class Outcome:
    module: str
    counts: dict[str, int] = field(default_factory=dict)
    survivors: list[tuple[str, str]] = field(default_factory=list)  # (name, diff)
    equivalent: list[tuple[str, str, str]] = field(default_factory=list)  # (name, diff, why)
    seconds: float = 0.0
    error: str | None = None

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def caught(self) -> int:
        return self.counts.get("killed", 0) + self.counts.get("timeout", 0)

    def rate(self, adjusted: bool = False) -> float:
        n = self.total - (len(self.equivalent) if adjusted else 0)
        return self.caught / n if n else float("nan")


def _source_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    return [f for f in out if (ROOT / f).is_file()]


def _scratch_copy(dest: Path) -> None:
    for f in _source_files():
        (dest / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, dest / f)


def _toml_list(xs: list[str]) -> str:
    return "[" + ", ".join(f'"{x}"' for x in xs) + "]"


def _configure(dest: Path, module: str, tests: list[str], multiplier: float | None = None) -> None:
    deselect = [a for t in DESELECT.get(module, []) for a in ("--deselect", t)]
    cfg = (f"\n[tool.mutmut]\nsource_paths = [\"masbench\"]\nonly_mutate = {_toml_list([module])}\n"
           f"pytest_add_cli_args_test_selection = {_toml_list(tests)}\n"
           f"pytest_add_cli_args = {_toml_list(['-p', 'no:cacheprovider', '-q', '-x'] + deselect)}\n"
           f"also_copy = {_toml_list(LIBRARIES)}\n"
           + (f"timeout_multiplier = {multiplier}\n" if multiplier is not None else ""))
    with open(dest / "pyproject.toml", "a") as fh:
        fh.write(cfg)


def _mutmut(dest: Path, *args: str, timeout: float | None = None) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("mutmut")
    return subprocess.run([str(exe), *args], cwd=dest, capture_output=True, text=True, timeout=timeout, check=False)


_RESULT = re.compile(r"^\s*(\S+): (.+)$")


def _changed_lines(diff: str) -> tuple[str, str]:
    minus = [x[1:].strip() for x in diff.splitlines() if x.startswith("-") and not x.startswith("---")]
    plus = [x[1:].strip() for x in diff.splitlines() if x.startswith("+") and not x.startswith("+++")]
    return " / ".join(minus), " / ".join(plus)


def _function(name: str) -> str:
    # masbench.budget.xǁBudgetMeterǁreserve__mutmut_3 -> reserve ; masbench.text.x_extract__mutmut_2 -> extract
    tail = name.rsplit(".", 1)[-1].split("__mutmut_")[0]
    return tail.split("ǁ")[-1] if "ǁ" in tail else tail.removeprefix("x_")


# modules whose string literals are SQL: a mutant that only changes the case of a query is equivalent
SQL_MODULES = {"masbench/harness/resume.py", "masbench/harness/curve.py"}  # curve: also table names given to StoreWriter
SQL_MODULES |= {"masbench/store/cells.py"}  # issue 29 part B: its queries and CellRows filters
SQL_MODULES |= {"masbench/store/outcomes.py"}  # fill_outcomes' UPDATE and counts
SQL_MODULES |= {"masbench/store/merge.py"}  # the merge's probes and INSERT … SELECT
SQL_MODULES |= {"masbench/store/run_pairs.py"}  # the pairing's queries (cells_sql, bases, run_header, …)
# "module:function": only that function's strings are SQL (paired_tests: its other strings are labels and units)
SQL_MODULES |= {"masbench/harness/paired_tests.py:compute_paired"}
SQL_MODULES |= {"masbench/harness/until_decided.py:decisions", "masbench/harness/until_decided.py:run_saving"}
_SQL_CASE = Equivalent("", "", "", "", "only the case of SQL text changed: DuckDB keywords and unquoted identifiers "
                                       "are case-insensitive (no quoted identifier or string literal is touched)")


def _equivalent(module: str, name: str, diff: str) -> Equivalent | None:
    before, after = _changed_lines(diff)
    if (module in SQL_MODULES or f"{module}:{_function(name)}" in SQL_MODULES) and before != after \
            and before.lower() == after.lower() and "'" not in before:
        return _SQL_CASE
    for e in EQUIVALENT:
        if e.module == module and e.function == _function(name) and (not e.before or e.before == before) \
                and (not e.after or e.after == after):
            return e
    return None


def run_module(module: str, tests: list[str], timeout: float, keep: bool = False,
               multiplier: float | None = None, only: list[str] | None = None) -> Outcome:
    out = Outcome(module)
    missing = [t for t in tests if not (ROOT / t.split("::")[0]).exists()]  # a file or a test's node id
    if missing:
        out.error = f"missing test files {missing}"
        return out
    t0 = time.perf_counter()
    dest = Path(tempfile.mkdtemp(prefix="masbench-mutation-"))
    try:
        _scratch_copy(dest)
        _configure(dest, module, tests, multiplier if multiplier is not None else MULTIPLIER.get(module))
        try:
            run = _mutmut(dest, "run", "--max-children", "1", *(only or []), timeout=timeout)
        except subprocess.TimeoutExpired:
            out.error = f"timed out after {timeout:.0f}s (results so far are counted)"
            run = None
        if run is not None and run.returncode != 0:
            tail = [x for x in (run.stdout + run.stderr).splitlines() if x.startswith(("FAILED", "ERROR", "E "))]
            out.error = " | ".join((run.stdout + run.stderr).strip().splitlines()[-1:] + tail[:6])
        res = _mutmut(dest, "results", "--all", "true", timeout=300)
        for line in res.stdout.splitlines():
            m = _RESULT.match(line)
            if not m:
                continue
            name, status = m[1], m[2].strip()
            if only and name not in only:  # a rerun of named mutants: the others were not run
                continue
            out.counts[status] = out.counts.get(status, 0) + 1
            if status in ("killed", "timeout"):
                continue
            if status == "not checked":  # the run never reached it (see the note): no diff to show
                out.survivors.append((f"{name} [{status}]", ""))
                continue
            diff = _mutmut(dest, "show", name, timeout=120).stdout.strip()
            eq = _equivalent(module, name, diff)
            if eq is not None and status == "survived":
                out.equivalent.append((name, diff, eq.why))
            else:
                out.survivors.append((f"{name} [{status}]", diff))
    finally:
        out.seconds = time.perf_counter() - t0
        if keep:
            print(f"  (scratch copy kept at {dest})")
        else:
            shutil.rmtree(dest, ignore_errors=True)
    return out


def _diff_body(diff: str) -> str:
    keep = [x for x in diff.splitlines() if (x.startswith(("-", "+")) and not x.startswith(("---", "+++")))]
    return "\n".join("        " + x for x in keep) or "        (no diff shown)"


def report(o: Outcome) -> None:
    counts = ", ".join(f"{k} {v}" for k, v in sorted(o.counts.items()))
    print(f"\n== {o.module}: {o.caught}/{o.total} mutants killed = {o.rate():.1%} "
          f"(excluding {len(o.equivalent)} equivalent: {o.rate(True):.1%}) in {o.seconds:.0f}s  [{counts}]")
    if o.error:
        print(f"   note: {o.error}")
    unchecked = [n for n, d in o.survivors if n.endswith("[not checked]")]
    if unchecked:
        print(f"   {len(unchecked)} mutants not checked (the unmutated tests did not pass in the scratch copy?)")
    for name, diff in o.survivors:
        if not name.endswith("[not checked]"):
            print(f"   SURVIVED {name}\n{_diff_body(diff)}")
    for name, diff, why in o.equivalent:
        print(f"   equivalent {name}: {why}\n{_diff_body(diff)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--module", action="append", help="only this module (repeatable); default: all")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per module (default 1800)")
    ap.add_argument("--timeout-multiplier", type=float, default=None,
                    help="mutmut's per-mutant limit: the mutant's tests' clean CPU time (+1 s) times this, times 2 "
                         "(mutmut's default 15; a mutant past it counts as caught, as a timeout)")
    ap.add_argument("--mutant", action="append",
                    help="only this mutant (repeatable; a name as printed, with one --module): to rerun the "
                         "survivors of a whole run after new tests, not a kill rate of the module")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copies (to inspect mutants)")
    ap.add_argument("--list", action="store_true", help="list the modules and their test files")
    args = ap.parse_args()
    if shutil.which("mutmut", path=str(Path(sys.executable).parent)) is None:
        print("mutmut is not installed next to this Python: pip install mutmut", file=sys.stderr)
        return 2
    mods = args.module or list(MODULES)
    unknown = [m for m in mods if m not in MODULES]
    if unknown:
        print(f"unknown module(s) {unknown}; known: {', '.join(MODULES)}", file=sys.stderr)
        return 2
    if args.mutant and len(mods) != 1:
        print("--mutant needs exactly one --module", file=sys.stderr)
        return 2
    if args.list:
        for m in mods:
            print(f"{m}: {' '.join(MODULES[m])}")
        return 0
    print("mutation testing with mutmut, one mutant at a time (timings: 2 cores, shared, noisy)")
    results = []
    for m in mods:
        o = run_module(m, MODULES[m], args.timeout, args.keep, args.timeout_multiplier, args.mutant)
        report(o)
        results.append(o)
    print("\nsummary (kill rate = killed or timed out / all mutants; adjusted leaves out listed equivalents)")
    for o in results:
        print(f"  {o.module:<40} {o.caught:>4}/{o.total:<4} {o.rate():>7.1%}  adjusted {o.rate(True):>7.1%}"
              f"  survivors {len(o.survivors)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
