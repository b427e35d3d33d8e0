"""Ask one eval question through ``refgate.ask`` on its own thread (the CLI's ``execute``).

The run is exactly what ``refgate ask`` does (same resume rules, thread lock, audit record and
usage accounting); a killed question resumes on its thread, finished passes not redone. Each
question keeps its checkpoints and memory in SQLite files of its own under the run's folder
(``threads/<id>.sqlite`` and ``<id>.store.sqlite``): HARVEST remembers every run's decisions and
BRIEF recalls them, so a shared store would let one question's run steer the next (an
order-dependent score) and would fill the workspace's own memory with eval runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from refgate.api.public import ask
from refgate.cli.evaluation.questions import EvalQuestion
from refgate.cli.evaluation.runner import Outcome
from refgate.verdict import Verdict

if TYPE_CHECKING:
    from refgate.config import Settings
    from refgate.workspace import Workspace


class AskExecutor:
    """Runs questions with ``refgate.ask`` against one live model endpoint (``settings``)."""

    def __init__(self, workspace: Workspace, settings: Settings, run_dir: Path):
        self.workspace = workspace
        self.settings = settings
        self.threads = Path(run_dir) / "threads"

    def __call__(self, q: EvalQuestion, thread_id: str) -> Outcome:
        own = self.settings.with_overrides(
            database_url=f"sqlite:///{self.threads / (q.id + '.sqlite')}"
        )
        answer = ask(q.question, workspace=self.workspace, thread=thread_id, settings=own)
        summary = answer.trace_summary or {}
        passes = list(summary.get("passes") or [])
        return Outcome(
            answer=answer.answer,
            gate=Verdict(**answer.gate),
            refs=dict(answer.refs),
            tokens=dict(answer.usage.total),
            cost_usd=answer.usage.cost_usd,
            tool_calls=sum(int(n or 0) for n in (summary.get("tool_calls") or {}).values()),
            retries=max(0, passes.count("work") - 1),
        )
