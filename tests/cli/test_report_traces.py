"""`masbench report --traces live|export|none` (issue 22, deliverable 4): the report's design rows
and plotted points link to the design's traces, in the live viewer or in pages exported beside it."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: simsuite

import pytest

from masbench.cli import app  # noqa: E402
from masbench.harness import RunOptions, run_suite  # noqa: E402
from simsuite import write_suite  # noqa: E402


def _run(tmp_path: Path) -> tuple[Path, str]:
    suite = write_suite(tmp_path, name="reptraces", n=3, designs="[cot, debate-tiny]", k_max=3)
    s = asyncio.run(run_suite(RunOptions(suite=str(suite))))
    return Path(s.store), s.run_id


def _hrefs(page: str) -> list[str]:
    return [h.replace("&amp;", "&") for h in re.findall(r"href='([^']+)'", page) + re.findall(r'href="([^"]+)"', page)]


@pytest.mark.slow
def test_report_links_to_the_live_viewer_and_to_exported_pages(tmp_path: Path) -> None:
    store, run = _run(tmp_path)
    runner = CliRunner()
    live = runner.invoke(app, ["report", "--store", str(store), "--out", str(tmp_path / "live"),
                               "--viewer-url", "http://127.0.0.1:9999"])
    assert live.exit_code == 0, live.output
    page = (tmp_path / "live" / "index.html").read_text(encoding="utf-8")
    grids = [urlsplit(h) for h in _hrefs(page) if h.startswith("http://127.0.0.1:9999/grid")]
    designs = {parse_qs(u.query)["design"][0] for u in grids}
    assert designs == {"cot", "debate-tiny"} and all(parse_qs(u.query)["run"] == [run] for u in grids)
    assert f"masbench view --store {store}" in page

    exp = runner.invoke(app, ["report", "--store", str(store), "--out", str(tmp_path / "exp"), "--traces", "export"])
    assert exp.exit_code == 0, exp.output
    out = tmp_path / "exp"
    page = (out / "index.html").read_text(encoding="utf-8")
    local = sorted({h for h in _hrefs(page) if h.startswith("traces/")})
    assert len(local) >= 3  # the run page and one grid per design
    for h in local:  # every link resolves to an exported page of this run's design
        assert (out / h).is_file(), h
    grid_pages = [(out / h).read_text(encoding="utf-8") for h in local if "/grid-" in h]
    assert any("debate-tiny" in g for g in grid_pages) and any("trace-" in g for g in grid_pages)

    none = runner.invoke(app, ["report", "--store", str(store), "--out", str(tmp_path / "none"), "--traces", "none"])
    assert none.exit_code == 0 and "traces of this design" not in (tmp_path / "none" / "index.html").read_text()
    bad = runner.invoke(app, ["report", "--store", str(store), "--out", str(tmp_path / "bad"), "--traces", "web"])
    assert bad.exit_code == 2 and "live, export, none" in bad.output
