"""What each kind of ref carries: one TypedDict per ref payload, and the plain-data types they
are made of.

A ref's ``payload`` is plain JSON-like data (``refgate.refs.plain``); these types say which keys
each kind holds and what their values are, for the code that builds payloads (annotate the
literal: ``payload: ValuePayload = {...}``) and the code that reads them (``payload_of``). They are
static only: ``Ref.payload`` stays a plain dict at run time (refs from JSON backends, older
checkpoints or other versions may lack a key, so readers keep using ``.get``). Nested collections
are ``Sequence``/``Mapping``: a ref is immutable, and so is what it carries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Required, TypeAlias, TypeVar, cast

# typing_extensions' TypedDict: pydantic (LangServe, Studio schemas) refuses typing's on 3.11.
from typing_extensions import TypedDict

if TYPE_CHECKING:
    from refgate.refs import Ref

#: One JSON scalar.
Scalar: TypeAlias = str | int | float | bool | None
#: A JSON value, nested (what ``refgate.refs.plain`` returns).
JsonValue: TypeAlias = Scalar | Sequence["JsonValue"] | Mapping[str, "JsonValue"]
#: A JSON object.
JsonObject: TypeAlias = Mapping[str, JsonValue]
#: A JSON object being built or just decoded, its values checked where they are read (a
#: sandbox frame, a tool's result data, a schema).
JsonDict: TypeAlias = dict[str, object]
#: A table cell as a tableRef carries it.
Cell: TypeAlias = str | int | float | bool | None
#: A number as a valueRef carries it (None: missing in the source).
Number: TypeAlias = int | float | None


def jsonable(value: object) -> object:
    """``value`` ready for ``json.dumps``: pydantic models (refs among them) dumped in JSON mode,
    mappings with string keys, tuples as lists, recursively; anything else as given."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


class FilingFields(TypedDict, total=False):
    """A DART filing's fields, carried by the evidence taken from it (a table's ``meta``, a
    docRef): ``retrieval.citations.FILING_FIELDS``."""

    rcept_no: str
    corp_code: str
    corp_name: str
    stock_code: str
    rcept_dt: str
    report_nm: str
    section_id: str
    section_title: str


class RefMeta(FilingFields, total=False):
    """``meta`` of a valueRef, tableRef or dateRef: where the evidence came from.

    Results WORK emitted (RunPython's ``emit_result``) name their execution and the datasets
    the code read; dataset capabilities name the dataset and column; a document's table names
    its file, page or sheet (and a DART filing's fields); InspectDataset's schema table has
    ``role == "schema"`` (``refgate.refs.SCHEMA_ROLE``) and the dataset's profile.
    """

    # emitted results (tools/sandbox/emit.py)
    execution: str
    read: Sequence[str]
    sources: Sequence[str]
    declared_sources: Sequence[str]
    units_from_workspace: Sequence[str]
    literals: Sequence[str]
    sql: str
    scales: Mapping[str, str]
    # dataset capabilities and InspectDataset
    workspace: str
    what: str
    dataset: str
    column: str
    metric: str
    frequency: str | None
    role: str
    rows: int
    title: str
    period: str
    asOf: str | None
    scale: str | Mapping[str, str] | None
    start: str | None
    end: str | None
    start_period: str
    end_period: str
    order: str
    n: int
    universe: int
    excluded_missing: int
    filter: str | None
    min_at: str
    max_at: str
    description: str
    file: str
    period_columns: Sequence[str]
    first_period: str | None
    latest_period: str | None
    labels: Sequence[str]
    metric_candidates: Sequence[str]
    latest_values: JsonObject
    head: JsonValue
    tail: JsonValue
    column_units: Mapping[str, str | None]
    # a document's table (retrieval/citations.py)
    source: str | None
    page: int | None
    sheet: str | None
    table: int
    doc_id: str
    origin: str | None
    content_hash: str
    unit: str


class ValuePayload(TypedDict, total=False):
    """A valueRef: named numbers with their units (``values`` by name; a lone ``value`` in old
    refs: read both through ``refgate.refs.payload_values``)."""

    values: Mapping[str, Number]
    value: Number
    units: Mapping[str, str]
    #: One scale word for all values (``refs.SCALES``) or one per name.
    scale: str | Mapping[str, str]
    period: str
    asOf: str | None
    start: str | None
    end: str | None
    meta: RefMeta


class TablePayload(TypedDict, total=False):
    """A tableRef: columns, rows of cells, a unit per column."""

    columns: Sequence[str]
    rows: Sequence[Sequence[Cell]]
    units: Mapping[str, str]
    meta: RefMeta


class DatePayload(TypedDict, total=False):
    """A dateRef: one ISO date and what it is."""

    date: str
    label: str
    meta: RefMeta


class DocPayload(FilingFields, total=False):
    """A docRef: an excerpt of a workspace document (a search hit's chunk, a file read, an MCP
    server's output), with where it is found."""

    excerpt: str
    doc_id: str
    chunk_id: str
    start: int
    end: int
    date: str | None
    entity: str | None
    section: str | None
    source: str | None
    page: int | None
    sheet: str | None
    origin: str | None
    content_hash: str | None
    ocr: bool
    ocr_confidence: float | None
    excerpt_truncated: bool
    # ReadFile
    path: str
    offset: int
    chars: int
    sha256: str
    truncated: bool
    # McpCall
    server: str
    tool: str
    arguments: JsonValue


class WebPayload(TypedDict, total=False):
    """A webRef: a page's excerpt (a search result) or a claim the deep-research graph verified
    on it (``quote``, ``claim``, the votes)."""

    url: str
    excerpt: str
    title: str
    snippet: str
    date: str | None
    query: str
    provider: str
    retrieved: str
    quote: str
    claim: str
    question: str
    sourceTitle: str
    sourceQuality: JsonValue
    publishDate: str | None
    vote: JsonValue
    votes: JsonValue
    verdicts: JsonValue
    outcome: str


class ExecutionPayload(TypedDict, total=False):
    """An executionRef: one RunPython or EngineCall run, ok or not, and what it issued."""

    tool: str
    ok: bool
    error: str | None
    duration_ms: float
    # RunPython
    code: str
    stdout: str
    stderr: str
    timed_out: bool
    sandbox: str
    emitted: Sequence[str]
    engine_calls: JsonValue
    sql: JsonValue
    read: Sequence[str]
    # EngineCall
    capability: str
    arguments: JsonValue
    refs: Sequence[str]


class ArtifactFile(TypedDict):
    """One file SaveArtifact wrote."""

    path: str
    format: str
    bytes: int
    sha256: str


class ArtifactPayload(TypedDict, total=False):
    """An artifactRef: files saved from a tableRef (CSV and markdown, or a PNG chart)."""

    format: str
    files: Sequence[ArtifactFile]
    path: str
    source_ref: str
    rows: int
    columns: Sequence[str]
    title: str
    chart: JsonObject


class ApiPayload(TypedDict, total=False):
    """An apiRef: one engine capability as the catalog describes it."""

    name: str
    signature: str
    doc: str
    kind: str
    summary: str


class SkillPayload(TypedDict):
    """A skillRef: one skill of the skillbook (``Skill.payload``); ``requiredEvidence`` is the
    GATE's checklist."""

    id: str
    title: str
    category: str
    purpose: str
    whenToUse: list[str]
    requiredEvidence: list[str]
    toolRefs: list[str]
    knowledgeRefs: list[str]
    capabilityRefs: list[str]
    linkedSkills: list[str]
    forbidden: list[str]
    failureModes: list[str]
    status: str
    procedure: str
    origin: str
    path: str


class DecisionProvenance(TypedDict):
    """A decision remembered in a run that read untrusted text: where it may come from."""

    untrusted: bool
    origins: list[str]


class DecisionRecord(TypedDict, total=False):
    """A decision as the memory store keeps it (``refgate.memory.decisions``): one a pass chose
    to remember (``remember_decision``), or one a run made, derived by code and deduplicated
    (``remember_run_decision``: ``auto``, its questions and runs)."""

    decision: Required[str]
    why: str
    tags: list[str]
    run_id: str | None
    thread_id: str | None
    created_at: str
    updated_at: str
    kind: str
    auto: bool
    questions: list[str]
    runs: int
    last_run_id: str | None
    last_outcome: str
    provenance: DecisionProvenance
    trusted_again_by: str | None


class DecisionPayload(DecisionRecord, total=False):
    """A decisionRef: a stored decision, with its store key and how this run met it."""

    key: str
    recalled: bool
    new: bool
    score: float | None


class VerifyPayload(TypedDict, total=False):
    """A verifyRef: the GATE's verdict (``GateReport.to_dict`` plus the run's attempt)."""

    passed: bool
    issues: Sequence[JsonObject]
    conclusions: JsonValue
    attempt: int


#: The payload type of each ref kind.
PAYLOAD_TYPES: Mapping[str, type] = {
    "valueRef": ValuePayload,
    "tableRef": TablePayload,
    "dateRef": DatePayload,
    "skillRef": SkillPayload,
    "docRef": DocPayload,
    "webRef": WebPayload,
    "executionRef": ExecutionPayload,
    "artifactRef": ArtifactPayload,
    "apiRef": ApiPayload,
    "decisionRef": DecisionPayload,
    "verifyRef": VerifyPayload,
}
_KIND_OF: Mapping[type, str] = {t: k for k, t in PAYLOAD_TYPES.items()}
_PayloadT = TypeVar("_PayloadT")


def payload_of(ref: Ref, payload_type: type[_PayloadT]) -> _PayloadT:
    """``ref``'s payload as ``payload_type`` (``payload_of(ref, ValuePayload)``); a ref of another
    kind is an error (so the type is never a guess). Keys may still be missing: read them with
    ``.get``."""
    kind = _KIND_OF.get(payload_type)
    if kind is None:
        raise TypeError(f"{payload_type.__name__} is not a ref payload type")
    if ref.kind != kind:
        raise ValueError(f"{ref.id} is a {ref.kind}, not a {kind}")
    return cast(_PayloadT, ref.payload)
