"""Loading a workspace's ``[documents]`` folder as LangChain ``Document``s.

Each file becomes one Document with ``metadata``: ``doc_id`` (path inside the folder without the
suffix, e.g. ``20081216``), ``source`` (path relative to the workspace root), ``date`` (ISO date
parsed from the file name with ``date_from_filename``, e.g. ``%Y%m%d``), ``entity`` (the
``[documents]`` table's ``entity``) and ``title``. HTML is reduced to text with headings kept as
markdown ``#`` lines so the chunker sees the sections.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document

if TYPE_CHECKING:
    from refgate.workspace import Workspace

SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm")


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


def html_to_text(html: str) -> str:
    """Visible text of an HTML page (scripts and styles dropped; h1-h6 become ``#`` lines)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "lxml")
    for tag in soup(["script", "style", "noscript", "template"]):
        tag.decompose()
    for level in range(1, 7):
        for h in soup.find_all(f"h{level}"):
            h.replace_with(f"\n\n{'#' * level} {h.get_text(' ', strip=True)}\n\n")
    for tag in soup.find_all(["p", "div", "li", "tr", "br"]):
        tag.insert_after("\n")
    text = soup.get_text()
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def iter_document_files(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix.lower() in SUFFIXES and not path.name.startswith("."):
            yield path


def load_documents(
    folder: Path | str,
    *,
    root: Path | str | None = None,
    date_from_filename: str | None = None,
    entity: str | None = None,
) -> list[Document]:
    """Read every .txt/.md/.html file under ``folder`` as a ``Document``."""
    folder = Path(folder)
    root = Path(root) if root is not None else folder
    files = list(iter_document_files(folder))
    stems: dict[str, int] = {}
    for p in files:
        key = p.relative_to(folder).with_suffix("").as_posix()
        stems[key] = stems.get(key, 0) + 1
    docs: list[Document] = []
    for path in files:
        rel = path.relative_to(folder)
        stem = rel.with_suffix("").as_posix()
        doc_id = stem if stems[stem] == 1 else rel.as_posix()
        raw = path.read_text(encoding="utf-8", errors="replace").lstrip("\ufeff")
        text = html_to_text(raw) if path.suffix.lower() in (".html", ".htm") else raw
        try:
            source = path.relative_to(root).as_posix()
        except ValueError:
            source = str(path)
        meta: dict[str, Any] = {
            "doc_id": doc_id,
            "source": source,
            "title": path.name,
            "date": date_from_name(path.name, date_from_filename),
            "entity": entity,
        }
        docs.append(Document(page_content=text, metadata=meta))
    return docs


def workspace_documents(workspace: Workspace) -> list[Document]:
    """The documents named by a workspace's ``[documents]`` table (empty when it has none)."""
    if workspace.documents_path is None:
        return []
    opts = workspace.documents_options
    return load_documents(
        workspace.documents_path,
        root=workspace.root,
        date_from_filename=opts.get("date_from_filename"),
        entity=opts.get("entity"),
    )
