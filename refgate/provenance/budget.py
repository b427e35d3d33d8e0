"""Run budgets: what one run may spend, so that no text (a question, a page, a model) can make a
run go on without end.

The budgets are settings (``refgate.config.Settings``): tool calls per pass and per run, total
sandbox seconds per run, the longest timeout the model may ask RunPython for, the question's and
the answer's length, and the wall time of a run (summed over its passes, so a resumed run keeps
what it spent). A run that crosses one stops with ``BudgetExceeded`` (the CLI: exit 1, "resume
with"), naming the budget and its setting; what it spent is checkpointed in the ``budget`` state
channel, so a run resumed with a larger budget goes on where it stopped.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

# typing_extensions' TypedDict: pydantic (LangServe, Studio schemas) refuses typing's on 3.11.
from typing_extensions import TypedDict

from refgate.errors import Refused

if TYPE_CHECKING:
    from refgate.config import Settings


class BudgetExceeded(Refused, RuntimeError):
    """A run crossed one of its budgets; the message names it and the setting that raises it."""

    def __init__(self, budget: str, setting: str, limit: float, used: float) -> None:
        self.budget, self.setting, self.limit, self.used = budget, setting, limit, used
        super().__init__(
            f"run budget exceeded: {budget} ({_fmt(used)} of {_fmt(limit)}); the run stopped "
            f"cleanly and can be resumed, with a larger REFGATE_{setting.upper()} if the work "
            "needs it"
        )


def _fmt(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _check_length(text: str, what: str, setting: str, limit: int) -> None:
    """Raise ``BudgetExceeded`` for ``text`` longer than ``limit`` (the value of ``setting``)."""
    if len(text) > limit:
        raise BudgetExceeded(f"{what} length in characters", setting, limit, len(text))


def check_question(question: str, settings: Settings) -> None:
    """Raise ``BudgetExceeded`` for a question longer than ``max_question_chars``."""
    _check_length(question, "question", "max_question_chars", settings.max_question_chars)


def check_answer_length(answer: str, settings: Settings) -> None:
    """Raise ``BudgetExceeded`` for an answer longer than ``max_answer_chars``."""
    _check_length(answer, "answer", "max_answer_chars", settings.max_answer_chars)


class BudgetState(TypedDict, total=False):
    """What a run has spent so far (the ``budget`` state channel; ``{}`` outside a run)."""

    tool_calls: int
    sandbox_seconds: float
    seconds: float


@dataclass
class RunBudget:
    """What the run has spent so far (``to_state`` / ``from_state`` through the ``budget``
    channel) against the settings' limits."""

    settings: Settings
    tool_calls: int = 0
    sandbox_seconds: float = 0.0
    #: Seconds spent by the passes that finished (wall time of the run so far).
    seconds: float = 0.0
    pass_calls: int = 0
    _pass_started: float = field(default_factory=time.monotonic, repr=False)

    @classmethod
    def from_state(cls, state: Mapping[str, Any] | None, settings: Settings) -> RunBudget:
        state = state or {}
        return cls(
            settings=settings,
            tool_calls=int(state.get("tool_calls") or 0),
            sandbox_seconds=float(state.get("sandbox_seconds") or 0.0),
            seconds=float(state.get("seconds") or 0.0),
        )

    def elapsed(self) -> float:
        """Wall time of the run: the finished passes plus the current one."""
        return self.seconds + (time.monotonic() - self._pass_started)

    def to_state(self) -> BudgetState:
        """The spent amounts, the current pass's time included (called when a pass ends)."""
        return {
            "tool_calls": self.tool_calls,
            "sandbox_seconds": round(self.sandbox_seconds, 3),
            "seconds": round(self.elapsed(), 3),
        }

    # ---- checks ---------------------------------------------------------------------------
    def check_time(self) -> None:
        limit = self.settings.max_run_seconds
        if self.elapsed() > limit:
            raise BudgetExceeded("wall time of the run in seconds", "max_run_seconds", limit,
                                 round(self.elapsed(), 1))  # fmt: skip

    def before_call(self, tool: str) -> None:
        """Count one tool call of the current pass; raise when a budget is crossed."""
        s = self.settings
        self.check_time()
        if self.pass_calls + 1 > s.max_tool_calls_per_pass:
            raise BudgetExceeded("tool calls in one pass", "max_tool_calls_per_pass",
                                 s.max_tool_calls_per_pass, self.pass_calls + 1)  # fmt: skip
        if self.tool_calls + 1 > s.max_tool_calls_per_run:
            raise BudgetExceeded("tool calls in the run", "max_tool_calls_per_run",
                                 s.max_tool_calls_per_run, self.tool_calls + 1)  # fmt: skip
        if tool == "RunPython" and self.sandbox_seconds >= s.sandbox_seconds_per_run:
            raise BudgetExceeded("sandbox seconds in the run", "sandbox_seconds_per_run",
                                 s.sandbox_seconds_per_run, round(self.sandbox_seconds, 1))  # fmt: skip
        self.pass_calls += 1
        self.tool_calls += 1

    def code_timeout(self, requested: float) -> float:
        """The timeout a RunPython call gets: the model's request, capped by
        ``max_code_timeout`` and by the sandbox seconds the run has left."""
        left = self.settings.sandbox_seconds_per_run - self.sandbox_seconds
        return max(1.0, min(float(requested), self.settings.max_code_timeout, left))

    def add_sandbox(self, seconds: float) -> None:
        self.sandbox_seconds += max(0.0, float(seconds))


def budget_of(extra: dict[str, object], settings: Settings) -> RunBudget:
    """The run budget on a tool context's ``extra`` (a fresh one when missing: direct calls)."""
    budget = extra.get("budget")
    if not isinstance(budget, RunBudget):
        budget = extra["budget"] = RunBudget(settings=settings)
    return budget
