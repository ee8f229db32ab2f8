"""The HTML report says what the terminal says (issue 23, item 8), checked in a real headless
Chromium on a quickstart-shaped SIMULATED run (tasks/quickstart.yaml's two levels — bare
arithmetic without an axis value, one-step word problems at depth 1 —, designs, CoT-SC curve and
budget on a simulated model of 60% per call whose short replies fit the agents' caps, 8 tasks per
level): one section per task group with its figure, table and exactly the verdict lines
``masbench compare --axis AXIS`` prints for that group; the pooled view labelled as pooled, with
the lines of ``masbench compare``; every task group and design drawn in the accuracy-by-group
figure (its SVG names what it draws). Screenshots land in runs/artifacts/report/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from chromium import browser  # noqa: F401 - fixture
from masbench.cli import app

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "tasks" / "quickstart.yaml"
ARTIFACTS = ROOT / "runs" / "artifacts" / "report"
DESIGNS = {"cot", "expression-calculator", "debate-tiny"}
GROUPS = {"arithmetic": "arithmetic", "depth-1": "depth = 1"}  # section id → title, as `compare` titles its tables


pytestmark = pytest.mark.slow  # headless chromium and a simulated suite run

def _cli(args: list[str]) -> str:
    res = CliRunner().invoke(app, args, env={"COLUMNS": "300"})
    assert res.exit_code == 0, res.output
    return res.output


@pytest.fixture(scope="module")  # requested before `browser`: the run's asyncio loop cannot start inside Playwright's
def quick(tmp_path_factory) -> tuple[Path, Path]:
    """(store, report folder) of a SIMULATED quickstart run."""
    tmp = tmp_path_factory.mktemp("quick")
    store, out = tmp / "q.duckdb", tmp / "report"
    # the quickstart's tasks, designs, curve and budget; its model a simulator whose replies fit the
    # agents' short caps (a bare sim/ profile writes ~150 tokens: every capped reply would lose its answer)
    suite = yaml.safe_load(QUICKSTART.read_text(encoding="utf-8"))
    suite["models"] = {"default": {"id": "sim/quick", "sim": {"accuracy": {"default": 0.6},
                                                              "completion_tokens": {"mean": 12, "sd": 2}}}}
    (tmp / "tasks").mkdir()
    path = tmp / "tasks" / "quickstart.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    _cli(["run", str(path), "--limit", "8", "--store", str(store)])
    _cli(["report", "--store", str(store), "--out", str(out), "--traces", "none"])
    return store, out


def _verdict_lines(output: str) -> list[str]:
    """The verdict lines of ``masbench compare`` (one per design: the quickstart's cot is cot-tiny, no baseline)."""
    return [line.strip() for line in output.splitlines() if re.match(r"^(cot|expression-calculator|debate-tiny): ", line)]


def test_report_sections_carry_the_terminals_verdicts_per_task_group(quick, browser) -> None:  # noqa: F811
    store, out = quick
    terminal = {"arithmetic": _verdict_lines(_cli(["compare", "--store", str(store), "--axis", "arithmetic"])),
                "depth-1": _verdict_lines(_cli(["compare", "--store", str(store), "--axis", "depth"])),
                "pooled": _verdict_lines(_cli(["compare", "--store", str(store)]))}
    assert all(len(v) == 3 for v in terminal.values()), terminal  # cot is cot-tiny: not a baseline
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto((out / "index.html").as_uri())
    assert "SIMULATED (sim/ models)" in page.locator(".banner").inner_text()
    ids = page.locator("section.group").evaluate_all("els => els.map(e => e.id)")
    assert ids == ["arithmetic", "depth-1", "pooled"]  # the groups, then all tasks pooled
    for key, title in GROUPS.items():
        sec = page.locator(f"section#{key}")
        assert sec.locator("h3").inner_text() == title
        assert set(sec.locator("table.mu tbody tr td:first-child").all_inner_texts()) == DESIGNS
        assert sec.locator("ul.verdicts li").all_inner_texts() == terminal[key], key
    pooled = page.locator("section#pooled")
    assert pooled.locator("h2").inner_text() == "All tasks, pooled over the 2 task groups"
    assert pooled.locator("ul.verdicts li").all_inner_texts() == terminal["pooled"]
    # every figure on the page is there and decoded: the groups' and the pooled cost/accuracy, by group
    imgs = page.locator("img").evaluate_all("els => els.map(e => [e.getAttribute('src'), e.naturalWidth])")
    assert sorted(src for src, _w in imgs) == ["accuracy_by_axis.png", "cost_accuracy.png",
                                               "cost_accuracy_arithmetic.png", "cost_accuracy_depth-1.png"]
    assert all(w > 300 for _src, w in imgs), imgs
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
    page.close()


def test_accuracy_figure_draws_every_task_group(quick, browser) -> None:  # noqa: F811
    """Bare arithmetic has no axis value: it is drawn all the same, in its own panel, with every
    design and the CoT / CoT-SC@4 references, as is depth = 1."""
    _store, out = quick
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto((out / "accuracy_by_axis.svg").as_uri())
    ids = set(page.locator("[id]").evaluate_all("els => els.map(e => e.id)"))
    for axis in ("arithmetic", "depth"):
        assert f"panel|{axis}" in ids
        assert {f"accuracy|{axis}|{d}" for d in DESIGNS} <= ids, (axis, sorted(ids))
        assert {f"reference|{axis}|CoT", f"reference|{axis}|CoT-SC@4"} <= ids
    # each drawn design point is a visible mark inside its panel
    box = page.locator("[id='accuracy|arithmetic|expression-calculator']").bounding_box()
    panel = page.locator("[id='panel|arithmetic']").bounding_box()
    assert box and panel and panel["x"] <= box["x"] <= panel["x"] + panel["width"]
    page.screenshot(path=str(ARTIFACTS / "accuracy_by_axis.png"))
    page.close()
