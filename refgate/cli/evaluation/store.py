"""Eval runs on disk: ``<workspace>/.refgate/eval/<run>/`` with ``meta.json`` (what was run: the
question file and its hash, the model, the settings, when) and ``results.jsonl`` (one line per
finished question, appended and flushed as each finishes, so a killed run keeps what it did)."""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import os
import re
import threading
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, cast

from typing_extensions import TypedDict

from refgate import files
from refgate.cli.evaluation.questions import EvalError


class EvalResult(TypedDict, total=False):
    """One question's result in a run (a line of ``results.jsonl``): the score, the GATE's
    verdict, the cell, usage and cost (``runner.result_record``)."""

    id: str
    question: str
    expect: str
    correct: bool
    passed: bool
    exit: int
    answer: str
    why: str
    refused: bool
    gold_numbers: list[str]
    gold_text: list[str]
    numbers_found: list[str]
    numbers_missing: list[str]
    text_missing: list[str]
    kinds_missing: list[str]
    gate_issues: list[str]
    tokens: dict[str, int]
    cost_usd: float | None
    seconds: float
    tool_calls: int
    retries: int
    thread: str
    error: str | None
    cell: str


META = "meta.json"
RESULTS = "results.jsonl"
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,80}")


def eval_root(state_dir: Path) -> Path:
    """The folder holding a workspace's eval runs."""
    return Path(state_dir) / "eval"


def new_run_id() -> str:
    """A fresh run id: UTC time to the second plus 4 random hex digits (sorts by time)."""
    return dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:4]


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def file_hash(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


class RunStore:
    """One run's folder: its metadata and its appended results (thread-safe appends)."""

    def __init__(self, root: Path, run_id: str):
        if not _RUN_ID.fullmatch(run_id):
            raise EvalError(f"bad run id {run_id!r}")
        self.run_id = run_id
        self.dir = Path(root) / run_id
        self._lock = threading.Lock()

    @classmethod
    def create(cls, root: Path, meta: Mapping[str, object], run_id: str | None = None) -> RunStore:
        store = cls(root, run_id or new_run_id())
        if store.dir.exists():
            raise EvalError(f"eval run {store.run_id} already exists; resume it with --resume")
        store.dir.mkdir(parents=True)
        store.write_meta({"run_id": store.run_id, **meta})
        return store

    @classmethod
    def open(cls, root: Path, run_id: str) -> RunStore:
        store = cls(root, run_id)
        if not (store.dir / META).is_file():
            known = ", ".join(list_runs(root)[-5:]) or "none"
            raise EvalError(f"no eval run {run_id!r} under {root} (recent runs: {known})")
        return store

    def meta(self) -> dict[str, Any]:
        try:
            return json.loads((self.dir / META).read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:
            raise EvalError(f"{self.dir / META}: unreadable ({exc})") from None

    def write_meta(self, meta: Mapping[str, object]) -> None:
        text = json.dumps(meta, indent=2, ensure_ascii=False, default=str)
        try:
            files.write_atomic(self.dir / META, text)
        except OSError as exc:
            raise EvalError(f"cannot write {self.dir / META}: {exc.strerror or exc}") from None

    def results(self) -> list[EvalResult]:
        """Finished results in the order they finished; a torn last line (a kill mid-write) is
        dropped, and a question recorded twice keeps its last record."""
        path = self.dir / RESULTS
        if not path.is_file():
            return []
        by_id: dict[str, EvalResult] = {}
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(rec, dict) and isinstance(rec.get("id"), str):
                by_id.pop(rec["id"], None)
                by_id[rec["id"]] = cast(EvalResult, rec)
        return list(by_id.values())

    def append(self, result: Mapping[str, object]) -> None:
        line = json.dumps(result, ensure_ascii=False, default=str) + "\n"
        with self._lock, open(self.dir / RESULTS, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())


def list_runs(root: Path) -> list[str]:
    """Run ids under ``root``, oldest first."""
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / META).is_file())


class RunLock:
    """An exclusive, non-blocking lock on a run folder: one process runs a run at a time."""

    def __init__(self, store: RunStore):
        self.path = store.dir / "run.lock"
        self._fh: IO[str] | None = None

    def __enter__(self) -> RunLock:
        self._fh = open(self.path, "a+")
        try:
            fcntl.flock(self._fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._fh.close()
            raise EvalError(
                f"eval run {self.path.parent.name} is running in another process"
            ) from None
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            self._fh.close()
