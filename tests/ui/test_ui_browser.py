"""refgate ui in a real Chromium, end to end with the scripted model on examples/us-macro.

Five browser tests (about 45 s together on an idle machine): the analyst's path (ask in
Korean, the passes arrive, a number opens its highlighted cell with the GATE's verdict, a
document citation its highlighted page, a blocked claim with its reason, hostile document text
inert, what was withheld and sent, a follow-up, the PDF download); stop and resume; keyboard
only, with axe-core when scripts/setup.sh fetched it; a deep-research run; a number opening
the ref the GATE bound it to rather than the next citation. Each step saves a
screenshot (``artifacts``).
"""

from __future__ import annotations

from pathlib import Path

from ui_workbench import FIRST_QUESTION, FOLLOW_UP, QUOTE, SLOW_WORD, wait_js

REPO = Path(__file__).resolve().parents[2]
AXE = REPO / ".cache" / "axe-core" / "axe.min.js"
PASSES = ["brief", "work", "critique", "compose", "gate", "harvest"]


def ready(page) -> None:
    wait_js(page, "document.getElementById('ws-info').textContent.includes('macro')")


def ask(page, question: str) -> None:
    page.fill("#question-input", question)
    page.focus("#question-input")
    page.keyboard.press("Enter")


def shown_fonts(page, selector: str) -> list[str]:
    """The fonts Chromium actually drew ``selector``'s text with (DevTools protocol)."""
    cdp = page.context.new_cdp_session(page)
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    cdp.send("CSS.enable")
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    return [f["familyName"] for f in fonts]


def test_ask_watch_the_passes_and_open_the_evidence(watched, app, artifacts):
    w = watched()
    page = w.page
    ready(page)
    ask(page, FIRST_QUESTION)
    page.wait_for_selector("#passes li[data-pass='brief']")
    page.screenshot(path=artifacts / "01-passes-arrive.png")
    page.wait_for_selector("#thread-body #answer", timeout=60000)

    # the passes, in order, with WORK's tool calls, the GATE's verdict and the retry
    seen = page.eval_on_selector_all(
        "#passes > li[data-pass]", "els => els.map(e => e.dataset.pass)"
    )
    assert [p for p in seen if p in PASSES][:6] == PASSES[:5] + ["work"], seen
    assert seen[-1] == "harvest"
    tools = page.inner_text("#passes li[data-pass='work'] ul")
    assert "RunPython · ok" in tools and "WebSearch" in tools
    assert "blocked:" in page.inner_text("#passes li[data-pass='gate'] ul")
    assert "tokens" in page.inner_text("#meter") and page.inner_text("#m-tokens") != "0 tokens"
    # the streamed answer arrived piece by piece before the rendered one
    assert "9.6 percent" in page.inner_text("#stream")

    # Korean text is drawn with a Korean font
    assert page.inner_text("#question") == FIRST_QUESTION
    assert any("Nanum" in f for f in shown_fonts(page, "#question")), shown_fonts(page, "#question")
    page.screenshot(path=artifacts / "02-answer.png", full_page=True)

    # a number opens its evidence: the table cell it came from, highlighted, in words
    page.click("#answer a.num:text-is('6.0')")
    panel = page.locator("#evidence-panel")
    panel.wait_for(state="visible")
    assert page.inner_text("#evidence-body td.cited.clicked") == "6.0"
    facts = page.inner_text("#evidence-body .cell-facts")
    lines = [line for line in facts.splitlines() if line.strip()]
    assert lines[1].startswith("6.0 · unemp (percent) · row 2008Q3"), facts
    # ... with the GATE's verdict on each claim citing it: the 6.0 verified, the 12.5 blocked
    gate = page.inner_text("#evidence-body .gate-checks")
    assert "verified “6.0 percent”" in gate and "row 2 [unemp]" in gate, gate
    assert "blocked “12.5 percent”" in gate, gate
    page.screenshot(path=artifacts / "03-number-to-cell.png")
    assert "RunPython" in page.inner_text("#evidence-body details.code")

    # a document citation opens the PDF page with the quoted sentence highlighted
    page.locator("#answer a.cite[title^='doc_']").first.click()
    page.wait_for_selector("#evidence-body figcaption[data-found='yes']")
    assert wait_js(page, "document.querySelector('#evidence-body .pagebox img').naturalWidth > 0")
    boxes = page.locator("#evidence-body .pagebox .hl")
    assert boxes.count() >= 1
    box = boxes.first.bounding_box()
    img = page.locator("#evidence-body .pagebox img").bounding_box()
    # the sentence is the page's second line: near the top, inside the image
    assert img["y"] < box["y"] < img["y"] + img["height"] * 0.3, (box, img)
    assert "page 2 of 2" in page.inner_text("#evidence-body figcaption")
    assert QUOTE in page.inner_text("#evidence-body .excerpt")
    page.screenshot(path=artifacts / "04-citation-to-page.png")

    # the web page card says what was fetched and when
    page.locator("#answer a.cite[title^='web_']").first.click()
    web = page.inner_text("#evidence-body .web-facts")
    assert "federalreserve.gov" in web and "page_fetch" in web

    # a blocked claim stays in place, struck through, with its reason in plain words
    struck = page.locator("#answer s").first
    assert "12.5 percent in 2009Q4" in struck.inner_text()
    reason = page.locator("#answer s + em").first.inner_text()
    assert "12.5 percent is not in the cited refs" in reason
    # the hostile document's claim is blocked too: its source was withheld
    assert "withheld as an injection" in page.locator("#answer s + em").nth(1).inner_text()
    struck.scroll_into_view_if_needed()
    page.screenshot(path=artifacts / "05-blocked-claim.png")

    # hostile document text is shown as text and nothing in it ran
    body = page.inner_text("#thread-body")
    assert "<script>window.__pwned='script'</script>" in body
    assert page.evaluate("window.__pwned") is None
    assert (
        page.locator("#thread-body script, #thread-body img[onerror], #thread-body iframe").count()
        == 0
    )
    assert page.locator("#thread-body a[href^='javascript']").count() == 0
    assert w.dialogs == []
    # withheld and sent-off-the-machine are on the page, not hidden in a trace
    withheld = page.inner_text("#extra-facts")
    assert "WebSearch" in withheld and "withheld after an injection signal" in withheld, withheld
    assert "Sent off the machine" in body
    assert "fomc statement september 2009" in body

    # a follow-up on the same thread
    thread = page.evaluate(
        "document.querySelector('#thread-list button[aria-current=true]').dataset.thread"
    )
    ask(page, FOLLOW_UP)
    page.wait_for_selector("#thread-body #conversation", timeout=60000)
    assert "4.9 percent" in page.inner_text("#thread-body #answer")
    assert FIRST_QUESTION in page.inner_text("#thread-body #conversation")
    page.screenshot(path=artifacts / "06-follow-up.png", full_page=True)
    rows = page.eval_on_selector_all("#thread-list button", "els => els.map(e => e.dataset.thread)")
    assert rows.count(thread) == 1

    # the thread's report as a PDF
    with page.expect_download() as got:
        page.click("#dl-pdf")
    pdf = Path(got.value.path()).read_bytes()
    assert pdf.startswith(b"%PDF") and len(pdf) > 2000

    origin = app.url
    assert all(u.startswith(origin) or u.startswith("data:") for u in w.requests), w.requests
    assert w.errors == [], w.errors


def test_stop_a_run_and_resume_it(watched, app, artifacts):
    w = watched()
    page = w.page
    ready(page)
    page.click("#new-thread")
    ask(page, f"What was US unemployment in 2009Q3? Answer {SLOW_WORD}.")
    page.wait_for_selector("#passes li[data-pass='brief']")
    page.click("#stop-btn")
    page.wait_for_selector("#resume-btn:not([hidden])", timeout=30000)
    assert "Stopped" in page.inner_text("#status")
    assert page.locator("#thread-body #answer").count() == 0
    page.screenshot(path=artifacts / "07-stopped.png")
    # the stopped thread is listed as unfinished
    assert "unfinished" in page.inner_text("#thread-list")

    page.click("#resume-btn")
    page.wait_for_selector("#thread-body #answer", timeout=60000)
    assert "resuming" in page.inner_text("#passes")
    assert "9.6 percent" in page.inner_text("#thread-body #answer")
    page.screenshot(path=artifacts / "08-resumed.png")
    assert w.errors == [] and w.dialogs == []


def accessible_name_gaps(page) -> list[str]:
    """Focusable controls without an accessible name (label, aria-label, text, alt, title)."""
    return page.evaluate(
        """() => [...document.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex]')]
          .filter(e => !e.closest('[hidden]') && e.offsetParent !== null)
          .filter(e => {
            const byLabel = e.id && document.querySelector(`label[for="${e.id}"]`);
            const labelled = e.getAttribute('aria-labelledby');
            const name = (e.getAttribute('aria-label') || (byLabel && byLabel.textContent) ||
              (labelled && document.getElementById(labelled)?.textContent) ||
              e.textContent || e.getAttribute('alt') || e.getAttribute('title') || '').trim();
            return !name;
          }).map(e => e.outerHTML.slice(0, 120))"""
    )


def tab_until(page, selector: str, limit: int = 150) -> list[str]:
    """Press Tab until the focused element matches ``selector``; the ids (or classes) passed."""
    passed = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        passed.append(
            page.evaluate("document.activeElement.id || document.activeElement.className")
        )
        if page.evaluate(f"document.activeElement.matches({selector!r})"):
            return passed
    raise AssertionError(f"Tab never reached {selector}: {passed}")


def test_keyboard_only_and_labelled_controls(watched, app, artifacts):
    w = watched()
    page = w.page
    ready(page)
    # open a thread (one the tests before finished) with Tab and Enter only
    passed = tab_until(page, "#thread-list button")
    assert passed[:2] == ["skip", "ws-select"] and "new-thread" in passed, passed
    page.keyboard.press("Enter")
    page.wait_for_selector("#thread-body #answer")
    # on to a number or citation of the answer; Enter opens its evidence, Escape closes it
    tab_until(page, "#answer a.cite, #answer a.num")
    page.keyboard.press("Enter")
    page.locator("#evidence-panel").wait_for(state="visible")
    assert page.evaluate("document.activeElement.id") == "evidence-panel"
    page.screenshot(path=artifacts / "09-keyboard.png")
    page.keyboard.press("Escape")
    page.locator("#evidence-panel").wait_for(state="hidden")
    # focus is back on the citation that opened it
    assert page.evaluate("document.activeElement.matches('#answer a.cite, #answer a.num')")
    # and on to the question box, the buttons and the downloads
    tab_until(page, "#question-input")
    assert tab_until(page, "#ask-btn") == ["research-mode", "ask-btn"]
    tab_until(page, "#dl-pdf")

    assert accessible_name_gaps(page) == []
    if AXE.is_file():  # fetched by scripts/setup.sh; evaluated through DevTools, not a <script>
        result = page.evaluate(
            AXE.read_text(encoding="utf-8") + ";axe.run(document, {runOnly: ['wcag2a', 'wcag2aa'],"
            " rules: {'color-contrast': {enabled: false}}})"
            ".then(r => r.violations.map(v => v.id + ': ' + v.nodes.length))"
        )
        assert result == [], result


def test_deep_research_runs_in_the_same_app(watched, app, artifacts):
    from tests.support.serving import research_responder

    app.responder.research = research_responder
    try:
        w = watched()
        page = w.page
        ready(page)
        page.click("#new-thread")
        page.check("#research-mode")
        ask(page, "What did the FOMC say about inflation pressures?")
        page.wait_for_selector("#passes li[data-step='scope']")
        page.wait_for_selector("#thread-body #summary", timeout=60000)
        steps = page.eval_on_selector_all(
            "#passes li[data-step]", "els => els.map(e => e.dataset.step)"
        )
        assert {"scope", "search", "fetch", "report"} <= set(steps), steps
        assert "angles:" in page.inner_text("#passes")
        assert "status:" in page.inner_text("#thread-body #verdict")
        page.screenshot(path=artifacts / "10-research.png", full_page=True)
        assert w.errors == [] and w.dialogs == []
    finally:
        app.responder.research = None


def test_a_number_opens_the_ref_the_gate_bound_it_to(watched, app, artifacts):
    """Both numbers come before both citations: 6.0 links to the table the GATE matched it in,
    not to the citation that follows it (the value of 9.6)."""
    import re

    from refgate.testing_openai import StubRequest

    def compose(req: StubRequest) -> str | None:
        system = str((req.messages[0] or {}).get("content") or "") if req.messages else ""
        if system.split(",")[0].removeprefix("You are ").strip().lower() != "compose":
            return None
        val = re.findall(r"\bval_[0-9a-f]{10}\b", req.text)[-1]
        tbl = re.findall(r"\btbl_[0-9a-f]{10}\b", req.text)[-1]
        return f"Unemployment rose to 9.6 percent in 2009Q3 from 6.0 percent in 2008Q3 [{val}] [{tbl}]."

    app.responder.fault = compose
    try:
        w = watched()
        page = w.page
        ready(page)
        page.click("#new-thread")
        ask(page, "How did US unemployment change from 2008Q3 to 2009Q3?")
        page.wait_for_selector("#thread-body #answer", timeout=60000)
    finally:
        app.responder.fault = None
    cites = page.eval_on_selector_all("#answer a.cite", "els => els.map(e => e.title)")
    val, tbl = cites
    assert val.startswith("val_") and tbl.startswith("tbl_"), cites
    six = page.locator("#answer a.num:text-is('6.0')")
    assert six.get_attribute("href") == f"#ref-{tbl}" and six.get_attribute("data-bound") == "gate"
    assert page.locator("#answer a.num:text-is('9.6')").get_attribute("href") == f"#ref-{val}"
    six.click()
    page.locator("#evidence-panel").wait_for(state="visible")
    assert page.inner_text("#evidence-body td.cited.clicked") == "6.0"
    page.screenshot(path=artifacts / "15-number-bound-by-gate.png")
    assert w.errors == [] and w.dialogs == []
