"""``refgate eval``: run a question set end to end and score it (numbers, text, refusals) against
the GATE's verdict; compare two runs; convert TAT-QA into a question set and a workspace."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from refgate.api import local_llm
from refgate.cli.app import app, console, err_console, esc
from refgate.cli.ask import model_endpoint
from refgate.cli.common import open_settings, open_workspace
from refgate.cli.evaluation.compare import compare_runs
from refgate.cli.evaluation.execute import AskExecutor
from refgate.cli.evaluation.metrics import Summary, summarize
from refgate.cli.evaluation.questions import EvalError, EvalQuestion, load_questions
from refgate.cli.evaluation.render import (
    compare_markdown,
    report_document,
    summary_rows,
    write_report,
)
from refgate.cli.evaluation.runner import run_eval
from refgate.cli.evaluation.store import (
    EvalResult,
    RunLock,
    RunStore,
    eval_root,
    file_hash,
    now_iso,
)
from refgate.cli.evaluation.tatqa import convert_tatqa
from refgate.cli.stopping import stop_on_signals
from refgate.config import ConfigError
from refgate.errors import EXIT_CONFIG, EXIT_ERROR, EXIT_OK


def _print_summary(summary: Summary, title: str) -> None:
    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value")
    for label, value in summary_rows(summary):
        table.add_row(esc(label), esc(value))
    console.print(table)


def _convert(source: Path, to: Path, limit: int | None) -> int:
    conv = convert_tatqa(source, to, limit=limit)
    console.print(
        f"wrote {conv.questions} questions over {conv.contexts} contexts to "
        f"{esc(conv.questions_file)} ({conv.skipped} skipped: long text answers need a judge)\n"
        f"run: refgate eval {esc(conv.questions_file)} --workspace {esc(conv.workspace)}"
    )
    return EXIT_OK


def _compare(root: Path, a: str, b: str, output: Path | None) -> int:
    ra, rb = RunStore.open(root, a), RunStore.open(root, b)
    cmp = compare_runs(ra.results(), rb.results())
    text = compare_markdown(cmp, a, b)
    if output:
        if output.suffix.lower() == ".json":
            output.write_text(json.dumps(cmp, indent=2, ensure_ascii=False), encoding="utf-8")
        else:
            output.write_text(text, encoding="utf-8")
    table = Table(title=f"eval {a} -> {b}")
    for col in ("id", a, b, "change"):
        table.add_column(esc(col))
    for c in cmp["changes"]:
        table.add_row(esc(c["id"]), esc(c["a"]), esc(c["b"]), esc(c["change"]))
    console.print(table)
    deltas = ", ".join(f"{k} {v:+d}" for k, v in cmp["delta"].items())
    console.print(f"{len(cmp['changes'])} question(s) changed cell; {esc(deltas)}")
    return EXIT_OK


@contextlib.contextmanager
def _progress(total: int, already: int) -> Iterator[Callable[[EvalResult, int, int], None]]:
    """A progress bar on stderr; yields the ``on_result`` callback that advances it."""
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=err_console) as bar:
        task = bar.add_task("eval", total=total, completed=already)
        cells: dict[str, int] = {}

        def on_result(rec: EvalResult, done: int, total: int) -> None:
            cells[rec["cell"]] = cells.get(rec["cell"], 0) + 1
            bar.update(
                task,
                completed=done,
                description=(
                    f"eval (wrong+passed {cells.get('wrong_passed', 0)}, "
                    f"correct+passed {cells.get('correct_passed', 0)}, "
                    f"failed {cells.get('failed', 0)})"
                ),
            )

        yield on_result


def select_questions(
    questions: list[EvalQuestion], limit: int | None, only: list[str] | None
) -> list[EvalQuestion]:
    """The questions a run asks: those named by ``only`` (in file order; an unknown id is an
    error naming it), then the first ``limit`` of them."""
    if only:
        known = {str(q.id) for q in questions}
        unknown = [i for i in only if i not in known]
        if unknown:
            raise EvalError(f"--only: no question with id {', '.join(map(repr, unknown))}")
        wanted = set(only)
        questions = [q for q in questions if str(q.id) in wanted]
    return questions[:limit] if limit else questions


def _only(value: str | None) -> list[str] | None:
    ids = [i.strip() for i in (value or "").split(",") if i.strip()]
    return ids or None


def _check_unchanged(questions_file: Path, meta: Mapping[str, object], resume: str) -> None:
    """An ``EvalError`` when the question file changed since run ``resume`` started."""
    if questions_file.is_file() and file_hash(questions_file) != meta.get("questions_hash"):
        raise EvalError(
            f"{questions_file} changed since run {resume} started; "
            "start a new run instead of resuming"
        )


def _run(
    questions_file: Path | None,
    workspace_path: Path | None,
    model: str | None,
    concurrency: int,
    output: Path | None,
    resume: str | None,
    limit: int | None = None,
    only: list[str] | None = None,
) -> int:
    workspace = open_workspace(workspace_path)
    root = eval_root(workspace.state_dir)
    if resume:
        store = RunStore.open(root, resume)
        meta = store.meta()
        questions_file = questions_file or Path(meta["questions_file"])
        _check_unchanged(questions_file, meta, resume)
        model = model or meta.get("model_override")
        # a resumed run asks the subset it started with
        limit = limit or meta.get("limit")
        only = only or meta.get("only")
    elif questions_file is None:
        raise EvalError("give a question file (JSONL), or --resume RUN, or --compare A B")
    if output is not None and output.suffix.lower() not in (".json", ".md", ".html"):
        raise EvalError(f"--output {output}: use a .json, .md or .html file")
    settings = open_settings(workspace, model=model)
    questions = select_questions(
        load_questions(questions_file, max_chars=settings.max_question_chars), limit, only
    )
    with model_endpoint(
        settings, quiet=False, log_path=workspace.state_dir / local_llm.LOG_NAME
    ) as live:
        if not resume:
            meta = {
                "questions_file": str(questions_file.resolve()),
                "questions_hash": file_hash(questions_file),
                "workspace": str(workspace.root),
                "model": live.model_for("work"),
                "model_override": model,
                "concurrency": concurrency,
                "limit": limit,
                "only": only,
                "started": now_iso(),
            }
            store = RunStore.create(root, meta)
        err_console.print(
            f"eval run {esc(store.run_id)}: {len(questions)} questions "
            f"(resume with: refgate eval --resume {esc(store.run_id)} "
            f"--workspace {esc(workspace.root)})"
        )
        executor = AskExecutor(workspace, live, store.dir)
        with RunLock(store), _progress(len(questions), len(store.results())) as on_result:
            results = run_eval(
                questions, store, executor, concurrency=concurrency, on_result=on_result
            )
    _finish(store, results, output)
    return EXIT_OK


def _finish(store: RunStore, results: list[EvalResult], output: Path | None) -> None:
    """Mark the run finished, write its report file (``output``), print its summary."""
    meta = store.meta()
    meta["finished"] = now_iso()
    store.write_meta(meta)
    doc = report_document(store.run_id, meta, results)
    if output is not None:
        write_report(output, doc)
        err_console.print(f"report written to {esc(output)}")
    _print_summary(summarize(results), f"eval {store.run_id}")


@app.command("eval")
def eval_command(
    questions: Path = typer.Argument(
        None,
        help="Question file (JSONL: id, question, numbers, "
        "text, refs_required, expect, tolerance).",
    ),
    workspace: Path = typer.Option(None, "--workspace", "-w", help="Workspace folder."),
    model: str = typer.Option(None, "--model", "-m", help="Model (overrides REFGATE_MODEL)."),
    concurrency: int = typer.Option(
        1, "--concurrency", "-c", min=1, max=32, help="Questions run at once."
    ),
    output: Path = typer.Option(None, "--output", "-o", help="Report file: .json, .md or .html."),
    resume: str = typer.Option(None, "--resume", help="Continue a killed or failed run."),
    compare: tuple[str, str] | None = typer.Option(
        None, "--compare", metavar="RUN_A RUN_B", help="Compare two runs question by question."
    ),
    from_tatqa: Path = typer.Option(
        None,
        "--from-tatqa",
        help="Convert a TAT-QA JSON file into a question file and a workspace (see --to).",
    ),
    to: Path = typer.Option(Path("tatqa-eval"), "--to", help="Folder for --from-tatqa."),
    limit: int = typer.Option(
        None, "--limit", min=1, help="Ask the first N questions (--from-tatqa: first N contexts)."
    ),
    only: str = typer.Option(
        None, "--only", metavar="ID,...", help="Ask only these question ids (comma-separated)."
    ),
) -> None:
    """Measure answers end to end: gold numbers and text against the GATE's verdict.

    Every question runs as its own thread; results are stored under the workspace's
    .refgate/eval/RUN/ as they finish, so a killed run continues with --resume RUN. The summary
    leads with false acceptance (wrong answers the GATE passed). Exit 0 when the run completed,
    whatever the scores; 2 for bad input; 1 when the run could not complete.
    """
    stop_on_signals()
    try:
        if from_tatqa is not None:
            code = _convert(from_tatqa, to, limit)
        elif compare and compare[0]:
            ws = open_workspace(workspace)
            code = _compare(eval_root(ws.state_dir), compare[0], compare[1], output)
        else:
            code = _run(
                questions, workspace, model, concurrency, output, resume, limit, _only(only)
            )
    except (EvalError, ConfigError) as exc:
        err_console.print(f"[red]eval error:[/red] {esc(exc)}")
        code = EXIT_CONFIG
    except local_llm.LocalModelError as exc:
        err_console.print(f"[red]the embedded model failed:[/red] {esc(exc)}")
        code = EXIT_ERROR
    except KeyboardInterrupt:
        err_console.print("\ninterrupted; finished questions are kept: resume with --resume RUN")
        code = EXIT_ERROR
    raise typer.Exit(code)
