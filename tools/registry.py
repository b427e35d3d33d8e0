"""The tool catalog: the one source of truth for what each pass may call.

Each tool lives in its own module exposing ``SPEC: ToolSpec``. The name table (``CATALOG``: tool
name -> module; ``PASS_TOOLS``: the pass whitelist, ``tools_for``) is plain data in the
core, ``refgate.catalog.tool_names``, so core modules can name tools without importing this layer; this
module loads the specs (lazily, so compiling the graph imports no heavy library). Each LLM pass
binds exactly ``tools_for(pass_name)``.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from functools import cache

from refgate.catalog.capabilities import register
from refgate.catalog.tool_names import CATALOG, PASS_TOOLS, tools_for
from refgate.catalog.toolspec import AnyToolSpec
from refgate.tools import capabilities as dataset_capabilities

__all__ = [
    "CATALOG",
    "PASS_TOOLS",
    "get_spec",
    "iter_specs",
    "override_tool",
    "specs_for",
    "tools_for",
    "write_tools",
]

#: Test doubles installed by ``override_tool`` (consulted before the catalog).
_OVERRIDES: dict[str, AnyToolSpec] = {}


@contextlib.contextmanager
def override_tool(spec: AnyToolSpec) -> Iterator[AnyToolSpec]:
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


def get_spec(name: str) -> AnyToolSpec:
    """The catalog entry for tool ``name`` (KeyError for a name not in the catalog)."""
    if name in _OVERRIDES:
        return _OVERRIDES[name]
    return _catalog_spec(name)


@cache
def _catalog_spec(name: str) -> AnyToolSpec:
    if name not in CATALOG:
        raise KeyError(f"unknown tool {name!r}")
    # EngineCall and RunPython run the dataset capabilities: loading a tool registers them (by a
    # call here, not on import; the graph layer registers every layer's list)
    register(dataset_capabilities.CAPABILITIES)
    spec: AnyToolSpec = importlib.import_module(CATALOG[name]).SPEC
    if spec.name != name:
        raise RuntimeError(f"{CATALOG[name]}.SPEC is named {spec.name!r}, catalog says {name!r}")
    return spec


def specs_for(pass_name: str) -> list[AnyToolSpec]:
    return [get_spec(n) for n in tools_for(pass_name)]


def write_tools() -> set[str]:
    """Names of the tools that write (removed after untrusted reads, boundary B1)."""
    return {n for n in CATALOG if not get_spec(n).read_only}


def iter_specs() -> Iterator[tuple[str, AnyToolSpec | None, str | None]]:
    """(name, spec or None, error) for every catalog entry; a tool that fails to import yields its
    error instead (a tool being written right now must not break the provenance map)."""
    for name in CATALOG:
        try:
            yield name, get_spec(name), None
        except Exception as exc:  # reported in the map, not raised
            yield name, None, f"{type(exc).__name__}: {exc}"
