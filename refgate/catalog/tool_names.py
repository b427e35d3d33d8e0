"""The tool name table: which tools exist (and the module holding each one's ``SPEC``) and which
pass may call which (the pass whitelist).

Plain data in the core, so core modules (skills, injection inspection, the provenance map) can
name tools without importing ``refgate.tools``; ``refgate.tools.registry`` loads the specs.
"""

from __future__ import annotations

from refgate.config import DELIVER, WORKBENCH_PASSES

#: tool name -> module holding its ``SPEC``.
CATALOG: dict[str, str] = {
    "ReadSkill": "refgate.tools.read_skill",
    "ReadCapability": "refgate.tools.read_capability",
    "read": "refgate.tools.read_file",
    "RunPython": "refgate.tools.run_python",
    "InspectDataset": "refgate.tools.inspect_dataset",
    "EngineCall": "refgate.tools.engine_call",
    "WebSearch": "refgate.tools.web_search",
    "McpCall": "refgate.tools.mcp_call",
    "SaveArtifact": "refgate.tools.save_artifact",
    "RememberDecision": "refgate.tools.remember_decision",
    # Outbound (B3): bound to no LLM pass; the DELIVER step calls it after a person approves.
    "PostReport": "refgate.tools.post_report",
}

#: The pass whitelist. CRITIQUE and COMPOSE think only; GATE is code, not an LLM.
_BOUND: dict[str, tuple[str, ...]] = {
    "brief": ("ReadSkill", "ReadCapability", "read"),
    # McpCall is bound only when the workspace lists MCP servers it may start (nodes/work.py)
    "work": ("RunPython", "InspectDataset", "EngineCall", "WebSearch", "McpCall", "SaveArtifact"),
    "harvest": ("RememberDecision",),
}
#: Every workbench pass -> the tool names bound for it (none for the others). DELIVER binds no
#: tool to a model: it calls PostReport itself, after B3.
PASS_TOOLS: dict[str, tuple[str, ...]] = {
    p: _BOUND.get(p, ()) for p in WORKBENCH_PASSES if p != DELIVER
}


def tools_for(pass_name: str) -> list[str]:
    """The tool names bound for ``pass_name``."""
    if pass_name not in PASS_TOOLS:
        raise KeyError(f"unknown pass {pass_name!r}; passes: {', '.join(PASS_TOOLS)}")
    return list(PASS_TOOLS[pass_name])
