"""The report links each design's row and plotted point to its traces (issue 22, deliverable 4):
the links are data the caller passes (the CLI passes the trace viewer's export); here they are
checked on the synthetic store of test_report.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from masbench.report.build import write_report
from masbench.report.data import TraceLinks

from test_report import DESIGNS, RUN, build_synthetic_store


@pytest.mark.slow
def test_design_rows_and_points_link_to_their_traces(tmp_path: Path) -> None:
    store = build_synthetic_store(tmp_path / "s.duckdb")
    links = {label: f"traces/grid-{i}.html?x=<b>&y=1" for i, (label, *_rest) in enumerate(DESIGNS)}
    seen: list[str] = []

    def where(run: str) -> TraceLinks:
        seen.append(run)
        return TraceLinks(links, "traces/index.html", "start the viewer")

    res = write_report(store, tmp_path / "rep", RUN, links=where)
    assert seen == [RUN]
    page = (res.out / "index.html").read_text(encoding="utf-8")
    for i, (label, *_rest) in enumerate(DESIGNS):
        href = f"traces/grid-{i}.html?x=&lt;b&gt;&amp;y=1"  # escaped in the HTML attribute
        assert f"<a href='{href}' title='traces of this design'>{label}</a>" in page, label
    # the cost/accuracy figure is inline SVG whose design points and labels are links
    svg = page[page.index("<div class='fig'>"):]
    svg = svg[:svg.index("</svg>")]
    hrefs = re.findall(r'xlink:href="([^"]+)"', svg) or re.findall(r'href="([^"]+)"', svg)
    for i, _ in enumerate(DESIGNS):
        assert hrefs.count(f"traces/grid-{i}.html?x=&lt;b&gt;&amp;y=1") >= 2  # the point and its label
    assert "<img src='cost_accuracy.png'" not in page and "traces/index.html" in page and "start the viewer" in page


@pytest.mark.slow
def test_without_links_the_report_is_unchanged(tmp_path: Path) -> None:
    store = build_synthetic_store(tmp_path / "s.duckdb")
    page = (write_report(store, tmp_path / "rep", RUN).out / "index.html").read_text(encoding="utf-8")
    assert "<img src='cost_accuracy.png'" in page and "<svg" not in page and "traces of this design" not in page
