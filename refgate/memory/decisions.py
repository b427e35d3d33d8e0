"""Decisions remembered across runs: a LangGraph Store namespaced by workspace.

HARVEST writes decisions (``remember_decision``, through the RememberDecision tool); BRIEF recalls
the ones relevant to a new question (``recall_decisions``) by semantic search over the store's
embedding index. Each remembered or recalled decision is a decisionRef the answer may cite.

- Namespace: ``("refgate", <workspace name>, "decisions")``; runs without a workspace use
  ``_none``. A workspace never sees another's decisions.
- Default store: ``open_store(workspace, settings)``, a ``SqliteStore`` in the workspace's
  ``.refgate/refgate.sqlite`` (the file ``refgate.memory.persistence`` uses for the CLI) with an embedding
  index over the ``decision`` and ``why`` fields (``refgate.memory.store.index_config``: MiniLM by
  default). Tests pass an ``InMemoryStore`` with an index instead.
- A store without an index (or whose SQLite cannot load the vector extension) still works:
  recall then ranks by BM25 word matching (``refgate.lexical``) and says so in the trace event (``mode: "lexical"``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import re
import sqlite3
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from langgraph.store.base import BaseStore, Item, SearchItem
from langgraph.store.sqlite import SqliteStore

from refgate.catalog.toolspec import ToolContext
from refgate.events import TraceEvent, event
from refgate.lexical import LexicalRanker
from refgate.memory.embeddings import default_embeddings as _default_embeddings
from refgate.memory.persistence import STORE_FILE, default_store_file
from refgate.memory.store import STORE_FIELDS, index_config
from refgate.payloads import DecisionRecord
from refgate.refs import Ref

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from refgate.config import Settings
    from refgate.workspace import Workspace

#: Most stored decisions scanned by the lexical fallback.
LEXICAL_SCAN = 500
_WORD = re.compile(r"\w+", re.U)


def decisions_namespace(workspace_name: str | None) -> tuple[str, ...]:
    return ("refgate", workspace_name or "_none", "decisions")


def namespace_for(ctx: ToolContext) -> tuple[str, ...]:
    """``("refgate", <workspace name>, "decisions")``; runs without a workspace share ``_none``."""
    return decisions_namespace(ctx.workspace.name if ctx.workspace is not None else None)


def _source(namespace: Sequence[str], key: str) -> str:
    return f"store:{'/'.join(namespace)}/{key}"


#: Most untrusted origins recorded with a decision.
MAX_ORIGINS = 5


def untrusted_origins(ctx: ToolContext) -> list[str]:
    """Where the untrusted content this run read came from (taint registry sources, external
    refs of the ledger); empty when the run read none."""
    found: list[str] = []
    for span in getattr(ctx.provenance, "spans", None) or []:
        found.append(str(span.get("source", "external content")))
    for ref in ctx.ledger.all().values():
        if ref.is_external:
            found.append(ref.source or ref.id)
    return list(dict.fromkeys(found))


def is_untrusted_decision(value: Mapping[str, object]) -> bool:
    """True for a stored decision remembered in a run that read untrusted content."""
    prov = value.get("provenance")
    return isinstance(prov, dict) and bool(prov.get("untrusted"))


def remember_decision(
    store: BaseStore, ctx: ToolContext, decision: str, why: str = "", *, tags: Sequence[str] = ()
) -> Ref:
    """Store one decision under the workspace's namespace and issue its decisionRef.

    A decision made in a run that read untrusted content (documents, web pages) may echo that
    content: it is stored with ``provenance = {"untrusted": true, "origins": [...]}`` and its
    decisionRef (now and when recalled) is ``source_type="external"``, so it is fenced."""
    key = uuid.uuid4().hex
    value: DecisionRecord = {
        "decision": decision,
        "why": why,
        "tags": list(tags),
        "run_id": ctx.run_id,
        "thread_id": ctx.thread_id,
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    origins = untrusted_origins(ctx)
    if origins:
        value["provenance"] = {"untrusted": True, "origins": origins[:MAX_ORIGINS]}
    ns = namespace_for(ctx)
    store.put(ns, key, value)
    return ctx.issue(
        "decisionRef",
        {**value, "key": key, "recalled": False},
        title=decision[:80],
        source=_source(ns, key),
        source_type="external" if origins else "internal",
    )


#: Most questions kept on an automatic decision (its ``why``: what recall matches on).
RUN_DECISION_QUESTIONS = 5


def run_decision_key(decision: str) -> str:
    """The store key of an automatic decision: one item per distinct decision text."""
    norm = " ".join(decision.lower().split())
    return "run-" + hashlib.sha256(norm.encode("utf-8")).hexdigest()[:32]


def remember_run_decision(
    store: BaseStore,
    ctx: ToolContext,
    decision: str,
    question: str,
    *,
    kind: str,
    outcome: str,
    origins: Sequence[str] | None = None,
) -> Ref:
    """Store a decision a run made (derived by code: a skill, dataset and column, formula) and
    issue its decisionRef. Deduplicated against memory: a decision already stored gains this
    run's question in its ``why`` (the last ``RUN_DECISION_QUESTIONS``) instead of a copy.

    ``origins``: the untrusted text this decision's content may follow (origin per field,
    worked out by the caller: a skill choice or a dataset name follows none, a formula written
    after an untrusted read follows what that turn saw); None: the run's untrusted reads."""
    ns = namespace_for(ctx)
    key = run_decision_key(decision)
    existing = store.get(ns, key)
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    question = " ".join(question.split())[:300]
    if existing is not None:
        questions = _questions(existing.value.get("questions"), question)
        value = _seen_again(dict(existing.value), questions, ctx, outcome, now)
    else:
        questions = [question]
        value = _first_seen(decision, questions, ctx, kind=kind, outcome=outcome, now=now)
    value["why"] = "made for: " + " | ".join(questions)
    _mark_origins(value, untrusted_origins(ctx) if origins is None else list(origins), ctx)
    store.put(ns, key, value)
    return ctx.issue(
        "decisionRef",
        {**value, "key": key, "recalled": False, "new": existing is None},
        title=decision[:80],
        source=_source(ns, key),
        source_type="external" if is_untrusted_decision(value) else "internal",
    )


def _questions(earlier: object, question: str) -> list[str]:
    """A stored decision's last questions with ``question`` joined (moved last, once)."""
    kept = [q for q in earlier if q != question] if isinstance(earlier, list) else []
    return [*kept, question][-RUN_DECISION_QUESTIONS:]


def _seen_again(
    value: dict[str, object], questions: list[str], ctx: ToolContext, outcome: str, now: str
) -> dict[str, object]:
    """A stored run decision made again, by this run for ``questions``."""
    runs = value.get("runs") or 1
    value.update(
        questions=questions,
        runs=(int(runs) if isinstance(runs, int | float | str) else 1) + 1,
        last_run_id=ctx.run_id,
        last_outcome=outcome,
        updated_at=now,
    )
    return value


def _first_seen(
    decision: str, questions: list[str], ctx: ToolContext, *, kind: str, outcome: str, now: str
) -> dict[str, object]:
    """A run decision's first stored value."""
    return {
        "decision": decision,
        "kind": kind,
        "auto": True,
        "questions": questions,
        "runs": 1,
        "tags": [kind, "auto"],
        "run_id": ctx.run_id,
        "thread_id": ctx.thread_id,
        "last_run_id": ctx.run_id,
        "last_outcome": outcome,
        "created_at": now,
    }


def _mark_origins(value: dict[str, object], origins: list[str], ctx: ToolContext) -> None:
    """Trust follows origin, as for remember_decision: a decision whose content may follow
    untrusted text (``origins``) is marked untrusted; the same decision derived again by code
    from a turn that saw no untrusted text has a trusted origin again."""
    if origins:
        provenance = value.get("provenance")
        before = provenance.get("origins") if isinstance(provenance, dict) else None
        merged = list(dict.fromkeys([*(before or []), *origins]))[:MAX_ORIGINS]
        value["provenance"] = {"untrusted": True, "origins": merged}
    elif is_untrusted_decision(value):
        value.pop("provenance", None)
        value["trusted_again_by"] = ctx.run_id


def has_index(store: object) -> bool:
    """True when ``store`` embeds values on put (semantic search available)."""
    return bool(getattr(store, "index_config", None))


#: Words that say nothing of a question's subject (lexical recall ignores them).
_STOPWORDS = frozenset(
    [
        "the",
        "and",
        "for",
        "was",
        "were",
        "what",
        "which",
        "who",
        "how",
        "why",
        "when",
        "where",
        "that",
        "this",
        "with",
        "from",
        "into",
        "over",
        "made",
        "are",
        "has",
        "have",
        "had",
        "did",
        "does",
        "its",
        "their",
        "there",
        "than",
        "then",
        "them",
        "they",
        "you",
        "your",
        "our",
        "per",
        "all",
        "any",
        "can",
        "could",
        "would",
        "should",
        "about",
        "after",
        "before",
        "between",
        "during",
    ]
)


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in _STOPWORDS]


def _lexical_rank(
    items: list[SearchItem], question: str, limit: int
) -> list[tuple[SearchItem, float]]:
    """The stored decisions that share words with ``question``, by BM25 over their fields."""
    texts = [" ".join(str(item.value.get(f, "")) for f in STORE_FIELDS) for item in items]
    ranker = LexicalRanker([_words(t) for t in texts])
    return [(items[i], round(score, 4)) for i, score in ranker.rank(_words(question), limit)]


def recall_decisions(
    store: BaseStore,
    ctx: ToolContext,
    question: str,
    *,
    limit: int = 5,
    min_score: float | None = None,
) -> tuple[list[str], list[TraceEvent]]:
    """Issue decisionRefs for the stored decisions most relevant to ``question``.

    Returns the ref ids (best first) and the trace events. Memory is an aid: a failing store is
    recorded as a ``recall_failed`` event, never raised.
    """
    ns = namespace_for(ctx)
    settings = getattr(ctx, "settings", None)
    if min_score is None and settings is not None:
        min_score = settings.memory_min_score
    days = settings.untrusted_memory_days if settings is not None else None
    try:
        mode, found = _ranked(store, ns, question, limit)
    except Exception as exc:  # a broken store or embedder must not end the run
        return [], [event("recall_failed", ctx.pass_name, error=f"{type(exc).__name__}: {exc}")]
    threshold = min_score if mode == "semantic" else None
    recalled = _Recalled()
    for item, score in found:
        recalled.take(store, ctx, item, score, min_score=threshold, days=days)
    return recalled.ids, [
        event(
            "recall",
            ctx.pass_name,
            mode=mode,
            namespace="/".join(ns),
            decisions=recalled.ids,
            scores=recalled.scores,
            min_score=threshold,
            below_threshold=recalled.below,
            expired=recalled.expired,
        )
    ]


def _ranked(
    store: BaseStore, ns: tuple[str, ...], question: str, limit: int
) -> tuple[str, Sequence[tuple[SearchItem, float | None]]]:
    """``(mode, [(item, score)])``: the stored decisions best for ``question``, by the store's
    index ("semantic") or by words ("lexical"); an empty memory ("empty") embeds nothing."""
    if has_index(store) and not store.search(ns, limit=1):
        # An empty memory has nothing to rank: listing it embeds nothing, so the embedder
        # is not loaded for a first run on a workspace.
        return "empty", []
    if has_index(store):
        found = store.search(ns, query=question, limit=limit)
        return "semantic", [(it, getattr(it, "score", None)) for it in found]
    return "lexical", _lexical_rank(list(store.search(ns, limit=LEXICAL_SCAN)), question, limit)


@dataclass
class _Recalled:
    """The decisions a recall issued (ref ids and scores, best first) and how many it passed
    over: below the relevance threshold, or untrusted and expired (deleted)."""

    ids: list[str] = field(default_factory=list)
    scores: list[float | None] = field(default_factory=list)
    below: int = 0
    expired: int = 0

    def take(
        self,
        store: BaseStore,
        ctx: ToolContext,
        item: SearchItem,
        score: float | None,
        *,
        min_score: float | None,
        days: float | None,
    ) -> None:
        """Issue ``item``'s decisionRef, unless it is below ``min_score`` or expired."""
        if min_score and score is not None and score < min_score:
            self.below += 1
            return
        value = dict(item.value)
        if days is not None and is_expired(value, days):
            self.expired += 1
            with contextlib.suppress(Exception):  # memory is an aid: a failing delete is no error
                store.delete(item.namespace, item.key)
            return
        rounded = None if score is None else round(float(score), 4)
        ref = ctx.issue(
            "decisionRef",
            {**value, "key": item.key, "recalled": True, "score": rounded},
            title=str(value.get("decision", ""))[:80],
            source=_source(item.namespace, item.key),
            source_type="external" if is_untrusted_decision(value) else "internal",
        )
        self.ids.append(ref.id)
        self.scores.append(rounded)


def _age_days(value: Mapping[str, object]) -> float | None:
    stamp = value.get("updated_at") or value.get("created_at")
    try:
        when = dt.datetime.fromisoformat(str(stamp))
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return (dt.datetime.now(dt.UTC) - when).total_seconds() / 86_400


def is_expired(value: Mapping[str, object], days: float) -> bool:
    """True for an untrusted decision older than ``days`` (``untrusted_memory_days``)."""
    if not is_untrusted_decision(value):
        return False
    age = _age_days(value)
    return age is not None and age > days


# ---------------------------------------------------------------------------------------------
# Inspecting and clearing (``refgate memory``)


def list_decisions(store: BaseStore, workspace_name: str | None) -> list[SearchItem]:
    """Every stored decision of a workspace (store items), newest first."""
    items = list(store.search(decisions_namespace(workspace_name), limit=100_000))
    return sorted(
        items,
        key=lambda it: str(it.value.get("updated_at") or it.value.get("created_at") or ""),
        reverse=True,
    )


def get_decision(store: BaseStore, workspace_name: str | None, key: str) -> Item | None:
    """One stored decision by key (or a unique key prefix), else None."""
    ns = decisions_namespace(workspace_name)
    item = store.get(ns, key)
    if item is not None:
        return item
    found = [it for it in list_decisions(store, workspace_name) if it.key.startswith(key)]
    return found[0] if len(found) == 1 else None


def forget_decision(store: BaseStore, workspace_name: str | None, key: str) -> bool:
    """Delete one decision; False when there is none with that key."""
    item = get_decision(store, workspace_name, key)
    if item is None:
        return False
    store.delete(decisions_namespace(workspace_name), item.key)
    return True


def forget_untrusted(store: BaseStore, workspace_name: str | None) -> int:
    """Delete every untrusted decision of a workspace; returns how many."""
    gone = 0
    for item in list_decisions(store, workspace_name):
        if is_untrusted_decision(item.value):
            store.delete(decisions_namespace(workspace_name), item.key)
            gone += 1
    return gone


# ---------------------------------------------------------------------------------------------
# The default store


def _connect(path: Path) -> tuple[sqlite3.Connection, bool]:
    """A SQLite connection and whether it can load extensions (the vector index needs one)."""
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3.connect(str(path), check_same_thread=False, isolation_level=None), True
    try:  # Python builds without extension loading: pysqlite3-binary ships a SQLite that can
        from pysqlite3 import dbapi2 as psqlite3

        return psqlite3.connect(str(path), check_same_thread=False, isolation_level=None), True
    except ImportError:
        return sqlite3.connect(str(path), check_same_thread=False, isolation_level=None), False


#: Output sizes of OpenAI embedding models (so opening a store makes no request).
_OPENAI_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


def _dims(emb: Embeddings) -> int:
    for attr in ("dimension", "dimensions"):
        value = getattr(emb, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    model = getattr(emb, "model", None)
    if isinstance(model, str) and model in _OPENAI_DIMS:
        return _OPENAI_DIMS[model]
    return len(emb.embed_query("dimension probe"))


def default_embeddings(settings: Settings | None) -> Embeddings | None:
    """The settings' embedder (``refgate.memory.embeddings.default_embeddings``)."""
    return _default_embeddings(settings)


def store_path(workspace: Workspace, settings: Settings | None = None) -> Path:
    """Where a workspace's memory lives: the store file ``refgate.memory.persistence`` opens for these
    settings (``<workspace>/.refgate/refgate.sqlite`` by default)."""
    if settings is not None:
        return Path(default_store_file(settings, workspace))
    return workspace.state_dir / STORE_FILE


def index_for(
    settings: Settings | None, embeddings: Embeddings | None | bool = True
) -> dict | None:
    """The store's ``index`` config: ``refgate.memory.store``'s shared shape, or one built from
    ``embeddings`` (``True``: the settings' embedder; ``None``/``False``: no index)."""
    if embeddings is None or embeddings is False:
        return None
    if embeddings is True:
        return index_config(settings)
    return {"dims": _dims(embeddings), "embed": embeddings, "fields": list(STORE_FIELDS)}


@contextlib.contextmanager
def open_store(
    workspace: Workspace,
    settings: Settings | None = None,
    *,
    embeddings: Embeddings | None | bool = True,
    path: Path | str | None = None,
) -> Iterator[SqliteStore]:
    """Open the workspace's decision store (SqliteStore in ``.refgate/refgate.sqlite``).

    ``embeddings=True`` (default) uses the settings' embedder; ``None``/``False`` opens a store
    without an index (recall falls back to word overlap). The embedder loads lazily, on the first
    put or search. Use as ``with open_store(ws, settings) as store: build_graph(store=store)``.
    """
    db = Path(path) if path is not None else store_path(workspace, settings)
    db.parent.mkdir(parents=True, exist_ok=True)
    conn, can_index = _connect(db)
    conn.execute("PRAGMA busy_timeout=10000")
    index = index_for(settings, embeddings) if can_index else None
    try:
        store = SqliteStore(conn, index=index)  # type: ignore[arg-type]
        store.setup()
        yield store
    finally:
        conn.close()
