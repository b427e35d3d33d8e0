"""``refgate ui``: the workbench in the browser (``refgate.ui``), served on loopback."""

from __future__ import annotations

import ipaddress
import webbrowser
from pathlib import Path

import typer

from refgate.cli.app import app, err_console, esc
from refgate.errors import EXIT_CONFIG

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    """True for a loopback name or address (the only binding that needs no warning)."""
    if host in LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@app.command()
def ui(
    workspace: list[Path] = typer.Option(
        None, "--workspace", "-w", help="Workspace folder (repeat for several)."
    ),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Address to listen on (loopback unless you say otherwise)."
    ),
    port: int = typer.Option(8765, "--port", help="Port to listen on."),
    no_browser: bool = typer.Option(False, "--no-browser", help="Do not open a browser."),
) -> None:
    """Open the workbench in the browser: ask, watch the passes, click a number to see its
    evidence."""
    try:
        import uvicorn  # deferred: the web stack loads only when this command runs

        from refgate.ui import UiConfig, create_app  # deferred: so does the graph stack
    except ImportError as exc:
        err_console.print(
            f"[red]refgate ui needs the web extra:[/red] {esc(exc)} "
            "(pip install 'refgate[langserve]': starlette, sse-starlette, uvicorn)"
        )
        raise typer.Exit(EXIT_CONFIG) from None
    folders = [p.expanduser().resolve() for p in workspace or []]
    if not folders:
        # deferred: the API layer loads only when this command runs (refgate --help stays fast)
        from refgate.api.find_workspace import find_workspace_root

        found = find_workspace_root()
        folders = [found] if found is not None else []
    loopback = is_loopback(host)
    application = create_app(
        UiConfig(workspaces=folders, host=host, port=port, any_host=not loopback)
    )
    token = application.state.ui.security.token
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    url = f"http://{shown}:{port}/?token={token}"
    if not loopback:
        err_console.print(
            f"[yellow]warning:[/yellow] listening on {esc(host)}, not loopback: anyone who can "
            f"reach this address and learns the token {esc(token)} can run questions on your "
            "workspaces and read their documents."
        )
    err_console.print(f"refgate ui: open {esc(url)}  (Ctrl+C stops it)")
    if not no_browser:
        webbrowser.open(url)
    try:
        uvicorn.run(application, host=host, port=port, log_level="warning")
    except OSError as exc:
        err_console.print(f"[red]cannot listen on {esc(host)}:{port}:[/red] {esc(exc)}")
        raise typer.Exit(EXIT_CONFIG) from None
