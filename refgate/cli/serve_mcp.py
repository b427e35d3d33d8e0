"""``refgate mcp``: serve refgate's tools to MCP clients (``refgate.cli.mcp_server``)."""

from __future__ import annotations

import typer

from refgate.cli.app import app, err_console, esc
from refgate.config import ConfigError
from refgate.errors import EXIT_CONFIG


@app.command()
def mcp(
    http: bool = typer.Option(
        False,
        "--http",
        help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (clients send "
        "the bearer token: REFGATE_MCP_TOKEN, else one printed at start).",
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="Loopback address for --http."),
    port: int = typer.Option(8765, "--port", help="Port for --http."),
) -> None:
    """Serve refgate's tools (ask, research, check, search_documents) to MCP clients: over
    stdio, or streamable HTTP on loopback with --http.

    Over HTTP every request needs the header 'Authorization: Bearer TOKEN': the token is
    REFGATE_MCP_TOKEN, else a new one printed on stderr at start."""
    # deferred: the MCP SDK and the graph stack load only when this command runs
    from refgate.cli.mcp_server import serve

    try:
        serve(http=http, host=host, port=port)
    except ConfigError as exc:
        err_console.print(f"[red]configuration error:[/red] {esc(exc)}")
        raise typer.Exit(EXIT_CONFIG) from None
