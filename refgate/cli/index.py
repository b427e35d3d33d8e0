"""``refgate index [--workspace DIR]``: build or update a workspace's document index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from refgate.cli.app import EXIT_CONFIG, EXIT_ERROR, EXIT_OK, app, console, err_console, esc
from refgate.cli.common import dumps, open_settings, open_workspace

STAGES = {"chunk": "chunking documents", "embed": "embedding chunks", "index": "writing index"}


def run_index(workspace: Any, settings: Any, *, rebuild: bool = False, progress: Any = None) -> Any:
    """Build (or update) the index of ``workspace``; returns the ``UpdateResult``.

    An existing index built with the embedder the settings ask for is updated incrementally;
    otherwise (none yet, ``rebuild``, another embedder, an unreadable index) it is built anew,
    still reusing cached vectors of the same embedder.
    """
    from refgate.retrieval import DocumentIndex, default_embeddings, index_dir, workspace_documents
    from refgate.retrieval.embeddings import embeddings_id
    from refgate.retrieval.index import MANIFEST, DocumentIndexError

    docs = workspace_documents(workspace)
    path = index_dir(workspace)
    wanted = default_embeddings(settings)
    if (path / MANIFEST).is_file() and not rebuild:
        try:
            index = DocumentIndex.load(path, settings=settings)
        except DocumentIndexError:
            index = None
        if index is not None and index.manifest.get("embeddings_id") == embeddings_id(wanted):
            return index.update(docs, progress=progress)
    return DocumentIndex.build(docs, path, embeddings=wanted, progress=progress).last_result


@app.command("index")
def index_command(
    workspace: Path | None = typer.Option(
        None,
        "--workspace",
        "-w",
        help="Workspace folder (default: the current folder if it has a refgate.toml, "
        "else examples/us-macro).",
    ),
    rebuild: bool = typer.Option(
        False, "--rebuild", help="Rebuild from scratch (the embeddings cache is still used)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON on stdout."),
) -> None:
    """Build or update the workspace's document index (chunks, embeddings, FAISS + BM25)."""
    ws = open_workspace(workspace)
    settings = open_settings(ws)
    if ws.documents_path is None:
        err_console.print(
            f"[red]workspace {esc(repr(ws.name))} has no {esc('[documents]')} table: nothing to index"
        )
        raise typer.Exit(EXIT_CONFIG)
    err_console.print(
        f"indexing [bold]{esc(ws.documents_path)}[/] ({settings.embeddings} embeddings)"
    )
    with Progress(
        TextColumn("{task.description:<20}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=False,
    ) as bar:
        tasks: dict[str, Any] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(STAGES.get(stage, stage), total=max(total, 1))
            bar.update(tasks[stage], completed=done, total=max(total, 1))

        try:
            result = run_index(ws, settings, rebuild=rebuild, progress=progress)
        except Exception as exc:  # a clear message, not a traceback
            err_console.print(f"[red]indexing failed:[/red] {type(exc).__name__}: {esc(exc)}")
            raise typer.Exit(EXIT_ERROR) from exc
    summary = {"workspace": str(ws.root), "index": str(ws.state_dir / "index"), **result.to_dict()}
    if as_json:
        console.print_json(dumps(summary))
    else:
        console.print(
            f"indexed {result.documents} documents into {result.chunks} chunks: "
            f"{result.embedded} embedded, {result.reused} reused "
            f"({result.reuse_rate:.0%} from cache), {result.removed_documents} documents removed, "
            f"in {result.seconds:.1f} s -> {summary['index']}",
            markup=False,
        )
    raise typer.Exit(EXIT_OK)
