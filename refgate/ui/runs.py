"""Runs started from the browser: ``refgate.ask`` in a worker thread, its progress events kept
and relayed to every page watching, a stop button, and resume.

A run is the public API's ``ask`` (no second engine): its ``on_event`` handler hands each progress
event to the event loop, adds the tokens counted so far (a usage callback around the run) and
their estimated cost, and, when the person pressed Stop, raises ``StopRequested`` in the run's
thread. ``ask`` then ends with ``RunFailed`` and keeps the thread's checkpoints, so the same
thread resumes later (``ask(None, thread=...)``), as it does after a crash or a budget stop.
A stop takes effect at the run's next progress event (a model call under way finishes first).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field

from langchain_core.callbacks import get_usage_metadata_callback

from refgate.api.public import Answer, ResearchResult, RunFailed, ask, research
from refgate.config import ConfigError, load_settings
from refgate.events import ProgressEvent
from refgate.provenance.budget import BudgetExceeded
from refgate.usage import estimate_cost
from refgate.workspace import Workspace, WorkspaceError

#: Runs kept in memory (finished ones are dropped oldest first beyond this).
MAX_KEPT = 50


class StopRequested(Exception):
    """Raised inside a run's thread at its next progress event after Stop was pressed."""


#: One event as the page receives it (JSON): a progress event, ``usage``, ``run_finished``.
UiEvent = dict[str, object]
#: Runs ``ask`` (tests pass one with a scripted model; the app passes ``refgate.ask``).
Asker = Callable[..., Answer]


@dataclass
class Run:
    """One run: its events so far, its state, and the flag that stops it."""

    id: str
    workspace: Workspace
    thread: str
    question: str | None
    #: ``ask`` (the workbench) or ``research`` (the deep-research graph).
    kind: str = "ask"
    started: float = field(default_factory=time.perf_counter)
    events: list[UiEvent] = field(default_factory=list)
    status: str = "running"  # running, done, stopped, failed
    error: str | None = None
    stop_flag: threading.Event = field(default_factory=threading.Event)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def add(self, event: UiEvent) -> None:
        event = {**event, "seq": len(self.events), "ms": round(self.elapsed_ms(), 1)}
        self.events.append(event)
        self.changed.set()

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000

    async def follow(self, since: int = 0) -> AsyncIterator[UiEvent]:
        """Every event from ``since`` on, waiting for new ones until the run ends."""
        at = since
        while True:
            while at < len(self.events):
                yield self.events[at]
                at += 1
            if self.status != "running":
                return
            self.changed.clear()
            if at < len(self.events):
                continue
            await self.changed.wait()


def _plain(value: object) -> object:
    """A progress event's values as JSON values (sequences as lists, the rest as given)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _budget_cause(exc: BaseException) -> BudgetExceeded | None:
    """The ``BudgetExceeded`` a run failure stems from, if it does."""
    visited: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in visited:
        visited.add(id(cur))
        if isinstance(cur, BudgetExceeded):
            return cur
        cur = cur.__cause__ or cur.__context__
    return None


def budget_stop_message(budget: BudgetExceeded, workspace: Workspace) -> str:
    """A budget stop in plain words, with how to raise the budget from here: the workspace's
    refgate.toml (read again on Resume), unless the app's environment sets it (that wins)."""
    used, limit = f"{budget.used:g}", f"{budget.limit:g}"
    said = f"the run reached a run budget: {budget.budget} ({used} of {limit})"
    env = f"REFGATE_{budget.setting.upper()}"
    if env in os.environ:
        return (
            f"{said}. It is set by {env} in this app's environment, which overrides the "
            f"workspace's settings: restart refgate ui with a larger {env}, then press Resume."
        )
    return (
        f"{said}. To go on, raise {budget.setting} under [settings] in "
        f"{workspace.root / 'refgate.toml'}, then press Resume."
    )


class RunManager:
    """Starts, follows and stops runs; one run per thread at a time."""

    def __init__(
        self,
        asker: Asker = ask,
        ask_options: Mapping[str, object] | None = None,
        researcher: Callable[..., ResearchResult] = research,
    ) -> None:
        self.asker = asker
        self.researcher = researcher
        self.ask_options = dict(ask_options or {})
        self.runs: dict[str, Run] = {}
        #: The tasks driving runs (kept referenced until they end).
        self._tasks: set[asyncio.Future[None]] = set()

    def get(self, run_id: str) -> Run | None:
        return self.runs.get(run_id)

    def active_on(self, thread: str) -> Run | None:
        return next(
            (r for r in self.runs.values() if r.thread == thread and r.status == "running"), None
        )

    def start(
        self, workspace: Workspace, question: str | None, thread: str | None, kind: str = "ask"
    ) -> Run:
        """Start ``ask(question, thread=thread)`` (a resume when ``question`` is None), or
        ``research`` for ``kind="research"``."""
        thread = thread or uuid.uuid4().hex[:12]
        if self.active_on(thread) is not None:
            raise ConfigError(f"thread {thread!r} is already running in this app")
        run = Run(uuid.uuid4().hex[:12], workspace, thread, question, kind)
        self.runs[run.id] = run
        self._forget_old()
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(self._drive(run, loop))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return run

    def stop(self, run_id: str) -> bool:
        run = self.runs.get(run_id)
        if run is None or run.status != "running":
            return False
        run.stop_flag.set()
        run.add({"event": "stop_requested"})
        return True

    def _forget_old(self) -> None:
        done = [r for r in self.runs.values() if r.status != "running"]
        for r in done[: max(0, len(self.runs) - MAX_KEPT)]:
            self.runs.pop(r.id, None)

    async def _drive(self, run: Run, loop: asyncio.AbstractEventLoop) -> None:
        try:
            answer = await asyncio.to_thread(self._ask, run, loop)
        except RunFailed as exc:
            budget = _budget_cause(exc)
            if budget is not None and not run.stop_flag.is_set():
                run.status = "stopped"
                run.add({"event": "run_stopped", "message": budget_stop_message(budget,
                         run.workspace), "budget": budget.setting, "thread": run.thread,
                         "resumable": True})  # fmt: skip
                return
            stopped = run.stop_flag.is_set()
            run.status = "stopped" if stopped else "failed"
            reason = "stopped by you" if stopped else str(exc)
            run.add({"event": "run_stopped" if stopped else "run_failed", "message": reason,
                     "thread": run.thread, "resumable": True})  # fmt: skip
        except (ConfigError, WorkspaceError) as exc:
            run.status = "failed"
            run.add({"event": "run_failed", "message": str(exc), "thread": run.thread,
                     "resumable": False})  # fmt: skip
        except Exception as exc:  # a bug must reach the page, not vanish in a task
            run.status = "failed"
            run.add({"event": "run_failed", "message": f"{type(exc).__name__}: {exc}",
                     "thread": run.thread, "resumable": True})  # fmt: skip
        else:
            run.status = "done"
            passed = answer.passed if isinstance(answer, Answer) else answer.useful
            run.add(
                {
                    "event": "run_finished",
                    "kind": run.kind,
                    "thread": answer.thread or run.thread,
                    "passed": passed,
                    "usage": _plain(answer.usage.to_dict()),
                    "seconds": round(run.elapsed_ms() / 1000, 2),
                }
            )

    def _ask(self, run: Run, loop: asyncio.AbstractEventLoop) -> Answer | ResearchResult:
        prices: Mapping[str, Iterable[float]] = {}  # none known: the cost shows as unknown
        with contextlib.suppress(ConfigError):
            prices = load_settings(workspace_settings=run.workspace.settings).prices
        with get_usage_metadata_callback() as counter:

            def on_event(chunk: ProgressEvent) -> None:
                tokens = {
                    model: {
                        "input_tokens": int(u.get("input_tokens", 0) or 0),
                        "output_tokens": int(u.get("output_tokens", 0) or 0),
                        "total_tokens": int(u.get("total_tokens", 0) or 0),
                    }
                    for model, u in dict(counter.usage_metadata).items()
                }
                total = sum(t["total_tokens"] for t in tokens.values())
                cost = estimate_cost(tokens, {m: m for m in tokens}, prices) if tokens else 0.0
                event: UiEvent = {
                    **{str(k): _plain(v) for k, v in chunk.items()},
                    "tokens": total,
                    "cost_usd": cost,
                }
                loop.call_soon_threadsafe(run.add, event)
                if run.stop_flag.is_set():
                    raise StopRequested("stopped by the person running it")

            run_it = self.researcher if run.kind == "research" else self.asker
            return run_it(
                run.question,
                workspace=run.workspace,
                thread=run.thread,
                on_event=on_event,
                **self.ask_options,
            )
