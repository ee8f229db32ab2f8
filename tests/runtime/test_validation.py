"""Validation before anything runs: a corpus of malformed designs, each rejected with a named
error at its place in the file; plus the API (check_design, compile_design) on in-memory specs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from clirun import masbench

from masbench.library import Library
from masbench.runtime import compile_design, check_design
from masbench.spec import DesignSpec
from masbench.spec.problems import SpecError

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad_designs"
CASES = sorted(BAD.glob("*.yaml"))


def expected(path: Path) -> str:
    first = path.read_text().splitlines()[0]
    assert first.startswith("# expect: "), path
    return first[len("# expect: "):]


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 20


@pytest.mark.slow
@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_malformed_design_is_rejected_with_a_named_error(path: Path) -> None:
    lib = Library()
    with pytest.raises(SpecError) as ei:
        lib.load_path(path, "design")
    problems = ei.value.problems
    want = expected(path)
    assert any(want in f"{p.field}: {p.message}" for p in problems), "\n".join(map(str, problems))
    for p in problems:
        assert p.file == str(path)
        assert p.line >= 1 and p.col >= 1
    # graph problems point into the node they are about, in the YAML
    hit = next(p for p in problems if want in f"{p.field}: {p.message}")
    lines = path.read_text().splitlines()
    assert 1 <= hit.line <= len(lines)


@pytest.mark.slow
def test_masbench_validate_reports_file_line_node_message() -> None:
    # in this process (tests/clirun.py): what validate prints is tested, not the process boundary
    proc = masbench("validate", str(BAD / "cycle.yaml"), str(BAD / "python_unregistered.yaml"),
                    str(BAD / "parallel_writes.yaml"))
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert any(re.fullmatch(r".*cycle\.yaml:4:6: nodes\.a: cycle: a → b → a .*", ln) for ln in lines), lines
    assert any(re.fullmatch(r".*python_unregistered\.yaml:5:\d+: nodes\.b: unregistered python function 'os_system'.*", ln)
               for ln in lines), lines
    assert any(re.fullmatch(r".*parallel_writes\.yaml:\d+:\d+: nodes\.[ab]: parallel writes: .*", ln) for ln in lines)


@pytest.mark.slow
def test_library_validates_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the folders are named relative to the checkout
    proc = masbench("validate", "agents", "baselines", "orchestrators")
    assert proc.returncode == 0, proc.stderr


def d(nodes: dict, output: str, **kw) -> DesignSpec:
    return DesignSpec.model_validate({"name": "t", "nodes": nodes, "output": output, **kw})


def test_check_design_on_in_memory_specs() -> None:
    lib = Library()
    ok = d({"a": {"agent": "cot-solver"}, "b": {"agent": "refiner", "from": ["a"]}}, "b")
    assert check_design(ok, None, lib) == []
    bad = d({"a": {"agent": "ghost"}}, "a")
    probs = check_design(bad, None, lib)
    assert [p.message for p in probs] == ["unknown agent 'ghost' (not in this design's agents nor in any agents/ folder)"]
    assert probs[0].file == "<design t>" and probs[0].field == "nodes.a"
    with pytest.raises(SpecError, match="unknown agent 'ghost'"):
        compile_design(bad, lib)


def test_loop_back_references_are_not_cycles() -> None:
    lib = Library()
    spec = d({"draft": {"agent": "cot-solver"},
              "loop": {"loop": {"init": "draft", "until": "critic.correct", "max_rounds": 2,
                                "nodes": {"critic": {"agent": "critic", "from": ["loop", "revise"]},
                                          "revise": {"agent": "refiner", "from": ["loop", "critic"]}},
                                "output": "revise"}}}, "loop")
    assert check_design(spec, None, lib) == []


def test_parallel_writes_with_a_reducer_are_fine() -> None:
    lib = Library()
    spec = d({"a": {"agent": "cot-solver", "into": "pool"}, "b": {"agent": "cot-solver", "into": "pool"},
              "v": {"op": "majority", "from": "pool"}}, "v", reducers={"pool": "append"})
    assert check_design(spec, None, lib) == []


def test_unknown_params_are_rejected_at_compile() -> None:
    with pytest.raises(SpecError, match="unknown param 'kk'"):
        compile_design("cot-sc", Library(), {"kk": 3})


def test_design_recursion_through_another_design(tmp_path: Path) -> None:
    (tmp_path / "orchestrators").mkdir()
    (tmp_path / "orchestrators" / "a.yaml").write_text("name: rec-a\nnodes:\n  x: {design: rec-b}\noutput: x\n")
    (tmp_path / "orchestrators" / "b.yaml").write_text("name: rec-b\nnodes:\n  y: {design: rec-a}\noutput: y\n")
    lib = Library(roots=[tmp_path])
    with pytest.raises(SpecError, match="cycle of sub-designs: rec-a → rec-b → rec-a"):
        lib.load_path(tmp_path / "orchestrators" / "a.yaml")
