"""The embeddings cache: vectors by (embedder id, content hash) in a SQLite file beside the index.

Re-indexing looks every chunk up here first and embeds only the misses, so editing a few
documents re-embeds only their changed chunks.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from refgate.closing import Closing


class EmbeddingCache(Closing):
    """A small SQLite key-value store of float32 vectors."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(self.path))
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS vectors ("
            " model TEXT NOT NULL, hash TEXT NOT NULL, dim INTEGER NOT NULL, vec BLOB NOT NULL,"
            " PRIMARY KEY (model, hash))"
        )
        self._conn.commit()

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(hashes))
        for i in range(0, len(unique), 500):
            part = unique[i : i + 500]
            marks = ",".join("?" * len(part))
            rows = self._conn.execute(
                f"SELECT hash, dim, vec FROM vectors WHERE model = ? AND hash IN ({marks})",
                [model, *part],
            )
            for h, dim, blob in rows:
                vec = np.frombuffer(blob, dtype=np.float32)
                if vec.shape[0] == dim:
                    out[h] = vec
        return out

    def put_many(self, model: str, items: Iterable[tuple[str, np.ndarray]]) -> None:
        rows = []
        for h, vec in items:
            arr = np.ascontiguousarray(vec, dtype=np.float32)
            rows.append((model, h, int(arr.shape[0]), arr.tobytes()))
        self._conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)
        self._conn.commit()

    def prune(self, model: str, keep: Iterable[str]) -> int:
        """Drop this embedder's vectors whose hash is not in ``keep``; return how many."""
        keep_set = set(keep)
        hashes = [
            h for (h,) in self._conn.execute("SELECT hash FROM vectors WHERE model = ?", [model])
        ]
        drop = [h for h in hashes if h not in keep_set]
        self._conn.executemany(
            "DELETE FROM vectors WHERE model = ? AND hash = ?", [(model, h) for h in drop]
        )
        self._conn.commit()
        return len(drop)

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])

    def close(self) -> None:
        self._conn.close()
