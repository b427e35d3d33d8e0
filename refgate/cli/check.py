"""``refgate check [ANSWER] --refs FILE``: run the GATE alone on an answer and a ref ledger."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from refgate.gate.findings import GateReport

import typer
from rich.markup import escape

from refgate.cli.app import app, console, err_console, esc, json_safe
from refgate.config import ConfigError, load_settings
from refgate.errors import EXIT_CONFIG, EXIT_OK, EXIT_UNMET


def _fail(message: str) -> typer.Exit:
    err_console.print(f"[red]check:[/red] {esc(message)}")
    return typer.Exit(EXIT_CONFIG)


def _read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(f"cannot read {path}: {exc}") from exc


def ref_list(refs: Mapping[str, object]) -> list[object]:
    """Refs given as an object mapping ids to refs, as a list (each ref dict gains its ``id``
    when it lacks one)."""
    return [
        {"id": rid, **ref} if isinstance(ref, Mapping) and "id" not in ref else ref
        for rid, ref in refs.items()
    ]


def load_ledger(path: str) -> tuple[list[object], str | None]:
    """The refs in ``path`` (a JSON list of refs, an object mapping ids to refs, or an object
    with a ``refs`` key such as ``refgate ask --json`` prints) and its ``answer``, if any."""
    try:
        data = json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise _fail(f"{path} is not JSON: {exc}") from exc
    except RecursionError as exc:
        raise _fail(f"{path} is nested too deeply to read") from exc
    answer = None
    if isinstance(data, dict) and "refs" in data:
        answer = data.get("answer") if isinstance(data.get("answer"), str) else None
        data = data["refs"]
    if isinstance(data, dict):
        refs = ref_list(data)
    elif isinstance(data, list):
        refs = data
    else:
        raise _fail(
            f"{path} holds a JSON {type(data).__name__}; expected a list of refs, an object "
            "mapping ids to refs, or an object with a 'refs' key"
        )
    return refs, answer


@app.command()
def check(
    answer: str = typer.Argument(
        None,
        help="The answer: a markdown file, or - for standard input (default: the 'answer' of "
        "the refs file, as `refgate ask --json` prints it).",
    ),
    refs: str = typer.Option(
        ..., "--refs", "-r", help="JSON file of refs (a list, an id->ref object, or `ask --json`)."
    ),
    require: list[str] = typer.Option(
        [],
        "--require",
        help="A ref kind the answer's evidence must include, or 'primarySource' / "
        "'secondaryAllowed' (numbers backed only by web pages block / only warn).",
    ),
    require_emitted: bool = typer.Option(
        False, "--require-emitted", help="Block when no valueRef, tableRef or dateRef exists."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the GATE report as JSON."),
) -> None:
    """Run the GATE alone: check every number, date and ranking of an answer against the refs it
    cites. Exit 0 when it passes, 3 when it blocks, 2 on unreadable input."""
    # deferred: the GATE loads only when refgate check runs (keeps --help fast)
    from refgate.gate import CheckRefused, check_alone

    ledger, stored_answer = load_ledger(refs)
    if answer is not None:
        text = _read_text(answer)
    elif stored_answer is not None:
        text = stored_answer
    else:
        raise _fail(f"no answer given and {refs} holds none: pass a file or - for stdin")

    try:  # REFGATE_SECONDARY_NUMBERS applies here as in the graph's GATE
        settings = load_settings()
        report = check_alone(
            text,
            ledger,
            settings,
            required_evidence=tuple(require),
            require_emitted=require_emitted,
        )
    except (ConfigError, CheckRefused) as exc:
        raise _fail(str(exc)) from None
    if json_out:
        print(json_safe(json.dumps(report.to_dict(), ensure_ascii=False, indent=2)))
    else:
        _render(report)
    raise typer.Exit(EXIT_OK if report.passed else EXIT_UNMET)


def _render(report: GateReport) -> None:
    counts = report.to_dict()["counts"]
    verdict = "[green]passed[/green]" if report.passed else "[red]blocked[/red]"
    console.print(
        f"GATE {verdict}: {counts['supported_claims']} of {counts['claims']} claims supported, "
        f"{counts['blocking']} blocking issue(s), {counts['warnings']} warning(s)"
    )
    for issue in report.issues:
        colour = "red" if issue.severity == "block" else "yellow"
        claim = " ".join(issue.claim.split())
        claim = claim if len(claim) <= 160 else claim[:159] + "…"
        console.print(f"- [{colour}]{issue.severity}[/{colour}] {issue.code}", highlight=False)
        if claim:
            console.print(f"  claim: {escape(claim)}", highlight=False)
        console.print(f"  why: {escape(issue.detail)}", highlight=False)
