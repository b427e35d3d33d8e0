"""``refgate index [--workspace DIR]``: build or update a workspace's document index."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from refgate.cli.app import app, console, err_console, esc
from refgate.cli.common import WORKSPACE_HELP, dumps, open_settings, open_workspace
from refgate.errors import EXIT_CONFIG, EXIT_ERROR, EXIT_OK

if TYPE_CHECKING:
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings

    from refgate.config import Settings
    from refgate.retrieval.backend import IndexTarget
    from refgate.retrieval.documents import LoadProgress, LoadReport
    from refgate.retrieval.refresh import UpdateResult
    from refgate.workspace import Workspace

STAGES = {
    "load": "documents read",
    "ocr": "OCR, scanned pages",
    "chunk": "chunking pages",
    "embed": "embedding vectors",
    "index": "writing index",
}


def run_index(
    workspace: Workspace,
    settings: Settings,
    *,
    rebuild: bool = False,
    progress: LoadProgress | None = None,
    report: LoadReport | None = None,
    backend: str | None = None,
) -> UpdateResult:
    """Build (or update) the index of ``workspace``; returns the ``UpdateResult``.

    ``backend`` (default: the workspace's ``[index] backend``, else FAISS): "pgvector" writes
    the workspace's documents into its PostgreSQL index, one transaction per changed document.

    ``report`` (a ``LoadReport`` from ``workspace_load``) is what was read; default: read now.

    An existing index built with the embedder the settings ask for (and the current dense
    representation) is updated incrementally; otherwise (none yet, ``rebuild``, another embedder
    or representation, an unreadable index) it is built anew, still reusing cached vectors.
    """
    from refgate.retrieval import document_embeddings  # deferred: keeps refgate --help fast
    from refgate.retrieval.backend import index_target  # deferred: keeps refgate --help fast
    from refgate.retrieval.documents import workspace_load  # deferred: keeps refgate --help fast
    from refgate.retrieval.embedder_choice import (  # deferred: keeps refgate --help fast
        embeddings_for,
    )

    target = index_target(workspace, backend)
    docs = (report or workspace_load(workspace, progress=progress)).documents
    # the settings' embedder, or e5 for a Korean corpus (embedder_choice)
    wanted = embeddings_for(docs, settings, document_embeddings(settings))
    if target.backend == "pgvector":
        return _write_pgvector(workspace, target, docs, wanted, rebuild, progress)
    return _update_faiss(workspace, settings, docs, wanted, rebuild, progress)


def _write_pgvector(
    workspace: Workspace,
    target: IndexTarget,
    docs: list[Document],
    wanted: Embeddings,
    rebuild: bool,
    progress: LoadProgress | None,
) -> UpdateResult:
    """The documents into the workspace's pgvector index (changed ones only, unless
    ``rebuild``), vectors cached beside the FAISS folder's."""
    from refgate.retrieval import index_dir  # deferred: keeps refgate --help fast
    from refgate.retrieval.index_files import CACHE  # deferred: keeps refgate --help fast
    from refgate.retrieval.pgvector.writer import write_index  # deferred: imports psycopg

    return write_index(
        target.dsn(),
        docs,
        wanted,
        name=target.name,
        rebuild=rebuild,
        progress=progress,
        cache_path=index_dir(workspace) / CACHE,
    )


def _update_faiss(
    workspace: Workspace,
    settings: Settings,
    docs: list[Document],
    wanted: Embeddings,
    rebuild: bool,
    progress: LoadProgress | None,
) -> UpdateResult:
    """The FAISS index updated in place when it was built with ``wanted`` and the current dense
    representation; else built anew (cached vectors reused)."""
    from refgate.memory.embeddings import embeddings_id  # deferred: keeps refgate --help fast
    from refgate.retrieval import DocumentIndex, index_dir  # deferred: keeps refgate --help fast
    from refgate.retrieval.index import DENSE_UNIT  # deferred: keeps refgate --help fast
    from refgate.retrieval.index_files import (  # deferred: keeps refgate --help fast
        MANIFEST,
        DocumentIndexError,
    )

    path = index_dir(workspace)
    if (path / MANIFEST).is_file() and not rebuild:
        try:
            index = DocumentIndex.load(path, settings=settings)
        except DocumentIndexError:
            index = None
        if (
            index is not None
            and index.manifest.get("embeddings_id") == embeddings_id(wanted)
            and index.dense_unit == DENSE_UNIT
        ):
            return index.update(docs, progress=progress)
    built = DocumentIndex.build(docs, path, embeddings=wanted, progress=progress)
    assert built.last_result is not None  # a build always records its result
    return built.last_result


def _checked_target(ws: Workspace, backend: str | None) -> IndexTarget:
    """The workspace's index target; for pgvector, its database reached and holding pgvector
    before any file is read (a wrong DSN or a server without pgvector: exit 2)."""
    from refgate.retrieval.backend import index_target  # deferred: keeps refgate --help fast
    from refgate.retrieval.index_files import DocumentIndexError  # deferred: keeps --help fast
    from refgate.retrieval.pgvector.connection import connect  # deferred: imports psycopg

    try:
        target = index_target(ws, backend)
        if target.backend == "pgvector":
            connect(target.dsn()).close()
    except DocumentIndexError as exc:
        err_console.print(f"[red]index:[/red] {esc(exc)}")
        raise typer.Exit(EXIT_CONFIG) from exc
    return target


def _migrate(ws: Workspace, target: IndexTarget, as_json: bool) -> None:
    """``--migrate``: the FAISS folder's chunks and vectors into the pgvector index."""
    from refgate.retrieval import index_dir  # deferred: keeps refgate --help fast
    from refgate.retrieval.index_files import DocumentIndexError  # deferred: keeps --help fast
    from refgate.retrieval.pgvector.migrate import migrate_faiss  # deferred: imports psycopg

    try:
        result = migrate_faiss(index_dir(ws), target.dsn(), name=target.name)
    except DocumentIndexError as exc:
        err_console.print(f"[red]migration refused:[/red] {esc(exc)}")
        raise typer.Exit(EXIT_CONFIG) from exc
    summary = {"workspace": str(ws.root), "backend": "pgvector", **result.to_dict()}
    if as_json:
        console.print_json(dumps(summary))
    else:
        console.print(
            f"migrated {result.documents} documents ({result.added_documents} written, "
            f"{result.unchanged_documents} already there) into pgvector index "
            f"{target.name!r}: {result.chunks} chunks, nothing embedded, "
            f"in {result.seconds:.1f} s",
            markup=False,
        )
    raise typer.Exit(EXIT_OK)


def _print_skipped(loaded: LoadReport) -> None:
    """The skipped files and why, on stderr (the JSON summary lists them too)."""
    if loaded.skipped:
        err_console.print(f"skipped {len(loaded.skipped)} of {loaded.files} files:", markup=False)
        for f in loaded.skipped:
            err_console.print(f"  {f.source}: {f.reason}", markup=False)
    for source, pages in loaded.blank_pages.items():
        shown = ", ".join(map(str, pages[:10])) + (" ..." if len(pages) > 10 else "")
        err_console.print(
            f"  {source}: {len(pages)} pages without a text layer left out (p. {shown})",
            markup=False,
        )


@app.command("index")
def index_command(
    workspace: Path | None = typer.Option(
        None,
        "--workspace",
        "-w",
        help=WORKSPACE_HELP,
    ),
    rebuild: bool = typer.Option(
        False, "--rebuild", help="Rebuild from scratch (the embeddings cache is still used)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON on stdout."),
    backend: str | None = typer.Option(
        None,
        "--backend",
        help="faiss or pgvector (default: the workspace's [index] backend, else faiss).",
    ),
    migrate: bool = typer.Option(
        False,
        "--migrate",
        help="Copy the workspace's FAISS index into its pgvector index without re-embedding.",
    ),
) -> None:
    """Build or update the workspace's document index (chunks, embeddings, FAISS + BM25)."""
    ws = open_workspace(workspace)
    settings = open_settings(ws)
    target = _checked_target(ws, "pgvector" if migrate else backend)
    if migrate:
        _migrate(ws, target, as_json)
    if ws.documents_path is None:
        err_console.print(
            f"[red]workspace {esc(repr(ws.name))} has no {esc('[documents]')} table: nothing to index"
        )
        raise typer.Exit(EXIT_CONFIG)
    err_console.print(
        f"indexing [bold]{esc(ws.documents_path)}[/] ({settings.embeddings} embeddings)"
    )
    loaded, result = _read_and_index(ws, settings, rebuild, backend)
    _print_skipped(loaded)
    _print_result(_summary(ws, target, loaded, result), loaded, result, as_json)
    raise typer.Exit(EXIT_OK)


def _progress_bar() -> Progress:
    """Progress bars on stderr: one per stage, done of total, elapsed time and ETA."""
    return Progress(
        TextColumn("{task.description:<20}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=err_console,
        transient=False,
    )


def _read_and_index(
    ws: Workspace, settings: Settings, rebuild: bool, backend: str | None
) -> tuple[LoadReport, UpdateResult]:
    """The workspace's documents read and indexed under progress bars; a refused index exits 2,
    any other failure 1, each with a message rather than a traceback."""
    from refgate.retrieval.documents import workspace_load  # deferred: keeps refgate --help fast
    from refgate.retrieval.index_files import DocumentIndexError  # deferred: keeps --help fast

    # skipped files are summarised afterwards; their log lines would tear the progress bars
    logging.getLogger("refgate.retrieval").setLevel(logging.ERROR)
    with _progress_bar() as bar:
        tasks: dict[str, TaskID] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(STAGES.get(stage, stage), total=max(total, 1))
            bar.update(tasks[stage], completed=done, total=max(total, 1))

        try:
            loaded = workspace_load(ws, progress=progress)
            result = run_index(
                ws, settings, rebuild=rebuild, progress=progress, report=loaded, backend=backend
            )
        except DocumentIndexError as exc:  # the index refuses these documents: nothing written
            err_console.print(f"[red]indexing refused:[/red] {esc(exc)}")
            raise typer.Exit(EXIT_CONFIG) from exc
        except Exception as exc:  # a clear message, not a traceback
            err_console.print(f"[red]indexing failed:[/red] {type(exc).__name__}: {esc(exc)}")
            raise typer.Exit(EXIT_ERROR) from exc
    return loaded, result


def _summary(
    ws: Workspace, target: IndexTarget, loaded: LoadReport, result: UpdateResult
) -> dict[str, object]:
    """The run's figures, as ``--json`` prints them."""
    where = (
        f"pgvector index {target.name!r}"
        if target.backend == "pgvector"
        else str(ws.state_dir / "index")
    )
    return {
        "workspace": str(ws.root),
        "backend": target.backend,
        "index": where,
        **result.to_dict(),
        "files": loaded.files,
        "pages": loaded.pages,
        "skipped": [{"source": f.source, "reason": f.reason} for f in loaded.skipped],
        "blank_pages": loaded.blank_pages,
    }


def _print_result(
    summary: dict[str, object], loaded: LoadReport, result: UpdateResult, as_json: bool
) -> None:
    """The summary as JSON on stdout, or one line saying what was indexed."""
    if as_json:
        console.print_json(dumps(summary))
        return
    console.print(
        f"indexed {loaded.files - len(loaded.skipped)} files ({result.documents} documents, "
        f"{loaded.pages} PDF pages) into {result.chunks} chunks: "
        f"{result.embedded} embedded, {result.reused} reused "
        f"({result.reuse_rate:.0%} from cache), {result.removed_documents} documents removed, "
        f"in {result.seconds:.1f} s -> {summary['index']}",
        markup=False,
    )
