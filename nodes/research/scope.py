"""Step 1, scope: decompose the question into 3-6 complementary search angles."""

from __future__ import annotations

from typing import Any

from refgate.nodes.research.schemas import Scope


def scope_prompt(question: str) -> str:
    return (
        "Decompose this research question into complementary search angles.\n\n"
        "## Question\n" + question + "\n\n"
        "## Task\n"
        "Generate 5 distinct web search queries (at least 3, at most 6) that together cover the "
        "question from different angles. Pick angles that suit the question's domain. Examples:\n"
        "- broad/primary · academic/technical · recent news · contrarian/skeptical · "
        "practitioner/implementation\n"
        "- For medical: anatomy · common causes · serious differentials · authoritative refs · "
        "red flags\n"
        "- For tech: state-of-art · benchmarks · limitations · industry adoption · cost/tradeoffs\n"
        "- For economics and policy: official records · data and statistics · decisions and "
        "their rationale · dissent and risks · outcomes\n\n"
        "Make queries specific enough to surface high-signal results. Avoid redundancy.\n"
        "Return: the question (verbatim or lightly normalized), a 1-2 sentence decomposition "
        "strategy, and the angles.\n\nStructured output only."
    )


def run_scope(question: str, backend: Any) -> Scope | None:
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
