"""The provenance map, generated from the ``ToolSpec`` declarations (the tools' own source of
truth), and the contract check that tests use.

Path syntax (as the tools declare ``untrusted_fields``): ``.`` goes into an object, ``[]`` spreads
a list (``results[].snippet``); a path covers everything beneath it (``entries[]`` covers each
entry and all its fields). ``*`` covers the whole ``data`` object and ``a.*`` everything under ``a``.

Argument slots (boundaries.check_call): a field of a tool's args schema is a forbidden slot for
document-derived text when it is marked ``Field(json_schema_extra={"slot": "<slot>"})`` with
slot in ``path | url | query | tool_name | code``, or, unmarked, when its name says so (see
``SLOT_NAMES``). ``{"slot": "free"}`` opts a field out. ``{"slot": "kwargs"}`` marks a mapping of
keyword arguments passed on to a named callee (EngineCall's ``arguments``): each key is judged
by its name like a field (``kwarg_slots``), so a capability's ``query`` is a query slot too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping

from pydantic import BaseModel
from typing_extensions import TypedDict

from refgate.catalog.toolspec import ToolResult, ToolSpec

#: Per slot, the unmarked field names that imply it, space-separated (``SLOT_NAMES``).
_NAMES_BY_SLOT: dict[str, str] = {
    "path": "path paths file filename file_name output output_path dest destination name_hint"
    " dir directory folder",
    "url": "url urls uri href link endpoint",
    # A research question becomes search queries (engine.deep_research).
    "query": "query queries q search search_query question",
    "tool_name": "tool tool_name function",
    "code": "code command shell script",
}
#: The slots, in the order the module doc names them.
SLOTS = tuple(_NAMES_BY_SLOT)
#: A mapping of keyword arguments for a named callee: its keys are judged by ``SLOT_NAMES``.
KWARGS = "kwargs"
#: Unmarked field name -> the slot it implies.
SLOT_NAMES: dict[str, str] = {
    name: slot for slot, names in _NAMES_BY_SLOT.items() for name in names.split()
}
POLICY = (
    "Values at these paths were written by the author of a document or web page. They reach a "
    "model only inside a nonce fence, are scanned for injection signals (a high signal "
    "withholds them), and must not flow into paths, URLs, tool names, code, the next search "
    "query, or system prompts. A result without untrustedContent counts as untrusted."
)
PATH_SYNTAX = (
    "'.' = object member, '[]' = each list element, a path covers all beneath it; '*' = all of data"
)


def arg_slots(args_schema: type[BaseModel]) -> dict[str, str]:
    """Field name -> slot for one args schema (marker first, then the field name)."""
    out: dict[str, str] = {}
    for name, info in args_schema.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        marked = extra.get("slot")
        if marked in SLOTS:
            out[name] = str(marked)
        elif marked is None and name.lower() in SLOT_NAMES:
            out[name] = SLOT_NAMES[name.lower()]
    return out


def kwarg_fields(args_schema: type[BaseModel]) -> list[str]:
    """Fields marked ``{"slot": "kwargs"}``: keyword arguments handed on to a named callee."""
    out = []
    for name, info in args_schema.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        if extra.get("slot") == KWARGS:
            out.append(name)
    return out


def kwarg_slots(kwargs: object) -> dict[str, str]:
    """Key -> slot for a mapping of keyword arguments (by the key's name, ``SLOT_NAMES``)."""
    if not isinstance(kwargs, Mapping):
        return {}
    return {str(k): SLOT_NAMES[str(k).lower()] for k in kwargs if str(k).lower() in SLOT_NAMES}


class ToolProvenance(TypedDict, total=False):
    """One tool's entry in the provenance map (``error`` alone for a tool that did not load)."""

    error: str | None
    untrusted: list[str]
    origins: dict[str, str]
    readOnly: bool
    outbound: bool
    argSlots: dict[str, str]


class ProvenanceMap(TypedDict):
    """The provenance map: its syntax, policy, envelope flags and each tool's entry."""

    schemaVersion: str
    pathSyntax: str
    policy: str
    envelopeFlags: dict[str, str]
    tools: dict[str, ToolProvenance]


#: One catalog entry as ``refgate.tools.registry.iter_specs`` yields it: (name, spec, load error).
SpecEntry = tuple[str, ToolSpec | None, str | None]


def provenance_map(entries: Iterable[SpecEntry]) -> ProvenanceMap:
    """Per tool: document-derived paths and why (origins), read/write, outbound, arg slots.

    ``entries`` come from the catalog (``refgate.tools.registry.iter_specs()``); a tool that did
    not load is listed with its error.
    """
    tools: dict[str, ToolProvenance] = {}
    for name, spec, error in entries:
        if spec is None:
            tools[name] = {"error": error, "untrusted": [], "origins": {}}
            continue
        tools[name] = {
            "untrusted": sorted(spec.untrusted_fields),
            "origins": dict(sorted(spec.untrusted_fields.items())),
            "readOnly": spec.read_only,
            "outbound": spec.outbound,
            "argSlots": arg_slots(spec.args_schema),
        }
    return {
        "schemaVersion": "1.0",
        "pathSyntax": PATH_SYNTAX,
        "policy": POLICY,
        "envelopeFlags": {
            "untrustedContent": "true when the envelope carries document-derived values; a "
            "missing key means unmarked and is treated as untrusted",
            "untrustedFields": "the paths in data that carry them (a subset of the tool's map)",
        },
        "tools": tools,
    }


# ---- paths ------------------------------------------------------------------------------------

_INDEX_RE = re.compile(r"\[\d+\]")


def generic_path(path: str) -> str:
    """``results[3].title`` -> ``results[].title``."""
    return _INDEX_RE.sub("[]", path)


def covers(declared: str, path: str) -> bool:
    """True when the declared path covers the concrete (or generic) ``path``."""
    declared, path = generic_path(declared.strip()), generic_path(path)
    if declared in ("*", ""):
        return True
    if declared.endswith(".*"):
        declared = declared[:-2]
    return path == declared or path.startswith(declared + ".") or path.startswith(declared + "[]")


def string_leaves(value: object, prefix: str = "") -> Iterator[tuple[str, str]]:
    """(concrete path, string) for every string under ``value``."""
    if isinstance(value, str):
        yield prefix, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from string_leaves(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from string_leaves(item, f"{prefix}[{i}]")


# ---- contract -----------------------------------------------------------------------------


def contract_violations(
    spec: ToolSpec, result: ToolResult, *, canaries: Iterable[str] = ()
) -> list[str]:
    """Ways ``result`` breaks the provenance contract of ``spec`` (empty when it keeps it).

    - a path in ``result.untrusted_fields`` that the spec does not declare;
    - external refs (or untrusted fields) with ``untrusted_content`` false;
    - a string in ``data`` outside every declared path that carries external text: a canary
      the test planted in the tool's input, or 20+ characters of an external ref's payload text.
    """
    problems: list[str] = []
    declared = list(spec.untrusted_fields)
    for path in result.untrusted_fields:
        if not any(covers(d, path) for d in declared):
            problems.append(
                f"{spec.name}: result marks {path!r} untrusted but the spec does not declare it"
            )
    external_refs = [r for r in result.refs if r.is_external]
    if (external_refs or result.untrusted_fields) and result.untrusted_content is False:
        problems.append(f"{spec.name}: external content but untrusted_content is False")
    markers = [c for c in canaries if c]
    for ref in external_refs:
        for key in ("excerpt", "text", "snippet", "content", "body", "title"):
            value = ref.payload.get(key)
            if isinstance(value, str) and len(value.strip()) >= 20:
                markers.append(value.strip()[:40])
    for path, text in string_leaves(result.data):
        if any(covers(d, path) for d in declared):
            continue
        for marker in markers:
            if marker and marker in text:
                problems.append(
                    f"{spec.name}: data.{path} carries external text but no declared "
                    "untrusted path covers it"
                )
                break
    return problems
