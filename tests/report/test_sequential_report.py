"""The report of a ``--until-decided`` run: ``compare``, the Markdown and the HTML say per design
"decided at n = 37 (of 400 allowed), saved 91% of its calls" or "undecided at the cap: n = 400"
beside the verdict; a fixed-n run prints no such line. On the synthetic SIMULATED store of
test_report.py, with hand-written ``sequential_looks`` rows."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

import pytest

from masbench.cli import app
from masbench.store import Store

from report.test_report import RUN, build_synthetic_store  # noqa: E402 - the shared synthetic store


def _look(st: Store, look: int, design: str, **kw) -> None:
    row = dict(run_id=RUN, look=look, design=design, unit="budget", n_tasks=20 * look, n_cells=20 * look,
               calls=60 * look, tokens=0, cost_usd=0.0, budget_spent=0.0, k_match=1.0, position="within",
               mean_diff=0.0, cs_lo=-0.3, cs_hi=0.3, p_anytime=1.0, family_size=2, p_holm=1.0, level_holm=0.05,
               decided=False, verdict="inconclusive", reason="undecided", max_tasks=400, batch=20,
               method="betting CS (hedged, PrPl)", alpha=0.05, ts=0.0)
    row.update(kw)
    cols = ", ".join(row)
    st.con.execute(f"INSERT INTO sequential_looks ({cols}) VALUES ({', '.join('?' * len(row))})", list(row.values()))


def _sequential_store(path: Path) -> Path:
    build_synthetic_store(path)
    with Store(path) as st:
        # debate: decided "not worth it" at look 2 with 37 tasks and 7 calls per task: 1 − 37/400 = 90.75% saved
        _look(st, 1, "debate")
        _look(st, 2, "debate", decided=True, verdict="not worth it", n_tasks=37, calls=259)
        # planner-workers: undecided after all 20 looks: 400 tasks
        for j in range(1, 21):
            _look(st, j, "planner-workers")
    return path


@pytest.mark.slow
def test_compare_and_the_report_say_when_each_design_was_decided(tmp_path):
    store = _sequential_store(tmp_path / "seq.duckdb")
    res = CliRunner().invoke(app, ["compare", "--store", str(store)], env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())  # rich wraps long lines: compare the words
    assert "sequential: not worth it \u2014 decided at n = 37 (of 400 allowed), saved 91% of its calls" in text
    assert "sequential: inconclusive \u2014 undecided at the cap: n = 400" in text
    out = tmp_path / "rep"
    res = CliRunner().invoke(app, ["report", "--store", str(store), "--out", str(out), "--traces", "none"])
    assert res.exit_code == 0, res.output
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "decided at n = 37 (of 400 allowed), saved 91% of its calls" in page
    assert "undecided at the cap: n = 400" in page
    assert "decided at n = 37 (of 400 allowed)" in (out / "marginal_utility.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_fixed_n_run_prints_no_sequential_line(tmp_path):
    store = build_synthetic_store(tmp_path / "fixed.duckdb")
    res = CliRunner().invoke(app, ["compare", "--store", str(store)], env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    assert "sequential" not in res.output and "allowed" not in res.output
