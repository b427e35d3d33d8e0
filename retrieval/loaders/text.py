"""Plain text, markdown and HTML files: one ``Part`` per file.

HTML goes through the core's one HTML-to-text (``refgate.provenance.html.html_to_text``), which
drops scripts, styles, comments and CSS-hidden text; headings come out as markdown ``#`` lines so
the chunker sees the sections.
"""

from __future__ import annotations

from pathlib import Path

from refgate.provenance.html import html_to_text
from refgate.retrieval.loaders.base import Part


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace").lstrip("\ufeff")


def read_text(path: Path) -> list[Part]:
    return [Part(_read(path))]


def read_html(path: Path) -> list[Part]:
    return [Part(html_to_text(_read(path), markdown_headings=True))]
