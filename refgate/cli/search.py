"""``refgate search -w WS "query"``: the document index queried directly, whichever backend."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from refgate.cli.app import app, console, err_console, esc
from refgate.cli.common import WORKSPACE_HELP, dumps, open_settings, open_workspace
from refgate.errors import EXIT_CONFIG, EXIT_ERROR, EXIT_OK

if TYPE_CHECKING:
    from refgate.config import Settings
    from refgate.retrieval.index import Hit, SearchIndex
    from refgate.workspace import Workspace

MAX_K = 100
PREVIEW_CHARS = 240


@app.command("search")
def search_command(
    query: str = typer.Argument(..., help="What to look for, in words."),
    workspace: Path | None = typer.Option(None, "--workspace", "-w", help=WORKSPACE_HELP),
    k: int = typer.Option(10, "--k", "-k", help=f"How many chunks (1-{MAX_K})."),
    company: list[str] = typer.Option(
        [], "--company", help="Only this DART company: corp_code, stock code or name (repeatable)."
    ),
    since: str | None = typer.Option(
        None, "--since", help="Only documents dated on or after (ISO)."
    ),
    until: str | None = typer.Option(
        None, "--until", help="Only documents dated on or before (ISO)."
    ),
    source: list[str] = typer.Option([], "--source", help="Only these files (repeatable)."),
    doc_type: list[str] = typer.Option(
        [], "--doc-type", help="Only this document type: a DART detail type or a file format."
    ),
    backend: str | None = typer.Option(
        None, "--backend", help="faiss or pgvector (default: the workspace's [index] backend)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the hits as JSON on stdout."),
) -> None:
    """Search the workspace's document index: ranked chunks with their metadata and scores."""
    ws = open_workspace(workspace)
    settings = open_settings(ws)
    if not query.strip():
        err_console.print("[red]search:[/red] the query is empty")
        raise typer.Exit(EXIT_CONFIG)
    if not 1 <= k <= MAX_K:
        err_console.print(f"[red]search:[/red] --k must be between 1 and {MAX_K}, got {k}")
        raise typer.Exit(EXIT_CONFIG)
    filters = _filters(company, since, until, source, doc_type)
    index_backend, hits = _search(ws, settings, backend, query, k, filters)
    rows = [_row(h) for h in hits]
    if as_json:
        console.print_json(
            dumps({"query": query, "backend": index_backend, "filters": filters, "hits": rows})
        )
    else:
        _print_hits(hits)
    raise typer.Exit(EXIT_OK)


def _filters(
    company: list[str], since: str | None, until: str | None, source: list[str], doc_type: list[str]
) -> dict[str, object]:
    """The index filters the options ask for."""
    filters: dict[str, object] = {}
    if company:
        filters["company"] = list(company)
    if since:
        filters["date_from"] = since
    if until:
        filters["date_to"] = until
    if source:
        filters["source"] = list(source)
    if doc_type:
        filters["doc_type"] = list(doc_type)
    return filters


def _search(
    ws: Workspace,
    settings: Settings,
    backend: str | None,
    query: str,
    k: int,
    filters: dict[str, object],
) -> tuple[str, list[Hit]]:
    """``(backend, hits)``: the index the workspace (or ``--backend``) names, searched; a clear
    message and exit code when it cannot be."""
    # deferred: retrieval loads FAISS or psycopg and the embedding model
    from refgate.retrieval.backend import index_target, open_pg_index
    from refgate.retrieval.capability import open_index  # deferred: as the line above
    from refgate.retrieval.index_files import DocumentIndexError  # deferred: as above

    index: SearchIndex
    try:
        target = index_target(ws, backend)
        if target.backend == "pgvector":
            index = open_pg_index(target, settings)
        else:
            index = open_index(replace(ws, index_options={"backend": "faiss"}), settings)
        return target.backend, index.search(query, k=k, filters=filters or None, mmr=False)
    except DocumentIndexError as exc:
        err_console.print(f"[red]search:[/red] {esc(exc)}")
        raise typer.Exit(EXIT_CONFIG) from exc
    except Exception as exc:  # a clear message, not a traceback
        err_console.print(f"[red]search failed:[/red] {type(exc).__name__}: {esc(exc)}")
        raise typer.Exit(EXIT_ERROR) from exc


def _row(hit: Hit) -> dict[str, object]:
    """A hit as ``--json`` prints it."""
    return {
        "rank": hit.rank,
        "doc_id": hit.doc_id,
        "chunk_id": hit.chunk_id,
        "score": round(hit.score, 6),
        "dense_score": None if hit.dense_score is None else round(hit.dense_score, 6),
        "bm25_score": None if hit.bm25_score is None else round(hit.bm25_score, 6),
        "metadata": hit.metadata,
        "text": hit.text,
    }


def _print_hits(hits: list[Hit]) -> None:
    """The hits for a person: rank, score, chunk, where it is, and a preview of its text."""
    for h in hits:
        meta = h.metadata
        where = " ".join(
            str(meta[key]) for key in ("source", "page", "corp_name", "date") if meta.get(key)
        )
        preview = " ".join(h.text.split())[:PREVIEW_CHARS]
        console.print(
            f"{h.rank:>3}. {round(h.score, 6):.4f}  {h.chunk_id}  {where}\n     {preview}",
            markup=False,
        )
    if not hits:
        err_console.print("no hits")
