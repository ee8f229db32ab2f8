"""`masbench status` and the closing summary of `masbench run` read the same failed cells: design
cells whose result failed and pool cells with an errored sample, counted once per cell."""

from __future__ import annotations

from typer.testing import CliRunner

from masbench.cli import app
from masbench.store import Store, StoreWriter, failure_reasons


def test_status_and_the_run_summary_give_the_same_failures(tmp_path) -> None:
    path = tmp_path / "s.duckdb"
    st = Store(path)
    st.sql("INSERT INTO runs(run_id, suite, status, total_cells) VALUES ('r', 's', 'finished', 6)")
    w = StoreWriter(st)
    for i, err in enumerate(["model timed out", None, "model timed out"]):
        w.add("results", {"run_id": "r", "design": "cot", "task_id": f"t{i}", "seed": 0,
                          "status": "failed" if err else "ok", "error": err})
    for task, errs in (("p1", ["rate limited", "rate limited", None]), ("p2", ["rate limited"]), ("p3", [None])):
        for j, err in enumerate(errs):
            w.add("pool", {"run_id": "r", "task_id": task, "seed": 0, "sample_index": j, "error": err})
    w.flush()
    n, reasons = failure_reasons(st, "r")  # what the closing summary prints
    st.close()
    assert (n, reasons) == (4, [("model timed out", 2), ("rate limited", 2)])
    r = CliRunner().invoke(app, ["status", "r", "--store", str(path)])
    assert r.exit_code == 0, r.output
    assert f"· failed {n} ·" in r.output
    shown = [ln.strip() for ln in r.output.splitlines() if "×" in ln]
    assert shown == [f"{k}× {why}" for why, k in reasons]
