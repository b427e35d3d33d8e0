"""Run a question set: concurrently, resumably, one thread per question.

``run_eval`` takes an ``execute(question, thread_id) -> Outcome`` callable (the CLI passes one that
asks through ``refgate.ask``; tests may pass their own), scores each outcome, and appends its result
to the run's store as soon as it finishes. Questions already in the store are skipped, so a killed
run continues where it stopped; a question killed mid-run resumes on its thread (finished passes
are not redone, since the graph is checkpointed).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from refgate.cli.evaluation.metrics import cell_of
from refgate.cli.evaluation.questions import EvalQuestion
from refgate.cli.evaluation.scoring import score_answer
from refgate.cli.evaluation.store import EvalResult, RunStore
from refgate.errors import EXIT_ERROR, EXIT_OK, EXIT_UNMET
from refgate.verdict import Verdict

_T = TypeVar("_T")


@dataclass
class Outcome:
    """What one run of one question produced."""

    answer: str | None = None
    gate: Verdict = field(default_factory=lambda: Verdict())
    refs: Mapping[str, object] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    cost_usd: float | None = None
    tool_calls: int = 0
    retries: int = 0
    error: str | None = None


def thread_for(run_id: str, question_id: str) -> str:
    """The thread of one question in one run (``refgate trace`` reads it)."""
    return f"eval-{run_id}-{question_id}"


def _plain_refs(refs: Mapping[str, object]) -> dict[str, object]:
    out: dict[str, object] = {}
    for ref_id, ref in (refs or {}).items():
        out[str(ref_id)] = ref.model_dump(mode="json") if hasattr(ref, "model_dump") else ref
    return out


def result_record(q: EvalQuestion, outcome: Outcome, *, thread: str, seconds: float) -> EvalResult:
    """One question's result: the score, the GATE verdict, the cell, usage and cost."""
    refs = _plain_refs(outcome.refs)
    score = score_answer(q, outcome.answer, refs)
    passed = bool(outcome.gate.get("passed")) and not outcome.error
    rec: EvalResult = {
        "id": q.id,
        "question": q.question,
        "expect": q.expect,
        "correct": score.correct and not outcome.error,
        "passed": passed,
        # the exit code ``refgate ask`` would have returned
        "exit": EXIT_ERROR if outcome.error else (EXIT_OK if passed else EXIT_UNMET),
        "answer": outcome.answer or "",
        "why": outcome.error or score.why,
        "refused": score.refused,
        "gold_numbers": [str(n) for n in q.numbers],
        "gold_text": list(q.text),
        "numbers_found": score.numbers_found,
        "numbers_missing": score.numbers_missing,
        "text_missing": score.text_missing,
        "kinds_missing": score.kinds_missing,
        "gate_issues": sorted(
            {
                str(i.get("code"))
                for i in outcome.gate.get("issues") or []
                if i.get("severity", "block") == "block"
            }
        ),
        "tokens": dict(outcome.tokens),
        "cost_usd": outcome.cost_usd,
        "seconds": round(seconds, 3),
        "tool_calls": outcome.tool_calls,
        "retries": outcome.retries,
        "thread": thread,
        "error": outcome.error,
    }
    rec["cell"] = cell_of(rec)
    return rec


def _get(q: queue.Queue[_T]) -> _T:
    """``q.get()`` in short waits, so a signal reaches the main thread promptly."""
    while True:
        try:
            return q.get(timeout=0.5)
        except queue.Empty:
            continue


def run_eval(
    questions: list[EvalQuestion],
    store: RunStore,
    execute: Callable[[EvalQuestion, str], Outcome],
    *,
    concurrency: int = 1,
    on_result: Callable[[EvalResult, int, int], None] | None = None,
) -> list[EvalResult]:
    """Run every question not yet in ``store``; return all results in question-file order.

    ``on_result(result, done, total)`` is called after each question is recorded. An exception
    from ``execute`` is recorded as that question's failure (exit 1) and the run goes on;
    ``KeyboardInterrupt`` or ``SystemExit`` stops at once: nothing new starts, questions in flight
    are not recorded (a resumed run finishes them on their threads), recorded ones are kept.
    """
    # A failed question produced no answer: a resumed run tries it again (on its thread).
    done = {r["id"]: r for r in store.results() if not r.get("error")}
    todo = [q for q in questions if q.id not in done]
    total = len(questions)
    pool = _Workers(store, execute, todo)
    pool.start(max(1, min(concurrency, len(todo))))
    try:
        for _ in todo:
            rec = _get(pool.out)
            if rec is None:
                continue
            done[rec["id"]] = rec
            if on_result:
                on_result(rec, len(done), total)
    except BaseException:
        # KeyboardInterrupt / SystemExit (SIGTERM): nothing new starts; questions in flight are
        # not recorded, and their threads end with the process.
        pool.stopping.set()
        raise
    return [done[q.id] for q in questions if q.id in done]


class _Workers:
    """Daemon threads that run the questions ``todo`` and put each recorded result on ``out``
    (None for one stopped mid-run); an interrupted run exits at once instead of waiting for a
    model reply."""

    def __init__(
        self,
        store: RunStore,
        execute: Callable[[EvalQuestion, str], Outcome],
        todo: list[EvalQuestion],
    ) -> None:
        self.store = store
        self.execute = execute
        self.stopping = threading.Event()
        self.work: queue.Queue[EvalQuestion | None] = queue.Queue()
        self.out: queue.Queue[EvalResult | None] = queue.Queue()
        for q in todo:
            self.work.put(q)

    def start(self, width: int) -> None:
        for _ in range(width):
            threading.Thread(target=self._worker, name="refgate-eval", daemon=True).start()

    def _one(self, q: EvalQuestion) -> EvalResult | None:
        thread = thread_for(self.store.run_id, q.id)
        started = time.perf_counter()
        try:
            outcome = self.execute(q, thread)
        except Exception as exc:  # recorded, never fatal to the run
            outcome = Outcome(error=f"{type(exc).__name__}: {exc}"[:2000])
        if self.stopping.is_set():
            return None  # interrupted: not recorded, so a resumed run finishes it
        rec = result_record(q, outcome, thread=thread, seconds=time.perf_counter() - started)
        self.store.append(rec)
        return rec

    def _worker(self) -> None:
        while not self.stopping.is_set():
            try:
                q = self.work.get_nowait()
            except queue.Empty:
                return
            if q is None:
                return
            try:
                self.out.put(self._one(q))
            except BaseException as exc:  # never leave the collector waiting
                failed = Outcome(error=f"{type(exc).__name__}: {exc}")
                thread = thread_for(self.store.run_id, q.id)
                self.out.put(result_record(q, failed, thread=thread, seconds=0.0))
                raise
