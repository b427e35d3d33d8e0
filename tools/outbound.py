"""Outbound is a write: the one policy for text a tool sends off the machine (search queries,
fetched URLs, the research graph's queries, webhooks, the arguments of a workspace's MCP
server tools: ``McpCall``).

Two rules, checked before the call runs (``check_outbound``; the research graph calls
``check_outbound_text`` for its own queries):

- **B1 for outbound.** In a turn that saw untrusted text (a document, a page, a fenced ref in
  its prompt), the model may send only text that code or the person wrote: every word of a
  query must come from trusted text (the user's question, text registered as trusted), and a
  URL only one that a search of this run returned (the existing B2 rule). A query the model
  wrote after reading a page (``site:collector.example unemp 9.6 ...``) is refused, whatever
  its words.
- **Workspace data stays in.** In every turn, an outbound argument that carries workspace data
  is refused unless ``outbound_workspace_data`` allows it (``carried_data``). Workspace data is
  everything the run could read from the workspace, emitted or not: a number of the run's
  trusted results (valueRef, tableRef, dateRef values), a number its code printed (an
  executionRef's stdout), a value of any workspace dataset (``DatasetValues``: what code read,
  InspectDataset showed, capabilities computed from) and a string cell of a trusted table or a
  dataset (4+ characters). Numbers match by value in any written form (``number_forms``:
  separators, spaces, digit runs, scale words, currency prefixes); the question's own numbers,
  years and small counts do not count. A text built by sandboxed code that could read the
  datasets may carry no number the question does not hold (code can compute anything from
  them). Private document text is external text and already refused by the taint check.

Every query and URL sent is recorded (``record_sent``) in the run's provenance state, listed in
both reports ("sent to the search provider: ...") and kept in the audit record.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING

from refgate.refs import EMITTED_KINDS, Ref
from refgate.tools.dataset_values import DatasetScanFailed, DatasetValues
from refgate.tools.number_forms import MIN_VALUE_DIGITS, matches, mentions, numbers_in, own_numbers

if TYPE_CHECKING:
    from refgate.provenance.record import RunProvenance

#: Tools that send an argument off the machine: name -> (argument slots sent, destination).
SENDS: dict[str, tuple[tuple[str, ...], str]] = {
    "WebSearch": (("query",), "the search provider"),
    "PostReport": (("report",), "the workspace webhook"),
}
#: Engine capabilities (called through EngineCall or RunPython) that send their arguments out.
SENDING_CAPABILITIES: dict[str, tuple[tuple[str, ...], str]] = {
    "deep_research": (("question",), "the search provider (deep research)"),
}

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")
#: Shortest table string that counts as workspace data.
MIN_DATA_STRING = 4


#: The tool whose model-written arguments go to a workspace's MCP server (every leaf of them).
MCP_TOOL = "McpCall"


def _mcp_arguments(args: Mapping[str, object]) -> list[tuple[str, str, str]]:
    """(field, text, destination) for every leaf of an MCP call's ``arguments`` (a listing,
    with no tool, sends none)."""
    if not args.get("tool"):
        return []
    to = f"the MCP server {str(args.get('server') or '')!r}"
    out: list[tuple[str, str, str]] = []
    stack: list[tuple[str, object]] = [("arguments", args.get("arguments") or {})]
    while stack:
        path, value = stack.pop()
        if isinstance(value, Mapping):
            stack.extend((f"{path}.{k}", v) for k, v in reversed(list(value.items())))
        elif isinstance(value, list | tuple):
            stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(value))))
        elif value is not None and not isinstance(value, bool):
            out.append((path, value if isinstance(value, str) else str(value), to))
    return out


def sent_arguments(tool: str, args: Mapping[str, object]) -> list[tuple[str, str, str]]:
    """(field, text, destination) for every argument of this call that leaves the machine."""
    if tool == MCP_TOOL:
        return _mcp_arguments(args)
    spec = SENDS.get(tool)
    if tool == "EngineCall":
        spec = SENDING_CAPABILITIES.get(str(args.get("name") or ""))
        raw_args = args.get("arguments")
        args = raw_args if isinstance(raw_args, Mapping) else {}
    if spec is None:
        return []
    fields, to = spec
    out = []
    for name in fields:
        value = args.get(name)
        if value is None:
            continue
        out.append((name, value if isinstance(value, str) else str(value), to))
    return out


def record_sent(prov: RunProvenance, tool: str, args: Mapping[str, object]) -> None:
    """Keep every text this call sends in the run's provenance (``RunProvenance.record_sent``:
    the audit record and the reports' "sent to ..." lines)."""
    for field_name, text, to in sent_arguments(tool, args):
        prov.record_sent(tool, to, text, field_name)


def _leaves(value: object) -> Iterator[object]:
    if isinstance(value, Mapping):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


@dataclass
class WorkspaceData:
    """What an outbound text may not carry: the numbers and strings of the run's trusted
    results, the numbers its code printed, and (``datasets``) every dataset of the workspace."""

    numbers: list[Decimal] = field(default_factory=list)
    strings: set[str] = field(default_factory=set)
    datasets: DatasetValues | None = None


def workspace_data(refs: Iterable[Ref], datasets: DatasetValues | None = None) -> WorkspaceData:
    """The run's workspace data: values and string cells of its trusted results, and numbers
    its code printed (an executionRef's stdout), whether or not they were emitted."""
    data = WorkspaceData(datasets=datasets)
    for ref in refs:
        if ref.is_external:
            continue
        p = ref.payload
        if ref.kind == "executionRef":
            data.numbers += numbers_in(str(p.get("stdout") or ""))
            continue
        if ref.kind not in EMITTED_KINDS:
            continue
        body = p.get("rows") if ref.kind == "tableRef" else p.get("values", p.get("date"))
        for leaf in _leaves(body):
            if isinstance(leaf, bool) or leaf is None:
                continue
            if isinstance(leaf, int | float):
                if math.isfinite(leaf):
                    data.numbers.append(Decimal(str(leaf)))
            elif isinstance(leaf, str):
                text = leaf.strip()
                values = list(numbers_in(text)) if _NUMBER.fullmatch(text) else []
                if values:
                    data.numbers += values
                elif len(text) >= MIN_DATA_STRING:
                    data.strings.add(text.casefold())
    return data


def carried_data(
    text: str,
    refs: Iterable[Ref],
    trusted: Iterable[str],
    *,
    datasets: DatasetValues | None = None,
    from_code: bool = False,
) -> list[str]:
    """The workspace data ``text`` carries: numbers (in any written form, ``number_forms``)
    and strings of the run's results, printed output and datasets that the trusted texts
    (the question) do not hold. Years and small counts are not data.

    ``from_code``: code that could read the datasets wrote ``text`` (``engine.<name>(...)`` in
    RunPython): any number it computed may come from them, so every number the question does
    not hold counts."""
    trusted = list(trusted)
    data = workspace_data(refs, datasets)
    trusted_text = " ".join(trusted).casefold()
    found = own_numbers([m for m in mentions(text) if not m.small or m.runs], trusted)
    carried: list[str] = []
    for m in found:
        computed = from_code and not m.small
        if computed or any(matches(m, v, min_digits=MIN_VALUE_DIGITS) for v in data.numbers):
            carried.append(m.text)
    folded = text.casefold()
    for s in data.strings:
        if s in folded and s not in trusted_text:
            carried.append(s)
    if data.datasets is not None:
        left = [m for m in found if m.text not in carried]
        for hit in data.datasets.carried(text, left):
            if hit.casefold() not in trusted_text and hit not in carried:
                carried.append(hit)
    return carried


def trusted_words(trusted: Iterable[str]) -> set[str]:
    return {w.casefold() for t in trusted for w in _WORD.findall(t)}


def check_outbound_text(
    text: str,
    *,
    to: str,
    untrusted_turn: bool,
    trusted: Iterable[str],
    refs: Iterable[Ref] = (),
    allow_data: bool = False,
    url: bool = False,
    datasets: DatasetValues | None = None,
    from_code: bool = False,
) -> str | None:
    """A refusal reason for sending ``text`` to ``to``, else None (see the module doc).

    ``trusted``: texts the person or code wrote (the question, code-built queries);
    ``refs``: the run's ledger (its trusted results and printed output are workspace data);
    ``datasets``: the workspace's datasets (their values are workspace data);
    ``from_code``: sandboxed code built the text (see ``carried_data``);
    ``url``: the text is a URL (its origin is checked by B2, not its words)."""
    trusted = list(trusted)
    if untrusted_turn and not url:
        allowed = trusted_words(trusted)
        foreign = [w for w in _WORD.findall(text) if w.casefold() not in allowed]
        if foreign:
            shown = ", ".join(dict.fromkeys(foreign[:6]))
            return (
                f"this turn read untrusted content, so text sent to {to} may only be written "
                f"by the person or by code (words not in the question: {shown}); outbound is "
                "a write (boundary B1). Send the user's question as it is, or nothing"
            )
    if not allow_data:
        try:
            data = carried_data(text, refs, trusted, datasets=datasets, from_code=from_code)
        except DatasetScanFailed as exc:
            return f"the text sent to {to} could not be checked for workspace data: {exc}"
        if data:
            shown = ", ".join(dict.fromkeys(data[:6]))
            origin = "code that could read the workspace's datasets wrote it; " if from_code else ""
            return (
                f"the text sent to {to} carries workspace data ({shown}); {origin}the "
                "workspace's data and this run's results do not leave the machine unless "
                "outbound_workspace_data allows it"
            )
    return None


def check_outbound(
    tool: str,
    args: Mapping[str, object],
    *,
    untrusted_turn: bool,
    trusted: Iterable[str],
    refs: Iterable[Ref],
    allow_data: bool,
    datasets: DatasetValues | None = None,
    from_code: bool = False,
) -> str | None:
    """``check_outbound_text`` for every argument of a tool call that leaves the machine."""
    trusted = list(trusted)
    refs = list(refs)
    for name, text, to in sent_arguments(tool, args):
        if tool == "PostReport":
            continue  # the report is built by code and approved by a person (B3)
        why = check_outbound_text(
            text,
            to=to,
            untrusted_turn=untrusted_turn,
            trusted=trusted,
            refs=refs,
            allow_data=allow_data,
            datasets=datasets,
            from_code=from_code,
        )
        if why:
            return f"argument {name!r}: {why}"
    return None


#: Where the research graph sends (``deep_research`` and ``refgate research``): its search
#: queries and the pages it fetches.
RESEARCH_SEARCH = "the search provider"
RESEARCH_FETCH = "the web (page fetch)"
#: Where DELIVER's report post goes.
WEBHOOK = "the workspace webhook"


@dataclass(frozen=True)
class OutboundPolicy:
    """The outbound policy of a run, for what it starts (the research graph run as a capability):
    texts the person or code wrote (``trusted``), the run's refs (their results are workspace
    data), the workspace's ``datasets``, the ``outbound_workspace_data`` setting, and
    ``record(tool, to, text, slot)`` to keep what was sent in the run's provenance
    (``RunProvenance.record_sent``)."""

    trusted: tuple[str, ...] = ()
    refs: tuple[Ref, ...] = ()
    allow_data: bool = False
    datasets: DatasetValues | None = None
    record: Callable[[str, str, str, str], None] | None = None
