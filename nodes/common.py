"""What every pass shares: dependencies, per-pass tool context, trace events, prompt loading."""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import get_runtime
from langgraph.store.base import BaseStore
from pydantic import BaseModel
from typing_extensions import Unpack

from refgate.catalog.toolspec import ToolContext
from refgate.config import Settings, apply_context, context_workspace, load_settings
from refgate.events import EventFields, ProgressEvent, TraceEvent, event, stream_writer
from refgate.models import ModelProvider
from refgate.nodes.conversation import earlier_questions
from refgate.nodes.state import WorkbenchState
from refgate.provenance import RunProvenance
from refgate.provenance.boundaries import guard_external
from refgate.provenance.budget import BudgetState, RunBudget
from refgate.refs import Ref, RefLedger
from refgate.retrieval.chunking import count_tokens
from refgate.workspace import Workspace, load_served_workspace, load_workspace

PROMPT_DIR = Path(__file__).parent


@cache
def load_prompt(name: str) -> str:
    """The prompt file ``nodes/<name>_prompt.md`` beside its node."""
    return (PROMPT_DIR / f"{name}_prompt.md").read_text(encoding="utf-8")


@dataclass
class Deps:
    """What the graph's nodes are built with (none of it is needed to compile the graph)."""

    models: ModelProvider = field(default_factory=ModelProvider)
    settings: Settings | None = None
    workspace: Workspace | None = None
    #: HARVEST appends the run's audit record itself (served graphs: no CLI writes one).
    audit: bool = False

    def settings_for(self, workspace: Workspace | None) -> Settings:
        """The graph's settings (else the environment's and the workspace's), with the run's
        context (Studio, SDK ``context=``) applied."""
        if self.settings is not None:
            base = self.settings
        else:
            base = load_settings(workspace_settings=workspace.settings if workspace else None)
        return apply_context(base, run_context())

    def model(self, pass_name: str, settings: Settings) -> BaseChatModel:
        return self.models.for_pass(pass_name, settings)


@cache
def _load_workspace_cached(path: str) -> Workspace:
    return load_workspace(path)


def resolve_workspace(state: WorkbenchState, deps: Deps) -> Workspace | None:
    """The run's workspace: the input's ``workspace`` path, else the run context's, else the
    graph's default, else the ``REFGATE_WORKSPACE`` folder (how a served graph gets one), else
    none. A client-named folder passes the served allowlist check; the graph's own workspace,
    named again by the input (``refgate.ask`` does), stays the graph's (as its caller loaded
    it: ``may_start_servers``)."""
    path = state.get("workspace") or context_workspace(run_context())
    if path:
        own = deps.workspace
        if own is not None and Path(str(path)).expanduser().resolve() == own.root:
            return own
        return load_served_workspace(path, loader=_load_workspace_cached)
    if deps.workspace is not None:
        return deps.workspace
    env_path = os.environ.get("REFGATE_WORKSPACE")
    if env_path:
        ws = load_served_workspace(env_path, loader=_load_workspace_cached)
        # the operator chose this folder (the server's environment), no client: its MCP
        # servers may start as a local run's do
        return replace(ws, may_start_servers=True)
    return None


def run_context() -> BaseModel | Mapping[str, object] | None:
    """The running graph's runtime context (a ``RunContext``), or None outside a run."""
    try:
        return get_runtime().context
    except Exception:  # not inside a graph run (direct node calls in tests)
        return None


def thread_id_of(config: RunnableConfig | None) -> str:
    return str(((config or {}).get("configurable") or {}).get("thread_id") or "")


def make_context(
    pass_name: str,
    state: WorkbenchState,
    deps: Deps,
    *,
    config: RunnableConfig | None = None,
    store: BaseStore | None = None,
) -> ToolContext:
    """Build the tool context of one pass: ledger seeded from state, fixed artifacts folder."""
    workspace = resolve_workspace(state, deps)
    settings = deps.settings_for(workspace)
    run_id = state.get("run_id") or uuid.uuid4().hex[:12]
    artifacts = None
    if workspace is not None:
        # Fixed by code before anything is read (boundary B2).
        artifacts = workspace.state_dir / "artifacts" / run_id
    writer = stream_writer()
    provenance = RunProvenance.from_state(state.get("provenance"))
    if state.get("question"):
        # The user's own words are trusted: a query repeating them is not tainted.
        provenance.register_trusted(str(state["question"]))
    for earlier in earlier_questions(state):
        provenance.register_trusted(earlier)
    budget = RunBudget.from_state(state.get("budget"), settings)
    budget.check_time()  # a run past its wall time stops before the next pass
    return ToolContext(
        pass_name=pass_name,
        ledger=RefLedger(state.get("refs") or {}),
        settings=settings,
        workspace=workspace,
        run_id=run_id,
        thread_id=thread_id_of(config),
        store=store,
        provenance=provenance,
        emit=writer,
        artifacts_dir=artifacts,
        extra={"budget": budget},
    )


def budget_state(ctx: ToolContext) -> BudgetState:
    """What the run has spent, this pass included: the ``budget`` channel's update."""
    budget = ctx.extra.get("budget")
    return budget.to_state() if isinstance(budget, RunBudget) else {}


def usage_of(message: AIMessage) -> dict[str, int]:
    meta = getattr(message, "usage_metadata", None) or {}
    return {k: int(meta.get(k, 0) or 0) for k in ("input_tokens", "output_tokens", "total_tokens")}


class PassTimer:
    """Start/end events of a pass, with progress sent to the custom stream."""

    def __init__(self, pass_name: str, ctx: ToolContext | None = None) -> None:
        self.pass_name = pass_name
        self.started = time.perf_counter()
        self.emit = ctx.emit if ctx is not None else stream_writer()
        self.emit({"event": "pass_started", "pass": pass_name})

    def start_event(self, **fields: Unpack[EventFields]) -> TraceEvent:
        return event("pass_start", self.pass_name, **fields)

    def end_event(self, **fields: Unpack[EventFields]) -> TraceEvent:
        ms = round((time.perf_counter() - self.started) * 1000, 2)
        finished: ProgressEvent = {
            "event": "pass_finished",
            "pass": self.pass_name,
            "duration_ms": ms,
        }
        for key in fields:  # the pass's refs and status, in the order it gave them
            if key == "refs":
                finished["refs"] = fields["refs"]
            elif key == "status":
                finished["status"] = fields["status"]
        self.emit(finished)
        timed: EventFields = {"duration_ms": ms, **fields}
        return event("pass_end", self.pass_name, **timed)


#: Payload keys shown to a model per kind of ref (everything else stays in the ledger).
DIGEST_KEYS: dict[str, tuple[str, ...]] = {
    "valueRef": ("values", "units", "scale", "period", "asOf"),
    "dateRef": ("date", "label"),
    "skillRef": ("id", "category", "requiredEvidence", "capabilityRefs", "forbidden", "procedure"),
    "apiRef": ("name", "signature", "summary"),
    "executionRef": ("ok", "error", "emitted", "timed_out"),
    "docRef": ("doc_id", "date", "section", "excerpt"),
    "webRef": ("url", "date", "quote", "excerpt", "snippet", "votes"),
    "artifactRef": ("path", "kind", "table_ref"),
    "decisionRef": ("decision", "why"),
    "verifyRef": ("passed",),
}
#: Longest text of one payload field in a prompt.
MAX_FIELD_CHARS = 600
#: Document and web text of one ref (excerpt, quote, ...) is shown whole up to this many
#: characters: a document chunk is at most 1,024 tokens (about 4,500 characters), so a cited
#: chunk reaches the model whole rather than as a 600-character head.
MAX_EXCERPT_CHARS = 5_000
EXCERPT_KEYS = frozenset({"excerpt", "quote", "text", "snippet"})
#: Tokens of refs each pass sees in full; refs past the budget are listed by id and title (and
#: counted in a closing note). COMPOSE gets room for about ten whole document chunks.
PASS_REF_TOKENS = {"work": 8_000, "critique": 8_000, "compose": 14_000}
DEFAULT_REF_TOKENS = 8_000
#: Refs past a pass's token budget that are still listed by id and title, per origin (external
#: and the rest), the newest first.
MAX_LISTED_REFS = 500


def _short(value: object, limit: int = MAX_FIELD_CHARS) -> object:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + " ..."
    if isinstance(value, list):
        return [_short(v) for v in value[:20]] + (["..."] if len(value) > 20 else [])
    if isinstance(value, dict):
        return {k: _short(v) for k, v in list(value.items())[:30]}
    return value


def fenced_model_text(text: str, label: str) -> str:
    """Model output written after an untrusted read, as a later prompt shows it: fenced like
    untrusted text (or withheld on a high signal), never as instructions."""
    return guard_external(text, source_label=f"{label} (model output after an untrusted read)")


def plan_block(plan: Mapping[str, object]) -> str:
    """The plan (or some of its fields) as JSON for a prompt: the fields BRIEF's model wrote
    after an untrusted read (``plan.untrusted_fields``: lens, criteria, notes) fenced."""
    shown: dict[str, object] = dict(plan)
    for name in _names(shown.get("untrusted_fields")):
        if shown.get(name) not in (None, "", []):
            shown[name] = fenced_model_text(
                json.dumps(shown[name], ensure_ascii=False, default=str), f"plan {name}"
            )
    return json.dumps(shown, ensure_ascii=False, default=str)


def _names(value: object) -> list[str]:
    """A plan's list of field names (none when it holds something else)."""
    return [str(n) for n in value] if isinstance(value, list) else []


def notes_block(state: WorkbenchState) -> str:
    """WORK's notes for CRITIQUE and COMPOSE, fenced when WORK wrote them after an untrusted read."""
    notes = str(state.get("work_notes") or "")
    if notes and state.get("work_notes_untrusted"):
        return fenced_model_text(notes, "WORK's notes")
    return notes


def _title(ref: Ref) -> str:
    """A ref's title for a prompt: fenced when others wrote it (external) or the model wrote it
    after an untrusted read (influenced)."""
    if ref.title and (ref.is_external or ref.influenced_by):
        return guard_external(ref.title, source_label=f"ref {ref.id} title")
    return ref.title


def ref_digest(ref: Ref, *, max_rows: int = 12) -> dict[str, object]:
    """A compact view of a ref for a prompt (values, table head, date); external text armored."""
    payload = ref.payload
    view: dict[str, object] = {"id": ref.id, "kind": ref.kind, "title": _title(ref)}
    if ref.source_type != "internal":
        view["source_type"] = ref.source_type
    if ref.kind == "tableRef":
        view["columns"] = payload.get("columns")
        rows = payload.get("rows") or []
        view["rows"] = _short(rows[:max_rows])
        if len(rows) > max_rows:
            view["rows_omitted"] = len(rows) - max_rows
        for key in ("units", "meta"):
            if key in payload:
                view[key] = _short(payload[key])
    else:
        keys = DIGEST_KEYS.get(ref.kind)
        if keys is None:
            keys = tuple(payload)[:8]
        for key in keys:
            if key in payload and payload[key] not in (None, "", [], {}):
                limit = (
                    1500
                    if key == "procedure"
                    else MAX_EXCERPT_CHARS
                    if key in EXCERPT_KEYS
                    else MAX_FIELD_CHARS
                )
                view[key] = _short(payload[key], limit)
        if ref.kind == "apiRef" and "summary" not in view and payload.get("doc"):
            view["summary"] = str(payload["doc"]).strip().splitlines()[0][:200]
    if ref.is_external:
        body = json.dumps(
            {k: v for k, v in view.items() if k not in ("id", "kind")},
            ensure_ascii=False,
            default=str,
        )
        # Armored, or withheld again when it carries an injection signal (B5).
        return {
            "id": ref.id,
            "kind": ref.kind,
            "content": guard_external(body, source_label=f"ref {ref.id}"),
        }
    return view


def refs_block(
    refs: dict[str, Ref],
    *,
    kinds: set[str] | None = None,
    pass_name: str | None = None,
    max_tokens: int | None = None,
) -> str:
    """The ledger as JSON lines for a prompt: the newest refs whole within the pass's token
    budget (``PASS_REF_TOKENS``), older ones by id and title, and a note saying how many."""
    budget = (
        max_tokens
        if max_tokens is not None
        else PASS_REF_TOKENS.get(pass_name or "", DEFAULT_REF_TOKENS)
    )
    chosen = [r for r in refs.values() if kinds is None or r.kind in kinds]
    full = _whole_lines(chosen, budget)
    listed = _listed_ids(chosen, set(full))
    lines = [full.get(ref.id) or _title_line(ref) for ref in chosen if ref.id in listed]
    left_out = len(chosen) - len(full)
    if left_out:
        not_listed = len(chosen) - len(listed)
        lines.append(
            json.dumps(
                {
                    "note": f"{left_out} of {len(chosen)} refs listed by id and "
                    f"title only (this pass's budget: {budget} tokens)"
                    + (f"; the {not_listed} oldest are not listed" if not_listed else "")
                }
            )
        )
    return "\n".join(lines) if lines else "(no refs)"


def _whole_lines(chosen: list[Ref], budget: int) -> dict[str, str]:
    """The digests of the newest refs that fit the token budget, by ref id."""
    full: dict[str, str] = {}
    used = 0
    for ref in reversed(chosen):  # the newest evidence first
        line = json.dumps(ref_digest(ref), ensure_ascii=False, default=str)
        cost = count_tokens(line)
        if used + cost <= budget:
            full[ref.id] = line
            used += cost
    return full


def _listed_ids(chosen: list[Ref], whole: set[str]) -> set[str]:
    """The refs shown at all: those shown whole and, beyond the budget, the newest listed by
    id and title, at most MAX_LISTED_REFS of each origin, external (documents, pages, their
    tables) apart from the rest, so one search's many passages never push the run's computed
    values out of sight; a long thread's older evidence is counted, not listed (bounded
    history)."""
    listed = set(whole)
    room = {True: MAX_LISTED_REFS, False: MAX_LISTED_REFS}
    for ref in reversed(chosen):
        external = ref.is_external
        if ref.id not in listed and room[external] > 0:
            listed.add(ref.id)
            room[external] -= 1
    return listed


def _title_line(ref: Ref) -> str:
    """A ref past the budget: its id, kind and title."""
    return json.dumps(
        {
            "id": ref.id,
            "kind": ref.kind,
            "title": _title(ref),
            "note": "details omitted (prompt budget)",
        },
        ensure_ascii=False,
    )
