r"""Where a DART sync keeps things in the workspace, and how it writes them: every file through a
temporary file in the same folder and ``os.replace``, so a reader (or a sync stopped midway) sees
the old file or the new one, never half of one.

``<cache>/manifest.json``: the companies resolved and, per receipt number, the filing's list row
with what was stored for it; a filing is in it only once all its files are written.
``<cache>/raw/``: OpenDART's answers as received (``corpCode.zip``, ``documents/<rcept_no>.zip``,
``statements/<rcept_no>-<CFS|OFS>.json``), from which everything else is derived again offline.
``<documents>/<corp_code>/<rcept_no>.dart``: the filing's sections (JSON), read by the
document loader. ``<dataset>``: the statements of every stored filing, one CSV.

Receipt numbers and corp_codes come from OpenDART's answers and become file names, so each is
checked first (``^\d{14}$``, ``^\d{8}$``; ``BadIdentifier`` otherwise) and every path is
resolved and confined to its folder (``refgate.paths.confine``) before anything is written.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from refgate import files
from refgate.errors import InputError
from refgate.paths import confine

MANIFEST_VERSION = 1
#: Suffix of a stored filing (sections as JSON), the document loader's format.
FILING_SUFFIX = ".dart"
RCEPT_NO = re.compile(r"^[0-9]{14}$")
CORP_CODE = re.compile(r"^[0-9]{8}$")
FS_DIVS = frozenset({"CFS", "OFS"})


class BadIdentifier(InputError, ValueError):
    """A receipt number or corp_code that is not the digits OpenDART issues."""


def check_rcept_no(value: object) -> str:
    text = str(value)
    if not RCEPT_NO.fullmatch(text):
        raise BadIdentifier(f"receipt number {text[:40]!r} is not 14 digits")
    return text


def check_corp_code(value: object) -> str:
    text = str(value)
    if not CORP_CODE.fullmatch(text):
        raise BadIdentifier(f"corp_code {text[:40]!r} is not 8 digits")
    return text


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
        name = f"{check_rcept_no(rcept_no)}.zip"
        return confine(self.cache / "raw" / "documents" / name, [self.cache], what="DART cache")

    def statements(self, rcept_no: str, fs_div: str) -> Path:
        if fs_div not in FS_DIVS:
            raise BadIdentifier(f"fs_div {fs_div[:10]!r} is neither CFS nor OFS")
        name = f"{check_rcept_no(rcept_no)}-{fs_div}.json"
        return confine(self.cache / "raw" / "statements" / name, [self.cache], what="DART cache")

    def filing(self, corp_code: str, rcept_no: str) -> Path:
        name = f"{check_rcept_no(rcept_no)}{FILING_SUFFIX}"
        path = self.documents / check_corp_code(corp_code) / name
        return confine(path, [self.documents], what="DART documents")

    def read_manifest(self) -> dict[str, Any]:
        if not self.manifest.is_file():
            return {"version": MANIFEST_VERSION, "companies": {}, "filings": {}}
        data = json.loads(self.manifest.read_text(encoding="utf-8"))
        data.setdefault("companies", {})
        data.setdefault("filings", {})
        # a manifest edited by hand (or written by another tool) names only valid filings
        data["filings"] = {
            k: v
            for k, v in data["filings"].items()
            if RCEPT_NO.fullmatch(str(k))
            and isinstance(v, dict)
            and CORP_CODE.fullmatch(str(v.get("corp_code", "")))
        }
        return data

    def write_manifest(self, manifest: Mapping[str, object]) -> None:
        write_json(self.manifest, manifest)
