"""The web app's routes (Starlette): the page, its assets, and a small JSON + SSE API.

    GET  /?token=T                      opens a session (cookie) and redirects to /
    GET  /                              the page (static/index.html)
    GET  /static/<asset>                app.js, app.css, report.css (the HTML report's)
    GET  /api/session                   the session's CSRF token and the workspaces offered
    GET  /api/workspace?workspace=W     datasets, documents, index state
    GET  /api/threads?workspace=W       past threads (audit record + checkpoints)
    GET  /api/thread?workspace=W&thread=T   the thread rendered by the HTML report's renderer
    GET  /api/page?workspace=W&thread=T&ref=R      where a docRef's quote is on its PDF page
    GET  /api/page.png?workspace=W&thread=T&ref=R  that page as an image
    GET  /api/download?workspace=W&thread=T&format=F   the report file (html, pdf, docx, json, md)
    POST /api/ask      {workspace, question, thread?, kind?}   starts a run (a follow-up with
                                                    thread; kind "research": deep research)
    POST /api/resume   {workspace, thread}              resumes a stopped or crashed run
    POST /api/runs/R/stop                               stops run R at its next event
    GET  /api/runs/R/events                             the run's events (server-sent events)

Every route needs the session; every POST its CSRF token and the app's Origin (``security``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import cast

from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from refgate.config import ConfigError
from refgate.report.cards import anchor, clip
from refgate.report.html import TEMPLATES
from refgate.report.run import AnswerDocument
from refgate.ui import pages, threads
from refgate.ui.places import Places, Refusal, describe
from refgate.ui.runs import Asker, RunManager
from refgate.ui.security import (
    SESSION_COOKIE,
    Refused,
    SecurityHeaders,
    UiSecurity,
    loopback_hosts,
)
from refgate.workspace import Workspace

STATIC = Path(__file__).parent / "static"
#: The page's assets: name -> (file, media type). Nothing else is served as a file.
ASSETS = {
    "app.js": (STATIC / "app.js", "text/javascript; charset=utf-8"),
    "app.css": (STATIC / "app.css", "text/css; charset=utf-8"),
    "report.css": (TEMPLATES / "report.css", "text/css; charset=utf-8"),
}
#: Longest question accepted from the page (the settings' own limit is checked by ``ask``).
MAX_BODY = 256 * 1024
NO_SESSION_PAGE = (
    "refgate ui: this browser has no session. Open the address refgate ui printed in the "
    "terminal (it carries the token), e.g. http://127.0.0.1:8765/?token=...\n"
)


@dataclass
class UiConfig:
    """How the app runs: the workspaces given (``-w``), the address, and (tests) the asker."""

    workspaces: list[Path] = field(default_factory=list)
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    asker: Asker | None = None
    ask_options: dict[str, object] = field(default_factory=dict)
    #: Accept any Host header (binding on a non-loopback address).
    any_host: bool = False


class UiState:
    """What the routes share: security, workspaces, runs and a cache of rendered threads."""

    def __init__(self, config: UiConfig) -> None:
        self.config = config
        self.security = UiSecurity(
            hosts=None if config.any_host else loopback_hosts(config.host, config.port)
        )
        if config.token:
            self.security.token = config.token
        self.places = Places(config.workspaces)
        self.runs = (
            RunManager(config.asker, config.ask_options)
            if config.asker is not None
            else RunManager(ask_options=config.ask_options)
        )
        self._records: dict[tuple[str, str], AnswerDocument | None] = {}

    def workspace(self, raw: object) -> Workspace:
        if not isinstance(raw, str) or not raw.strip():
            raise Refusal("no workspace given")
        return self.places.open(raw.strip())

    def record(self, ws: Workspace, thread: str) -> AnswerDocument | None:
        key = (str(ws.root), thread)
        if key not in self._records:
            self._records[key] = threads.thread_record(ws, thread)
        return self._records[key]

    def forget(self, ws: Workspace, thread: str) -> None:
        self._records.pop((str(ws.root), thread), None)


Handler = Callable[[Request], Awaitable[Response]]


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def guarded(
    write: bool = False,
) -> Callable[[Callable[[Request, UiState], Awaitable[Response]]], Handler]:
    """A route that needs a session (and, for ``write``, the CSRF token and Origin), and turns
    refusals and bad input into JSON errors the page shows."""

    def wrap(fn: Callable[[Request, UiState], Awaitable[Response]]) -> Handler:
        async def route(request: Request) -> Response:
            state: UiState = request.app.state.ui
            try:
                if write:
                    state.security.check_write(request)
                else:
                    state.security.check_read(request)
                return await fn(request, state)
            except Refused as exc:
                return _error(exc.status, exc.reason)
            except Refusal as exc:
                return _error(403, str(exc))
            except (ConfigError, pages.PageError, ValueError) as exc:
                return _error(400, str(exc))
            except Exception as exc:  # a broken store or file: the page says what, no traceback
                return _error(500, f"{type(exc).__name__}: {exc}")

        return route

    return wrap


async def index(request: Request) -> Response:
    state: UiState = request.app.state.ui
    offered = request.query_params.get("token")
    if offered is not None:
        sid = state.security.open_session(offered)
        if sid is None:
            return PlainTextResponse("wrong token\n" + NO_SESSION_PAGE, status_code=401)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(SESSION_COOKIE, sid, httponly=True, samesite="strict", path="/")
        return response
    try:
        state.security.check_read(request)
    except Refused:
        return PlainTextResponse(NO_SESSION_PAGE, status_code=401)
    return Response(_asset("index.html"), media_type="text/html; charset=utf-8",
                    headers={"cache-control": "no-store"})  # fmt: skip


@cache
def _asset(name: str) -> bytes:
    path = STATIC / name if name == "index.html" else ASSETS[name][0]
    return path.read_bytes()


async def static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in ASSETS:
        return PlainTextResponse("not found", status_code=404)
    return Response(_asset(name), media_type=ASSETS[name][1],
                    headers={"cache-control": "no-cache"})  # fmt: skip


@guarded()
async def session(request: Request, state: UiState) -> Response:
    return JSONResponse(
        {"csrf": state.security.csrf_of(request), "workspaces": state.places.choices()}
    )


@guarded()
async def workspace_info(request: Request, state: UiState) -> Response:
    ws = state.workspace(request.query_params.get("workspace"))
    return JSONResponse(await asyncio.to_thread(describe, ws))


@guarded()
async def thread_list(request: Request, state: UiState) -> Response:
    ws = state.workspace(request.query_params.get("workspace"))
    return JSONResponse({"threads": await asyncio.to_thread(threads.list_threads, ws)})


def _thread_id(raw: object) -> str:
    if not isinstance(raw, str) or not threads.valid_thread(raw):
        raise ValueError("not a thread id")
    return raw


def _extras(record: Mapping[str, object]) -> dict[str, dict[str, object]]:
    """Per card anchor, what the page adds to the report's card: the PDF page of a docRef, the
    fetch facts of a webRef."""
    out: dict[str, dict[str, object]] = {}
    refs = cast(Mapping[str, Mapping[str, object]], record.get("refs") or {})
    for ref_id, ref in refs.items():
        p = ref.get("payload") if isinstance(ref.get("payload"), Mapping) else {}
        assert isinstance(p, Mapping)
        source = str(p.get("source") or ref.get("source") or "")
        if ref.get("kind") == "docRef" and source.lower().endswith(".pdf") and p.get("page"):
            out[anchor(ref_id)] = {"type": "pdf", "ref": ref_id, "page": p.get("page"),
                                   "source": source}  # fmt: skip
        elif ref.get("kind") == "webRef":
            out[anchor(ref_id)] = {
                "type": "web",
                "ref": ref_id,
                "url": str(p.get("url") or ref.get("source") or ""),
                "fetched": str(p.get("retrieved") or p.get("fetched_at") or "fetched"),
                "when": str(p.get("fetched_at") or record.get("created_at") or ""),
                "query": str(p.get("query") or ""),
                "provider": str(p.get("provider") or ""),
            }
    for ref_id, checks in _gate_checks(record.get("gate")).items():
        out.setdefault(anchor(ref_id), {"type": "plain", "ref": ref_id})["gate"] = checks[:50]
    return out


def _gate_checks(gate: object) -> dict[str, list[dict[str, object]]]:
    """Per ref id, the GATE's verdict on each claim citing it: the claim, the number (or date,
    ranking) checked, supported or not, and the cell or value it matched (or why not)."""
    out: dict[str, list[dict[str, object]]] = {}
    claims = gate.get("claims") if isinstance(gate, Mapping) else None
    for claim in claims if isinstance(claims, list) else []:
        if not isinstance(claim, Mapping):
            continue
        text = clip(claim.get("text") or "", 400)
        for mention in claim.get("mentions") or []:
            if not isinstance(mention, Mapping):
                continue
            matches = [m for m in mention.get("matches") or [] if isinstance(m, Mapping)]
            cited = {str(m.get("ref_id")) for m in matches} or {
                str(r) for r in claim.get("ref_ids") or []
            }
            for ref_id in cited:
                hows = [str(m.get("how")) for m in matches if str(m.get("ref_id")) == ref_id]
                out.setdefault(ref_id, []).append(
                    {
                        "claim": text,
                        "mention": clip(mention.get("text") or "", 200),
                        "supported": mention.get("supported") is True,
                        "how": clip("; ".join(hows) or mention.get("note") or "", 400),
                    }
                )
    return out


#: Claims whose number bindings the page receives (a long thread's rest falls back).
MAX_BOUND_CLAIMS = 500


def _bindings(gate: object) -> list[dict[str, object]]:
    """Per claim, the numbers (dates, rankings) the GATE bound to a cited ref: the mention's text
    and the card anchor of the ref it matched first. The page links each number of the answer
    to that card, and falls back to the citation that follows a number the GATE did not bind."""
    out: list[dict[str, object]] = []
    claims = gate.get("claims") if isinstance(gate, Mapping) else None
    for claim in claims if isinstance(claims, list) else []:
        if len(out) >= MAX_BOUND_CLAIMS:
            break
        if not isinstance(claim, Mapping):
            continue
        bound = []
        for mention in claim.get("mentions") or []:
            if not isinstance(mention, Mapping) or mention.get("supported") is not True:
                continue
            matched = [m for m in mention.get("matches") or [] if isinstance(m, Mapping)]
            if matched and matched[0].get("ref_id"):
                bound.append({"text": clip(mention.get("text") or "", 200),
                              "anchor": anchor(str(matched[0]["ref_id"]))})  # fmt: skip
        if bound:
            out.append({"claim": clip(claim.get("text") or "", 2000), "mentions": bound})
    return out


def _withheld(values: Mapping[str, object]) -> list[str]:
    """What the run withheld after an injection signal: tool calls and refs, in words."""
    prov = values.get("provenance") if isinstance(values.get("provenance"), Mapping) else {}
    assert isinstance(prov, Mapping)
    out = [
        f"{w.get('tool')} {w.get('key')}: withheld after an injection signal"
        for w in prov.get("withheld") or []
        if isinstance(w, Mapping)
    ]
    refs = prov.get("withheld_refs") or {}
    if isinstance(refs, Mapping):
        out += [f"{ref} ({src}): text withheld, backs no claim" for ref, src in refs.items()]
    return out[:200]


@guarded()
async def thread_view(request: Request, state: UiState) -> Response:
    ws = state.workspace(request.query_params.get("workspace"))
    thread = _thread_id(request.query_params.get("thread"))

    def build() -> dict[str, object]:
        values, next_ = threads.thread_state(ws, thread)
        record = state.record(ws, thread)
        if record is None:
            report = threads.research_report(ws, thread)
            if report is not None:
                return {
                    "thread": thread,
                    "kind": "research",
                    "question": report.get("question"),
                    "html": threads.research_html(report),
                    "next": [],
                }
            return {
                "thread": thread,
                "html": "",
                "next": next_,
                "question": values.get("question") or "",
            }
        return {
            "thread": thread,
            "question": record.get("question"),
            "passed": record.get("passed"),
            "html": threads.thread_html(ws, record),
            "extras": _extras(record),
            "bindings": _bindings(record.get("gate")),
            "withheld": _withheld(values),
            "next": next_,
        }

    return JSONResponse(await asyncio.to_thread(build))


def _doc_ref(state: UiState, request: Request) -> tuple[Workspace, Mapping[str, object]]:
    ws = state.workspace(request.query_params.get("workspace"))
    thread = _thread_id(request.query_params.get("thread"))
    record = state.record(ws, thread)
    refs = record.get("refs") or {} if record is not None else {}
    ref = refs.get(str(request.query_params.get("ref")))
    if ref is None or ref.get("kind") != "docRef":
        raise ValueError("no such document ref in this thread")
    return ws, ref


def _page_of(ref: Mapping[str, object]) -> tuple[str, int]:
    payload = ref.get("payload")
    p = payload if isinstance(payload, Mapping) else {}
    try:
        page = int(str(p.get("page")))
    except (TypeError, ValueError):
        raise ValueError("the document ref names no page") from None
    return str(p.get("source") or ref.get("source") or ""), page


@guarded()
async def page_info(request: Request, state: UiState) -> Response:
    def build() -> pages.PageInfo:
        ws, ref = _doc_ref(state, request)
        source, page = _page_of(ref)
        return pages.locate(pages.pdf_of(ws, source), page, pages.doc_quote(ref))

    return JSONResponse(await asyncio.to_thread(build))


@guarded()
async def page_image(request: Request, state: UiState) -> Response:
    def build() -> bytes:
        ws, ref = _doc_ref(state, request)
        source, page = _page_of(ref)
        return pages.render_png(pages.pdf_of(ws, source), page)

    return Response(await asyncio.to_thread(build), media_type="image/png",
                    headers={"cache-control": "private, max-age=300"})  # fmt: skip


@guarded()
async def download(request: Request, state: UiState) -> Response:
    ws = state.workspace(request.query_params.get("workspace"))
    thread = _thread_id(request.query_params.get("thread"))
    fmt = str(request.query_params.get("format") or "")
    if fmt not in threads.DOWNLOADS:
        raise ValueError(f"format must be one of {', '.join(threads.DOWNLOADS)}")

    def build() -> bytes | None:
        record = state.record(ws, thread)
        if record is not None:
            return threads.thread_download(ws, record, fmt)
        report = threads.research_report(ws, thread)
        return None if report is None else threads.research_download(report, fmt)

    data = await asyncio.to_thread(build)
    if data is None:
        return _error(404, "nothing finished on this thread yet")
    name = f"refgate-{thread}.{fmt}"
    return Response(data, media_type=threads.DOWNLOADS[fmt],
                    headers={"content-disposition": f'attachment; filename="{name}"'})  # fmt: skip


async def _body(request: Request) -> dict[str, object]:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise ValueError("request too large")
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        raise ValueError("the request body is not JSON") from None
    if not isinstance(data, dict):
        raise ValueError("the request body must be a JSON object")
    return data


def _started(
    state: UiState, ws: Workspace, question: str | None, thread: str | None, kind: str = "ask"
) -> Response:
    run = state.runs.start(ws, question, thread, kind)
    if thread:
        state.forget(ws, thread)
    return JSONResponse({"run": run.id, "thread": run.thread})


@guarded(write=True)
async def ask_route(request: Request, state: UiState) -> Response:
    data = await _body(request)
    ws = state.workspace(data.get("workspace"))
    question = data.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ValueError("type a question first")
    raw_thread = data.get("thread")
    thread = _thread_id(raw_thread) if raw_thread else None
    kind = "research" if data.get("kind") == "research" else "ask"
    return _started(state, ws, question, thread, kind)


@guarded(write=True)
async def resume_route(request: Request, state: UiState) -> Response:
    data = await _body(request)
    ws = state.workspace(data.get("workspace"))
    return _started(state, ws, None, _thread_id(data.get("thread")))


@guarded(write=True)
async def stop_route(request: Request, state: UiState) -> Response:
    stopped = state.runs.stop(str(request.path_params["run"]))
    return JSONResponse({"stopping": stopped})


@guarded()
async def run_events(request: Request, state: UiState) -> Response:
    run = state.runs.get(str(request.path_params["run"]))
    if run is None:
        return _error(404, "no such run (the app was restarted?)")
    try:
        since = int(request.query_params.get("since") or 0)
    except ValueError:
        since = 0

    async def stream():  # type: ignore[no-untyped-def]
        async for event in run.follow(since):
            if event.get("event") in ("run_finished", "run_failed", "run_stopped"):
                state.forget(run.workspace, run.thread)
            yield {"event": "progress", "id": str(event["seq"]),
                   "data": json.dumps(event, ensure_ascii=False, default=str)}  # fmt: skip
        yield {"event": "end", "data": "{}"}

    return EventSourceResponse(stream(), ping=15)


def create_app(config: UiConfig) -> Starlette:
    """The app for ``config``; its session token is ``app.state.ui.security.token``."""
    routes = [
        Route("/", index),
        Route("/static/{name}", static),
        Route("/api/session", session),
        Route("/api/workspace", workspace_info),
        Route("/api/threads", thread_list),
        Route("/api/thread", thread_view),
        Route("/api/page", page_info),
        Route("/api/page.png", page_image),
        Route("/api/download", download),
        Route("/api/ask", ask_route, methods=["POST"]),
        Route("/api/resume", resume_route, methods=["POST"]),
        Route("/api/runs/{run}/stop", stop_route, methods=["POST"]),
        Route("/api/runs/{run}/events", run_events),
    ]
    app = Starlette(routes=routes)
    state = UiState(config)
    app.state.ui = state
    app.add_middleware(SecurityHeaders, security=state.security)  # type: ignore[arg-type]
    return app
