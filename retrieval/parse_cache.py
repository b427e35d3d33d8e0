"""Parsed documents kept between index runs, so ``refgate index`` resumes after a kill.

A SQLite file in the workspace's state folder (``parsed.sqlite``) holds each document's parts
as its reader returned them, keyed by the file's source path, size and modification time and
by ``PARSER_VERSION``. Each document is committed as soon as it is parsed: an index run killed
midway (kill -9, a crash, a closed laptop) parses on restart only the documents it had not
finished, and the embeddings cache (``embeddings.sqlite``, committed batch by batch) does the
same for vectors. A file changed since it was parsed has another key and is parsed again.
"""

from __future__ import annotations

import pickle
import sqlite3
from pathlib import Path

from refgate.retrieval.loaders.base import Part

#: Bumped when a reader's output changes, so parses made by older code are not reused.
PARSER_VERSION = 2
FILE_NAME = "parsed.sqlite"


class ParseCache:
    """Parts of parsed files by (source, size, mtime_ns); one commit per document."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._conn = sqlite3.connect(str(path), timeout=30)
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS parsed (source TEXT PRIMARY KEY, size INTEGER, "
            "mtime_ns INTEGER, version INTEGER, parts BLOB)"
        )
        self._conn.commit()

    def get(self, source: str, file: Path) -> list[Part] | None:
        """The parts stored for ``source`` when ``file`` is unchanged since; else None."""
        stat = file.stat()
        row = self._conn.execute(
            "SELECT parts FROM parsed WHERE source = ? AND size = ? AND mtime_ns = ? "
            "AND version = ?",
            (source, stat.st_size, stat.st_mtime_ns, PARSER_VERSION),
        ).fetchone()
        if row is None:
            return None
        try:
            parts: list[Part] = pickle.loads(row[0])
        except Exception:  # a damaged row: parse the file again
            return None
        return parts

    def put(self, source: str, file: Path, parts: list[Part]) -> None:
        """Store ``file``'s parts (committed at once)."""
        stat = file.stat()
        self._conn.execute(
            "INSERT OR REPLACE INTO parsed VALUES (?, ?, ?, ?, ?)",
            (
                source,
                stat.st_size,
                stat.st_mtime_ns,
                PARSER_VERSION,
                pickle.dumps(parts, protocol=pickle.HIGHEST_PROTOCOL),
            ),
        )
        self._conn.commit()

    def sources(self) -> set[str]:
        """The sources with a stored parse."""
        return {row[0] for row in self._conn.execute("SELECT source FROM parsed")}

    def close(self) -> None:
        self._conn.close()
