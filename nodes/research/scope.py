"""Step 1, scope: decompose the question into 3-6 complementary search angles."""

from __future__ import annotations

import uuid
from typing import Literal

from langchain_core.runnables import RunnableConfig
from langgraph.types import Send

from refgate.nodes.research.backends import ResearchBackend
from refgate.nodes.research.common import emit, research_prompt, run_shared
from refgate.nodes.research.deps import ResearchDeps, run_backend, run_workspace
from refgate.nodes.research.schemas import Scope
from refgate.nodes.research.state import AngleInput, AngleRecord, ResearchState
from refgate.nodes.state import ConfiguredStep
from refgate.provenance.armor import holds_fence


def scope_prompt(question: str) -> str:
    return research_prompt("scope", question=question)


def run_scope(question: str, backend: ResearchBackend) -> Scope | None:
    """The scope, or None when the agent gave no valid answer."""
    scope = backend.run(scope_prompt(question), Scope, label="scope")
    if scope is None:
        return None
    # Angles with the same label would be indistinguishable in the report.
    seen: set[str] = set()
    for i, angle in enumerate(scope.angles):
        label = angle.label.strip() or f"angle {i + 1}"
        while label in seen:
            label += f" ({i + 1})"
        seen.add(label)
        angle.label = label
    return scope


def make_scope(deps: ResearchDeps) -> ConfiguredStep[ResearchState, ResearchState]:
    def scope(state: ResearchState, config: RunnableConfig) -> ResearchState:
        question = (state.get("question") or "").strip()
        token = state.get("run_token") or uuid.uuid4().hex
        if not question:
            emit("scope", status="empty_question")
            return {"question": question, "run_token": token, "status": "empty_question"}
        emit("scope", status="started", question=question)
        # The workspace a client named passes the served allowlist check before anything runs.
        run_workspace(deps, config)
        backend = run_backend(deps, config)
        with run_shared(token, config, deps.limits).limiter:
            result = run_scope(question, backend)
        if result is None:
            emit("scope", status="failed")
            return {
                "question": question,
                "run_token": token,
                "status": "scope_failed",
                "model_calls": 1,
            }
        # the angles' queries go out: written after untrusted text only if the prompt held some
        untrusted = holds_fence(scope_prompt(question))
        angles: list[AngleRecord] = [
            {
                "label": a.label,
                "query": a.query,
                "rationale": a.rationale,
                "writtenAfterUntrusted": untrusted,
            }
            for a in result.angles
        ]
        emit("scope", status="done", angles=[a["label"] for a in angles])
        return {
            "question": question,
            "run_token": token,
            "scope": {"summary": result.summary, "angles": angles},
            "model_calls": 1,
        }

    return scope


def after_scope(state: ResearchState) -> list[Send] | Literal["report"]:
    """One ``angle`` subgraph per angle, or straight to the report when the scope failed."""
    if state.get("status"):
        return "report"
    scope = state["scope"]
    tasks: list[AngleInput] = [
        {"question": state["question"], "run_token": state["run_token"], "angle": a}
        for a in (scope["angles"] if scope else [])
    ]
    return [Send("angle", task) for task in tasks]
