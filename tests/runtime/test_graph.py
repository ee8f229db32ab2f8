"""`masbench graph`: Mermaid text and a PNG for every library design."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from masbench.cli import app
from masbench.library import Library
from masbench.runtime import render

NAMES = ["cot", "cot-sc", "self-refine", "reflexion", "debate", "step-back", "quality-diversity", "role-assignment",
         "planner-workers", "generator-verifier-refiner", "decompose-calculator-aggregate", "mixture-of-agents",
         "parallel-distill-refine"]


@pytest.mark.parametrize("name", NAMES)
def test_mermaid_for_every_library_design(name: str) -> None:
    lib = Library()
    spec = lib.design(name)
    text = render.mermaid(spec, lib)
    assert text.startswith("flowchart TD\n")
    for node in spec.nodes:
        assert node.replace("-", "_") in text
    assert "--> answer" in text
    g = render.graph(spec, lib)
    assert "question" in g and "answer" in g


def test_mermaid_shapes() -> None:
    lib = Library()
    text = render.mermaid(lib.design("cot-sc"), lib, {"k": 7})
    assert 'sample[["sample<br/>agent: cot-solver ×7"]]' in text
    assert 'vote{{"vote<br/>majority vote"}}' in text
    assert "sample --> vote" in text and "question --> sample" in text
    loop = render.mermaid(lib.design("self-refine"), lib)
    assert 'subgraph refine ["loop refine: ≤5 rounds, until critic.correct"]' in loop
    assert "refine_revise -.->|next round| refine_critic" in loop
    dec = render.mermaid(lib.design("decompose-calculator-aggregate"), lib)
    assert 'compute[["compute<br/>python: calculator map extract"]]' in dec


def test_graph_cli_writes_png(tmp_path: Path) -> None:
    out = tmp_path / "debate.png"
    mm = tmp_path / "debate.mmd"
    res = CliRunner().invoke(app, ["graph", "debate", "--png", str(out), "--mermaid", str(mm), "-p", "rounds=3"])
    assert res.exit_code == 0, res.output
    assert "flowchart TD" in res.output and "≤3 rounds" in res.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5000
    assert mm.read_text().startswith("flowchart TD")


def test_graph_cli_reports_invalid_designs() -> None:
    bad = Path(__file__).parents[1] / "data" / "bad_designs" / "cycle.yaml"
    res = CliRunner().invoke(app, ["graph", str(bad), "--no-png"])
    assert res.exit_code == 2
