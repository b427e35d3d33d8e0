import pytest

from refgate.catalog.toolspec import ToolSpec
from refgate.tools.registry import CATALOG, PASS_TOOLS, get_spec, tools_for, write_tools

SEED_000 = {
    "brief": ["ReadSkill", "ReadCapability", "read"],
    # McpCall: a workspace's MCP servers (bound only when it lists servers it may start)
    "work": ["RunPython", "InspectDataset", "EngineCall", "WebSearch", "McpCall", "SaveArtifact"],
    "critique": [],
    "compose": [],
    "gate": [],
    "harvest": ["RememberDecision"],
}


def test_per_pass_whitelist_matches_seed_000():
    assert {p: tools_for(p) for p in PASS_TOOLS} == SEED_000
    with pytest.raises(KeyError):
        tools_for("nope")


def test_every_catalog_entry_is_a_spec_with_a_schema():
    for name in CATALOG:
        spec = get_spec(name)
        assert isinstance(spec, ToolSpec) and spec.name == name
        schema = spec.openai_schema()
        assert schema["function"]["name"] == name
        assert schema["function"]["parameters"]["type"] == "object"


def test_write_tools_are_the_ones_that_write():
    assert write_tools() == {"SaveArtifact", "RememberDecision", "PostReport"}
