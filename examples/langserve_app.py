"""Embed refgate's workbench in your own FastAPI service with LangServe.

    pip install -e '.[langserve]'
    export OPENAI_API_KEY=... REFGATE_MODEL=...          # or OPENAI_BASE_URL for a local server
    export REFGATE_WORKSPACE=examples/us-macro           # optional: the workspace runs use
    uvicorn --app-dir examples langserve_app:app --host 127.0.0.1 --port 8080

Routes (LangServe): ``POST /workbench/invoke``, ``/workbench/batch``, ``/workbench/stream``,
``/workbench/stream_events``, ``GET /workbench/input_schema`` ... and ``GET /healthz``.

Threads: LangServe drops a client's ``thread_id`` (it is not a declared configurable field), so
``thread_config`` below puts it back into the run's config from the request body's
``config.configurable.thread_id`` or the ``X-Refgate-Thread`` header; without either, each call
gets a fresh thread. Checkpoints and remembered decisions go where ``refgate.memory.persistence`` says
(``REFGATE_DATABASE_URL``, else SQLite under the workspace's ``.refgate/``), opened at startup
and closed at shutdown.

The input's ``workspace`` field would let a client point a run at any folder of the server; this
app refuses it unless it names the configured workspace. LangServe passes no ``context``; pass
settings through the environment.

Note: ``langserve[server]`` pins ``sse-starlette<2``, which cannot sit beside ``langgraph-api``;
install plain ``langserve`` with ``fastapi`` and ``sse-starlette>=2`` (the ``langserve`` extra).
"""

import contextlib
import json
import os
import uuid
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from langserve import add_routes
from pydantic import BaseModel, Field

from refgate.config import Settings, load_settings
from refgate.graph import build_graph
from refgate.memory.persistence import open_async_persistence
from refgate.workspace import load_workspace

THREAD_HEADER = "x-refgate-thread"


# LangServe builds its request/response models with Pydantic, which on Python 3.11 refuses the
# graph's ``typing.TypedDict`` schemas; these mirror WorkbenchInput / WorkbenchOutput.
class WorkbenchRequest(BaseModel):
    question: str = Field(description="The question to answer from the workspace's evidence.")
    workspace: str | None = Field(default=None, description="Only the configured workspace.")


class WorkbenchResponse(BaseModel):
    answer: str
    refs: dict[str, Any]
    gate: dict[str, Any]
    trace_summary: dict[str, Any]


async def _body(request: Request) -> dict[str, Any]:
    if request.method != "POST":
        return {}
    try:
        body = await request.json()
    except (ValueError, json.JSONDecodeError):
        return {}
    return body if isinstance(body, dict) else {}


def make_thread_config(workspace_root: Path | None):
    """The ``per_req_config_modifier``: thread id in, foreign workspaces out."""

    async def thread_config(config: dict[str, Any], request: Request) -> dict[str, Any]:
        body = await _body(request)
        sent = ((body.get("config") or {}).get("configurable") or {}).get("thread_id")
        thread_id = request.headers.get(THREAD_HEADER) or sent or uuid.uuid4().hex
        inputs = body.get("input")
        for item in inputs if isinstance(inputs, list) else [inputs]:
            asked = item.get("workspace") if isinstance(item, dict) else None
            if asked and (
                workspace_root is None or Path(asked).expanduser().resolve() != workspace_root
            ):
                raise HTTPException(400, "this server does not run questions on other workspaces")
        configurable = dict(config.get("configurable") or {})
        configurable["thread_id"] = str(thread_id)
        return {**config, "configurable": configurable}

    return thread_config


def create_app(
    *,
    settings: Settings | None = None,
    workspace: str | Path | None = None,
    model: Any = None,
    checkpointer: Any = None,
    store: Any = None,
) -> FastAPI:
    """Build the FastAPI app.

    Unless a checkpointer is given, persistence (async savers: LangServe runs graphs with
    ``ainvoke``/``astream``) is opened in the app's lifespan, inside the serving event loop, and
    attached to the compiled graph before the first request.
    """
    workspace = workspace or os.environ.get("REFGATE_WORKSPACE") or None
    ws = load_workspace(workspace) if workspace else None
    settings = settings or load_settings(workspace_settings=ws.settings if ws else None)
    graph = build_graph(
        model=model,
        checkpointer=checkpointer,
        store=store,
        workspace=ws,
        settings=settings,
        audit=True,  # served runs leave an audit record, as `refgate ask` does
    )

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI):
        if checkpointer is not None:
            yield
            return
        async with open_async_persistence(settings, ws) as (saver, opened_store):
            graph.checkpointer = saver
            graph.store = store if store is not None else opened_store
            yield

    app = FastAPI(
        title="refgate",
        version="0.1.0",
        description="The refgate workbench: answers whose numbers are backed by the refs they cite.",
        lifespan=lifespan,
    )
    app.state.graph = graph
    app.state.settings = settings

    @app.get("/healthz")
    def healthz() -> dict[str, Any]:
        return {"ok": True, "workspace": ws.name if ws else None}

    add_routes(
        app,
        graph.with_types(input_type=WorkbenchRequest, output_type=WorkbenchResponse),
        path="/workbench",
        per_req_config_modifier=make_thread_config(ws.root.resolve() if ws else None),
        enabled_endpoints=(
            "invoke",
            "batch",
            "stream",
            "stream_events",
            "input_schema",
            "output_schema",
            "config_schema",
            "playground",
        ),  # fmt: skip
    )
    return app


def __getattr__(name: str) -> Any:
    # ``uvicorn langserve_app:app`` builds the app on first access, not at import.
    if name == "app":
        value = create_app()
        globals()["app"] = value
        return value
    raise AttributeError(name)


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(create_app(), host="127.0.0.1", port=int(os.environ.get("PORT", "8080")))
