"""``refgate ask``: run the workbench on a question, with live progress, and show the verdict."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markdown import Markdown
from rich.table import Table
from rich.text import Text
from typing_extensions import TypedDict

from refgate.cli.app import app, console, err_console, esc
from refgate.cli.approval import terminal_approver
from refgate.cli.common import WORKSPACE_HELP, dumps, open_workspace, resume_command
from refgate.cli.report import check_output, report_written
from refgate.cli.stopping import say_on_stop, stop_on_signals
from refgate.cli.trust import prompt_trust
from refgate.config import ConfigError
from refgate.errors import EXIT_CONFIG, EXIT_ERROR, EXIT_OK, EXIT_UNMET
from refgate.payloads import ValuePayload, payload_of
from refgate.refs import Ref, as_ref_map, cited_ids, payload_values
from refgate.report.cards import influence_note, sent_lines
from refgate.report.links import allowed_urls
from refgate.report.markdown import inert_answer
from refgate.trust import commands, is_trusted
from refgate.verdict import Verdict

if TYPE_CHECKING:
    from refgate.config import Settings
    from refgate.events import ProgressEvent


def value_preview(ref: Ref) -> str:
    """A one-line view of what a ref holds."""
    p = ref.payload
    if ref.kind == "valueRef":
        vp = payload_of(ref, ValuePayload)
        raw_units = vp.get("units")
        units = raw_units if isinstance(raw_units, dict) else {}
        values = payload_values(vp)
        if not isinstance(values, dict):
            return str(values)[:120] if values is not None else ""
        parts = [f"{k}={v}{' ' + str(units[k]) if k in units else ''}" for k, v in values.items()]
        scale = f" ({vp['scale']})" if vp.get("scale") else ""
        return ", ".join(parts)[:120] + scale
    if ref.kind == "tableRef":
        return f"table {len(p.get('rows') or [])} rows x {len(p.get('columns') or [])} columns"
    if ref.kind == "dateRef":
        return str(p.get("date", ""))
    for key in ("decision", "excerpt", "text", "quote", "summary", "title", "id"):
        if p.get(key):
            return str(p[key]).replace("\n", " ")[:100]
    return ""


def _progress_line(chunk: ProgressEvent) -> str | None:
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


class ShownAnswer(TypedDict, total=False):
    """What the terminal shows of an answer (``_render``)."""

    question: str
    answer: str
    refs: Mapping[str, object]
    gate: Verdict
    outbound: object


def _render(result: ShownAnswer, thread: str) -> None:
    refs = as_ref_map(result.get("refs") or {})
    answer = result.get("answer") or ""
    # a terminal makes links clickable: only the run's own sources stay links (as in the reports)
    allowed = allowed_urls(refs, [result.get("question") or ""])
    console.print(Markdown(inert_answer(answer, allowed) or "_(no answer)_"))
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
                esc(value_preview(ref))
                + (f" [yellow]({esc(influence_note(ref.influenced_by))})[/yellow]"
                   if ref.influenced_by else ""),
            )  # fmt: skip
        console.print(table)
    gate = result.get("gate") or {}
    conclusions = gate.get("conclusions") or []
    if conclusions:
        console.print("[bold]The model's conclusions (not verified)[/bold]")
        for line in conclusions:
            console.print(f"  - {esc(str(line)[:300])}")
    for line in sent_lines(result.get("outbound") or []):
        console.print(f"[dim]{esc(line[:300])}[/dim]")
    for issue in gate.get("issues") or []:
        if issue.get("severity") == "warn":
            claim = str(issue.get("claim") or "")[:160]
            console.print(
                f"[yellow]GATE warning[/yellow] {esc(issue.get('code'))}: "
                f"{esc(issue.get('detail') or '')}" + (f" (claim: {esc(claim)})" if claim else "")
            )
    if gate.get("passed"):
        console.print(f"[green]GATE passed[/green] (thread {esc(thread)})")
    else:
        issues = [i for i in gate.get("issues") or [] if i.get("severity", "block") == "block"]
        console.print(
            f"[yellow]GATE blocked: {len(issues)} unmet claim(s)[/yellow] (thread {esc(thread)})"
        )


@contextlib.contextmanager
def model_endpoint(
    settings: Settings, quiet: bool = False, log_path: Path | None = None
) -> Iterator[Settings]:
    """``refgate.api.public.model_endpoint`` with its notice printed on stderr (unless ``quiet``);
    the embedded model's server log goes to ``log_path``."""
    # deferred: the graph stack loads only when this command runs, so refgate --help stays fast
    from refgate.api.public import model_endpoint as endpoint

    def notice(chunk: ProgressEvent) -> None:
        line = render_event(chunk)
        if line and not quiet:
            err_console.print(line)

    with endpoint(settings, notice, log_path=log_path) as live:
        yield live


def render_event(chunk: ProgressEvent) -> str | None:
    """The stderr line for one progress event of ``refgate.ask`` (None: not shown)."""
    kind = chunk.get("event")
    if kind == "notice":
        return "[yellow]note:[/yellow] " + esc(chunk.get("message", ""))
    if kind == "resuming":
        return f"resuming thread {esc(chunk.get('thread'))} at {esc(', '.join(chunk.get('next') or []))}"
    return _progress_line(chunk)


class AnswerStream:
    """COMPOSE's text on stderr as it is written (``answer_delta`` events), under a heading per
    draft; the rendered answer and the GATE's verdict follow when the run ends."""

    def __init__(self) -> None:
        self.open = False
        self.drafts = 0

    def __call__(self, chunk: Mapping[str, object]) -> bool:
        """Show ``chunk`` if it belongs to the stream; True when it did."""
        kind = chunk.get("event")
        if kind == "answer_delta":
            if not self.open:
                self.open = True
                self.drafts += 1
                label = "answer" if self.drafts == 1 else f"answer, draft {self.drafts}"
                err_console.print(f"[dim]── {label} (as COMPOSE writes it) ──[/dim]")
            err_console.print(Text(str(chunk.get("text") or "")), end="", soft_wrap=True)
            return True
        if kind == "pass_finished" and chunk.get("pass") == "compose" and self.open:
            self.open = False
            err_console.print()
        return False


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
    from refgate.api.local_llm import LocalModelError  # deferred: keeps --help fast
    from refgate.api.public import RunFailed, ask  # deferred: keeps --help fast

    check_output(output)
    events = _Events(json_out, thread)
    ws = open_workspace(workspace_path)
    events.root = ws.root
    if commands(ws) and not is_trusted(ws):
        # workspace trust: its commands start only once the person says so (here, or with
        # refgate trust); without it the run goes on and McpCall refuses them
        prompt_trust(ws)
    try:
        result = ask(
            question,
            workspace=ws,
            model=model,
            thread=thread,
            on_event=events,
            approve=terminal_approver(ws.approval_timeout_s),
        )
    except (ConfigError, KeyboardInterrupt, SystemExit, LocalModelError, RunFailed) as exc:
        return _stopped(exc, ws.root, events.thread)
    if json_out:
        print(dumps(result.to_dict()))
    else:
        shown: ShownAnswer = {
            "answer": result.answer,
            "refs": result.refs,
            "gate": result.gate,
            "outbound": result.record.get("outbound") or [],
        }
        _render({**shown, "question": question or ""}, result.thread)
        err_console.print(f"[dim]{esc(result.usage.summary())}[/dim]")
    if output is not None and not report_written(
        lambda: result.write_report(output), result.thread
    ):
        return EXIT_ERROR
    return EXIT_OK if result.passed else EXIT_UNMET


class _Events:
    """A run's events on stderr (unless ``--json``): the answer as COMPOSE writes it, the
    progress lines, and the run's thread (how to resume it when stopped)."""

    def __init__(self, json_out: bool, thread: str | None) -> None:
        self.json_out = json_out
        self.thread = thread
        self.root: Path | None = None
        self.stream = AnswerStream()

    def __call__(self, chunk: ProgressEvent) -> None:
        if chunk.get("event") == "run_started":
            self.thread = chunk.get("thread")
            if self.thread and self.root is not None:
                say_on_stop(resume_command(self.root, self.thread))
        if not self.json_out and self.stream(chunk):
            return
        line = render_event(chunk)
        if line and not self.json_out:
            err_console.print(line)


def _stopped(exc: BaseException, root: Path, thread: str | None) -> int:
    """Say why the run stopped (and how to resume it); its exit code (SIGTERM's ``SystemExit``
    goes on up once said)."""
    from refgate.api.public import RunFailed  # deferred: keeps --help fast

    if isinstance(exc, ConfigError):
        err_console.print(f"[red]configuration error:[/red] {esc(exc)}")
        return EXIT_CONFIG
    if isinstance(exc, KeyboardInterrupt | SystemExit):
        stopped = isinstance(exc, SystemExit)  # SIGTERM (refgate.cli.stopping)
        if thread:
            err_console.print(
                f"\n{'stopped' if stopped else 'interrupted'}; resume with: "
                f"{esc(resume_command(root, thread))}"
            )
        if stopped:
            raise exc
        return EXIT_ERROR
    if isinstance(exc, RunFailed):
        err_console.print(f"[red]run failed:[/red] {esc(exc)}")
        err_console.print(f"nothing is lost; resume with: {esc(resume_command(root, exc.thread))}")
        return EXIT_ERROR
    err_console.print(f"[red]the embedded model failed:[/red] {esc(exc)}")
    return EXIT_ERROR


@app.command()
def ask(
    question: str = typer.Argument(None, help="The question (omit with --thread to resume)."),
    workspace: Path = typer.Option(
        None,
        "--workspace",
        "-w",
        help=WORKSPACE_HELP,
    ),
    thread: str = typer.Option(
        None,
        "--thread",
        "-t",
        help="Thread id: resumes an interrupted run, or asks a follow-up on a finished one; new runs get a fresh id.",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
    model: str = typer.Option(
        None,
        "--model",
        "-m",
        help="Model string (overrides REFGATE_MODEL): provider:model or a bare name.",
    ),
    output: Path = typer.Option(
        None,
        "--output",
        "-o",
        help="Also write a report: .md, .html (self-contained), .pdf, .docx or .json.",
    ),
) -> None:
    """Answer a question about a workspace; every claim is gated on the refs it cites.

    Models: --model / REFGATE_MODEL take provider:model strings (anthropic:claude-sonnet-4-5, ollama:qwen2.5, google_genai:gemini-2.5-flash; install the provider's extra, e.g. pip install 'refgate\\[anthropic]') or a bare name for the OpenAI-compatible server at OPENAI_BASE_URL.

    Web search (WebSearch inside WORK) is offline by default: it reads the workspace's web snapshot. For the live web set REFGATE_WEB_SEARCH=searx:http://HOST:8888 (a SearxNG server) and REFGATE_WEB_FETCH=http. Datasets, documents, the sandbox and the GATE never need a network.
    """
    stop_on_signals()
    code = run_question(
        question,
        workspace_path=workspace,
        thread=thread,
        model=model,
        json_out=json_out,
        output=output,
    )
    raise typer.Exit(code)
