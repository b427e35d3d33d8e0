"""Past threads of a workspace and one thread as the page shows it.

The list joins the audit record (finished runs: question, GATE verdict, date) with the
checkpoints (threads that stopped part-way and can be resumed). A thread is read back as
``refgate report`` reads it (its checkpointed state and the audit's facts), and shown with the
HTML report's own renderer: ``render_run_html``'s ``<main>`` is the thread's body, so the
answer, the numbered citations and the evidence cards are the report's, not a second renderer's.
"""

from __future__ import annotations

import re
import sqlite3
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite import SqliteSaver
from typing_extensions import TypedDict

from refgate.config import load_settings
from refgate.graph import build_graph
from refgate.memory.audit import list_runs, thread_run_facts
from refgate.memory.persistence import (
    CHECKPOINTS_FILE,
    checkpoint_serde,
    open_persistence,
    stored_research_report,
)
from refgate.nodes.research.report import to_markdown
from refgate.nodes.state import WorkbenchState
from refgate.report import (
    answer_document,
    render_research_html,
    render_run_html,
    write_research_report,
    write_run_report,
)
from refgate.report.cards import clip
from refgate.report.charts import chart_roots, collect_charts
from refgate.report.run import AnswerDocument
from refgate.usage import turn_usage
from refgate.workspace import Workspace

#: Threads listed per workspace (newest first).
MAX_THREADS = 200
#: Report formats a thread downloads as, and their media types.
DOWNLOADS = {
    "html": "text/html; charset=utf-8",
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "json": "application/json",
    "md": "text/markdown; charset=utf-8",
}
_THREAD_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")


class ThreadRow(TypedDict):
    """One line of the thread list."""

    thread: str
    question: str
    status: str  # passed, blocked, unfinished, research
    date: str
    runs: int


def valid_thread(thread: str) -> bool:
    """A thread id the app accepts (what ``ask`` and the CLI make, and ``--thread`` names)."""
    return bool(_THREAD_ID.match(thread))


def _checkpoint_threads(ws: Workspace) -> dict[str, str]:
    """Thread id -> time of its newest checkpoint, from the workspace's checkpoint file."""
    path = ws.state_dir / CHECKPOINTS_FILE
    if not path.is_file():
        return {}
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    out: dict[str, str] = {}
    try:
        ids = [
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = '' LIMIT ?",
                (MAX_THREADS * 2,),
            )
        ]
        saver = SqliteSaver(conn, serde=checkpoint_serde())
        for thread in ids:
            tup = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
            out[str(thread)] = str((tup.checkpoint or {}).get("ts") or "") if tup else ""
    except sqlite3.Error:
        return out
    finally:
        conn.close()
    return out


def list_threads(ws: Workspace) -> list[ThreadRow]:
    """The workspace's threads, newest first: finished runs from the audit record (their last
    turn's question and verdict) and checkpointed threads with no finished run (unfinished)."""
    rows: dict[str, ThreadRow] = {}
    for run in reversed(list_runs(ws)):  # oldest first, so the newest turn wins
        thread = str(run.get("thread_id") or "")
        if not thread:
            continue
        passed = run.get("gate_passed")
        status = (
            "research"
            if run.get("kind") == "research"
            else "passed"
            if passed is True
            else "blocked"
        )
        before = rows.get(thread)
        rows[thread] = {
            "thread": thread,
            "question": clip(run.get("question") or "", 300),
            "status": status,
            "date": str(run.get("recorded_at") or ""),
            "runs": (before["runs"] if before else 0) + 1,
        }
    for thread, ts in _checkpoint_threads(ws).items():
        if thread not in rows:
            rows[thread] = {
                "thread": thread,
                "question": "",
                "status": "unfinished",
                "date": ts,
                "runs": 0,
            }
    ordered = sorted(rows.values(), key=lambda r: r["date"], reverse=True)
    return ordered[:MAX_THREADS]


def thread_state(ws: Workspace, thread: str) -> tuple[WorkbenchState, list[str]]:
    """The thread's checkpointed values and the passes still to run (empty when finished)."""
    settings = load_settings(workspace_settings=ws.settings)
    with open_persistence(settings, ws) as (checkpointer, store):
        graph = build_graph(checkpointer=checkpointer, store=store, workspace=ws, settings=settings)
        config: RunnableConfig = {"configurable": {"thread_id": thread}}
        snap = graph.get_state(config)
        values = cast(WorkbenchState, dict(snap.values))  # the graph's declared state
        if snap.next:
            return values, list(snap.next)
        # a run stopped between passes: its checkpoint still names the next pass (``ask``
        # resumes it), though ``get_state`` applied the finished pass's writes and shows none
        newest = next(iter(graph.get_state_history(config, limit=1)), None)
        return values, list(newest.next) if newest is not None else []


def thread_record(ws: Workspace, thread: str) -> AnswerDocument | None:
    """The thread as the ``refgate ask --json`` document, or None when nothing is stored."""
    values, _ = thread_state(ws, thread)
    if not (values.get("answer") or values.get("refs")):
        return None
    facts = thread_run_facts(ws, thread)
    usage = turn_usage(values, facts.get("models") or {})
    return answer_document(values, thread_id=thread, workspace=ws, usage=usage, **facts)


def mark_blocked(record: Mapping[str, object]) -> dict[str, object]:
    """``record`` with each claim the GATE blocked struck through in place in the answer, and
    the reasons after it in plain words (markdown the report's renderer escapes)."""
    out = dict(record)
    original = str(out.get("answer") or "")
    reasons: dict[str, list[str]] = {}
    for item in cast(list[Mapping[str, str]], out.get("unverified") or []):
        claim = str(item.get("claim") or "").strip()
        if claim and claim in original:
            why = str(item.get("detail") or item.get("code") or "not verified")
            reasons.setdefault(claim, []).append(why)
    answer = original
    for claim, whys in reasons.items():
        text = _md_text("; ".join(dict.fromkeys(whys)))
        answer = answer.replace(claim, f"~~{claim}~~ _(blocked: {text})_", 1)
    out["answer"] = answer
    turns = out.get("turns")
    last = turns[-1] if isinstance(turns, list) and turns else None
    if isinstance(last, Mapping) and str(last.get("answer") or "") == original:
        # the run's own turn (the renderer drops it by comparing answers, which changed)
        out["turns"] = cast(list[object], turns)[:-1]
    return out


def _md_text(text: str) -> str:
    """``text`` as literal markdown inline text (every punctuation mark escaped, one line)."""
    flat = " ".join(text.split())[:400]
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|~<>])", r"\\\1", flat)


_MAIN = re.compile(r"<main>\s*(.*)\s*</main>", re.S)


def thread_html(ws: Workspace, record: Mapping[str, object]) -> str:
    """The thread's body as the HTML report renders it (its ``<main>``), blocked claims struck
    through in place. Every string from a model, document or web page is escaped by the
    report's templates (autoescape); the page's CSP is the second wall."""
    marked = mark_blocked(record)
    refs = marked.get("refs")
    charts = collect_charts(
        cast(Mapping[str, Mapping[str, object]], refs if isinstance(refs, Mapping) else {}),
        chart_roots(ws.root),
    )
    page = render_run_html(marked, charts)
    found = _MAIN.search(page)
    return found.group(1) if found else ""


def thread_download(ws: Workspace, record: Mapping[str, object], fmt: str) -> bytes:
    """The thread's report file in format ``fmt`` (``DOWNLOADS``), by the report's writers."""
    with tempfile.TemporaryDirectory(prefix="refgate-ui-") as tmp:
        path = write_run_report(Path(tmp) / f"report.{fmt}", record, ws.root)
        return path.read_bytes()


def research_report(ws: Workspace, thread: str) -> dict[str, object] | None:
    """The deep-research report stored for ``thread`` (``research.sqlite``), or None."""
    try:
        return stored_research_report(ws.state_dir, thread)
    except sqlite3.Error:
        return None


def research_html(report: Mapping[str, object]) -> str:
    """A research report's body as the HTML report renders it: scope, findings, each claim's
    votes with the quoted sentence, the cut and refuted claims, the sources read."""
    found = _MAIN.search(render_research_html(report))
    return found.group(1) if found else ""


def research_download(report: Mapping[str, object], fmt: str) -> bytes:
    """A research report's file in format ``fmt``, by the report's writers."""
    with tempfile.TemporaryDirectory(prefix="refgate-ui-") as tmp:
        path = write_research_report(Path(tmp) / f"report.{fmt}", report, to_markdown)
        return path.read_bytes()
