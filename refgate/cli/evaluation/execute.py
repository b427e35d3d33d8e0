"""Drive the workbench graph for one eval question on its own thread (the CLI's ``execute``)."""

from __future__ import annotations

from typing import Any

from refgate.cli.evaluation.questions import EvalQuestion
from refgate.cli.evaluation.runner import Outcome


class GraphExecutor:
    """Runs questions through one compiled, checkpointed workbench graph (thread-safe: each
    question has its own thread id; the checkpointer serialises its writes)."""

    def __init__(self, graph: Any, workspace_root: str, model: str | None = None):
        self.graph = graph
        self.workspace_root = workspace_root
        self.model = model

    def __call__(self, q: EvalQuestion, thread_id: str) -> Outcome:
        config = {"configurable": {"thread_id": thread_id}, "recursion_limit": 50}
        snapshot = self.graph.get_state(config)
        values = snapshot.values or {}
        if snapshot.next:
            inputs: Any = None  # killed mid-run: finish it, finished passes are not redone
        elif values.get("answer") is not None:
            inputs = "done"  # finished before the kill, not yet recorded
        else:
            inputs = {"question": q.question, "workspace": self.workspace_root}
        if values.get("question") not in (None, q.question):
            raise ValueError(f"thread {thread_id} holds another question; use a new run")
        if inputs != "done":
            self.graph.invoke(inputs, config)
        state = self.graph.get_state(config).values
        return Outcome(
            answer=state.get("answer"),
            gate=dict(state.get("gate") or {}),
            refs=dict(state.get("refs") or {}),
            trace=list(state.get("trace") or []),
            model=self.model,
        )
