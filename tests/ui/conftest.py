"""The app served on loopback with the scripted model (``benchmarks/ui_workbench.py``'s run), and
one Chromium for the browser tests; screenshots go to ``REFGATE_UI_ARTIFACTS`` (default: a temp
folder the test prints)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from ui_workbench import BROWSER_ARGS, served


@pytest.fixture(scope="package")
def app(tmp_path_factory):
    with served(tmp_path_factory.mktemp("ui")) as running:
        yield running


@pytest.fixture(scope="package")
def artifacts(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("REFGATE_UI_ARTIFACTS") or tmp_path_factory.mktemp("ui-shots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


CHROMIUM = (
    os.environ.get("REFGATE_CHROMIUM")
    or shutil.which("chromium")
    or shutil.which("chromium-browser")
)


@pytest.fixture(scope="package")
def browser():
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="browser tests skipped: playwright is not installed"
    )
    if CHROMIUM is None:
        pytest.skip("browser tests skipped: no Chromium installed (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        yield b
        b.close()


class Watched:
    """A page of the app with its dialogs, console errors and requests recorded."""

    def __init__(self, browser, app) -> None:
        self.context = browser.new_context(viewport={"width": 1400, "height": 950},
                                           accept_downloads=True)  # fmt: skip
        self.page = self.context.new_page()
        self.page.set_default_timeout(30000)
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(app.login)


@pytest.fixture
def watched(browser, app):
    pages: list[Watched] = []

    def open_() -> Watched:
        pages.append(Watched(browser, app))
        return pages[-1]

    yield open_
    for w in pages:
        w.context.close()
