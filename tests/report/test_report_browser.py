"""The HTML report in a real headless Chromium (the system's `chromium` package).

Playwright rather than Selenium: it drives the system browser through ``executable_path`` with no
separate driver binary to match to the browser version, and it reports every network request,
dialog and console message as an event, which is what these checks count. One browser launch for
the module; each test opens a report written by `refgate ask --output` from a scripted run.
Skipped, with the reason in the summary, only when Chromium or Playwright is not installed
(scripts/setup.sh installs both; CI runs it).
"""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = (
    os.environ.get("REFGATE_CHROMIUM")
    or shutil.which("chromium")
    or shutil.which("chromium-browser")
)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="browser tests skipped: playwright is not installed"
)
if CHROMIUM is None:
    pytest.skip(
        "browser tests skipped: no Chromium installed (apt-get install chromium)",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


class Opened:
    """A page with every request, dialog, console message and page error recorded."""

    def __init__(self, browser, path, width: int = 1100) -> None:
        self.url = path.resolve().as_uri()
        self.page = browser.new_page(viewport={"width": width, "height": 900})
        self.page.set_default_timeout(5000)
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.console: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        self.page.goto(self.url, wait_until="load")

    @property
    def outside(self) -> list[str]:
        """Requests other than the report file itself (data: images are not requests out)."""
        return [u for u in self.requests if u != self.url and not u.startswith("data:")]


@pytest.fixture
def opened(browser):
    pages: list[Opened] = []

    def open_(path, width: int = 1100) -> Opened:
        pages.append(Opened(browser, path, width))
        return pages[-1]

    yield open_
    for o in pages:
        o.page.close()


def test_citations_lead_to_cards_and_cited_cells_are_highlighted(reports, opened):
    o = opened(reports["clean"])
    page = o.page
    links = page.eval_on_selector_all("#answer a.cite", "els => els.map(e => e.hash)")
    assert len(links) >= 4
    for target in dict.fromkeys(links):
        assert page.locator(target).count() == 1, f"{target} has no evidence card"
    page.locator("#answer a.cite").last.click()
    target = links[-1]
    assert page.evaluate("location.hash") == target
    box = page.locator(target).bounding_box()
    # at the top of the viewport, to a subpixel
    assert box is not None and -1 < box["y"] < 900, "the card is scrolled into view"
    cells = page.eval_on_selector_all(
        "table.data td.cited",
        "els => els.map(e => [e.textContent, getComputedStyle(e).backgroundColor])",
    )
    plain = page.eval_on_selector(
        "table.data td:not(.cited)", "e => getComputedStyle(e).backgroundColor"
    )
    assert sorted(text for text, _ in cells) == ["6.0", "9.6"]
    assert all(color != plain for _, color in cells), "cited cells look different"


def test_charts_load_and_nothing_leaves_the_file(reports, opened):
    o = opened(reports["clean"])
    sizes = o.page.eval_on_selector_all(
        "#charts img", "els => els.map(e => [e.complete, e.naturalWidth, e.naturalHeight])"
    )
    assert sizes and all(done and w > 100 and h > 100 for done, w, h in sizes)
    o.page.locator("#card-filter").fill("tableRef")  # the small script works under the CSP
    hidden = o.page.eval_on_selector_all("article.card.filtered", "els => els.length")
    assert hidden >= 1
    assert o.outside == [] and o.console == []


def test_the_injected_document_report_runs_no_script(reports, opened):
    o = opened(reports["hostile"])
    page = o.page
    for link in page.locator("a").all()[:60]:  # click what a reader might click, in-page only
        href = link.get_attribute("href") or ""
        if href.startswith("#"):
            link.click()
    page.mouse.move(200, 300)
    assert o.dialogs == [] and o.console == []
    assert page.title() == "refgate: What was the US unemployment rate in 2009Q3 versus 2008Q3?"
    assert o.outside == []
    assert page.evaluate("getComputedStyle(document.body).display") != "none"
    assert page.locator("#not-verified li").count() >= 1
    shown = page.locator("#answer").inner_text()
    assert "<script>alert('doc')</script>" in shown, "the payload is shown as text"


def test_readable_at_375_px_without_horizontal_scroll(reports, opened):
    for key in ("clean", "hostile"):
        o = opened(reports[key], width=375)
        widths = o.page.evaluate(
            """() => { const a = document.getElementById('answer');
                 return [a.scrollWidth, a.clientWidth, document.documentElement.scrollWidth]; }"""
        )
        assert widths[0] <= widths[1], f"{key}: the answer scrolls sideways {widths}"
        assert widths[2] <= 375, f"{key}: the page is wider than the screen {widths}"


def test_the_research_report_runs_no_script_and_fits_375_px(tmp_path, opened):
    from refgate.report import render_research_html
    from tests.support.report_runs import hostile_research_report

    path = tmp_path / "research.html"
    path.write_text(render_research_html(hostile_research_report()), encoding="utf-8")
    o = opened(path, width=375)
    page = o.page
    assert page.locator("#verified article.card").count() == 1
    assert "3 support, 0 refute, 0 uncertain" in page.locator("#verified").inner_text()
    assert page.locator("#sources a.url").first.get_attribute("href").startswith("https://")
    assert page.locator("#verified a.url").count() == 0  # its URL holds <x>: shown, not linked
    assert o.dialogs == [] and o.console == [] and o.outside == []
    assert page.title().startswith("refgate research: Aurora <script>")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375


def test_readable_without_javascript(browser, reports):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.set_default_timeout(5000)
        page.goto(reports["clean"].resolve().as_uri())
        assert page.locator("#card-filter").is_hidden(), "script-only controls stay hidden"
        link = page.locator("#answer a.cite").first
        target = link.get_attribute("href")
        link.click()
        assert page.evaluate("location.hash") == target
        assert page.locator(target).is_visible()
        assert page.locator("#charts img").first.evaluate("e => e.naturalWidth") > 100
        details = page.locator("details.code").first
        assert not details.evaluate("e => e.open")
        details.locator("summary").click()
        assert "emit_result" in details.inner_text()
    finally:
        context.close()
