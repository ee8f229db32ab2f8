"""The A-vs-B grid (``/versus``): two designs of one run and one design in two runs (one suite on two
sim models, in one store), through the real app (Starlette's TestClient) and in a headless Chromium:
its counts are the discordant cells worked out here from the raw rows, every listed cell links both
traces and the side-by-side page (of two runs too), what does not pair is reported, hostile answers
are escaped, and bad addresses are 404s that say why. The browser test leaves a screenshot in
runs/artifacts/view/ab_grid.png (and /work/helpers/ab_grid.png when that folder exists)."""

from __future__ import annotations

import asyncio
import html
import re
import shutil
from pathlib import Path
from urllib.parse import urlencode

import duckdb
import pytest
from starlette.testclient import TestClient

from masbench.harness import RunOptions, run_suite
from masbench.view import create_app
from chromium import browser  # noqa: F401 - fixture
from simsuite import write_suite
from viewrun import ARTIFACTS, HOSTILE

pytestmark = pytest.mark.slow  # simulated suite runs (and a browser)

DESIGNS = "[cot, {design: cot-sc, params: {k: 3}}]"
SC = "cot-sc[k=3]"
HELPERS = Path("/work/helpers")


def _page_text(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page))


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> tuple[Path, str, str, str]:
    """(store, weak run, strong run, the task left out of the strong run): one suite on sim/p40 then
    on sim/p90 into one store; the strong run loses one task (both seeds); one weak cot answer is hostile."""
    tmp = tmp_path_factory.mktemp("versus")
    ids = []
    for model in ("sim/p40", "sim/p90"):
        suite = write_suite(tmp, name="ab", model=model, n=6, designs=DESIGNS, seeds="[0, 1]", k_max=3)
        s = asyncio.run(run_suite(RunOptions(suite=str(suite))))
        assert s.failed == 0
        ids.append(s.run_id)
    store = Path(s.store)
    con = duckdb.connect(str(store))
    try:
        gone = con.execute("SELECT min(task_id) FROM results WHERE run_id = ?", [ids[1]]).fetchall()[0][0]
        con.execute("DELETE FROM results WHERE run_id = ? AND task_id = ?", [ids[1], gone])
        task, seed = _a_right_b_wrong(store, con, ids[0], "cot", ids[0], SC)[0]  # a cell the A-right list shows
        con.execute("UPDATE results SET answer = ? WHERE run_id = ? AND design = 'cot' AND task_id = ? AND seed = ?",
                    [HOSTILE, ids[0], task, seed])
    finally:
        con.close()
    return store, ids[0], ids[1], gone


def _a_right_b_wrong(store: Path, con, run_a: str, a: str, run_b: str, b: str) -> list[tuple[str, int]]:
    """(task, seed) cells where A is right and B wrong (a failed cell is wrong), from the raw rows."""
    return sorted(con.execute("""
        SELECT x.task_id, x.seed FROM results x JOIN results y ON x.task_id = y.task_id AND x.seed = y.seed
        WHERE x.run_id = ? AND x.design = ? AND y.run_id = ? AND y.design = ?
          AND coalesce(x.correct, false) AND NOT coalesce(y.correct, false)""", [run_a, a, run_b, b]).fetchall())


def expected(store: Path, run_a: str, a: str, run_b: str, b: str) -> tuple[list, list]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        return _a_right_b_wrong(store, con, run_a, a, run_b, b), _a_right_b_wrong(store, con, run_b, b, run_a, a)
    finally:
        con.close()


@pytest.fixture(scope="module")
def client(two_runs):
    return TestClient(create_app(two_runs[0]))


def _q(kind: str, **p) -> str:
    return f"/{kind}?{urlencode({k: v for k, v in p.items() if v is not None})}"


def _counts(page: str) -> dict[str, int]:
    return {k: int(v) for k, v in re.findall(r'data-count="([a-z-]+)">(?:<a [^>]*>)?(\d+)', page)}


def _rows(page: str) -> list[tuple[str, int]]:
    return [(t, int(s)) for t, s in re.findall(r'<tr><td>([^<]+)</td><td class="n">(\d+)</td>', page)]


def test_two_designs_of_one_run_list_exactly_their_discordant_cells(client, two_runs):
    store, weak, _, _ = two_runs
    a_wins, b_wins = expected(store, weak, "cot", weak, SC)
    assert a_wins and b_wins  # the fixture has discordant cells both ways
    for side, want in (("a", a_wins), ("b", b_wins)):
        r = client.get(_q("versus", run=weak, a="cot", b=SC, side=side))
        assert r.status_code == 200
        counts = _counts(r.text)
        assert (counts["a"], counts["b"], counts["matched"]) == (len(a_wins), len(b_wins), 24)
        assert _rows(r.text) == want
        for t, s in want:  # both traces and the side-by-side page of every listed cell
            for kind, extra in (("trace", dict(design="cot")), ("trace", dict(design=SC)),
                                ("compare", dict(a="cot", b=SC))):
                assert html.escape(_q(kind, run=weak, **extra, task=t, seed=s)) in r.text
    assert "Holm" not in r.text and " vs A " in _page_text(r.text)  # the paired test, in compare's words


def test_one_design_in_two_runs_reports_the_task_left_out(client, two_runs):
    store, weak, strong, gone = two_runs
    a_wins, b_wins = expected(store, weak, "cot", strong, "cot")
    r = client.get(_q("versus", run=weak, a="cot", b="cot", run_b=strong, side="b"))
    assert r.status_code == 200
    counts = _counts(r.text)
    assert (counts["a"], counts["b"], counts["matched"]) == (len(a_wins), len(b_wins), 22)
    assert _rows(r.text) == b_wins and b_wins
    assert f"left out: 2 cell(s) of 1 task(s) only in A: {gone}" in _page_text(r.text)
    t, s = b_wins[0]
    side = _q("compare", run=weak, a="cot", b="cot", task=t, seed=s, run_b=strong)
    assert html.escape(side) in r.text and html.escape(_q("trace", run=strong, design="cot", task=t, seed=s)) in r.text
    page = client.get(side)
    assert page.status_code == 200 and weak in page.text and strong in page.text
    assert page.text.count('class="call" id="call-') == 2  # one cot call per side
    # the run's overview links the pairs of its designs, and (live) the same design in the other run
    ov = client.get(_q("run", run=strong)).text
    assert html.escape(_q("versus", run=strong, a="cot", b=SC, side="a", page=1)) in ov
    assert html.escape(_q("versus", run=weak, a="cot", b="cot", run_b=strong, side="a", page=1)) in ov


def test_hostile_answers_are_escaped_and_bad_addresses_say_why(client, two_runs):
    _, weak, strong, _ = two_runs
    r = client.get(_q("versus", run=weak, a="cot", b=SC, side="a"))
    assert "<script" not in r.text and "<img" not in r.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text
    r = client.get(_q("versus", run=weak, a="cot", b="debate", side="a"))
    assert r.status_code == 404 and "has no design" in r.text
    assert client.get(_q("versus", run=weak, a="cot", b=SC, side="x")).status_code == 404
    assert client.get(_q("versus", run=weak, a="cot", b=SC, side="a", page=9)).status_code == 404
    assert client.get(_q("versus", run="nope", a="cot", b=SC)).status_code == 404


@pytest.fixture(scope="module")
def server(two_runs):
    import socket
    import threading
    import time

    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(create_app(two_runs[0]), host="127.0.0.1", port=port, log_level="warning"))
    t = threading.Thread(target=srv.run, daemon=True)
    t.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        assert time.monotonic() < deadline, "the viewer did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    t.join(10)


def test_the_ab_grid_in_a_headless_browser(two_runs, server, browser):  # noqa: F811 - fixture (the runs first:
    # Playwright's sync API holds an event loop the suite runs could not start under)
    store, weak, strong, _ = two_runs
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.goto(f"{server}/run?run={strong}")
    page.get_by_role("link", name=f"cot: {weak} ⇆ this run").click()  # the same design in the other run
    page.wait_for_load_state()
    a_wins, b_wins = expected(store, weak, "cot", strong, "cot")
    assert page.locator("h1").inner_text() == "A vs B: A right, B wrong"
    assert page.locator("td[data-count='a']").inner_text() == str(len(a_wins))
    assert page.locator("td[data-count='b']").inner_text() == str(len(b_wins))
    page.locator("td[data-count='b'] a").click()  # the reverse list
    page.wait_for_load_state()
    assert page.locator("h1").inner_text() == "A vs B: B right, A wrong"
    rows = page.locator("table.versus tbody tr")
    assert rows.count() == len(b_wins)
    assert [tuple(rows.nth(i).locator("td").all_inner_texts()[:2]) for i in range(rows.count())] == \
        [(t, str(s)) for t, s in b_wins]
    assert page.locator("p.unmatched").count() == 1 and "only in A" in page.locator("p.unmatched").inner_text()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "ab_grid.png"
    page.screenshot(path=str(shot), full_page=True)
    if HELPERS.is_dir():
        shutil.copy(shot, HELPERS / "ab_grid.png")
    rows.first.get_by_role("link", name="side by side").click()
    page.wait_for_load_state()
    h1 = page.locator("h1").inner_text()
    assert h1.startswith(f"cot ({weak}) ⇆ cot ({strong}) on {b_wins[0][0]}")
    assert page.locator("div.side h2").all_inner_texts() == [f"cot · {weak}", f"cot · {strong}"]
    page.close()
