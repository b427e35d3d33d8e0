"""Real 엔씨소프트 filing sections, read from the shared parquet at test time (never copied into
the repository): ``../shared/data/dart-real/sections/036570.parquet``."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
PARQUET = REPO.parent / "shared" / "data" / "dart-real" / "sections" / "036570.parquet"

#: Filings the tests read: the 2023 annual report, its [기재정정] amendment, 2022 Q3, 2019 annual.
ANNUAL_2023 = "20240320001965"
AMENDED_2023 = "20240322000989"
Q3_2022 = "20221114002222"
ANNUAL_2019 = "20200330004487"


@lru_cache(maxsize=1)
def _rows() -> tuple[dict[str, Any], ...]:
    if not PARQUET.is_file():
        pytest.skip(f"the real DART sections are not at {PARQUET}")
    # deferred: pyarrow is heavy to import; only these tests read parquet
    import pyarrow.parquet as pq

    rows = pq.read_table(PARQUET).to_pylist()
    return tuple(sorted(rows, key=lambda r: (r["rcept_no"], r["section_order"])))


def sections(rcept_no: str, titles: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """The rows of one filing (``titles``: only those sections, in filing order)."""
    rows = [r for r in _rows() if r["rcept_no"] == rcept_no]
    if titles is not None:
        rows = [r for r in rows if r["section_title"] in titles]
    return rows


def report_names() -> dict[str, str]:
    """Every filing's receipt number and report name."""
    return {r["rcept_no"]: r["report_type"] for r in _rows()}


def write_filing(folder: Path, rcept_no: str, titles: tuple[str, ...] | None = None) -> Path:
    """A stored DART filing record (the loader's format) of real sections of ``rcept_no``."""
    rows = sections(rcept_no, titles)
    assert rows, f"no sections of {rcept_no}"
    first = rows[0]
    record = {
        "format": "refgate.dart.filing/1",
        "filing": {
            "rcept_no": rcept_no,
            "corp_code": first["corp_code"],
            "corp_name": first["corp_name"],
            "stock_code": first["stock_code"],
            "rcept_dt": first["rcept_date"],
            "report_nm": first["report_type"],
        },
        "sections": [
            {
                "id": f"s{int(r['section_order']):02d}",
                "title": r["section_title"],
                "text": r["section_content"] or "",
                "tables": [],
            }
            for r in rows
        ],
    }
    path = folder / first["corp_code"] / f"{rcept_no}.dart"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    return path
