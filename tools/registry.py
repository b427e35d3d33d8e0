"""The tool catalog: the one source of truth for what each pass may call.

Each tool lives in its own module exposing ``SPEC: ToolSpec``; the catalog below maps tool names to
those modules (imported lazily, so compiling the graph imports no heavy library). ``PASS_TOOLS`` is
seed 000's per-pass whitelist: each LLM pass binds exactly ``tools_for(pass_name)``.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from functools import cache

from refgate.provenance.injection import register_tool_names
from refgate.tools.base import ToolSpec

#: tool name -> module holding its ``SPEC``.
CATALOG: dict[str, str] = {
    "ReadSkill": "refgate.tools.read_skill",
    "ReadCapability": "refgate.tools.read_capability",
    "read": "refgate.tools.read_file",
    "RunPython": "refgate.tools.run_python",
    "InspectDataset": "refgate.tools.inspect_dataset",
    "EngineCall": "refgate.tools.engine_call",
    "WebSearch": "refgate.tools.web_search",
    "SaveArtifact": "refgate.tools.save_artifact",
    "RememberDecision": "refgate.tools.remember_decision",
}
# The injection detector (core) recognises tool names without importing this layer.
register_tool_names(CATALOG)

#: Seed 000's whitelist. CRITIQUE and COMPOSE think only; GATE is code, not an LLM.
PASS_TOOLS: dict[str, tuple[str, ...]] = {
    "brief": ("ReadSkill", "ReadCapability", "read"),
    "work": ("RunPython", "InspectDataset", "EngineCall", "WebSearch", "SaveArtifact"),
    "critique": (),
    "compose": (),
    "gate": (),
    "harvest": ("RememberDecision",),
}


def tools_for(pass_name: str) -> list[str]:
    """The tool names bound for ``pass_name``."""
    if pass_name not in PASS_TOOLS:
        raise KeyError(f"unknown pass {pass_name!r}; passes: {', '.join(PASS_TOOLS)}")
    return list(PASS_TOOLS[pass_name])


#: Test doubles installed by ``override_tool`` (consulted before the catalog).
_OVERRIDES: dict[str, ToolSpec] = {}


@contextlib.contextmanager
def override_tool(spec: ToolSpec) -> Iterator[ToolSpec]:
    """Replace a catalog tool's implementation for the duration of a test (same name only)."""
    if spec.name not in CATALOG:
        raise KeyError(f"override_tool: {spec.name!r} is not a catalog tool")
    previous = _OVERRIDES.get(spec.name)
    _OVERRIDES[spec.name] = spec
    try:
        yield spec
    finally:
        if previous is None:
            _OVERRIDES.pop(spec.name, None)
        else:
            _OVERRIDES[spec.name] = previous


def get_spec(name: str) -> ToolSpec:
    """The catalog entry for tool ``name`` (KeyError for a name not in the catalog)."""
    if name in _OVERRIDES:
        return _OVERRIDES[name]
    return _catalog_spec(name)


@cache
def _catalog_spec(name: str) -> ToolSpec:
    if name not in CATALOG:
        raise KeyError(f"unknown tool {name!r}")
    spec = importlib.import_module(CATALOG[name]).SPEC
    if spec.name != name:
        raise RuntimeError(f"{CATALOG[name]}.SPEC is named {spec.name!r}, catalog says {name!r}")
    return spec


def specs_for(pass_name: str) -> list[ToolSpec]:
    return [get_spec(n) for n in tools_for(pass_name)]


def write_tools() -> set[str]:
    """Names of the tools that write (removed after untrusted reads, boundary B1)."""
    return {n for n in CATALOG if not get_spec(n).read_only}
