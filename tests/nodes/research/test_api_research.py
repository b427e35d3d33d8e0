"""`refgate.research(...)`: the deep-research graph through the Python API, with checkpoints in
the workspace, --thread resume rules, progress events and token usage from the model's replies."""

from __future__ import annotations

import pytest

import refgate
from refgate.config import ConfigError
from refgate.testing import KeyedChatModel

USAGE = {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120}


def _workspace(tmp_path, h):
    ws = tmp_path / "ws"
    h.write_snapshot(ws / "web")
    (ws / "refgate.toml").write_text(
        'name = "tiny"\n[web_snapshot]\npath = "web"\n', encoding="utf-8"
    )
    return ws


def _with_usage(model: KeyedChatModel) -> KeyedChatModel:
    """The same rules, each reply carrying token usage as a provider's would."""

    def wrap(fn):
        return lambda text: fn(text).model_copy(
            update={"usage_metadata": dict(USAGE), "response_metadata": {"model_name": "keyed"}}
        )

    return KeyedChatModel(rules=[(key, wrap(fn)) for key, fn in model.rules])


def test_research_api_report_usage_events_and_resume_rules(tmp_path, script, h):
    ws = _workspace(tmp_path, h)
    model = _with_usage(script().model())
    events = []
    result = refgate.research(
        h.QUESTION, workspace=ws, model=model, thread="r1", on_event=events.append
    )
    assert result.status == "complete" and result.useful and result.thread == "r1"
    assert result.report["findings"] and "# Deep Research" in result.markdown
    calls = len(model.calls)
    assert result.usage.total == {k: v * calls for k, v in USAGE.items()}
    assert result.to_dict()["usage"]["per_pass"]["research"]["total_tokens"] == 120 * calls
    steps = {e.get("step") for e in events if e.get("event") == "research_step"}
    assert {"scope", "search", "fetch", "verify", "report"} <= steps
    assert events[0] == {"event": "run_started", "thread": "r1", "workspace": str(ws.resolve())}
    assert (ws / ".refgate" / "research.sqlite").is_file()
    # the finished thread returns its stored report without a model call
    again = refgate.research(None, workspace=ws, model=model, thread="r1")
    assert again.report == result.report and len(model.calls) == calls
    with pytest.raises(ConfigError, match="different question"):
        refgate.research("Something else entirely?", workspace=ws, model=model, thread="r1")
    with pytest.raises(ConfigError, match="no question"):
        refgate.research("  ", workspace=ws, model=model)


def test_a_resumed_research_thread_reports_the_tokens_of_every_process(tmp_path, script, h):
    """The usage callback sees one process; the thread's usage adds the failed first run's."""
    ws = _workspace(tmp_path, h)
    failed = {"n": 0}

    def verify(text):
        if "voter 2/3" in text and failed["n"] == 0:
            failed["n"] += 1
            raise ConnectionError("rate limited; try later")
        return s.default("verify", text)

    s = script(verify=verify)
    model = _with_usage(s.model())
    with pytest.raises(refgate.RunFailed):
        refgate.research(h.QUESTION, workspace=ws, model=model, thread="r2")
    first = len(model.calls) - 1  # every call but the failed vote returned usage
    assert first > 0
    result = refgate.research(None, workspace=ws, model=model, thread="r2")
    assert result.status == "complete" and len(model.calls) > first + 1
    answered = len(model.calls) - 1
    assert result.usage.total == {k: v * answered for k, v in USAGE.items()}
    # a finished thread read back later reports the same totals, not zero
    again = refgate.research(None, workspace=ws, model=model, thread="r2")
    assert again.usage.total == result.usage.total
    # another thread in the same workspace counts only its own tokens
    other = refgate.research(
        h.QUESTION, workspace=ws, model=_with_usage(script().model()), thread="r3"
    )
    assert other.usage.total["total_tokens"] > 0
    assert (
        refgate.research(None, workspace=ws, model=model, thread="r2").usage.total
        == result.usage.total
    )


def test_aresearch_runs_on_asyncio_with_an_async_handler(tmp_path, script, h):
    import asyncio
    import threading

    ws = _workspace(tmp_path, h)
    seen: list[dict] = []
    threads: set[int] = set()

    async def on_event(chunk: dict) -> None:
        threads.add(threading.get_ident())
        seen.append(chunk)

    async def main():
        result = await refgate.aresearch(
            h.QUESTION, workspace=ws, model=script().model(), on_event=on_event
        )
        await asyncio.sleep(0)
        return result, threading.get_ident()

    result, loop_thread = asyncio.run(main())
    assert isinstance(result, refgate.ResearchResult) and result.status == "complete"
    assert threads == {loop_thread}
    assert {"scope", "report"} <= {e.get("step") for e in seen if e.get("event") == "research_step"}
