"""Evidence cards: what each ref of a run shows in a report, as plain data.

Input is plain data only (refs as dicts, the GATE's report dict), so the renderer needs nothing
from the graph, the nodes or the tools. A card says what the evidence is (kind, title, values with
units, scale and period), where it came from (dataset and column, document and page, URL) with its
trust and authority, the first rows of a table with the cells the GATE matched highlighted, and,
for computed evidence, the code that produced it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import NotRequired, TypeAlias, TypeGuard, cast

from typing_extensions import TypedDict

from refgate.refs import Ref, cited_ids, payload_values
from refgate.report.lineage import lineage

#: Table rows shown per card (rows holding a cited cell are shown too, wherever they are).
MAX_ROWS = 12
#: Characters of an excerpt, of a value and of code shown on a card.
MAX_EXCERPT = 1500
MAX_CELL = 200
MAX_CODE = 6000
MAX_CARDS = 300

#: Kinds that are evidence for an answer (the others are bookkeeping: skills, verdicts, ...).
EVIDENCE_KINDS = ("valueRef", "tableRef", "dateRef", "docRef", "webRef", "artifactRef")

#: How the GATE names a matched table cell / value (``refgate/gate/index.py``: ``row {r} [{col}]``
#: and ``values.{name}``); tests/report ties these to the GATE's real output.
_CELL = re.compile(r"^row (\d+) \[(.*?)\](?:=| \()")
_VALUE = re.compile(r"^values\.(.+?)=")
_SAFE_ANCHOR = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

#: A ref as plain data, as a report reads it (``Ref.model_dump``, or a stored or hand-written
#: dict: every field is checked where it is read).
RefDict: TypeAlias = Mapping[str, object]


def _map(value: object) -> Mapping[str, object]:
    """``value`` if it is a mapping, else an empty one (a report reads any JSON)."""
    return value if isinstance(value, Mapping) else {}


def _iter(value: object) -> Iterable[object]:
    """``value or []``: a list field as stored (iterated as it is, as before it was typed)."""
    return cast(Iterable[object], value or [])


class Trust(TypedDict):
    """A card's trust (may its text steer the agent) and authority, and the badge saying both."""

    trust: str
    authority: str
    badge: str


class Source(TypedDict):
    """Where a card's evidence came from: a label, details (name, value), a URL."""

    label: str
    details: list[tuple[str, str]]
    url: str | None
    linkable: bool


class ValueRow(TypedDict):
    """One value of a valueRef card."""

    name: str
    value: str
    unit: str
    scale: str
    has_citation: bool


class TableCell(TypedDict):
    text: str
    has_citation: bool


class TableRow(TypedDict):
    """One shown row of a tableRef card (``gap``: rows before it are hidden)."""

    index: int
    gap: bool
    cells: list[TableCell]


class TableColumn(TypedDict):
    name: str
    unit: str


class TableView(TypedDict):
    """A tableRef card's table: the first rows and every row holding a cited cell."""

    columns: list[TableColumn]
    rows: list[TableRow]
    total_rows: int
    hidden_rows: int
    cited_cells: int


class Producer(TypedDict, total=False):
    """The execution that computed a ref: its id, a label, its code (or capability call) and,
    for code, the lineage read from it."""

    exe: str
    label: str
    code: str
    lineage: dict[str, list[str]]


class Hits(TypedDict):
    """The table cells (row, column) and value names the GATE matched in one ref."""

    cells: set[tuple[int, str]]
    values: set[str]


class Card(TypedDict):
    """One evidence card, as every report format renders it."""

    id: str
    anchor: str
    kind: str
    title: str
    period: str
    label: str
    value_rows: list[ValueRow]
    table: TableView | None
    excerpt: str | None
    source: Source
    trust: Trust
    influence: str
    code: str | None
    producer: str
    chart: dict[str, object] | None
    #: The reader's citation number (set by the renderers).
    number: NotRequired[int | None]


class IssueRow(TypedDict):
    """A GATE issue as the reports list it."""

    code: str
    claim: str
    detail: str


class Verdict(TypedDict):
    """The GATE's verdict in one line: ``status`` (none, passed, warn, blocked) and its text."""

    status: str
    text: str


def anchor(ref_id: str) -> str:
    """The HTML id of a ref's card: ``ref-<id>`` for ordinary ids, a hash otherwise."""
    if _SAFE_ANCHOR.match(ref_id):
        return f"ref-{ref_id}"
    return "ref-h" + hashlib.sha256(ref_id.encode("utf-8", "replace")).hexdigest()[:16]


def clip(value: object, limit: int) -> str:
    """``value`` as text, cut at ``limit`` characters with an ellipsis."""
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def trust_of(ref: Mapping[str, object]) -> Trust:
    """Trust (may its text steer the agent) and authority (is it primary evidence for a number)
    of a ref, as ``Ref.is_external`` and ``Ref.is_secondary`` judge them by origin."""
    try:
        parsed = Ref.model_validate({**ref, "payload": {}})  # origin only: skip the payload
    except (ValueError, TypeError):
        external, secondary = True, True  # a ref that is not valid is trusted with nothing
    else:
        external, secondary = parsed.is_external, parsed.is_secondary
    if ref.get("source_type") == "llm":
        external = True
    trust = "untrusted" if external else "trusted"
    authority = "secondary" if secondary else "primary"
    badge = (
        "model-written, secondary" if ref.get("source_type") == "llm" else (f"{trust}, {authority}")
    )
    if ref.get("influenced_by"):
        badge += ", influenced: computed after an untrusted read"
    return {"trust": trust, "authority": authority, "badge": badge}


def cited_cells(gate: Mapping[str, object] | None) -> dict[str, Hits]:
    """Per ref id, the table cells (``(row, column)``) and value names the GATE matched."""
    out: dict[str, Hits] = {}
    for claim in _iter(_map(gate).get("claims")):
        if not isinstance(claim, Mapping):
            continue
        for mention in claim.get("mentions") or []:
            if not isinstance(mention, Mapping):
                continue
            for match in mention.get("matches") or []:
                if not isinstance(match, Mapping):
                    continue
                ref_id, how = str(match.get("ref_id", "")), str(match.get("how", ""))
                slot = out.setdefault(ref_id, {"cells": set(), "values": set()})
                if m := _CELL.match(how):
                    slot["cells"].add((int(m.group(1)), m.group(2)))
                elif m := _VALUE.match(how):
                    slot["values"].add(m.group(1))
    return out


def source_of(ref: Mapping[str, object]) -> Source:
    """Where the evidence came from: a label, details, and a URL (shown; linked only if http(s))."""
    p = _map(ref.get("payload"))
    meta = _map(p.get("meta"))
    src = str(ref.get("source") or "")
    details: list[tuple[str, str]] = []
    url = None
    if ref.get("kind") == "webRef" or p.get("url"):
        url = clip(p.get("url") or src, 2000)
        label = "web page"
    elif src.startswith("mcp:"):
        label = "MCP server tool (untrusted, secondary)"
        details += [(k, clip(p.get(k), 200)) for k in ("server", "tool") if p.get(k)]
    elif ref.get("kind") == "docRef" or (ref.get("source_type") == "external" and meta.get("page")):
        label = "workspace document"
        fields = p if ref.get("kind") == "docRef" else meta  # a document's table: meta.source/page
        for key, name in (
            ("source", "file"),
            ("doc_id", "document"),
            ("page", "page"),
            ("sheet", "sheet"),
            ("section", "section"),
            ("date", "date"),
        ):
            if fields.get(key) not in (None, ""):
                details.append((name, clip(fields.get(key), 300)))
    elif src.startswith("dataset:") or meta.get("dataset"):
        label = "dataset"
        details.append(("dataset", clip(meta.get("dataset") or src.split(":", 1)[1], 200)))
        if meta.get("column"):
            details.append(("column", clip(meta["column"], 200)))
    elif src.startswith("RunPython:"):
        label = "computed by RunPython"
    else:
        label = clip(src or ref.get("created_by") or "unknown", 200)
    if src and src != url and ("source", src) not in details:
        details.append(("ref source", clip(src, 300)))
    return {"label": label, "details": details, "url": url, "linkable": is_http(url)}


def is_http(url: object) -> TypeGuard[str]:
    """True for an absolute http(s) URL (the only kind a report links)."""
    return isinstance(url, str) and re.match(r"^https?://[^\s<>\"']+$", url, re.I) is not None


def _values(p: Mapping[str, object], hits: set[str]) -> list[ValueRow]:
    values = payload_values(p)
    if not isinstance(values, Mapping):
        return []
    units = _map(p.get("units"))
    unit_all = p.get("units") if isinstance(p.get("units"), str) else p.get("unit")
    scale = p.get("scale")
    rows: list[ValueRow] = []
    for name, v in list(values.items())[:50]:
        rows.append(
            {
                "name": clip(name, MAX_CELL),
                "value": clip(v, MAX_CELL),
                "unit": clip(units.get(name, unit_all) or "", 80),
                "scale": clip(scale.get(name) if isinstance(scale, Mapping) else scale or "", 40),
                "has_citation": str(name) in hits,
            }
        )
    return rows


def _table(p: Mapping[str, object], cells: set[tuple[int, str]]) -> TableView | None:
    columns = p.get("columns")
    rows = p.get("rows")
    if not isinstance(columns, list) or not isinstance(rows, list):
        return None
    names = [str(c) for c in columns]
    units = _map(p.get("units"))
    cited_rows = sorted({r for r, _ in cells if 0 <= r < len(rows)})
    shown = sorted(set(range(min(MAX_ROWS, len(rows)))) | set(cited_rows[:MAX_ROWS]))
    body: list[TableRow] = []
    last = -1
    for r in shown:
        row = rows[r]
        cells_in = (
            [row.get(c) for c in names]
            if isinstance(row, Mapping)
            else list(row)
            if isinstance(row, list | tuple)
            else [row]
        )
        body.append(
            {
                "index": r,
                "gap": r != last + 1,
                "cells": [
                    {
                        "text": clip(v, MAX_CELL),
                        "has_citation": (r, names[j] if j < len(names) else str(j)) in cells,
                    }
                    for j, v in enumerate(cells_in[:60])
                ],
            }
        )
        last = r
    return {
        "columns": [
            {"name": clip(c, MAX_CELL), "unit": clip(units.get(c) or "", 80)} for c in names[:60]
        ],
        "rows": body,
        "total_rows": len(rows),
        "hidden_rows": len(rows) - len(shown),
        "cited_cells": len(cells),
    }


def _call_text(name: object, arguments: object) -> str:
    args = arguments if isinstance(arguments, Mapping) else {}
    shown = ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in list(args.items())[:20]
    )
    return f"engine.{name}({shown})"


def producers_of(refs: Mapping[str, RefDict]) -> dict[str, Producer]:
    """Per ref id, the execution that computed it: ``{exe, label, code}`` (RunPython's code, or
    the EngineCall capability and its arguments), from the run's executionRefs."""
    out: dict[str, Producer] = {}
    for exe_id, exe in refs.items():
        if exe.get("kind") != "executionRef" or not isinstance(exe.get("payload"), Mapping):
            continue
        p = _map(exe["payload"])
        tool = str(p.get("tool") or "")
        if tool == "EngineCall":
            entry: Producer = {
                "exe": exe_id,
                "label": f"computed by EngineCall ({exe_id})",
                "code": _call_text(p.get("capability"), p.get("arguments")),
            }
            produced = p.get("refs")
        else:
            entry = {
                "exe": exe_id,
                "label": f"computed by {tool or 'code'} ({exe_id})",
                "code": clip(p.get("code"), MAX_CODE),
                # the dataset, columns and filter a reader asks for, read from the code
                "lineage": lineage(
                    p.get("code"),
                    read if isinstance(read := p.get("read"), list) else [],
                    sql if isinstance(sql := p.get("sql"), list) else [],
                ),
            }
            emitted = p.get("emitted")
            produced = list(emitted or []) if isinstance(emitted, list) else []
            for call in _iter(p.get("engine_calls")):
                if isinstance(call, Mapping) and isinstance(call.get("refs"), list):
                    produced += call["refs"]
        for ref_id in produced if isinstance(produced, list) else []:
            out.setdefault(str(ref_id), entry)
        out.setdefault(exe_id, entry)
    for ref_id, ref in refs.items():  # emitted results name their execution in ``source``
        src = str(ref.get("source") or "")
        if ref_id not in out and src.startswith("RunPython:") and src[10:] in out:
            out[ref_id] = out[src[10:]]
    return out


def card(
    ref: Mapping[str, object],
    refs: Mapping[str, RefDict],
    hits: Hits | None = None,
    producers: Mapping[str, Producer] | None = None,
) -> Card:
    """One evidence card (plain data) for ``ref`` (a ref dict)."""
    hits = hits or {"cells": set(), "values": set()}
    if producers is None:
        producers = producers_of(refs)
    producer = producers.get(str(ref.get("id", "")))
    p = _map(ref.get("payload"))
    ref_id = str(ref.get("id", ""))
    kind = str(ref.get("kind", ""))
    period = p.get("period") or p.get("asOf") or p.get("as_of") or p.get("date")
    meta = p.get("meta")
    if kind == "tableRef" and isinstance(meta, Mapping):
        period = period or meta.get("period") or meta.get("asOf")
    excerpt = None
    for key in ("excerpt", "text", "quote", "decision", "summary"):
        text = p.get(key)
        if isinstance(text, str) and text.strip():
            excerpt = clip(text, MAX_EXCERPT)
            break
    source = source_of(ref)
    found = (producer or {}).get("lineage")
    if isinstance(found, Mapping) and kind in ("valueRef", "tableRef", "dateRef"):
        shown = {name for name, _ in source["details"]}
        for key, name, sep in (
            ("datasets", "dataset", ", "),
            ("columns", "columns", ", "),
            ("filters", "filter", "; "),
        ):
            if found.get(key) and name not in shown:
                source["details"].append((name, clip(sep.join(found[key]), 300)))
    return {
        "id": clip(ref_id, 200),
        "anchor": anchor(ref_id),
        "kind": clip(kind, 40),
        "title": clip(ref.get("title") or p.get("title") or "", 300),
        "period": clip(period or "", 120),
        "label": clip(p.get("label") or "", 200) if kind == "dateRef" else "",
        "value_rows": _values(p, hits["values"]) if kind == "valueRef" else [],
        "table": _table(p, hits["cells"]) if kind == "tableRef" else None,
        "excerpt": excerpt,
        "source": source,
        "trust": trust_of(ref),
        "influence": influence_note(ref.get("influenced_by")),
        "code": (producer or {}).get("code") or None,
        "producer": (producer or {}).get("label") or "",
        "chart": None,
    }


def citation_numbers(*answers: str, refs: Mapping[str, object]) -> dict[str, int]:
    """Reader's numbers ``[1]``, ``[2]`` for the refs the answers cite, in order of first
    citation (the ids stay in anchors and in the JSON)."""
    numbers: dict[str, int] = {}
    for text in answers:
        for ref_id in cited_ids(text, refs):
            numbers.setdefault(ref_id, len(numbers) + 1)
    return numbers


def build_cards(
    answer: str, refs: Mapping[str, RefDict], gate: Mapping[str, object] | None
) -> tuple[list[Card], list[Card]]:
    """Cards for the cited refs (in citation order) and for the other evidence of the run."""
    hits = cited_cells(gate)
    cited = cited_ids(answer, refs)
    made = producers_of(refs)
    first = [card(refs[i], refs, hits.get(i), made) for i in cited[:MAX_CARDS]]
    rest_ids = [
        i for i, r in refs.items() if i not in set(cited) and r.get("kind") in EVIDENCE_KINDS
    ]
    rest = [
        card(refs[i], refs, hits.get(i), made) for i in rest_ids[: max(0, MAX_CARDS - len(first))]
    ]
    return first, rest


def unmet_claims(gate: Mapping[str, object] | None) -> list[IssueRow]:
    """The GATE's blocking issues, one per (code, claim, detail)."""
    rows: list[IssueRow] = []
    seen: set[tuple[str, str, str]] = set()
    for issue in _iter(_map(gate).get("issues")):
        if not isinstance(issue, Mapping) or issue.get("severity", "block") != "block":
            continue
        key = (
            str(issue.get("code", "")),
            str(issue.get("claim", "")),
            str(issue.get("detail", "")),
        )
        if key in seen:
            continue
        seen.add(key)
        rows.append(
            {"code": clip(key[0], 80), "claim": clip(key[1], 600), "detail": clip(key[2], 800)}
        )
    return rows


#: What the reports say above the answer's sentences that the GATE did not verify.
CONCLUSIONS_NOTE = (
    "Sentences of the answer that state no checked number, date or ranking (outlooks, "
    "recommendations, judgements): the model's own conclusions, not verified against evidence."
)


def sent_lines(sent: object) -> list[str]:
    """The reports' lines for what a run sent off the machine (``RunProvenance.sent``):
    ``sent to the search provider (WebSearch): "query"``."""
    return [
        f'sent to {s.get("to", "?")} ({s.get("tool", "?")}): "{s.get("text", "")}"'
        for s in _iter(sent)
        if isinstance(s, Mapping)
    ]


def influence_note(influenced_by: object) -> str:
    """What a report and the terminal say next to a value computed after an untrusted read."""
    seen = [str(x) for x in _iter(influenced_by)][:5]
    if not seen:
        return ""
    return f"computed after reading {', '.join(seen)} (untrusted); check the code"


def warnings(gate: Mapping[str, object] | None) -> list[IssueRow]:
    """The GATE's warnings (severity ``warn``)."""
    return [
        {
            "code": clip(i.get("code"), 80),
            "claim": clip(i.get("claim"), 600),
            "detail": clip(i.get("detail"), 800),
        }
        for i in _iter(_map(gate).get("issues"))
        if isinstance(i, Mapping) and i.get("severity") == "warn"
    ]


def verdict(gate: Mapping[str, object] | None) -> Verdict:
    """``passed`` / ``passed with warnings`` / ``blocked with N unmet claims`` (or no verdict)."""
    if not gate or "passed" not in gate:
        return {"status": "none", "text": "no GATE verdict (the run did not reach the GATE)"}
    unmet = len(unmet_claims(gate))
    warns = len(warnings(gate))
    if gate.get("passed") and not unmet:
        if warns:
            return {"status": "warn", "text": f"passed with {warns} warning(s)"}
        return {"status": "passed", "text": "passed"}
    return {"status": "blocked", "text": f"blocked with {unmet} unmet claim(s)"}


def as_ref_dicts(
    refs: Mapping[str, object] | Sequence[object] | None,
) -> dict[str, dict[str, object]]:
    """Refs (``Ref`` objects or dicts, as a mapping or a list) as ``{id: dict}``."""
    items = refs.values() if isinstance(refs, Mapping) else (refs or [])
    out: dict[str, dict[str, object]] = {}
    for item in items:
        d = item.model_dump(mode="json") if hasattr(item, "model_dump") else item
        if isinstance(d, Mapping) and d.get("id") is not None:
            out[str(d["id"])] = dict(d)
    return out
