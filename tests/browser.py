"""Headless Chromium from the distribution's packages, driven by Playwright (never a downloaded browser).

Outside CI a machine without /usr/bin/chromium skips the browser tests; in CI (.ci/run installs the
package first) a missing browser fails them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# as the machine's notes say: without the background-networking flags Chromium keeps dialling out
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions"]
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
# Playwright waits 30 s for a page or an element by default; a large report on a machine whose two cores
# are busy with the rest of the suite has been seen to need longer, so the tests wait up to two minutes.
LOADED_MS = 120_000


def require_chromium() -> None:
    if not Path(CHROMIUM).is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} missing: .ci/run installs the chromium package before the tests")
        pytest.skip("no chromium here (apt-get install -y chromium)")


@contextmanager
def browser_page(width: int = 1280, height: int = 900) -> Iterator[tuple[object, list[str]]]:
    """(page, errors): a fresh page, and every console error or uncaught exception it reports."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": width, "height": height}, offline=True)
            context.set_default_timeout(LOADED_MS)
            page = context.new_page()
            errors: list[str] = []
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("request", lambda request: errors.append(f"request {request.url}")
                    if not request.url.startswith(("file:", "data:", "about:")) else None)
            yield page, errors
        finally:
            browser.close()
