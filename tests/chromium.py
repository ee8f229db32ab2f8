"""The headless browser of the browser tests: Debian's /usr/bin/chromium driven by Playwright
(``executable_path``: Playwright never downloads a browser of its own). Missing Chromium or
Playwright FAILS the test using :func:`browser`, with what to install: a browser test that skips
proves nothing. Importable by any test (pytest puts tests/ on the path for its conftest)."""

from __future__ import annotations

from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium for the module's tests."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - the environment is broken, say how to fix it
        pytest.fail("playwright is not installed: pip install 'playwright>=1.45' (the test extra); the browser is "
                    "Debian's chromium (apt-get install chromium), no `playwright install` needed", pytrace=False)
    if not CHROMIUM.exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install chromium (scripts/setup_browser.sh)", pytrace=False)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        yield b
        b.close()
