"""The viewer in a real headless Chromium (Debian's /usr/bin/chromium driven by Playwright):
from the runs list to the run, to a discordant-task filter, to a wrong answer's trace, where a
debater's message text and the call's token counts must be on the page as the store has them; then
the same clicks through the static export opened from file://. Screenshots land in
runs/artifacts/view/ (look at them). Missing Chromium or Playwright FAILS the test, with what to
install: a browser test that skips proves nothing."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from masbench.cli import app as cli_app
from masbench.view import create_app
from chromium import browser  # noqa: F401 - fixture
from viewrun import ARTIFACTS, debater_call, view_run  # noqa: F401 - fixture

pytestmark = pytest.mark.slow  # headless chromium

TOKEN_KEYS = ("prompt_tokens", "completion_tokens", "prompt_fresh_tokens", "cached_tokens", "cache_write_tokens",
              "completion_visible_tokens", "reasoning_tokens")


@pytest.fixture(scope="module")
def server(view_run):
    import uvicorn

    store, _ = view_run
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(create_app(store), host="127.0.0.1", port=port, log_level="warning"))
    t = threading.Thread(target=srv.run, daemon=True)
    t.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        assert time.monotonic() < deadline, "the viewer did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/"
    srv.should_exit = True
    t.join(10)


def _walk_to_a_wrong_debate_trace(page, run: str) -> None:
    """Runs list → run → the debate's 'wrong where CoT-SC is right' tasks → a wrong cell's trace."""
    page.get_by_role("link", name=run).click()
    page.wait_for_load_state()
    assert page.locator("h1").first.inner_text().startswith("viewsim")
    page.locator("li", has_text="debate-tiny").get_by_role("link", name="wrong where CoT-SC is right").click()
    page.wait_for_load_state()
    assert "design wrong, CoT-SC right" in page.locator("h1").inner_text()
    assert "rounded to the nearest stored k" in page.locator("p.rule").inner_text()
    cell = page.locator("td.cell.hit.bad a").first  # a wrong (highlighted) debate-tiny cell
    cell.click()
    page.wait_for_load_state()
    assert page.locator("h1").inner_text().startswith("debate-tiny")


def _check_trace(page, store: Path, run: str) -> None:
    h1 = page.locator("h1").inner_text()
    task = h1.split(" on ", 1)[1].split(" · seed")[0].strip()
    seed = int(h1.rsplit("seed", 1)[1])
    call = debater_call(store, run, "debate-tiny", task, seed)
    first = page.locator("div.call").first
    text = first.inner_text()
    assert call["reply"] in text and call["inputs"][-1] in text  # the debater's messages, as stored
    cells = first.locator("tr.tokens td.n").all_inner_texts()
    assert cells[:7] == [str(call[k]) for k in TOKEN_KEYS], cells
    assert page.locator("svg[aria-label='design graph'] g.node").count() >= 3  # question, debaters, decider, answer
    assert page.get_by_text("Vote tally").is_visible()


def test_live_viewer_click_path(browser, server, view_run):
    store, run = view_run
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(server)
    _walk_to_a_wrong_debate_trace(page, run)
    _check_trace(page, store, run)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "trace.png"), full_page=False)
    page.go_back()
    page.screenshot(path=str(ARTIFACTS / "grid.png"))
    page.close()


def test_exported_pages_click_path(browser, view_run, tmp_path):
    store, run = view_run
    site = tmp_path / "site"
    res = CliRunner().invoke(cli_app, ["view", "--store", str(store), "--export", str(site)])
    assert res.exit_code == 0, res.output
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto((site / "index.html").as_uri())
    _walk_to_a_wrong_debate_trace(page, run)
    assert page.url.startswith("file://")
    _check_trace(page, store, run)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "trace_static.png"))
    shutil.copytree(site, ARTIFACTS / "site", dirs_exist_ok=True)
    page.close()
