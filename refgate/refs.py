"""Typed evidence references (refs) and the ref ledger.

Every tool run issues refs that carry the evidence itself in ``payload``. A ref is immutable;
only ``id``, ``kind`` and ``payload`` are required. Ids are short enough to cite (``val_7f3a9c01e2``)
and drawn from 40 random bits, so they do not collide across runs and threads in practice; a ledger
never holds two different refs under one id (``RefLedger.add`` redraws on a clash).

Payload conventions the GATE and the tools rely on:

- valueRef: ``{"values": {name: number}, "units": {name: unit}, "scale": "million" | ... (optional),
  "period" / "asOf" (optional)}``
- tableRef: ``{"columns": [...], "rows": [[...]], "units": {column: unit}, "meta": {...}}``
- dateRef: ``{"date": "2008-12-16", "label": "..."}``
- docRef / webRef: ``{"doc_id" | "url": ..., "excerpt": ..., ...}`` (external text)
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
import secrets
from collections.abc import Container, Iterable, Mapping, Sequence
from typing import Any, Literal, NotRequired, cast, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

# typing_extensions' TypedDict: pydantic (LangServe, Studio schemas) refuses typing's on 3.11.
from typing_extensions import TypedDict, Unpack

from refgate.payloads import JsonValue

RefKind = Literal[
    "skillRef",
    "apiRef",
    "executionRef",
    "valueRef",
    "tableRef",
    "dateRef",
    "webRef",
    "docRef",
    "artifactRef",
    "verifyRef",
    "decisionRef",
]
SourceType = Literal["internal", "external", "llm"]
#: Is a ref primary evidence for a number (a dataset, a computation, a filing) or secondary (a web
#: page reporting it, model output)? Separate from trust: a workspace document is untrusted text
#: (``source_type="external"``) and yet primary evidence for its own numbers.
Authority = Literal["primary", "secondary"]

REF_KINDS: tuple[str, ...] = get_args(RefKind)

#: Short, readable id prefix per kind.
KIND_PREFIX: dict[str, str] = {
    "skillRef": "skl",
    "apiRef": "api",
    "executionRef": "exe",
    "valueRef": "val",
    "tableRef": "tbl",
    "dateRef": "dat",
    "webRef": "web",
    "docRef": "doc",
    "artifactRef": "art",
    "verifyRef": "vfy",
    "decisionRef": "dec",
}
PREFIX_KIND: dict[str, str] = {v: k for k, v in KIND_PREFIX.items()}
#: What a cited ref id looks like: a kind prefix and id characters, or a short prefix and hex
#: digits. The GATE (``refgate/gate/markdown.py``) and the report (``refgate/report/answer.py``)
#: read a bracket as a citation when each of its ids is in the ledger or looks like one.
ID_LIKE = re.compile(
    rf"^(?:{'|'.join(KIND_PREFIX.values())})_[0-9A-Za-z]*$|^[A-Za-z]{{2,12}}_[0-9a-f]{{3,}}$"
)
_CITE_SEP = re.compile(r"[,;\s]+")
#: A bracket that may be a citation (``[id]``, ``[id, id]``): one line, no nested brackets.
CITATION_BRACKET = re.compile(r"\[([^\[\]\n]{1,400})\]")


def bracket_ids(inner: str, known: Container[str]) -> list[str]:
    """The ids one citation bracket's text cites (``a``, ``a, b``, ``a; b``), or [] when one of
    them is neither in ``known`` nor looks like a ref id (the bracket is then no citation)."""
    ids = [t for t in _CITE_SEP.split(inner.strip()) if t]
    return ids if ids and all(t in known or ID_LIKE.match(t) for t in ids) else []


def cited_ids(answer: str, refs: Container[str]) -> list[str]:
    """Ids of the ledger refs ``answer`` cites, first citation first: each bracket read as the
    GATE reads it (``bracket_ids``), its ids kept when they are in ``refs``."""
    seen: dict[str, None] = {}
    for m in CITATION_BRACKET.finditer(answer):
        for ref_id in bracket_ids(m.group(1), refs):
            if ref_id in refs:
                seen.setdefault(ref_id, None)
    return list(seen)


#: Kinds WORK emits as results (RunPython's ``emit_result``, engine capabilities).
EMITTED_KINDS = frozenset({"valueRef", "tableRef", "dateRef"})
#: Kinds that record the untrusted text their turn saw (``Ref.influenced_by``).
INFLUENCED_KINDS = EMITTED_KINDS | {"artifactRef", "executionRef"}
#: ``meta.role`` of a tableRef that describes a dataset (its schema) instead of a result.
SCHEMA_ROLE = "schema"

#: Hex characters after the prefix; fixed, so a truncated citation is detectable.
ID_HEX_LEN = 10

#: Scale words a valueRef may carry, with their multipliers.
SCALES: dict[str, float] = {
    "thousand": 1e3,
    "million": 1e6,
    "billion": 1e9,
    "trillion": 1e12,
    "천": 1e3,
    "만": 1e4,
    "억": 1e8,
    "조": 1e12,
}


#: How deep a payload may nest (JSON decoders, checkpoint serialisers and the GATE all recurse).
MAX_PAYLOAD_DEPTH = 64


def plain(value: object, path: str = "payload", _depth: int = 0) -> JsonValue:
    """``value`` as plain JSON-like data (dict, list, str, int, float, bool, None).

    numpy scalars and arrays, pandas timestamps, dates and decimals are converted; anything else,
    or nesting deeper than ``MAX_PAYLOAD_DEPTH``, is an error naming its path, so every ref
    survives checkpoint and JSON round trips.
    """
    if value is None:
        return None
    for base in (bool, int, float, str):  # exact types: numpy.float64 subclasses float
        if isinstance(value, base):
            return value if type(value) is base else base(value)
    if _depth >= MAX_PAYLOAD_DEPTH and isinstance(value, Mapping | list | tuple | set | frozenset):
        raise ValueError(f"{path}: nested deeper than {MAX_PAYLOAD_DEPTH} levels")
    if isinstance(value, Mapping):
        return {str(k): plain(v, f"{path}.{k}", _depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(v, f"{path}[{i}]", _depth + 1) for i, v in enumerate(value)]
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item) and getattr(value, "shape", None) == ():
        return plain(item(), path, _depth)
    tolist = getattr(value, "tolist", None)  # numpy arrays
    if callable(tolist):
        return plain(tolist(), path, _depth)
    isoformat = getattr(value, "isoformat", None)  # pandas Timestamp
    if callable(isoformat):
        stamp: JsonValue = isoformat()
        return stamp
    raise ValueError(f"{path}: {type(value).__name__} is not plain data a ref can carry")


def new_ref_id(kind: str) -> str:
    """Draw a fresh citable id for a ref of ``kind`` (e.g. ``val_7f3a9c01e2``)."""
    if kind not in KIND_PREFIX:
        raise ValueError(f"unknown ref kind {kind!r}; expected one of {', '.join(REF_KINDS)}")
    return f"{KIND_PREFIX[kind]}_{secrets.token_hex(ID_HEX_LEN // 2)}"


class Ref(BaseModel):
    """One piece of evidence: what it is (``kind``), where it came from, and the evidence itself."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    kind: RefKind
    payload: dict[str, Any]
    title: str = ""
    source: str = ""
    source_type: SourceType = "internal"
    created_by: str = ""
    #: None: by origin (``is_secondary``); set where the tool knows better (a web page read as a
    #: file is secondary).
    authority: Authority | None = None
    #: The untrusted refs (or tool results) the turn that produced this ref had in its prompt:
    #: a computation that may follow a page, not the question (shown next to the value; the
    #: GATE warns when a number rests on such refs only). Empty: no untrusted text was seen.
    influenced_by: tuple[str, ...] = ()

    @field_validator("payload", mode="before")
    @classmethod
    def _payload_is_plain(cls, value: object) -> object:
        return plain(value) if isinstance(value, Mapping) else value

    @field_validator("id")
    @classmethod
    def _id_is_citable(cls, value: str) -> str:
        if any(ch in value for ch in "[], \n\t"):
            raise ValueError(f"ref id {value!r} cannot be cited inline as [refId]")
        return value

    @classmethod
    def new(
        cls,
        kind: RefKind,
        payload: Mapping[str, object],
        *,
        title: str = "",
        source: str = "",
        source_type: SourceType = "internal",
        created_by: str = "",
        authority: Authority | None = None,
        influenced_by: Sequence[str] = (),
    ) -> Ref:
        """Build a ref with a freshly drawn id."""
        return cls(
            id=new_ref_id(kind),
            kind=kind,
            payload=dict(payload),
            title=title,
            source=source,
            source_type=source_type,
            created_by=created_by,
            authority=authority,
            influenced_by=tuple(influenced_by),
        )

    def __hash__(self) -> int:
        # Equal refs share id and kind; the payload (a dict) is not hashable itself.
        return hash((self.id, self.kind))

    @property
    def is_external(self) -> bool:
        """True when the text is untrusted: written by others (documents, web pages)."""
        return self.source_type == "external"

    @property
    def is_secondary(self) -> bool:
        """True when the ref is not primary evidence for a number: web pages (webRefs) and
        model output, unless ``authority`` says otherwise."""
        if self.authority is not None:
            return self.authority == "secondary"
        return self.kind == "webRef" or self.source_type == "llm"


class RefFields(TypedDict, total=False):
    """What a ref says besides its kind and payload (``Ref.new``'s keyword arguments)."""

    title: str
    source: str
    source_type: SourceType
    created_by: str
    authority: Authority | None
    influenced_by: Sequence[str]


class IssueFields(RefFields, total=False):
    """``RefLedger.issue``'s keyword arguments: a ref's fields, and the payload keys that make
    two refs of a kind the same evidence."""

    same_as: Sequence[str]


class RefData(TypedDict):
    """A ``Ref`` as plain data (``Ref.model_dump(mode="json")``). Graph state holds refs in this
    form, so every checkpointer serialises them without special permission; nodes validate them
    back into ``Ref`` (``as_ref_map``) where they read the state."""

    id: str
    kind: RefKind
    payload: dict[str, Any]
    title: str
    source: str
    source_type: SourceType
    created_by: str
    authority: Authority | None
    influenced_by: NotRequired[list[str]]


def coerce_ref(value: object) -> Ref:
    """Accept a ``Ref`` or its dict form (as stored by JSON-only backends) and return a ``Ref``."""
    if isinstance(value, Ref):
        return value
    if isinstance(value, Mapping):
        return Ref.model_validate(dict(value))
    raise TypeError(f"expected a Ref or a mapping, got {type(value).__name__}")


def as_ref_map(refs: Mapping[str, object] | Iterable[object] | None) -> dict[str, Ref]:
    """Normalise a mapping or iterable of refs (or ref dicts) to ``{id: Ref}``."""
    if refs is None:
        return {}
    items: Iterable[object] = refs.values() if isinstance(refs, Mapping) else refs
    out: dict[str, Ref] = {}
    for item in items:
        ref = coerce_ref(item)
        out[ref.id] = ref
    return out


def ref_data(refs: Mapping[str, object] | Iterable[object] | None) -> dict[str, RefData]:
    """Refs (``Ref`` objects or their dicts, as a mapping or an iterable) validated and returned
    as plain data, ``{id: RefData}``: the form graph state, checkpoints and stream output hold."""
    return {
        ref_id: cast(RefData, ref.model_dump(mode="json"))
        for ref_id, ref in as_ref_map(refs).items()
    }


def merge_refs(
    left: Mapping[str, object] | None, right: Mapping[str, object] | Iterable[object] | None
) -> dict[str, RefData]:
    """Reducer for the ref ledger channel: union by id; an id re-issued with other content is an
    error. Both sides are validated as ``Ref``; the result is plain data (``ref_data``)."""
    merged = as_ref_map(left)
    for ref_id, ref in as_ref_map(right).items():
        old = merged.get(ref_id)
        if old is not None and old != ref:
            raise ValueError(f"ref id clash: {ref_id} issued twice with different content")
        merged[ref_id] = ref
    return ref_data(merged)


class RefLedger:
    """A mutable collector used while one pass runs; its contents go into the state ledger."""

    def __init__(self, existing: Mapping[str, object] | None = None) -> None:
        self._refs: dict[str, Ref] = as_ref_map(existing)
        self.issued: list[Ref] = []
        #: Set by the pass loop for a turn whose prompt held untrusted text: the results,
        #: artifacts and decisions it issues record what they may follow (``influenced_by``).
        self.influence: tuple[str, ...] = ()

    def issue(
        self,
        kind: RefKind,
        payload: Mapping[str, object],
        *,
        same_as: Sequence[str] = (),
        **fields: Unpack[RefFields],
    ) -> Ref:
        """Issue a new ref with an id unique in this ledger.

        ``same_as`` names payload keys (dotted for nested ones) that identify the evidence: when
        a ref of this kind already in the ledger agrees on all of them, that ref is returned
        instead (the same document chunk found by two searches of a run is cited once).
        """
        if same_as:
            found = self.find_same(kind, payload, same_as)
            if found is not None:
                return found
        if self.influence and kind in INFLUENCED_KINDS and fields.get("source_type") != "external":
            fields.setdefault("influenced_by", self.influence)
        ref = Ref.new(kind, payload, **fields)
        while ref.id in self._refs:
            ref = ref.model_copy(update={"id": new_ref_id(kind)})
        self._refs[ref.id] = ref
        self.issued.append(ref)
        return ref

    def add(self, ref: Ref) -> Ref:
        """Add a ref built elsewhere, redrawing its id if it clashes with a different ref."""
        if (
            self.influence
            and ref.kind in INFLUENCED_KINDS
            and not ref.is_external
            and not ref.influenced_by
        ):
            ref = ref.model_copy(update={"influenced_by": self.influence})
        while ref.id in self._refs and self._refs[ref.id] != ref:
            ref = ref.model_copy(update={"id": new_ref_id(ref.kind)})
        if ref.id not in self._refs:
            self._refs[ref.id] = ref
            self.issued.append(ref)
        return ref

    def find_same(
        self, kind: str, payload: Mapping[str, object], keys: Sequence[str]
    ) -> Ref | None:
        """A ref of ``kind`` whose payload agrees with ``payload`` on every key of ``keys``."""
        want = [_dotted(payload, k) for k in keys]
        for ref in self._refs.values():
            if ref.kind == kind and [_dotted(ref.payload, k) for k in keys] == want:
                return ref
        return None

    def get(self, ref_id: str) -> Ref | None:
        return self._refs.get(ref_id)

    def __contains__(self, ref_id: object) -> bool:
        return ref_id in self._refs

    def __len__(self) -> int:
        return len(self._refs)

    def all(self) -> dict[str, Ref]:
        return dict(self._refs)


def payload_values(payload: Mapping[str, object]) -> object:
    """A valueRef payload's values by name: its ``values`` (a list is named by position), or a
    lone ``value`` as ``{"value": ...}``; a malformed ``values`` is returned as it is."""
    values = payload.get("values")
    if values is None and "value" in payload:
        return {"value": payload["value"]}
    if isinstance(values, list):
        return {str(i): v for i, v in enumerate(values)}
    return values


def _dotted(payload: object, key: str) -> object:
    """``payload["a"]["b"]`` for ``"a.b"`` (None where a level is missing)."""
    value = payload
    for part in key.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def is_emitted_result(ref: Ref) -> bool:
    """True for a result WORK emitted: a valueRef, dateRef or tableRef, not a dataset's schema
    (InspectDataset's table, ``meta.role == "schema"``)."""
    if ref.kind not in EMITTED_KINDS:
        return False
    if ref.kind == "tableRef" and isinstance(ref.payload, dict):
        meta = ref.payload.get("meta")
        if isinstance(meta, dict) and meta.get("role") == SCHEMA_ROLE:
            return False
    return True
