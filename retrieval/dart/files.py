"""Where a DART sync keeps things in the workspace, and how it writes them: every file through a
temporary file in the same folder and ``os.replace``, so a reader (or a sync stopped midway) sees
the old file or the new one, never half of one.

``<cache>/manifest.json``: the companies resolved and, per receipt number, the filing's list row
with what was stored for it; a filing is in it only once all its files are written.
``<cache>/raw/``: OpenDART's answers as received (``corpCode.zip``, ``documents/<rcept_no>.zip``,
``statements/<rcept_no>-<CFS|OFS>.json``), from which everything else is derived again offline.
``<documents>/<corp_code>/<rcept_no>.dart``: the filing's sections (JSON), read by the
document loader. ``<dataset>``: the statements of every stored filing, one CSV.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from refgate import files

MANIFEST_VERSION = 1
#: Suffix of a stored filing (sections as JSON), the document loader's format.
FILING_SUFFIX = ".dart"


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` all at once (``refgate.files.write_atomic``), making its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    files.write_atomic(path, data)


def write_json(path: Path, value: object) -> None:
    write_atomic(path, json.dumps(value, ensure_ascii=False, indent=1).encode("utf-8") + b"\n")


def write_csv(path: Path, columns: list[str], rows: Sequence[Mapping[str, object]]) -> None:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(path, buf.getvalue().encode("utf-8"))


class Layout:
    """The paths of one workspace's DART cache, documents and dataset."""

    def __init__(self, cache: Path, documents: Path, dataset: Path) -> None:
        self.cache = cache
        self.documents = documents
        self.dataset = dataset

    @property
    def manifest(self) -> Path:
        return self.cache / "manifest.json"

    @property
    def corp_codes(self) -> Path:
        return self.cache / "raw" / "corpCode.zip"

    def document_zip(self, rcept_no: str) -> Path:
        return self.cache / "raw" / "documents" / f"{rcept_no}.zip"

    def statements(self, rcept_no: str, fs_div: str) -> Path:
        return self.cache / "raw" / "statements" / f"{rcept_no}-{fs_div}.json"

    def filing(self, corp_code: str, rcept_no: str) -> Path:
        return self.documents / corp_code / f"{rcept_no}{FILING_SUFFIX}"

    def read_manifest(self) -> dict[str, Any]:
        if not self.manifest.is_file():
            return {"version": MANIFEST_VERSION, "companies": {}, "filings": {}}
        data = json.loads(self.manifest.read_text(encoding="utf-8"))
        data.setdefault("companies", {})
        data.setdefault("filings", {})
        return data

    def write_manifest(self, manifest: Mapping[str, object]) -> None:
        write_json(self.manifest, manifest)
