"""BRIEF's direct skill lookup (the model read no skill) never picks a skill whose required
evidence the workspace cannot supply: on a workspace without web pages, a research-like
question gets no deep-research plan (the GATE would block a right answer for a missing webRef)."""

from __future__ import annotations

from langgraph.checkpoint.memory import InMemorySaver

from refgate.graph import build_graph
from refgate.testing import KeyedChatModel
from refgate.workspace import load_workspace

QUESTION = "Research what analysts said about the 2008 recession"


def brief_plan(settings, workspace) -> dict:
    model = KeyedChatModel(rules=[("You are BRIEF", '{"lens": "overview"}')])
    graph = build_graph(
        model=model, checkpointer=InMemorySaver(), workspace=workspace, settings=settings
    )
    config = {"configurable": {"thread_id": "fallback"}}
    graph.invoke({"question": QUESTION}, config, interrupt_after=["brief"])
    return graph.get_state(config).values["plan"]


def test_the_fallback_skips_a_skill_the_workspace_cannot_supply(settings, workspace):
    plan = brief_plan(settings, workspace)
    assert "deep-research" not in plan["skills"]
    assert "webRef" not in plan["required_evidence"]
    assert "skipped deep-research (needs webRef)" in plan["fallback"]


def test_the_fallback_keeps_it_when_the_workspace_has_web_pages(settings, workspace):
    root = workspace.root
    (root / "web").mkdir()
    (root / "web" / "index.json").write_text("[]", encoding="utf-8")
    toml = (root / "refgate.toml").read_text(encoding="utf-8")
    (root / "refgate.toml").write_text(toml + '[web_snapshot]\npath = "web"\n', encoding="utf-8")
    plan = brief_plan(settings, load_workspace(root))
    assert plan["skills"] == ["deep-research"]
