"""``refgate dart sync [--workspace DIR] [--offline]``: fetch a workspace's DART filings and
statements (its ``[dart]`` block) through OpenDART with ``OPENDART_API_KEY``, or rebuild them
offline from the cache. Exit 2 for what the user fixes (no key, a refused key, a bad ``[dart]``
block, an unknown company), 1 for what fails on the way (network, HTTP errors, the daily limit);
what was fetched before a failure is kept and the next sync resumes from there."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from refgate.cli.app import app, console, err_console, esc
from refgate.cli.common import dumps
from refgate.errors import EXIT_CONFIG, EXIT_ERROR, EXIT_OK

dart_app = typer.Typer(
    name="dart",
    help="DART filings and statements (OpenDART) into the workspace.",
    no_args_is_help=True,
)
app.add_typer(dart_app, name="dart")

#: Overrides OpenDART's address (a mirror, or a local fake of the API in tests).
BASE_URL_ENV = "OPENDART_BASE_URL"


def _workspace_root(path: Path | None) -> Path:
    if path is not None:
        return path
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "refgate.toml").is_file():
            return folder
    env = os.environ.get("REFGATE_WORKSPACE")
    if env:
        return Path(env)
    err_console.print("[red]no workspace: pass --workspace DIR (a folder with a refgate.toml)")
    raise typer.Exit(EXIT_CONFIG)


@dart_app.command("sync")
def sync_command(
    workspace: Path | None = typer.Option(
        None, "--workspace", "-w", help="Workspace folder (its refgate.toml has a [dart] block)."
    ),
    offline: bool = typer.Option(
        False, "--offline", help="Derive documents and dataset again from the cache; no network."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON on stdout."),
) -> None:
    """Fetch new DART filings (sections, tables) and statements into the workspace."""
    # deferred: a CLI command loads the retrieval stack only when it runs
    from refgate.retrieval.dart.api import DEFAULT_BASE_URL, KEY_ENV, DartClient, DartError

    # deferred: as above
    from refgate.retrieval.dart.config import DartConfigError, load_dart_config
    from refgate.retrieval.dart.document import DocumentError  # deferred: as above
    from refgate.retrieval.dart.sync import rebuild, sync  # deferred: as above

    root = _workspace_root(workspace)
    try:
        config = load_dart_config(root)
    except DartConfigError as exc:
        err_console.print(f"[red]{esc(exc)}")
        raise typer.Exit(EXIT_CONFIG) from exc
    try:
        if offline:
            result = rebuild(config)
        else:
            base_url = os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
            with DartClient(os.environ.get(KEY_ENV, ""), base_url=base_url) as client:
                result = sync(config, client, say=lambda m: err_console.print(m, markup=False))
    except DartError as exc:
        err_console.print(f"[red]DART sync stopped:[/red] {esc(exc)}")
        raise typer.Exit(exc.exit_code) from exc
    except (DocumentError, OSError, ValueError) as exc:
        err_console.print(f"[red]DART sync failed:[/red] {type(exc).__name__}: {esc(exc)}")
        raise typer.Exit(EXIT_ERROR) from exc
    summary = {
        "workspace": str(config.root),
        "companies": result.companies,
        "listed": result.listed,
        "fetched": result.fetched,
        "already_synced": result.skipped,
        "statement_rows": result.statement_rows,
        "requests": result.requests,
        "problems": result.problems,
    }
    if as_json:
        console.print_json(dumps(summary))
    else:
        console.print(
            f"{'rebuilt' if offline else 'fetched'} {len(result.fetched)} filings "
            f"({result.skipped} already synced) for {', '.join(result.companies.values())}; "
            f"{result.statement_rows} statement rows in {config.dataset}; "
            f"{result.requests} OpenDART requests",
            markup=False,
        )
        for p in result.problems:
            err_console.print(f"  {p}", markup=False)
    raise typer.Exit(EXIT_OK)
