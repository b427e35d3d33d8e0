"""RunPython (WORK): run model-written Python in the sandbox and turn what it emits into refs.

``run_python(code, workspace=..., timeout=...)`` is the programmatic entry point (external
evaluation code calls it); the ``SPEC`` tool wraps the same machinery with the run's context.
Each call issues an executionRef (code, ok/error, trimmed stdout/stderr, duration) and, when the
code succeeds, one tableRef / valueRef / dateRef per ``emit_result`` part. Refs issued by engine
capabilities the code calls (``engine.<name>(...)``) join the call's refs.

Isolation (see ``refgate.tools.sandbox.confine``): bubblewrap by default; ``REFGATE_SANDBOX=rlimits``
selects the weaker rlimits-only mode explicitly. With bubblewrap missing the call is refused.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field
from typing_extensions import Unpack

from refgate.catalog.capabilities import EngineEnv, catalog
from refgate.catalog.toolspec import ToolArgs, ToolContext, ToolResult, ToolSpec
from refgate.config import Settings, load_settings
from refgate.payloads import JsonDict
from refgate.provenance.budget import budget_of
from refgate.refs import IssueFields, Ref, RefKind, RefLedger, new_ref_id
from refgate.tools.cell_text import shows_cell_text
from refgate.tools.engine_call import CapabilityError, invoke_capability, outbound_extra
from refgate.tools.read_capability import clean_signature
from refgate.tools.sandbox.emit import EmitCollector, EmitRejected
from refgate.tools.sandbox.errors import SandboxError
from refgate.tools.sandbox.host import get_worker
from refgate.tools.sandbox.limits import Limits
from refgate.tools.sandbox.mounts import DatasetMount
from refgate.tools.sandbox.policy import CodeRejected, check_code
from refgate.tools.warehouse import run_query
from refgate.workspace import Workspace, WorkspaceError, load_workspace

#: Bounds of the wall-clock timeout (seconds).
MIN_TIMEOUT, MAX_TIMEOUT = 0.1, 600.0
#: Characters of stdout / stderr / error kept in the executionRef and shown to the model.
REF_STDOUT_CHARS, MODEL_STDOUT_CHARS, MODEL_STDERR_CHARS, ERROR_CHARS = 8000, 3000, 1500, 3000
MAX_CODE_IN_REF = 20_000
PREVIEW_ROWS = 5


@dataclass
class RunResult:
    """What one RunPython call produced. ``refs``: every ref it issued (executionRef first)."""

    ok: bool
    error: str | None
    stdout: str
    stderr: str
    refs: list[Ref] = field(default_factory=list)
    duration: float = 0.0
    timed_out: bool = False
    untrusted: bool = False

    @property
    def execution(self) -> Ref | None:
        return next((r for r in self.refs if r.kind == "executionRef"), None)

    @property
    def emitted(self) -> list[Ref]:
        """The refs made from ``emit_result`` (tableRef / valueRef / dateRef)."""
        exe = self.execution
        return [
            r
            for r in self.refs
            if r.kind in ("tableRef", "valueRef", "dateRef")
            and exe is not None
            and r.payload.get("meta", {}).get("execution") == exe.id
        ]


def trim(text: str | None, limit: int) -> str:
    """Keep the head and the tail of ``text`` within about ``limit`` characters."""
    if not text or len(text) <= limit:
        return text or ""
    head = limit * 2 // 3
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters cut ...]\n{text[-tail:]}"


def _resolve_workspace(workspace: Workspace | str | Path | None) -> Workspace | None:
    if workspace is None:
        return None
    if isinstance(workspace, (str, Path)):
        return load_workspace(workspace)
    if not hasattr(workspace, "datasets"):
        raise TypeError(f"workspace must be a Workspace, a folder path or None, not {workspace!r}")
    return workspace


def _mounts(workspace: Workspace | None) -> list[DatasetMount]:
    if workspace is None:
        return []
    return [
        DatasetMount(
            name=spec.name,
            path=None if spec.is_warehouse else spec.checked_path(),
            format=spec.format,
            date_columns=tuple(spec.date_columns),
            header_rows=spec.header_rows,
            names=spec.header if spec.header_rows > 1 else (),
            columns={
                c.name: {"unit": c.unit, "scale": c.scale, "description": c.description}
                for c in spec.columns.values()
            },
        )
        for spec in workspace.datasets.values()
    ]


#: Most sql() queries one executionRef records (the count of the rest is kept).
MAX_RECORDED_QUERIES = 50


def record_query(queries: list[JsonDict], msg: JsonDict) -> JsonDict:
    """Keep one ``sql()`` query the code ran (text, rows, time) for the executionRef."""
    query = msg.get("query")
    if not isinstance(query, str):
        return {"ok": False, "error": "a query record needs its text"}
    if len(queries) >= MAX_RECORDED_QUERIES:
        return {"ok": True}
    entry: JsonDict = {"query": trim(query, 4000)}
    for key in ("rows", "ms"):
        value = msg.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            entry[key] = value
    tables = msg.get("warehouse")
    if isinstance(tables, list) and tables:
        entry["warehouse"] = [str(t)[:200] for t in tables[:20]]
    queries.append(entry)
    return {"ok": True}


def record_read(workspace: Workspace | None, reads: set[str], name: object) -> JsonDict:
    """Record one dataset the code read through ``datasets[...]``."""
    if workspace is None or not isinstance(name, str) or name not in workspace.datasets:
        return {"ok": False, "error": "a read record needs a dataset of the workspace"}
    reads.add(name)
    return {"ok": True}


def query_datasets(workspace: Workspace | None, query: object) -> set[str]:
    """The workspace datasets a ``sql()`` query reads (its table names, parsed by DuckDB)."""
    if workspace is None or not isinstance(query, str):
        return set()
    # deferred: DuckDB loads only when a query is recorded (the host imports it rarely)
    import duckdb

    try:
        tables = duckdb.get_table_names(query)
    except duckdb.Error:
        return set()
    return {t for t in tables if t in workspace.datasets}


def capability_datasets(workspace: Workspace | None, args: list, kwargs: dict) -> set[str]:
    """The workspace datasets a capability call names (``dataset=`` or its first argument)."""
    if workspace is None:
        return set()
    named = [kwargs.get("dataset"), args[0] if args else None]
    return {n for n in named if isinstance(n, str) and n in workspace.datasets}


def _capability_listing() -> list[dict[str, str]]:
    return [
        dict(cap.describe(), signature=clean_signature(cap.signature)) for cap in catalog().values()
    ]


class _CallRequests:
    """The host's side of one call: the ids it draws, and what the code's requests (emit, read,
    sql, warehouse, engine) leave behind."""

    def __init__(
        self,
        code: str,
        workspace: Workspace | None,
        ledger: RefLedger,
        env: EngineEnv,
        pass_name: str,
    ) -> None:
        self.workspace, self.ledger, self.env, self.pass_name = workspace, ledger, env, pass_name
        self.reserved: set[str] = set()
        self.exe_id = self.draw_id("executionRef")
        #: The datasets the call actually read (datasets[...], sql() over their views,
        #: capabilities given a dataset): what its results are computed from, whatever
        #: ``sources=`` says.
        self.reads: set[str] = set()
        self.collector = EmitCollector(
            workspace, self.draw_id, self.exe_id, reads=self.reads, code=code
        )
        self.engine_refs: list[Ref] = []
        self.engine_calls: list[JsonDict] = []
        self.queries: list[JsonDict] = []
        self.untrusted = False

    def draw_id(self, kind: str) -> str:
        """A fresh id, unused in the ledger and by this call."""
        ref_id = new_ref_id(kind)
        while ref_id in self.ledger or ref_id in self.reserved:
            ref_id = new_ref_id(kind)
        self.reserved.add(ref_id)
        return ref_id

    def issue(
        self, kind: RefKind, payload: Mapping[str, object], **fields: Unpack[IssueFields]
    ) -> Ref:
        """Issue a capability's ref in this pass's name; it joins the call's refs."""
        fields.setdefault("created_by", self.pass_name)
        ref = self.ledger.issue(kind, payload, **fields)
        self.engine_refs.append(ref)
        return ref

    def handle(self, msg: JsonDict) -> JsonDict:
        """Answer one request of the sandboxed code."""
        op = msg.get("op")
        if op == "emit":
            return self._emit(msg)
        if op == "read":
            return record_read(self.workspace, self.reads, msg.get("dataset"))
        if op == "sql":
            self.reads.update(query_datasets(self.workspace, msg.get("query")))
            return record_query(self.queries, msg)
        if op == "warehouse":
            query = msg.get("query")
            if not isinstance(query, str):
                return {"ok": False, "error": "sql() takes its query as a string"}
            return run_query(self.workspace, query)
        return self._engine(msg)

    def _emit(self, msg: JsonDict) -> JsonDict:
        try:
            return {"ok": True, "refs": self.collector.accept(msg)}
        except EmitRejected as exc:
            return {"ok": False, "error": str(exc)}

    def _engine(self, msg: JsonDict) -> JsonDict:
        name = msg.get("name")
        args, kwargs = msg.get("args", []), msg.get("kwargs", {})
        if not isinstance(args, list) or not isinstance(kwargs, dict):
            return {"ok": False, "error": "engine arguments must be a list and a mapping"}
        try:
            inv = invoke_capability(str(name), args, kwargs, env=self.env, issue=self.issue)
        except CapabilityError as exc:
            return self._engine_failed(name, str(exc))
        except Exception as exc:  # a capability bug: report it to the code, keep serving
            return self._engine_failed(name, f"{name} failed: {type(exc).__name__}: {exc}")
        if inv.untrusted_fields or any(r.is_external for r in inv.refs):
            self.untrusted = True
        self.reads.update(capability_datasets(self.workspace, args, kwargs))
        self.engine_calls.append({"name": name, "ok": True, "refs": [r.id for r in inv.refs]})
        return {"ok": True, "data": inv.data, "refs": [r.id for r in inv.refs]}

    def _engine_failed(self, name: object, error: str) -> JsonDict:
        self.engine_calls.append({"name": name, "ok": False, "error": error})
        return {"ok": False, "error": error}


@dataclass
class _Outcome:
    """How the sandbox run itself went (before refs are issued)."""

    ok: bool = False
    error: str | None = None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False


def _run_checked(
    code: str,
    timeout: float,
    workspace: Workspace | None,
    sandbox_mode: str,
    limits: Limits | None,
    requests: _CallRequests,
) -> _Outcome:
    """Check ``code`` and the timeout, then run it in the warm worker; a refusal is an error."""
    try:
        check_code(code)
        if not MIN_TIMEOUT <= timeout <= MAX_TIMEOUT:
            raise CodeRejected(f"timeout must be between {MIN_TIMEOUT} and {MAX_TIMEOUT} seconds")
        worker = get_worker(sandbox_mode, _mounts(workspace), limits)
        raw = worker.run(
            code, timeout=timeout, handler=requests.handle, capabilities=_capability_listing()
        )
    except CodeRejected as exc:
        return _Outcome(error=f"rejected before running: {exc}")
    except (SandboxError, WorkspaceError) as exc:
        return _Outcome(error=str(exc))
    return _Outcome(raw.ok, raw.error, raw.stdout, raw.stderr, raw.timed_out)


def _emitted_refs(requests: _CallRequests, pass_name: str) -> list[Ref]:
    """The refs the call's accepted ``emit_result`` parts become (only when the code succeeded)."""
    return [
        Ref(
            id=pending.id,
            kind=pending.kind,
            payload=pending.payload,
            title=pending.title,
            source=f"RunPython:{requests.exe_id}",
            source_type="internal",
            created_by=pass_name,
        )
        for pending in requests.collector.pending
    ]


def _error_text(error: str | None, discarded: int) -> str | None:
    """The error as the ref and the model see it, noting results discarded by a failure."""
    error_text = trim(error, ERROR_CHARS) if error else None
    if error_text and discarded:
        error_text += f"\n({discarded} emitted result(s) discarded because the code failed)"
    return error_text


def _execution_ref(
    code: str,
    outcome: _Outcome,
    error_text: str | None,
    *,
    requests: _CallRequests,
    emitted: list[Ref],
    duration: float,
    sandbox_mode: str,
    pass_name: str,
) -> Ref:
    """The call's executionRef: its code, outcome, output, engine calls, queries and reads."""
    ok = outcome.ok
    return Ref(
        id=requests.exe_id,
        kind="executionRef",
        payload={
            "tool": "RunPython",
            "code": trim(code, MAX_CODE_IN_REF) if isinstance(code, str) else "",
            "ok": ok,
            "error": error_text,
            "stdout": trim(outcome.stdout, REF_STDOUT_CHARS),
            "stderr": trim(outcome.stderr, REF_STDOUT_CHARS),
            "duration_ms": round(duration * 1000, 2),
            "timed_out": outcome.timed_out,
            "sandbox": sandbox_mode,
            "emitted": [r.id for r in emitted],
            "engine_calls": requests.engine_calls,
            "sql": requests.queries,
            "read": sorted(requests.reads),
        },
        title=f"RunPython: {'ok' if ok else 'error'}"
        + (f", {len(emitted)} emitted" if emitted else ""),
        source="RunPython",
        source_type="internal",
        created_by=pass_name,
    )


def execute(
    code: str,
    *,
    workspace: Workspace | None,
    timeout: float,
    ledger: RefLedger,
    settings: Settings,
    pass_name: str = "work",
    limits: Limits | None = None,
    env_extra: Mapping[str, object] | None = None,
) -> RunResult:
    """Check, run and account for one call; every outcome issues an executionRef."""
    t0 = time.perf_counter()
    env = EngineEnv(workspace=workspace, settings=settings, extra=dict(env_extra or {}))
    requests = _CallRequests(code, workspace, ledger, env, pass_name)
    outcome = _run_checked(code, timeout, workspace, settings.sandbox, limits, requests)
    duration = time.perf_counter() - t0
    emitted = _emitted_refs(requests, pass_name) if outcome.ok else []
    discarded = 0 if outcome.ok else len(requests.collector.pending)
    error_text = _error_text(outcome.error, discarded)
    execution = _execution_ref(
        code,
        outcome,
        error_text,
        requests=requests,
        emitted=emitted,
        duration=duration,
        sandbox_mode=settings.sandbox,
        pass_name=pass_name,
    )
    added = [ledger.add(execution)] + [ledger.add(r) for r in emitted]
    return RunResult(
        ok=outcome.ok,
        error=error_text,
        stdout=outcome.stdout,
        stderr=outcome.stderr,
        refs=added + requests.engine_refs,
        duration=duration,
        timed_out=outcome.timed_out,
        untrusted=requests.untrusted,
    )


def run_python(
    code: str,
    *,
    workspace: Workspace | str | Path | None = None,
    timeout: float = 30.0,
    ledger: RefLedger | None = None,
    settings: Settings | None = None,
    pass_name: str = "work",
    limits: Limits | None = None,
    env_extra: Mapping[str, object] | None = None,
) -> RunResult:
    """Run ``code`` in the sandbox. ``workspace=None`` runs with no datasets.

    The code sees ``pd``, ``np``, ``datasets["<name>"]`` (DataFrames of the workspace's
    datasets), ``sql(query)`` (DuckDB over the same datasets, for data of any size),
    ``engine.<capability>(...)`` and ``emit_result(table=, values=, units=, date=,
    sources=)``. ``limits`` overrides the sandbox's resource limits. Returns a ``RunResult`` (``.ok``, ``.error``, ``.stdout``, ``.stderr``,
    ``.refs``); refs go into ``ledger`` (a fresh one if not given).
    """
    if settings is None:
        settings = load_settings()
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds, not {timeout!r}")
    return execute(
        code,
        workspace=_resolve_workspace(workspace),
        timeout=float(timeout),
        ledger=ledger if ledger is not None else RefLedger(),
        settings=settings,
        pass_name=pass_name,
        limits=limits,
    )


def prewarm(
    workspace: Workspace | str | Path | None = None, settings: Settings | None = None
) -> threading.Thread:
    """Start the warm sandbox worker for ``workspace`` in a background thread.

    Call it when a run starts so the first RunPython call is warm; start errors are left for
    that call to report (it retries the start and returns a clear error).
    """

    def start() -> None:
        try:
            s = settings
            if s is None:
                s = load_settings()
            get_worker(s.sandbox, _mounts(_resolve_workspace(workspace)))
        except Exception:  # reported by the first real call
            pass

    thread = threading.Thread(target=start, name="refgate-sandbox-prewarm", daemon=True)
    thread.start()
    return thread


# --------------------------------------------------------------------------- the tool


class RunPythonArgs(ToolArgs):
    code: str = Field(
        description=(
            "Python 3 source to run in an isolated sandbox (no network, read-only datasets, a "
            "fresh process each call: nothing persists between calls). Predefined: pd, np, "
            "datasets['<name>'] (a DataFrame per workspace dataset; datasets.meta(name) gives "
            "column units), sql('SELECT ... FROM <name> ...') -> DataFrame (DuckDB over the "
            "same datasets: use it for large data and for warehouse tables), "
            "engine.<capability>(...) (the catalog capabilities), and "
            "emit_result(table=DataFrame, values={name: number}, units={name: unit} or 'USD', "
            "date='2009-09-30' or '2009Q3', sources=['macro'], title=..., scale='billion', "
            "period='2009Q3'). Only emit_result creates evidence refs; printing does not. Never "
            "define, assign or wrap emit_result."
        ),
        min_length=1,
    )
    timeout: float = Field(
        default=30.0,
        ge=1.0,
        le=120.0,
        description="Wall-clock limit in seconds (default 30).",
    )


def _summary(ref: Ref) -> JsonDict:
    p = ref.payload
    out: JsonDict = {"id": ref.id, "kind": ref.kind}
    if ref.kind == "tableRef":
        out.update(
            columns=p.get("columns"),
            rows=len(p.get("rows", [])),
            preview=p.get("rows", [])[:PREVIEW_ROWS],
            units=p.get("units"),
        )
    elif ref.kind == "valueRef":
        out.update({k: p[k] for k in ("values", "units", "scale", "period", "asOf") if k in p})
    elif ref.kind == "dateRef":
        out.update({k: p[k] for k in ("date", "label") if k in p})
    else:
        out["title"] = ref.title
    return out


def run_python_tool(args: RunPythonArgs, ctx: ToolContext) -> ToolResult:
    result = execute(
        args.code,
        workspace=ctx.workspace,
        # Run budgets: the model's timeout is capped, and by the sandbox seconds left.
        timeout=budget_of(ctx.extra, ctx.settings).code_timeout(args.timeout),
        ledger=ctx.ledger,
        settings=ctx.settings,
        pass_name=ctx.pass_name,
        env_extra=outbound_extra(ctx),
    )
    exe = result.execution
    emitted = result.emitted
    emitted_ids = {r.id for r in emitted}
    data: JsonDict = {
        "ok": result.ok,
        "execution": exe.id if exe else None,
        "duration_ms": round(result.duration * 1000, 1),
        "stdout": trim(result.stdout, MODEL_STDOUT_CHARS),
    }
    if result.stderr.strip():
        data["stderr"] = trim(result.stderr, MODEL_STDERR_CHARS)
    data["emitted"] = [_summary(r) for r in emitted]
    others = [r for r in result.refs if r.kind != "executionRef" and r.id not in emitted_ids]
    if others:
        data["engine_refs"] = [{"id": r.id, "kind": r.kind, "title": r.title} for r in others]
    if result.ok and not emitted:
        data["note"] = (
            "nothing was emitted: call emit_result(...) to turn results into citable refs"
        )
    # Taint by origin: the result is untrusted only when the code could have seen untrusted
    # text (a capability returned document or web text, or the code itself carries some);
    # computations over the datasets stay trusted, so B1 leaves SaveArtifact bound.
    saw_untrusted = (
        result.untrusted
        or _code_carries_taint(args.code, ctx)
        or shows_cell_text(f"{result.stdout}\n{result.stderr}\n{result.error or ''}", ctx.workspace)
    )
    untrusted = list(SPEC.untrusted_fields) if saw_untrusted else []  # all it declares
    return ToolResult(
        ok=result.ok,
        error=None if result.ok else result.error,
        data=data,
        refs=result.refs,
        untrusted_fields=untrusted,
        untrusted_content=bool(untrusted) or any(r.is_external for r in result.refs),
    )


def _code_carries_taint(code: str, ctx: ToolContext) -> bool:
    provenance = ctx.provenance
    return hasattr(provenance, "tainted_by") and provenance.tainted_by(code) is not None


SPEC = ToolSpec(
    name="RunPython",
    description=(
        "Compute with Python over the workspace datasets in an isolated sandbox. Load data with "
        "datasets['<name>'] (or query it with sql('SELECT ... FROM <name>') when it is large or "
        "a database table), compute with pandas/numpy, then call emit_result(...) with the "
        "table, values (with units) and as-of date the answer uses: each emitted part becomes a "
        "tableRef/valueRef/dateRef to cite. Returns stdout, errors as short tracebacks, and the "
        "emitted refs. Issues an executionRef per call."
    ),
    args_schema=RunPythonArgs,
    func=run_python_tool,
    read_only=True,
    issues=("executionRef", "valueRef", "tableRef", "dateRef"),
    origin_tracked=True,
    untrusted_fields={
        "stdout": "the code may print text returned by document capabilities (search_documents)"
        " or a dataset's text cells",
        "stderr": "as stdout",
        "emitted[].preview": "emitted tables may copy document text obtained through the engine",
        "emitted[].values": "as emitted[].preview",
    },
)
