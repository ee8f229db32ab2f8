"""``design_comparison``'s "same cost" rule (docs/metrics.md, "Same cost: no ratio over noise") over
hand-built rows, expectations worked by hand.

Run ``r``: CoT (the ``cot`` design) and four designs on four tasks, one seed, group ``src``. CoT's
tokens per task are 100, 120, 80, 100 (mean 100: the floor is 10 tokens), USD = tokens × 1e-5.
Per-task cost differences Δ_t against CoT (tokens):

- ``tiny``   +5, +5, +5, +5: SD 0, so the interval [5, 5] excludes 0, but |5| < 10: same cost (floor);
- ``noisy``  +60, −30, +50, −20: mean 15 ≥ 10; SD √(6500/3) = 46.5475, interval 15 ± 3.182446 ·
  46.5475 / 2 = 15 ± 74.0675 = [−59.0675, 89.0675] holds 0: same cost (interval);
- ``dear``   +200, +210, +190, +200: mean 200, SD √(200/3) = 8.16497, interval 200 ± 3.182446 ·
  8.16497 / 2 = [187.0078, 212.9922]: a ratio, 100 · (0.5 − 0.25) / 0.2 = 125 pp/1k tok;
- ``cheap``  −50, −50, −60, −40: mean −50, SD √(200/3), interval [−62.9922, −37.0078]: a ratio,
  100 · (0.5 − 0.25) / −0.05 = −500 pp/1k tok (accuracy gained per 1k tokens saved reads negative).

Run ``r2`` has no ``cot`` design: the reference is the curve at k = 1, per cell from
``cot_sc_task_curve`` (tokens 100 on every cell, the group curve 100). ``d`` differs by +30, −30,
+40, −20 (mean 5 < 10: same cost); ``e`` by +100, +110, +90, +100 (interval 100 ± 3.182446 ·
8.16497 / 2: a ratio).
"""

from __future__ import annotations

import math

import pytest

from masbench.store.metrics import _t975

COT = (100, 120, 80, 100)
DIFFS = {"tiny": (5, 5, 5, 5), "noisy": (60, -30, 50, -20), "dear": (200, 210, 190, 200), "cheap": (-50, -50, -60, -40)}
CORRECT = {"cot": (1, 0, 0, 0), "tiny": (1, 1, 1, 0), "noisy": (1, 1, 1, 1), "dear": (1, 1, 0, 0),
           "cheap": (1, 0, 1, 0)}
T3 = 3.182446  # Student's t, 97.5%, 3 degrees of freedom (printed tables)


def _row(run: str, design: str, i: int, tokens: float, ok: int) -> dict:
    return dict(run_id=run, design=design, task_id=f"t{i}", seed=0, source="src", correct=bool(ok), status="ok",
                tokens=tokens, calls=1, cost_usd=tokens * 1e-5)


@pytest.fixture
def con(view_db):
    c = view_db.make("design_comparison")
    rows = [_row("r", "cot", i, t, CORRECT["cot"][i]) for i, t in enumerate(COT)]
    rows += [_row("r", d, i, COT[i] + dt, CORRECT[d][i]) for d, diffs in DIFFS.items() for i, dt in enumerate(diffs)]
    rows += [_row("r2", d, i, 100 + dt, 1) for d, diffs in (("d", (30, -30, 40, -20)), ("e", (100, 110, 90, 100)))
             for i, dt in enumerate(diffs)]
    view_db.insert(c, "results", *rows)
    for axis in ("all", "src"):
        view_db.insert(c, "cot_sc_curve", *[dict(run_id="r2", axis=axis, k=k, accuracy=0.5, ci_lo=0.4, ci_hi=0.6,
                                                 tokens=100.0 * k, calls=float(k), cost_usd=1e-3 * k, n_tasks=4)
                                            for k in (1, 2)])
    view_db.insert(c, "cot_sc_task_curve", *[dict(run_id="r2", task_id=f"t{i}", seed=0, k=k, accuracy=0.5,
                                                  tokens=100.0 * k, cost_usd=1e-3 * k)
                                             for i in range(4) for k in (1, 2)])
    return c


def _by_design(view_db, con, run: str, axis: str = "all") -> dict[str, dict]:
    return {r["design"]: r for r in view_db.rows(con, "SELECT * FROM design_comparison WHERE run_id = ? AND axis = ?",
                                                  [run, axis])}


@pytest.mark.parametrize("axis", ["all", "src"])
def test_within_noise_of_cot_is_same_cost_and_has_no_ratio(con, view_db, axis) -> None:
    rows = _by_design(view_db, con, "r", axis)
    tiny, noisy = rows["tiny"], rows["noisy"]
    # tiny: under the floor (5 < 10% of 100) although its interval [5, 5] excludes 0
    assert tiny["cost_diff_tokens"] == pytest.approx(5) and tiny["cost_diff_n_tasks"] == 4
    assert tiny["cost_diff_tokens_ci_lo"] == pytest.approx(5) and tiny["cost_diff_tokens_ci_hi"] == pytest.approx(5)
    assert tiny["same_cost_tokens"] is True and tiny["mu_pp_per_1k_tokens"] is None
    assert tiny["same_cost_usd"] is True and tiny["mu_pp_per_usd"] is None
    # noisy: above the floor, but its paired interval holds 0
    assert noisy["cost_diff_tokens"] == pytest.approx(15)
    assert noisy["cost_diff_tokens_ci_lo"] == pytest.approx(15 - 74.0675, abs=1e-3)
    assert noisy["cost_diff_tokens_ci_hi"] == pytest.approx(15 + 74.0675, abs=1e-3)
    assert noisy["same_cost_tokens"] is True and noisy["mu_pp_per_1k_tokens"] is None
    assert noisy["same_cost_usd"] is True and noisy["mu_pp_per_usd"] is None
    # the iso-cost gap and accuracy still carry the comparison; CoT itself gets no flag
    assert noisy["accuracy"] == 1.0 and noisy["cot_accuracy"] == 0.25
    assert rows["cot"]["same_cost_tokens"] is None and rows["cot"]["mu_pp_per_1k_tokens"] is None


def test_clearly_costlier_or_cheaper_shows_the_ratio(con, view_db) -> None:
    rows = _by_design(view_db, con, "r")
    dear, cheap = rows["dear"], rows["cheap"]
    assert dear["cost_diff_tokens"] == pytest.approx(200)
    hw = T3 * math.sqrt(200 / 3) / 2
    assert hw == pytest.approx(12.9922, abs=1e-4)
    assert (dear["cost_diff_tokens_ci_lo"], dear["cost_diff_tokens_ci_hi"]) == (
        pytest.approx(200 - hw, abs=1e-4), pytest.approx(200 + hw, abs=1e-4))
    assert dear["same_cost_tokens"] is False and dear["mu_pp_per_1k_tokens"] == pytest.approx(125)
    assert dear["same_cost_usd"] is False and dear["mu_pp_per_usd"] == pytest.approx(100 * 0.25 / 0.002)
    assert cheap["same_cost_tokens"] is False and cheap["mu_pp_per_1k_tokens"] == pytest.approx(-500)
    assert cheap["cost_diff_tokens_ci_hi"] == pytest.approx(-50 + hw, abs=1e-4)


def test_without_a_cot_design_the_reference_is_the_curve_at_k1_per_cell(con, view_db) -> None:
    rows = _by_design(view_db, con, "r2")
    d, e = rows["d"], rows["e"]
    assert d["cot_tokens"] == 100 and d["cost_diff_tokens"] == pytest.approx(5)
    assert d["same_cost_tokens"] is True and d["mu_pp_per_1k_tokens"] is None
    assert e["cost_diff_tokens"] == pytest.approx(100)
    hw = T3 * math.sqrt(200 / 3) / 2
    assert e["cost_diff_tokens_ci_lo"] == pytest.approx(100 - hw, abs=1e-4)
    assert e["same_cost_tokens"] is False and e["mu_pp_per_1k_tokens"] == pytest.approx(100 * 0.5 / 0.1)


def _t_cdf(x: float, nu: int, steps: int = 20000) -> float:
    """Student's t CDF at x > 0 by Simpson's rule over the density (independent of the SQL)."""
    c = math.exp(math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2)) / math.sqrt(nu * math.pi)
    f = lambda t: c * (1 + t * t / nu) ** (-(nu + 1) / 2)  # noqa: E731
    h = x / steps
    s = f(0) + f(x) + sum((4 if i % 2 else 2) * f(i * h) for i in range(1, steps))
    return 0.5 + s * h / 3


@pytest.mark.parametrize("nu", [1, 2, 3, 5, 10, 29, 30, 31, 45, 100, 1000])
def test_the_t_quantile_matches_the_t_distribution(view_db, nu) -> None:
    con = view_db.make()
    q = con.execute(f"SELECT {_t975(str(nu))}").fetchone()[0]
    assert _t_cdf(q, nu) == pytest.approx(0.975, abs=2e-6)
    assert con.execute(f"SELECT {_t975('0')}").fetchone()[0] is None  # one task: no interval


# ----- run b: the rule's boundaries -----------------------------------------------------------------
# Tasks e0, e1, e2, one seed, group ``s``. CoT has cells on e0 and e1 only (no cell on e2): 1000 tokens
# and $10 each (mean 1000 tokens, $10; the floor is 100 tokens, $1), right on e0 (accuracy 0.5).
# The paired difference is over e0 and e1 only (e2 has no CoT cell to pair with).
# - ``edge``: 1100 tokens and $11 on every task, right on e0 and e1 (2/3): |1100 - 1000| = 100 is
#   exactly the floor, not under it; the differences 100, 100 (SD 0) give the interval [100, 100],
#   which excludes 0: not the same cost. 100 · (2/3 − 1/2) / (100 / 1000) = 166.67 pp per 1k tokens;
#   100 · (1/6) / 1 = 16.667 pp per USD.
# - ``paired_zero``: 1000, 1000 and 4000 tokens ($10, $10, $40), right on e0 (1/3): mean 2000
#   tokens ($20), far over the floor, but its differences on the paired tasks are 0 and 0: the
#   interval is exactly [0, 0], which holds 0: the same cost, no ratio.
# - ``free``: 500 tokens and $0 on every task, right on e0 (1/3): a free design against a paid CoT
#   is compared in USD like any other: |0 − 10| = 10 is over the floor, the differences −10, −10
#   give [−10, −10]: not the same cost; 0 / 10 = 0 × CoT; 100 · (1/3 − 1/2) / (0 − 10) = 1.6667 pp per USD.
# - ``lone``: e0 and e2 only, 3000 tokens and $30, right on both (1.0): one paired task (e0), so no
#   interval (one difference has no SD); 3000 is far over the floor: not the same cost,
#   100 · (1 − 1/2) / 2 = 25 pp per 1k tokens, 100 · 0.5 / 20 = 2.5 pp per USD.

EDGE = {"cot": ((1000, 1000, None), (10.0, 10.0, None), "e0"),
        "edge": ((1100, 1100, 1100), (11.0, 11.0, 11.0), "e0 e1"),
        "paired_zero": ((1000, 1000, 4000), (10.0, 10.0, 40.0), "e0"),
        "free": ((500, 500, 500), (0.0, 0.0, 0.0), "e0"),
        "lone": ((3000, None, 3000), (30.0, None, 30.0), "e0 e2")}


@pytest.fixture
def con_b(view_db):
    c = view_db.make("design_comparison")
    view_db.insert(c, "results", *[dict(run_id="b", design=d, task_id=f"e{i}", seed=0, source="s",
                                        correct=f"e{i}" in right.split(), status="ok", tokens=tok[i], calls=1,
                                        cost_usd=usd[i])
                                   for d, (tok, usd, right) in EDGE.items() for i in range(3) if tok[i] is not None])
    return c


@pytest.mark.parametrize("axis", ["all", "s"])
def test_the_same_cost_rule_at_its_boundaries(con_b, view_db, axis) -> None:
    rows = _by_design(view_db, con_b, "b", axis)
    assert rows["edge"]["cot_tokens"] == 1000 and rows["edge"]["cot_cost_usd"] == 10.0
    edge = rows["edge"]
    assert edge["cost_diff_n_tasks"] == 2 and edge["cost_diff_tokens"] == 100 and edge["cost_diff_usd"] == 1.0
    assert (edge["cost_diff_tokens_ci_lo"], edge["cost_diff_tokens_ci_hi"]) == (100, 100)
    assert edge["same_cost_tokens"] is False and edge["same_cost_usd"] is False  # on the floor is not under it
    assert edge["mu_pp_per_1k_tokens"] == pytest.approx(100 * (2 / 3 - 1 / 2) / 0.1)
    assert edge["mu_pp_per_usd"] == pytest.approx(100 * (2 / 3 - 1 / 2) / 1.0)
    zero = rows["paired_zero"]
    assert zero["tokens"] == 2000 and zero["cost_usd"] == 20.0
    assert zero["cost_diff_n_tasks"] == 2
    assert (zero["cost_diff_tokens_ci_lo"], zero["cost_diff_tokens_ci_hi"]) == (0, 0)
    assert (zero["cost_diff_usd_ci_lo"], zero["cost_diff_usd_ci_hi"]) == (0, 0)
    assert zero["same_cost_tokens"] is True and zero["same_cost_usd"] is True  # an interval ending at 0 holds 0
    assert zero["mu_pp_per_1k_tokens"] is None and zero["mu_pp_per_usd"] is None
    free = rows["free"]
    assert free["cost_usd"] == 0 and free["x_cot_usd"] == 0
    assert (free["cost_diff_usd"], free["cost_diff_usd_ci_lo"], free["cost_diff_usd_ci_hi"]) == (-10, -10, -10)
    assert free["same_cost_usd"] is False and free["mu_pp_per_usd"] == pytest.approx(100 * (1 / 3 - 1 / 2) / -10)
    assert free["same_cost_tokens"] is False and free["mu_pp_per_1k_tokens"] == pytest.approx(100 * (1 / 3 - 1 / 2) / -0.5)
    lone = rows["lone"]
    assert lone["cost_diff_n_tasks"] == 1 and lone["cost_diff_tokens"] == 2000
    assert lone["cost_diff_tokens_ci_lo"] is None and lone["cost_diff_usd_ci_hi"] is None
    assert lone["same_cost_tokens"] is False and lone["same_cost_usd"] is False  # no interval is not "holds 0"
    assert lone["mu_pp_per_1k_tokens"] == pytest.approx(25) and lone["mu_pp_per_usd"] == pytest.approx(2.5)
