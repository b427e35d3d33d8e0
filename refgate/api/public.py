"""The Python API: ``refgate.ask(...)`` and ``refgate.research(...)`` for notebooks and apps.

The CLI runs on these same functions; ``on_event`` receives the progress events it prints
(``pass_started``, ``tool_call``, ``gate_verdict``, ``research_step``, ``notice``, ...).

    import refgate
    a = refgate.ask("What was US unemployment in 2009Q3?", workspace="examples/us-macro",
                    model="anthropic:claude-sonnet-4-5")
    print(a.answer, a.passed, a.usage.total)

This module sits above the graph layer (it builds graphs); the core never imports it except
lazily through ``refgate.__getattr__``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from langchain_core.callbacks import UsageMetadataCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command, StateSnapshot
from rich.text import Text

from refgate.api import local_llm
from refgate.api.find_workspace import resolve_workspace
from refgate.api.threadlock import thread_lock
from refgate.config import MODEL_PASSES, ConfigError, Settings, load_settings
from refgate.errors import RefgateError
from refgate.events import ProgressEvent, ProgressSink, TraceSummary
from refgate.graph import build_graph
from refgate.graph.builder import WorkbenchGraph
from refgate.graph.research import (
    PASS_NAME,
    ResearchGraph,
    build_research_graph,
    run_config,
    stream_research,
)
from refgate.graph.state import WorkbenchInput
from refgate.memory.audit import append_run
from refgate.memory.persistence import open_persistence, persistence_target, prune_thread
from refgate.memory.threads import (
    check_thread_owner,
    foreign_input_pending,
    is_own_store,
    thread_owner,
    workspace_identity,
)
from refgate.models import NO_MODEL_HELP, ModelProvider, endpoint_of, is_configured, split_model
from refgate.nodes.research.backends import ResearchBackend
from refgate.nodes.research.report import to_markdown
from refgate.nodes.research.state import ResearchReport, ResearchState
from refgate.nodes.state import WorkbenchState
from refgate.paths import PathEscape, check_served, served_allowlist
from refgate.provenance.boundaries import ApprovalRequest
from refgate.redaction import redact_secrets
from refgate.refs import Ref, as_ref_map
from refgate.report import answer_document, write_research_report, write_run_report
from refgate.report.run import AnswerDocument, UnverifiedClaim
from refgate.tools.web_providers import Fetch, WebProviderError, WebSearch, default_providers
from refgate.usage import (
    Usage,
    build_usage,
    estimate_cost,
    record_usage,
    thread_usage,
    turn_usage,
)
from refgate.verdict import Verdict
from refgate.workspace import Workspace

#: Receives each progress event of a run (``refgate.events.ProgressEvent``).
EventHandler = ProgressSink
#: Answers an outbound approval request (the interrupt's payload) with the resume value:
#: ``True``, ``{"approved": True, ...}`` (anything else refuses).
Approver = Callable[[ApprovalRequest], object]
#: An ``on_event`` of the asyncio API: a function or a coroutine function of each event.
AsyncEventHandler = Callable[[ProgressEvent], object]

#: Token counts of research threads, one line per process that ran one (``refgate.usage``).
RESEARCH_USAGE = "research-usage.jsonl"


class RunFailed(RefgateError, RuntimeError):
    """A run stopped part-way; its checkpoints are kept, so ``thread`` can be resumed."""

    def __init__(self, message: str, *, thread: str, workspace: Path | None = None) -> None:
        super().__init__(redact_secrets(message))
        self.thread = thread
        self.workspace = workspace


@dataclass
class Answer:
    """The result of ``refgate.ask``: the answer and the evidence behind it."""

    question: str
    answer: str
    passed: bool
    gate: Verdict
    refs: dict[str, Ref]
    unverified: list[UnverifiedClaim]
    thread: str
    usage: Usage
    workspace: str = ""
    trace_summary: TraceSummary = field(default_factory=lambda: TraceSummary())
    #: The run record of ``refgate.report`` (critiques, caveats, models, times) without usage.
    record: AnswerDocument = field(default_factory=AnswerDocument, repr=False)

    def to_dict(self) -> AnswerDocument:
        """Plain JSON values: the run record (what ``refgate ask --json`` prints and
        ``--output`` renders) with ``passed``, ``unverified`` and ``usage``."""
        out: AnswerDocument = self.record.copy() or {
            "thread_id": self.thread,
            "question": self.question,
            "answer": self.answer,
            "refs": {k: v.model_dump(mode="json") for k, v in self.refs.items()},
            "gate": self.gate,
            "trace_summary": self.trace_summary,
        }
        out["passed"] = self.passed
        out["unverified"] = self.unverified
        out["usage"] = self.usage.to_dict()
        return out

    def write_report(self, path: str | Path) -> Path:
        """Write the run's report file, as ``refgate ask --output`` does: the format follows the
        extension (.md, .html, .pdf, .docx, .json); HTML and PDF embed the run's charts from the
        workspace's artifacts folder. ``refgate.report.ReportError`` when it cannot be written."""
        return write_run_report(path, self.to_dict(), self.workspace or None)


@dataclass
class ResearchResult:
    """The result of ``refgate.research``: the report (findings with sources) and its markdown."""

    question: str
    report: ResearchReport
    markdown: str
    status: str
    thread: str | None
    usage: Usage

    @property
    def useful(self) -> bool:
        """True when the report carries at least one verified claim."""
        return self.status in ("complete", "synthesis_failed")

    def to_dict(self) -> dict[str, object]:
        return {
            "question": self.question,
            "report": self.report,
            "status": self.status,
            "thread_id": self.thread,
            "usage": self.usage.to_dict(),
        }

    def write_report(self, path: str | Path) -> Path:
        """Write the report file, as ``refgate research --output`` does (the format follows the
        extension). ``refgate.report.ReportError`` when it cannot be written."""
        return write_research_report(path, self.report, to_markdown)


def _emit(on_event: EventHandler | None, chunk: ProgressEvent) -> None:
    if on_event is not None:
        on_event(chunk)


def _check_allowlist(workspace: Workspace | None) -> None:
    """``REFGATE_ALLOWED_WORKSPACES`` checked before a run starts: a value with no usable entry,
    or a workspace outside it, is a configuration error (the CLI exits 2), not a failed run to
    resume."""
    try:
        allowlist = served_allowlist()
        if workspace is not None:
            check_served(workspace.root, allowlist, what="workspace")
            for extra in workspace.allowed_roots:
                check_served(extra, allowlist, what="paths.allowed_roots entry")
    except PathEscape as exc:
        raise ConfigError(str(exc)) from None


def _settings(
    workspace: Workspace | None, model: str | BaseChatModel | None, settings: Settings | None
) -> Settings:
    _check_allowlist(workspace)
    base = settings or load_settings(workspace_settings=workspace.settings if workspace else None)
    if isinstance(model, str):
        if not model.strip():
            raise ConfigError("model: empty model string")
        base = base.with_overrides(model=model.strip())
    return base


@contextlib.contextmanager
def model_endpoint(
    settings: Settings,
    on_event: EventHandler | None = None,
    passes: tuple[str, ...] = MODEL_PASSES,
    *,
    log_path: Path | None = None,
) -> Iterator[Settings]:
    """Yield settings that reach a model: the configured one, else the embedded smoke model
    (its server's output kept in ``log_path``; raises ``local_llm.LocalModelError`` when the
    server does not start or fails its first chat completion)."""
    if is_configured(settings, passes):
        yield settings
        return

    if not (settings.local_llm and local_llm.available()):
        raise ConfigError(NO_MODEL_HELP)

    _emit(on_event, {"event": "notice", "message": Text.from_markup(local_llm.SMOKE_NOTICE).plain})
    with local_llm.LocalModelServer(log_path=log_path) as server:
        yield settings.with_overrides(
            base_url=server.base_url,
            api_key="local",
            model=server.model_name,
            pass_models={},
            max_tokens=settings.max_tokens or local_llm.MAX_TOKENS,
        )


def _same_question(a: str | None, b: str | None) -> bool:
    return " ".join((a or "").split()) == " ".join((b or "").split())


def _check_question(question: str | None, thread: str | None) -> str | None:
    q = (question or "").strip()
    if not q and not thread:
        raise ConfigError("no question given (a blank question is not a question)")
    return q or None


def is_connection_error(exc: BaseException) -> bool:
    """True for a refused, unreachable or timed-out model endpoint (any client library)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        name = type(cur).__name__
        if isinstance(cur, ConnectionError | TimeoutError) or name in (
            "APIConnectionError",
            "APITimeoutError",
            "ConnectError",
            "ConnectTimeout",
            "ReadTimeout",
        ):
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def is_dropped_connection(exc: BaseException) -> bool:
    """True when a server accepted the request and closed the connection without a reply (a
    crash mid-request: httpx's RemoteProtocolError, "Server disconnected ...")."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if type(cur).__name__ == "RemoteProtocolError" or "disconnected without" in str(cur):
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def _endpoint_origin(settings: Settings) -> str:
    """Which setting named the OpenAI-compatible endpoint (only called when one is set)."""
    env = os.environ.get("OPENAI_BASE_URL", "").strip().rstrip("/")
    if env and env == (settings.base_url or "").rstrip("/"):
        return "OPENAI_BASE_URL"
    return "the base_url setting"


def _server_error_status(exc: BaseException) -> int | None:
    """The HTTP status (500 or more) of a model server's error reply in ``exc``'s chain."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        status = getattr(cur, "status_code", None)
        if isinstance(status, int) and status >= 500:
            return status
        cur = cur.__cause__ or cur.__context__
    return None


def _failure(exc: Exception, settings: Settings, pass_name: str | None) -> str:
    status = _server_error_status(exc)
    if status is not None:  # the server answered, with an error of its own: say whose and where
        p = pass_name or "work"
        model, where = settings.model_for(p), endpoint_of(settings, p)
        return (
            f"the model {model!r} at {where} answered HTTP {status} in {p.upper()} "
            f"({type(exc).__name__}: {exc}); the passes before it are kept: resume when the "
            "server answers again"
        )
    if not is_connection_error(exc):
        return f"{type(exc).__name__}: {exc}"
    server = local_llm.server_at(settings.base_url)
    if server is not None:  # the embedded model: say how its server ended, not where it was
        return server.failure_report()
    p = pass_name or "work"
    model, where = settings.model_for(p), endpoint_of(settings, p)
    provider, _ = split_model(model)
    if is_dropped_connection(exc):
        what = "closed the connection without a reply (the server may have crashed: see its log)"
    else:
        what = "could not be reached"
    if provider in (None, "openai") and settings.base_url:
        fix = (
            f"check that the server at {where} is running and serves {model!r}, or change "
            f"{_endpoint_origin(settings)}"
        )
    else:
        fix = "check the network and the provider's status, or choose another model (--model)"
    return f"the model {model!r} at {where} {what} ({type(exc).__name__}: {exc}); {fix}"


def ask(
    question: str | None,
    *,
    workspace: Workspace | Path | str | None = None,
    model: str | BaseChatModel | None = None,
    thread: str | None = None,
    on_event: EventHandler | None = None,
    settings: Settings | None = None,
    approve: Approver | None = None,
) -> Answer:
    """Answer ``question`` about a workspace; every number, date and ranking is gated.

    ``approve(request)`` answers each outbound approval (boundary B3: posting the report to the
    workspace's webhook) with ``{"approved": True}`` or a refusal; without it nothing is sent.

    ``model`` is a model string (``"anthropic:claude-sonnet-4-5"``, ``"ollama:qwen2.5"``, a bare
    OpenAI-compatible name) or a LangChain chat model. ``thread`` resumes an interrupted run
    (``question`` may then be None; a different question is refused) or, on a finished thread,
    asks ``question`` as a follow-up: the earlier questions, answers and refs are its context
    and the new answer may cite those refs. Raises ``ConfigError``
    (settings, blank question, thread busy or mismatched), ``WorkspaceError`` (no or an invalid
    workspace) or ``RunFailed`` (resumable)."""
    start = _RunStart.of(question, thread, workspace, model, settings)
    q = start.question
    if q is not None and len(q) > start.settings.max_question_chars:
        # A run budget checked before anything runs (the CLI exits 2).
        raise ConfigError(
            f"the question has {len(q)} characters; the limit is "
            f"{start.settings.max_question_chars} (REFGATE_MAX_QUESTION_CHARS)"
        )
    run = _AskRun(q, start.workspace, thread or uuid.uuid4().hex[:12], on_event)
    state_dir = run.workspace.state_dir
    _emit(on_event, {"event": "run_started", "thread": run.thread_id,
                     "workspace": str(run.workspace.root)})  # fmt: skip
    with thread_lock(state_dir, run.thread_id):
        endpoint: contextlib.AbstractContextManager[Settings] = (
            contextlib.nullcontext(start.settings)
            if start.live_model is not None
            else model_endpoint(start.settings, on_event, log_path=state_dir / local_llm.LOG_NAME)
        )
        with endpoint as live, open_persistence(live, run.workspace) as (checkpointer, store):
            graph = build_graph(
                model=start.live_model,
                checkpointer=checkpointer,
                store=store,
                workspace=run.workspace,
                settings=live,
            )
            inputs = _ask_inputs(graph, run, live)
            if inputs != "done":
                _stream_ask(graph, inputs, run, live, approve)
            return _finish_ask(graph, checkpointer, run, live)


@dataclass(frozen=True)
class _RunStart:
    """What a run of ``ask`` or ``research`` starts from, checked before anything runs: the
    question (None: resume only), the workspace, the settings and the caller's own chat model."""

    question: str | None
    workspace: Workspace
    settings: Settings
    live_model: BaseChatModel | None

    @classmethod
    def of(
        cls,
        question: str | None,
        thread: str | None,
        workspace: Workspace | Path | str | None,
        model: str | BaseChatModel | None,
        settings: Settings | None,
    ) -> _RunStart:
        q = _check_question(question, thread)
        resolved = resolve_workspace(workspace)
        live_model = model if isinstance(model, BaseChatModel) else None
        return cls(q, resolved, _settings(resolved, model, settings), live_model)


@dataclass
class _AskRun:
    """One ``ask`` run on its thread: its config, and the pass running now (named in a
    failure)."""

    question: str | None
    workspace: Workspace
    thread_id: str
    on_event: EventHandler | None
    started: float = field(default_factory=time.perf_counter)
    current_pass: str | None = None
    config: RunnableConfig = field(init=False)

    def __post_init__(self) -> None:
        self.config = {"configurable": {"thread_id": self.thread_id}, "recursion_limit": 50}

    def relay(self, chunk: ProgressEvent) -> None:
        if chunk.get("event") == "pass_started":
            self.current_pass = chunk.get("pass")
        _emit(self.on_event, chunk)


#: What the graph is given to run: a new question, None (resume where it stopped), or "done"
#: (the thread already answered this question: nothing runs).
_AskInputs = WorkbenchInput | Literal["done"] | None


def _ask_inputs(graph: WorkbenchGraph, run: _AskRun, settings: Settings) -> _AskInputs:
    """What this run gives the graph: resume an interrupted run, reuse a finished answer, or
    ask (a follow-up on a finished thread); a clear error when the question does not fit."""
    snapshot = graph.get_state(run.config)
    _check_owner(graph, run.config, run.thread_id, snapshot, run.workspace, settings)
    # a served client of another workspace left a refused input on this thread: its
    # question is not the thread's, and the owner asks afresh over it
    foreign = foreign_input_pending(snapshot.values)
    stored_q = None if foreign else snapshot.values.get("question")
    q = run.question
    if (snapshot.next or _stopped_between_steps(graph, run.config)) and not foreign:
        if stored_q and q and not _same_question(stored_q, q):
            raise ConfigError(
                f"thread {run.thread_id!r} was interrupted on another question "
                f"({stored_q!r}); resume it without a question (or with the same one) "
                "before asking a follow-up, or use a new --thread"
            )
        _emit(run.on_event, {"event": "resuming", "thread": run.thread_id,
                             "next": list(snapshot.next)})  # fmt: skip
        return None
    if snapshot.values.get("answer") and (q is None or _same_question(stored_q, q)):
        return "done"
    if q is None:
        raise ConfigError(f"no question given and nothing to resume on thread {run.thread_id!r}")
    if snapshot.values.get("answer"):
        # a finished thread takes a new question as a follow-up: earlier questions,
        # answers and refs are its context (nodes/conversation.py)
        turns = len(snapshot.values.get("turns") or [])
        _emit(run.on_event, {"event": "follow_up", "thread": run.thread_id, "turn": turns + 1})
    return {"question": q, "workspace": str(run.workspace.root)}


def _stream_ask(
    graph: WorkbenchGraph,
    inputs: WorkbenchInput | None,
    run: _AskRun,
    settings: Settings,
    approve: Approver | None,
) -> None:
    """Run the graph on ``inputs``, relaying its events and answering its approvals; a failure
    becomes ``RunFailed`` (the thread resumes)."""
    try:
        for chunk in graph.stream(inputs, run.config, stream_mode="custom"):
            if isinstance(chunk, dict):
                run.relay(cast(ProgressEvent, chunk))
        _answer_approvals(graph, run.config, approve, run.relay)
    except (ConfigError, KeyboardInterrupt):
        raise
    except Exception as exc:
        failure = _failure(exc, settings, run.current_pass)
        raise RunFailed(failure, thread=run.thread_id, workspace=run.workspace.root) from exc


def _finish_ask(
    graph: WorkbenchGraph, checkpointer: BaseCheckpointSaver[str], run: _AskRun, settings: Settings
) -> Answer:
    """The run's ``Answer`` from the thread's final state, with its audit line written."""
    final = graph.get_state(run.config)
    result = cast(WorkbenchState, dict(final.values))  # the state the graph's schema declares
    if settings.keep_checkpoints == "latest" and not final.next:
        # a finished turn: earlier checkpoints are superseded (bounded growth)
        prune_thread(checkpointer, run.thread_id)
    duration = time.perf_counter() - run.started
    answer = _answer(result, run.thread_id, run.workspace, settings, run.question, duration)
    _record_audit(run.workspace, answer, result, settings, run.started)
    return answer


def _stopped_between_steps(graph: WorkbenchGraph, config: RunnableConfig) -> bool:
    """True when the run was stopped from outside (Ctrl-C, a stop button raising in ``on_event``)
    after its running pass had finished: LangGraph waits for that pass and keeps its writes with
    the last checkpoint; ``get_state`` (which applies them) then shows no next pass, although
    the checkpoint itself still has one. Such a run is resumed, not asked again."""
    newest = next(iter(graph.get_state_history(config, limit=1)), None)
    return bool(newest is not None and newest.next)


def _check_owner(
    graph: WorkbenchGraph,
    config: RunnableConfig,
    thread_id: str,
    snapshot: StateSnapshot,
    workspace: Workspace,
    settings: Settings,
) -> None:
    """Refuse a thread of another workspace (thread owner). In the workspace's own SQLite file
    every thread is its own: a thread recorded under the folder's old path (the workspace was
    moved or renamed) is adopted before BRIEF compares the owner again."""
    if not is_own_store(persistence_target(settings, workspace).url, workspace):
        check_thread_owner(thread_id, snapshot.values, workspace)
        return
    owner = thread_owner(snapshot.values)
    if owner is not None and owner != workspace_identity(workspace) and not snapshot.next:
        graph.update_state(config, {"owner": workspace_identity(workspace)}, as_node="deliver")


def _answer_approvals(
    graph: WorkbenchGraph, config: RunnableConfig, approve: Approver | None, relay: EventHandler
) -> None:
    """Resume each pending interrupt (an outbound approval, B3) with ``approve``'s answer; with no
    approver every request is refused, so a run never waits on a person nobody asked."""
    for _ in range(16):  # one request per outbound step; bounded all the same
        snap = graph.get_state(config)
        pending = [i.value for t in snap.tasks for i in (t.interrupts or ())]
        if not pending:
            return
        request: ApprovalRequest = (
            cast(ApprovalRequest, pending[0])
            if isinstance(pending[0], dict)
            else {"request": pending[0]}
        )
        relay({"event": "approval_requested", "tool": request.get("approve_outbound"),
               "to": request.get("to")})  # fmt: skip
        answer = approve(request) if approve is not None else None
        if answer is None:
            answer = {"approved": False, "reason": "no approver"}
        if _approved(answer) and isinstance(request.get("resume_with"), dict):
            # the person approved the call they were shown: the approval names it and when it
            # was asked (boundaries.approve_outbound)
            answer = {**(answer if isinstance(answer, dict) else {}), **request["resume_with"]}
        relay({"event": "approval_answered", "approved": _approved(answer)})
        for chunk in graph.stream(Command(resume=answer), config, stream_mode="custom"):
            if isinstance(chunk, dict):
                relay(cast(ProgressEvent, chunk))


def _approved(answer: object) -> bool:
    return answer is True or (isinstance(answer, dict) and answer.get("approved") is True)


def _answer(
    result: WorkbenchState,
    thread_id: str,
    workspace: Workspace,
    settings: Settings,
    q: str | None,
    duration_s: float,
) -> Answer:
    models = {p: settings.model_for(p) for p in MODEL_PASSES}
    # this turn's tokens (HARVEST's count; a follow-up's trace also holds earlier turns)
    usage = Usage.from_dict(turn_usage(result, models))
    usage.cost_usd = estimate_cost(usage.per_pass, usage.models, settings.prices)
    record = answer_document(
        {**result, "question": result.get("question") or q or ""},
        thread_id=thread_id,
        workspace=workspace,
        models=models,
        duration_s=round(duration_s, 3),
        usage=usage.to_dict(),
    )
    return Answer(
        question=record["question"],
        answer=record["answer"],
        passed=record["passed"],
        gate=cast(Verdict, dict(result.get("gate") or {})),
        refs=as_ref_map(result.get("refs") or {}),
        unverified=record["unverified"],
        thread=thread_id,
        usage=usage,
        workspace=str(workspace.root),
        trace_summary=cast(TraceSummary, dict(result.get("trace_summary") or {})),
        record=record,
    )


def _record_audit(
    workspace: Workspace, answer: Answer, result: WorkbenchState, settings: Settings, started: float
) -> None:
    record = answer.to_dict()
    append_run(
        workspace,
        {
            "thread_id": answer.thread,
            "question": answer.question,
            "answer": answer.answer,
            "refs": record["refs"],
            "gate": answer.gate,
            "events": result.get("trace") or [],
            "outbound": _sent(result),
            "trace_summary": answer.trace_summary,
            "models": {p: settings.model_for(p) for p in MODEL_PASSES},
            "usage": record["usage"],
            "duration_s": round(time.perf_counter() - started, 3),
        },
    )


def _sent(result: WorkbenchState) -> list[object]:
    """What the run sent off the machine (``RunProvenance.sent``)."""
    provenance = result.get("provenance")
    return list(provenance.get("sent") or []) if provenance else []


def research(
    question: str | None,
    *,
    workspace: Workspace | Path | str | None = None,
    model: str | BaseChatModel | None = None,
    thread: str | None = None,
    on_event: EventHandler | None = None,
    settings: Settings | None = None,
    max_concurrency: int = 10,
    backend: ResearchBackend | None = None,
    web_search: WebSearch | None = None,
    web_fetch: Fetch | None = None,
) -> ResearchResult:
    """Research ``question`` on the web (or the workspace's offline snapshot): claims with
    quotes, 3 skeptical votes each, a report citing only pages read in this run.

    ``workspace`` may be omitted only when one is found (it holds the checkpoints that
    ``thread`` resumes). Raises ``ConfigError`` or ``RunFailed`` like ``ask``."""
    start = _RunStart.of(question, thread, workspace, model, settings)
    state_dir = start.workspace.state_dir
    try:
        search, fetch = default_providers(start.workspace, settings=start.settings)
    except WebProviderError as exc:
        raise ConfigError(str(exc)) from None
    run = _ResearchRun(start, thread or uuid.uuid4().hex[:12], on_event, backend)
    counter = UsageMetadataCallbackHandler()
    ledger = state_dir / RESEARCH_USAGE
    state_dir.mkdir(parents=True, exist_ok=True)
    _emit(on_event, {"event": "run_started", "thread": run.thread_id,
                     "workspace": str(start.workspace.root)})  # fmt: skip
    with thread_lock(state_dir, f"research:{run.thread_id}"):
        endpoint: contextlib.AbstractContextManager[Settings] = (
            model_endpoint(start.settings, on_event, passes=(PASS_NAME,),
                           log_path=state_dir / local_llm.LOG_NAME)
            if backend is None and start.live_model is None
            else contextlib.nullcontext(start.settings)
        )  # fmt: skip
        conn = sqlite3.connect(state_dir / "research.sqlite", check_same_thread=False)
        try:
            with endpoint as live:
                graph = build_research_graph(
                    web_search=web_search or search,
                    web_fetch=web_fetch or fetch,
                    workspace=start.workspace,
                    checkpointer=SqliteSaver(conn),
                    settings=live,
                    backend=backend,
                    model=None if backend is not None else run.chat_model(live),
                )
                config = run_config(thread_id=run.thread_id, max_concurrency=max_concurrency)
                config["callbacks"] = [counter]
                final = _research_final(graph, config, run, live)
                model_name = live.model_for(PASS_NAME)
        finally:
            conn.close()
            # this process's tokens join the thread's ledger even when the run failed part-way
            record_usage(ledger, run.thread_id, _callback_totals(counter))
    result = run.result(final, model_name, thread_usage(ledger, run.thread_id))
    _record_research_audit(start.workspace, result, time.perf_counter() - run.started)
    return result


@dataclass
class _ResearchRun:
    """One ``research`` run on its thread."""

    start: _RunStart
    thread_id: str
    on_event: EventHandler | None
    backend: ResearchBackend | None
    started: float = field(default_factory=time.perf_counter)

    def chat_model(self, settings: Settings) -> BaseChatModel:
        """The caller's chat model, else the research pass's from ``settings``."""
        if self.start.live_model is not None:
            return self.start.live_model
        return ModelProvider().for_pass(PASS_NAME, settings)

    def result(
        self, final: ResearchState, model_name: str, tokens: dict[str, int]
    ) -> ResearchResult:
        """The ``ResearchResult`` of the run's final state (``RunFailed`` without a report)."""
        report = final.get("report")
        if report is None:
            root = self.start.workspace.root
            raise RunFailed("the run ended without a report", thread=self.thread_id, workspace=root)
        usage = build_usage(
            {PASS_NAME: tokens}, {PASS_NAME: model_name}, self.start.settings.prices
        )
        if self.backend is not None:
            usage.models[PASS_NAME] = getattr(self.backend, "name", "backend")
        return ResearchResult(
            question=str(final.get("question") or self.start.question or ""),
            report=report,
            markdown=str(final.get("markdown") or ""),
            status=str(report.get("status") or ""),
            thread=self.thread_id,
            usage=usage,
        )


def _research_final(
    graph: ResearchGraph, config: RunnableConfig, run: _ResearchRun, settings: Settings
) -> ResearchState:
    """The thread's final state: a finished report as it stands, else the run resumed or
    started; a failure becomes ``RunFailed`` (the thread resumes)."""
    q = run.start.question
    snapshot = graph.get_state(config)
    stored_q = snapshot.values.get("question")
    if stored_q and q and not _same_question(stored_q, q):
        raise ConfigError(
            f"research thread {run.thread_id!r} is about a different question "
            f"({stored_q!r}); resume it without a question or use a new --thread"
        )
    resume = bool(snapshot.next) or bool(snapshot.values.get("report"))
    if not resume and q is None:
        raise ConfigError(f"no question given and nothing to resume on thread {run.thread_id!r}")
    try:
        if snapshot.values.get("report") and not snapshot.next:
            return cast(ResearchState, dict(snapshot.values))
        final = stream_research(graph, None if resume else q, config, _chunks_to(run.on_event))
        return cast(ResearchState, final)  # the state the graph's schema declares
    except (ConfigError, KeyboardInterrupt):
        raise
    except Exception as exc:
        root = run.start.workspace.root
        failure = _failure(exc, settings, PASS_NAME)
        raise RunFailed(failure, thread=run.thread_id, workspace=root) from exc


def _record_research_audit(workspace: Workspace, result: ResearchResult, duration_s: float) -> None:
    """The research run's audit line (``kind: "research"``): question, report markdown, status,
    models and token usage; it has no GATE verdict (research claims are voted, not gated)."""

    append_run(
        workspace,
        {
            "thread_id": result.thread,
            "kind": "research",
            "question": result.question,
            "answer": result.markdown,
            "status": result.status,
            "refs": {},
            "gate": None,
            "events": [],
            "models": dict(result.usage.models),
            "usage": result.usage.to_dict(),
            "duration_s": round(duration_s, 3),
        },
    )


def _chunks_to(
    on_event: EventHandler | None,
) -> Callable[[dict[str, object]], None] | None:
    """``on_event`` for the research graph's custom-stream chunks (its steps' progress events)."""
    if on_event is None:
        return None
    return lambda chunk: on_event(cast(ProgressEvent, chunk))


def _callback_totals(counter: object) -> dict[str, int]:
    totals = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    for meta in (getattr(counter, "usage_metadata", None) or {}).values():
        for k in totals:
            totals[k] += int(meta.get(k, 0) or 0)
    return totals


def _on_loop(
    loop: asyncio.AbstractEventLoop, on_event: AsyncEventHandler | None
) -> EventHandler | None:
    """``on_event`` called on ``loop`` (in order) from the worker thread that runs the graph; a
    coroutine function's calls become tasks of the loop."""
    if on_event is None:
        return None

    def deliver(chunk: ProgressEvent) -> None:
        result = on_event(chunk)
        if inspect.isawaitable(result):
            loop.create_task(result)  # type: ignore[arg-type]

    def handler(chunk: ProgressEvent) -> None:
        loop.call_soon_threadsafe(deliver, chunk)

    return handler


async def aask(
    question: str | None,
    *,
    on_event: AsyncEventHandler | None = None,
    **kwargs: Any,
) -> Answer:
    """``ask`` for asyncio apps (LangGraph apps, web servers): the run goes on in a worker
    thread while the event loop keeps serving, and ``on_event`` (a function or a coroutine
    function) is called on the loop, ``answer_delta`` events included as COMPOSE writes.
    Takes ``ask``'s arguments. Cancelling the awaiting task does not stop a run already under
    way (the thread stays locked until it ends); resume or ask again on its thread."""
    loop = asyncio.get_running_loop()
    return await asyncio.to_thread(ask, question, on_event=_on_loop(loop, on_event), **kwargs)


async def aresearch(
    question: str | None,
    *,
    on_event: AsyncEventHandler | None = None,
    **kwargs: Any,
) -> ResearchResult:
    """``research`` for asyncio apps, as ``aask`` is to ``ask``."""
    loop = asyncio.get_running_loop()
    return await asyncio.to_thread(research, question, on_event=_on_loop(loop, on_event), **kwargs)


__all__ = [
    "Answer",
    "ResearchResult",
    "RunFailed",
    "aask",
    "aresearch",
    "ask",
    "model_endpoint",
    "research",
]
