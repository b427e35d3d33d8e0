"""``refgate init [DIR]``: write a ``refgate.toml`` for a folder of data files and documents."""

from __future__ import annotations

from pathlib import Path

import typer

from refgate.api.find_workspace import BACKUP_NAME, init_workspace
from refgate.cli.app import app, console, err_console, esc
from refgate.errors import EXIT_CONFIG, EXIT_OK
from refgate.workspace import WorkspaceError, load_workspace


@app.command("init")
def init(
    folder: Path = typer.Argument(
        Path("."), help="The folder to make a workspace (default: here)."
    ),
    name: str | None = typer.Option(None, "--name", help="Workspace name (default: the folder's)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing refgate.toml."),
) -> None:
    """Create a workspace: a refgate.toml naming the CSV/parquet files (columns read from them,
    units and period columns guessed for you to check) and the documents folder, validated
    before it is kept."""

    replaced = (folder.expanduser() / "refgate.toml").exists()
    try:
        target = init_workspace(folder, name=name, force=force)
    except WorkspaceError as exc:
        err_console.print(f"[red]workspace error:[/red] {esc(exc)}")
        raise typer.Exit(EXIT_CONFIG) from None
    ws = load_workspace(target.parent)
    cols = sum(len(d.header) for d in ws.datasets.values())
    console.print(
        f"wrote {esc(target)}: {len(ws.datasets)} dataset(s), {cols} column(s)"
        + (f", documents in {esc(ws.documents_path)}" if ws.documents_path else "")
    )
    if replaced:
        console.print(f"the previous one is kept as {esc(target.parent / BACKUP_NAME)}")
    guessed = sum(1 for d in ws.datasets.values() for c in d.columns.values() if c.unit)
    if guessed:
        console.print(f"guessed {guessed} unit(s) and the period columns: check them in the file")
    steps = ["fill in each column's unit (and scale) and each dataset's description"]
    if ws.documents_path:
        steps.append(f"index the documents: `refgate index --workspace {esc(target.parent)}`")
    steps.append(f'ask: `refgate ask --workspace {esc(target.parent)} "your question"`')
    console.print("next:\n" + "\n".join(f"  {n}. {s}" for n, s in enumerate(steps, 1)))
    raise typer.Exit(EXIT_OK)


__all__ = ["init"]
