"""The tool contract: what a tool declares (``ToolSpec``), what it gets (``ToolContext``) and what
it returns (``ToolResult``, serialised to the model as a provenance-marked envelope)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from langgraph.store.base import BaseStore
from pydantic import BaseModel, ConfigDict
from typing_extensions import Unpack

from refgate.errors import RefgateError
from refgate.events import ProgressSink
from refgate.payloads import JsonDict
from refgate.refs import IssueFields, Ref, RefKind, RefLedger

if TYPE_CHECKING:
    from refgate.config import Settings
    from refgate.workspace import Workspace


class ToolUnavailable(RefgateError, RuntimeError):
    """Raised by a tool whose backend is not available here; the model sees a clear error."""


@dataclass
class ToolResult:
    """What one tool call produced.

    ``data`` is what the model reads. ``untrusted_fields`` lists the paths inside ``data`` whose
    values came from documents or the web (``hits[].text``); an empty list with
    ``untrusted_content=False`` means engine data only.
    """

    ok: bool
    data: JsonDict = field(default_factory=dict)
    refs: list[Ref] = field(default_factory=list)
    error: str | None = None
    untrusted_fields: list[str] = field(default_factory=list)
    untrusted_content: bool | None = None

    def __post_init__(self) -> None:
        if self.untrusted_content is None:
            self.untrusted_content = bool(self.untrusted_fields) or any(
                r.is_external for r in self.refs
            )

    @classmethod
    def failure(cls, message: str, **data: object) -> ToolResult:
        return cls(ok=False, error=message, data=dict(data), untrusted_content=False)

    def envelope(self) -> JsonDict:
        """The JSON envelope the model receives (before armoring external fields)."""
        env: JsonDict = {"ok": self.ok}
        if self.error:
            env["error"] = self.error
        env["data"] = self.data
        env["refs"] = [
            {"id": r.id, "kind": r.kind, "title": r.title, "source_type": r.source_type}
            for r in self.refs
        ]
        env["untrustedContent"] = bool(self.untrusted_content)
        env["untrustedFields"] = list(self.untrusted_fields)
        return env


@dataclass
class ToolContext:
    """Everything a tool may use while it runs inside one pass of one run."""

    pass_name: str
    ledger: RefLedger
    settings: Settings
    workspace: Workspace | None = None
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    thread_id: str = ""
    store: BaseStore | None = None
    #: The run's provenance (``RunProvenance``: external spans, seen URLs, withheld calls); see
    #: refgate.provenance, a sibling package this one may not import.
    provenance: Any = None
    #: Progress sink: called with custom stream events.
    emit: ProgressSink = lambda event: None
    #: Fixed by code before anything is read (boundary B2).
    artifacts_dir: Path | None = None
    started: float = field(default_factory=time.monotonic)
    extra: dict[str, object] = field(default_factory=dict)

    def issue(
        self, kind: RefKind, payload: Mapping[str, object], **fields: Unpack[IssueFields]
    ) -> Ref:
        """Issue a ref attributed to this pass (``created_by`` defaults to the pass name)."""
        fields.setdefault("created_by", self.pass_name)
        return self.ledger.issue(kind, payload, **fields)


class ToolArgs(BaseModel):
    """The base of a tool's argument model: a field the model does not declare is refused (an
    LLM's misspelt or invented argument fails validation instead of being dropped)."""

    model_config = ConfigDict(extra="forbid")


#: A tool's arguments: its ``args_schema`` model, validated before ``func`` runs.
ArgsT = TypeVar("ArgsT", bound=BaseModel)


@dataclass(frozen=True)
class ToolSpec(Generic[ArgsT]):
    """One catalog entry: the single source of truth for a tool's name, schema and effects.
    ``ToolSpec[X]`` runs ``func`` on ``X`` (``args_schema``); a catalog holds ``AnyToolSpec``."""

    name: str
    description: str
    args_schema: type[ArgsT]
    func: Callable[[ArgsT, ToolContext], ToolResult]
    read_only: bool = True
    issues: tuple[str, ...] = ()
    #: Document-derived paths in ``ToolResult.data`` and why (their origin).
    untrusted_fields: Mapping[str, str] = field(default_factory=dict)
    #: Sends data out of the machine beyond search and fetch (needs human approval, B3).
    outbound: bool = False
    #: The tool tracks the origin of what it returns: its declared ``untrusted_fields`` say what
    #: the fields *may* carry, and each result says whether they do (``ToolResult.
    #: untrusted_fields``); a result marked ``untrusted_content=False`` is trusted (RunPython
    #: over datasets only). Other tools' declared fields are always treated as untrusted.
    origin_tracked: bool = False

    def openai_schema(self) -> JsonDict:
        """The function schema given to ``bind_tools`` (built once per spec; shared, read-only)."""
        key = (self.name, self.description, self.args_schema)
        cached = _SCHEMAS.get(key)
        if cached is None:
            params = self.args_schema.model_json_schema()
            params.pop("title", None)
            cached = {
                "type": "function",
                "function": {
                    "name": self.name,
                    "description": self.description,
                    "parameters": params,
                },
            }
            _SCHEMAS[key] = cached
        return cached


#: Specs over different argument models, as the catalog and the executor hold them (each call's
#: arguments are validated by the spec's own ``args_schema`` before its ``func`` runs).
AnyToolSpec = ToolSpec[Any]

_SCHEMAS: dict[tuple[str, str, type[BaseModel]], JsonDict] = {}
