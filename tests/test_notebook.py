"""notebooks/marginal_utility.ipynb executes against a synthetic store (no model calls), and is
committed with its outputs cleared."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "marginal_utility.ipynb"


def _builder():
    spec = importlib.util.spec_from_file_location("_report_fixtures", Path(__file__).parent / "report" / "test_report.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_notebook_is_committed_without_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


@pytest.mark.slow
def test_notebook_executes_against_a_store(tmp_path, monkeypatch):
    fx = _builder()
    store = fx.build_synthetic_store(tmp_path / "nb.duckdb")
    monkeypatch.setenv("MASBENCH_STORE", str(store))  # the kernel inherits this environment
    monkeypatch.delenv("MASBENCH_RUN", raising=False)
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's inline backend, as a user gets it
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(tmp_path)}}).execute()
    text = "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs
                     if o.get("output_type") == "stream")
    assert fx.RUN in text and "SIMULATED" in text
    assert f"view and plain SQL agree on {len(fx.DESIGNS)} designs" in text
    assert f"paired differences: view and raw tables agree on {len(fx.DESIGNS)} designs" in text
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})]
    assert len(images) == 1  # the cost-vs-accuracy plot
