"""A run that stops at a run budget, or whose model server fails, shows why and resumes.

Two browser tests on the app of tests/ui (the scripted model and us-macro copy): a run crossing
``max_tool_calls_per_run`` (set in the workspace's refgate.toml) says which budget and the
setting that raises it, and Resume finishes it once the setting is raised in that file; a run
whose model server answers HTTP 500 in COMPOSE shows the failure, and Resume finishes it when the
server answers again, without running the finished passes again.
"""

from __future__ import annotations

import os
import time

from refgate.testing_openai import StubRequest, http_error
from tests.ui.test_ui_browser import ask, ready


def _settle_toml(path, text: str) -> None:
    """Write the workspace's refgate.toml so its modification time surely changes (the app
    reloads a workspace when that time changes)."""
    before = path.stat().st_mtime
    path.write_text(text, encoding="utf-8")
    stamp = max(time.time(), before + 1)
    os.utime(path, (stamp, stamp))


def test_a_budget_stop_names_the_budget_and_resumes_once_raised(watched, app, artifacts):
    toml = app.workspace / "refgate.toml"
    original = toml.read_text(encoding="utf-8")
    # WORK asks for two tool calls (RunPython, then WebSearch): the second crosses the budget
    _settle_toml(toml, original + "\n[settings]\nmax_tool_calls_per_run = 1\n")
    try:
        w = watched()
        page = w.page
        ready(page)
        page.click("#new-thread")
        ask(page, "What was US unemployment in 2009Q3, by the budget?")
        page.wait_for_selector("#resume-btn:not([hidden])", timeout=60000)
        status = page.inner_text("#status")
        assert "tool calls in the run (2 of 1)" in status, status
        assert "max_tool_calls_per_run" in status and "refgate.toml" in status, status
        assert page.locator("#thread-body #answer").count() == 0
        page.screenshot(path=artifacts / "11-budget-stop.png")

        # the person raises the budget in the workspace's settings file, then presses Resume
        _settle_toml(toml, original + "\n[settings]\nmax_tool_calls_per_run = 10\n")
        page.click("#resume-btn")
        page.wait_for_selector("#thread-body #answer", timeout=60000)
        assert "resuming" in page.inner_text("#passes")
        assert "9.6 percent" in page.inner_text("#thread-body #answer")
        page.screenshot(path=artifacts / "12-budget-resumed.png")
        assert w.errors == [] and w.dialogs == []
    finally:
        _settle_toml(toml, original)


def test_a_model_server_failure_shows_and_resume_finishes_the_run(watched, app, artifacts):
    def compose_fails(req: StubRequest):
        system = str((req.messages[0] or {}).get("content") or "") if req.messages else ""
        if system.split(",")[0].removeprefix("You are ").strip().lower() == "compose":
            return http_error(500, "the model server fell over")
        return None

    app.responder.fault = compose_fails
    try:
        w = watched()
        page = w.page
        ready(page)
        page.click("#new-thread")
        ask(page, "What was US unemployment in 2009Q3, after a crash?")
        page.wait_for_selector("#resume-btn:not([hidden])", timeout=60000)
        status = page.inner_text("#status")
        # whose failure, where, in which pass, in words
        assert "The run failed: the model 'stub-model' at http://127.0.0.1:" in status, status
        assert "answered HTTP 500 in COMPOSE" in status, status
        assert "the model server fell over" in status, status
        assert page.locator("#thread-body #answer").count() == 0
        page.screenshot(path=artifacts / "13-server-failed.png")
    finally:
        app.responder.fault = None

    # the server answers again: Resume goes on from COMPOSE, not from the start
    calls = dict(app.responder.calls)
    page.click("#resume-btn")
    page.wait_for_selector("#thread-body #answer", timeout=60000)
    assert "9.6 percent" in page.inner_text("#thread-body #answer")
    resumed = page.eval_on_selector_all(
        "#passes > li[data-pass]", "els => els.map(e => e.dataset.pass)"
    )
    # (WORK may run again after, as the GATE's retry: the answer's 12.5 is blocked)
    assert resumed[0] == "compose" and "brief" not in resumed, resumed
    assert app.responder.calls.get("brief") == calls.get("brief")
    page.screenshot(path=artifacts / "14-server-resumed.png")
    assert w.errors == [] and w.dialogs == []
