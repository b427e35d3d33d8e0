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
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document

from refgate.config import load_settings
from refgate.paths import is_within
from refgate.retrieval.loaders import SUFFIXES, Unreadable, read_document
from refgate.retrieval.loaders.base import tables_json
from refgate.retrieval.loaders.bounded import BoundedChild, IngestLimits
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

#: ``progress(stage, done, total)`` with stage "load" (files read) or "ocr" (pages of the file
#: being read that OCR has read, of those without a text layer).
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

    ``cache`` (a ``ParseCache``) keeps each file's parts as soon as it is parsed and gives back
    those of files unchanged since: a run killed midway does not parse finished files again.

    ``root`` (default ``folder``) is the workspace: ``source`` is relative to it, and a file
    whose real path (after symlinks) lies outside ``roots`` (default: ``root``; a workspace's
    are its folder and ``allowed_roots``) is skipped, not opened. Each file is parsed in a child
    process under ``limits`` (memory, time, ZIP and cell bounds; default ``IngestLimits()``): a
    file over a bound is skipped with the reason, the rest are read.
    """
    folder = Path(folder)
    root = Path(root) if root is not None else folder
    allowed = list(roots) if roots is not None else [root]
    say = progress or (lambda stage, done, total: None)
    files = list(iter_document_files(folder)) if folder.is_dir() else []
    stems: dict[str, int] = {}
    for p in files:
        key = p.relative_to(folder).with_suffix("").as_posix()
        stems[key] = stems.get(key, 0) + 1
    report = LoadReport(files=len(files))
    say("load", 0, len(files))
    child = BoundedChild(limits or IngestLimits())
    try:
        for n, path in enumerate(files, start=1):
            rel = path.relative_to(folder)
            stem = rel.with_suffix("").as_posix()
            file_id = stem if stems[stem] == 1 else rel.as_posix()
            try:
                source = path.relative_to(root).as_posix()
            except ValueError:
                source = str(path)
            try:
                if not is_within(path, allowed):
                    raise Unreadable("resolves outside the workspace (symlink); not opened")
                ocr = (
                    (lambda done, total: say("ocr", done, total))
                    if path.suffix.lower() == ".pdf"
                    else None
                )
                parts = cache.get(source, path) if cache is not None else None
                if parts is None:
                    parts = child.call(read_document, path, child.limits, progress=ocr)
                    if cache is not None:
                        cache.put(source, path, parts)
            except Unreadable as exc:
                report.skipped.append(SkippedFile(source, exc.reason))
                log.warning("skipped %s: %s", source, exc.reason)
                say("load", n, len(files))
                continue
            except (OSError, UnicodeError, ValueError, KeyError, RuntimeError) as exc:
                reason = f"could not be read ({type(exc).__name__}: {exc})"
                report.skipped.append(SkippedFile(source, reason))
                log.warning("skipped %s: %s", source, reason)
                say("load", n, len(files))
                continue
            mtime_ns = path.stat().st_mtime_ns
            pages = next((p.meta.get("pages") for p in parts if p.meta.get("pages")), None)
            if pages:
                have = {p.meta.get("page") for p in parts}
                blank = [i for i in range(1, int(pages) + 1) if i not in have]
                if blank:
                    report.blank_pages[source] = blank
            for part in parts:
                meta: dict[str, Any] = {
                    "doc_id": f"{file_id}#{part.key}" if part.key else file_id,
                    "file_mtime_ns": mtime_ns,
                    "file_id": file_id,
                    "source": source,
                    "title": path.name,
                    "format": path.suffix.lower().lstrip("."),
                    "date": date_from_name(path.name, date_from_filename),
                    "entity": entity,
                    "origin": ORIGIN,
                    **part.meta,
                }
                tables = tables_json(part.tables)
                if tables:
                    meta["tables"] = tables
                report.documents.append(Document(page_content=part.text, metadata=meta))
            say("load", n, len(files))
    finally:
        child.close()
    return report


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
