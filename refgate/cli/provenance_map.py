"""``refgate provenance-map [--json]``: per tool, the document-derived paths and why (origins),
generated from the same ``ToolSpec`` declarations the tools use."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from refgate.cli.app import app, console, esc
from refgate.provenance.map import provenance_map
from refgate.tools.registry import iter_specs


@app.command("provenance-map")
def provenance_map_command(
    json_out: bool = typer.Option(False, "--json", help="Print the map as JSON."),
) -> None:
    """Show which tool result fields carry document-derived (untrusted) values, and why."""
    pmap = provenance_map(iter_specs())
    if json_out:
        typer.echo(json.dumps(pmap, indent=2, ensure_ascii=False))
        return
    table = Table(title="Provenance map (untrusted paths per tool)")
    for col in ("tool", "untrusted path", "origin", "arg slots"):
        table.add_column(col)
    for name, entry in pmap["tools"].items():
        slots = ", ".join(f"{k}={v}" for k, v in (entry.get("argSlots") or {}).items())
        if entry.get("error"):
            table.add_row(esc(name), "-", esc(f"not loadable: {entry['error']}"), esc(slots))
            continue
        origins = entry.get("origins") or {}
        if not origins:
            table.add_row(esc(name), "(none: engine or workspace data)", "", esc(slots))
        for i, (path, why) in enumerate(origins.items()):
            table.add_row(
                esc(name) if i == 0 else "", esc(path), esc(why), esc(slots) if i == 0 else ""
            )
    console.print(table)
    console.print(pmap["policy"], markup=False)
