"""Loading a workspace's ``[documents]`` folder as LangChain ``Document``s.

Formats (readers in ``refgate.retrieval.loaders``): ``.txt``/``.md``, ``.html`` (through the core's
one HTML-to-text, hidden text removed), ``.pdf`` (one Document per page with a text layer),
``.docx`` (one per file), ``.xlsx`` (one per non-empty sheet). Files that cannot be read
(encrypted, scanned without a text layer, corrupt, empty, outside the workspace) are skipped and
reported with the reason (``LoadReport.skipped``), never raised.

Each Document's ``metadata``: ``doc_id`` (unique: the file's path inside the folder without the
suffix, e.g. ``20081216``, plus ``#p37`` for a PDF page or ``#sheet-Revenue`` for a sheet),
``file_id`` (the file part of it, what a ``doc_id`` filter matches too), ``source`` (path relative
to the workspace root), ``page`` (1-based, PDFs) and ``pages``, ``sheet`` (XLSX), ``format``,
``title`` (the file name), ``date`` (ISO date parsed from the file name with
``date_from_filename``), ``entity`` (the ``[documents]`` table's ``entity``), ``tables`` (JSON of
the unit's tables, when it has any) and ``origin`` = ``"workspace_document"``: text that may not
steer the agent (untrusted) but is primary evidence for what the document says.
"""

from __future__ import annotations

import logging
import os
import queue
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document

from refgate.config import load_settings
from refgate.paths import is_within
from refgate.retrieval.loaders import SUFFIXES, Unreadable, read_document
from refgate.retrieval.loaders.base import Part, tables_json
from refgate.retrieval.loaders.bounded import BoundedChild, IngestLimits
from refgate.retrieval.loaders.ocr_pages import ocr_workers
from refgate.retrieval.parse_cache import FILE_NAME as PARSE_CACHE_FILE
from refgate.retrieval.parse_cache import ParseCache

if TYPE_CHECKING:
    from refgate.workspace import Workspace

log = logging.getLogger(__name__)

#: ``metadata["origin"]`` of every workspace document: untrusted (it may not steer the agent),
#: primary (it is the evidence for what the document says).
ORIGIN = "workspace_document"

__all__ = [
    "ORIGIN",
    "SUFFIXES",
    "LoadReport",
    "SkippedFile",
    "date_from_name",
    "index_dir",
    "iter_document_files",
    "load_documents",
    "read_documents",
    "workspace_documents",
    "workspace_load",
]

#: ``progress(stage, done, total)`` with stage "load" (files read, cached ones included) or
#: "ocr" (pages read by OCR, of those without a text layer in the files parsed so far).
LoadProgress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class SkippedFile:
    """A file (or part of one) left out of the index, and why."""

    source: str
    reason: str

    def __str__(self) -> str:
        return f"{self.source}: {self.reason}"


@dataclass
class LoadReport:
    """What ``read_documents`` found: the Documents, the files read, and what was skipped."""

    documents: list[Document] = field(default_factory=list)
    files: int = 0
    skipped: list[SkippedFile] = field(default_factory=list)
    #: Pages without a text layer inside PDFs that otherwise have text, per source.
    blank_pages: dict[str, list[int]] = field(default_factory=dict)

    @property
    def pages(self) -> int:
        return sum(1 for d in self.documents if d.metadata.get("page") is not None)


def index_dir(workspace: Workspace) -> Path:
    """Where a workspace's document index lives: ``<workspace>/.refgate/index``."""
    return workspace.state_dir / "index"


def date_from_name(name: str, fmt: str | None) -> str | None:
    """The ISO date encoded in a file name by ``fmt`` (strftime codes), or None."""
    if not fmt:
        return None
    pattern = re.escape(fmt)
    widths = {"%Y": r"\d{4}", "%m": r"\d{2}", "%d": r"\d{2}", "%y": r"\d{2}", "%H": r"\d{2}"}
    for code, rx in widths.items():
        pattern = pattern.replace(re.escape(code), rx)
    m = re.search(pattern, name)
    if not m:
        return None
    try:
        return datetime.strptime(m.group(0), fmt).date().isoformat()
    except ValueError:
        return None


def iter_document_files(folder: Path) -> Iterator[Path]:
    """Files of a supported format under ``folder`` (hidden files and folders left out)."""
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).parts
        if any(p.startswith(".") for p in rel):
            continue
        if path.suffix.lower() in SUFFIXES and path.is_file():
            yield path


@dataclass(frozen=True)
class _File:
    """One file to read: its path, ``source`` (relative to the workspace) and ``file_id``."""

    path: Path
    source: str
    file_id: str


#: What parsing one file gave: its parts, or the reason it was skipped.
_Outcome = list[Part] | SkippedFile


def parse_workers() -> int:
    """Documents parsed at once: ``REFGATE_PARSE_WORKERS``, else the usable cores (a scan's
    pages are read in parallel as well, by ``ocr_pages``' own pool)."""
    try:
        value = int(os.environ.get("REFGATE_PARSE_WORKERS", "0"))
    except ValueError:
        value = 0
    return value if value > 0 else ocr_workers()


def read_documents(
    folder: Path | str,
    *,
    root: Path | str | None = None,
    date_from_filename: str | None = None,
    entity: str | None = None,
    progress: LoadProgress | None = None,
    roots: Sequence[Path | str] | None = None,
    limits: IngestLimits | None = None,
    cache: ParseCache | None = None,
) -> LoadReport:
    """Read every supported file under ``folder``; unreadable files are reported, not raised.

    Files are parsed ``parse_workers()`` at a time, each in a child process of its own under
    ``limits`` (memory, time, ZIP and cell bounds; default ``IngestLimits()``): a file over a
    bound is skipped with the reason, the rest are read. At most twice that many files are
    waiting or being parsed at once; the Documents come in file order whatever order the
    parses finish in.

    ``cache`` (a ``ParseCache``) keeps each file's parts as soon as it is parsed and gives back
    those of files unchanged since: a run killed midway does not parse finished files again.

    ``root`` (default ``folder``) is the workspace: ``source`` is relative to it, and a file
    whose real path (after symlinks) lies outside ``roots`` (default: ``root``; a workspace's
    are its folder and ``allowed_roots``) is skipped, not opened.
    """
    folder = Path(folder)
    root = Path(root) if root is not None else folder
    files = _plan(folder, root)
    say = progress or (lambda stage, done, total: None)
    allowed: list[Path | str] = list(roots) if roots is not None else [root]
    outcomes = _ParsePool(limits or IngestLimits(), cache, say).run(files, allowed)
    report = LoadReport(files=len(files))
    for file, outcome in zip(files, outcomes, strict=True):
        if isinstance(outcome, SkippedFile):
            report.skipped.append(outcome)
            log.warning("skipped %s", outcome)
        else:
            _add_parts(report, file, outcome, date_from_filename, entity)
    return report


def _plan(folder: Path, root: Path) -> list[_File]:
    """The files under ``folder`` with their sources and file ids (a stem shared by two files
    keeps its suffix in the id)."""
    paths = list(iter_document_files(folder)) if folder.is_dir() else []
    stems = Counter(p.relative_to(folder).with_suffix("").as_posix() for p in paths)
    files = []
    for path in paths:
        rel = path.relative_to(folder)
        stem = rel.with_suffix("").as_posix()
        try:
            source = path.relative_to(root).as_posix()
        except ValueError:
            source = str(path)
        files.append(_File(path, source, stem if stems[stem] == 1 else rel.as_posix()))
    return files


class _ParsePool:
    """Files parsed by a pool of bounded children (one thread each), a bounded window of them
    in flight; each parse is stored in the cache as soon as it finishes."""

    def __init__(self, limits: IngestLimits, cache: ParseCache | None, say: LoadProgress) -> None:
        self.limits, self.cache, self.say = limits, cache, say
        self._children: queue.SimpleQueue[BoundedChild] = queue.SimpleQueue()
        self._ocr = _OcrTally(say)

    def run(self, files: list[_File], allowed: list[Path | str]) -> list[_Outcome]:
        """Each file's outcome, in the order of ``files``."""
        outcomes: dict[int, _Outcome] = {}
        todo: list[int] = []
        for i, file in enumerate(files):
            cached = self._cached(file, allowed)
            if cached is None:
                todo.append(i)
            else:
                outcomes[i] = cached
        self.say("load", len(outcomes), len(files))
        workers = max(1, min(parse_workers(), len(todo)))
        for _ in range(workers):
            self._children.put(BoundedChild(self.limits))
        try:
            self._parse_all(files, todo, workers, outcomes)
        finally:
            for _ in range(workers):
                self._children.get().close()
        return [outcomes[i] for i in range(len(files))]

    def _cached(self, file: _File, allowed: list[Path | str]) -> _Outcome | None:
        """A file's outcome known without parsing it (outside the roots, or in the cache)."""
        if not is_within(file.path, allowed):
            return SkippedFile(file.source, "resolves outside the workspace (symlink); not opened")
        if self.cache is None:
            return None
        return self.cache.get(file.source, file.path)

    def _parse_all(
        self, files: list[_File], todo: list[int], workers: int, outcomes: dict[int, _Outcome]
    ) -> None:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="parse") as pool:
            running: dict[Future[_Outcome], int] = {}
            pending = iter(todo)
            for i in pending:
                running[pool.submit(self._parse, i, files[i])] = i
                if len(running) >= 2 * workers:  # the bounded queue: wait for one to finish
                    self._settle(files, running, outcomes)
            while running:
                self._settle(files, running, outcomes)

    def _settle(
        self,
        files: list[_File],
        running: dict[Future[_Outcome], int],
        outcomes: dict[int, _Outcome],
    ) -> None:
        """Wait for at least one parse; store each finished one (cache, progress)."""
        done, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in done:
            i = running.pop(future)
            outcome = outcomes[i] = future.result()
            if self.cache is not None and not isinstance(outcome, SkippedFile):
                self.cache.put(files[i].source, files[i].path, outcome)
            self.say("load", len(outcomes), len(files))

    def _parse(self, i: int, file: _File) -> _Outcome:
        """One file's parts in a bounded child, or why it was skipped (never raises)."""
        child = self._children.get()
        try:
            ocr = self._ocr.for_file(i) if file.path.suffix.lower() == ".pdf" else None
            parts: list[Part] = child.call(read_document, file.path, child.limits, progress=ocr)
            return parts
        except Unreadable as exc:
            return SkippedFile(file.source, exc.reason)
        except (OSError, UnicodeError, ValueError, KeyError, RuntimeError) as exc:
            return SkippedFile(file.source, f"could not be read ({type(exc).__name__}: {exc})")
        finally:
            self._children.put(child)


class _OcrTally:
    """Pages read by OCR over every file being parsed, reported as one "ocr" stage."""

    def __init__(self, say: LoadProgress) -> None:
        self.say = say
        self._lock = threading.Lock()
        self._pages: dict[int, tuple[int, int]] = {}

    def for_file(self, i: int) -> Callable[[int, int], None]:
        def progress(done: int, total: int) -> None:
            with self._lock:
                self._pages[i] = (done, total)
                done_all = sum(d for d, _ in self._pages.values())
                total_all = sum(t for _, t in self._pages.values())
                self.say("ocr", done_all, total_all)

        return progress


def _add_parts(
    report: LoadReport,
    file: _File,
    parts: list[Part],
    date_from_filename: str | None,
    entity: str | None,
) -> None:
    """A parsed file's parts as Documents in ``report``, and its pages without text."""
    path = file.path
    pages = next((p.meta.get("pages") for p in parts if p.meta.get("pages")), None)
    if pages:
        have = {p.meta.get("page") for p in parts}
        blank = [i for i in range(1, int(pages) + 1) if i not in have]
        if blank:
            report.blank_pages[file.source] = blank
    common = {
        "file_mtime_ns": path.stat().st_mtime_ns,
        "file_id": file.file_id,
        "source": file.source,
        "title": path.name,
        "format": path.suffix.lower().lstrip("."),
        "date": date_from_name(path.name, date_from_filename),
        "entity": entity,
        "origin": ORIGIN,
    }
    for part in parts:
        doc_id = f"{file.file_id}#{part.key}" if part.key else file.file_id
        meta: dict[str, Any] = {"doc_id": doc_id, **common, **part.meta}
        tables = tables_json(part.tables)
        if tables:
            meta["tables"] = tables
        report.documents.append(Document(page_content=part.text, metadata=meta))


def load_documents(
    folder: Path | str,
    *,
    root: Path | str | None = None,
    date_from_filename: str | None = None,
    entity: str | None = None,
) -> list[Document]:
    """Every supported file under ``folder`` as ``Document``s (one per PDF page / sheet / file);
    skipped files are logged (``read_documents`` returns them)."""
    return read_documents(
        folder, root=root, date_from_filename=date_from_filename, entity=entity
    ).documents


def workspace_load(workspace: Workspace, *, progress: LoadProgress | None = None) -> LoadReport:
    """The ``LoadReport`` of a workspace's ``[documents]`` table (empty when it has none)."""
    if workspace.documents_path is None:
        return LoadReport()
    opts = workspace.documents_options
    limits = IngestLimits.from_settings(load_settings(workspace_settings=workspace.settings))
    cache = ParseCache(workspace.state_dir / PARSE_CACHE_FILE)
    try:
        return read_documents(
            workspace.documents_path,
            root=workspace.root,
            date_from_filename=opts.get("date_from_filename"),
            entity=opts.get("entity"),
            progress=progress,
            roots=workspace.roots,
            limits=limits,
            cache=cache,
        )
    finally:
        cache.close()


def workspace_documents(workspace: Workspace) -> list[Document]:
    """The documents named by a workspace's ``[documents]`` table (empty when it has none)."""
    return workspace_load(workspace).documents
