"""엔씨소프트's real filings as stored DART filing records (``<rcept_no>.dart``, the format
``refgate.retrieval.loaders.dart`` reads), built from the shared section parquet
(``../shared/data/dart-real/sections/036570.parquet``; SOURCES.md there). The records are
written outside the repository (a benchmark's work folder): the filing text stays in shared/.

출처: 금융감독원 전자공시시스템(DART)
"""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "data" / "dart-real"
NCSOFT_SECTIONS = SHARED / "sections" / "036570.parquet"
QUESTIONS = REPO / "benchmarks" / "data" / "dart-real" / "ncsoft_questions.jsonl"


def filing_records(parquet: Path = NCSOFT_SECTIONS) -> dict[str, dict[str, object]]:
    """Each filing of the parquet as a stored DART filing record, by receipt number."""
    # deferred: pyarrow is heavy to import; only the real-filing benchmarks read parquet
    import pyarrow.parquet as pq

    if not parquet.is_file():
        raise SystemExit(f"{parquet} is missing: the real DART data lives in ../shared/data")
    rows = pq.read_table(parquet).to_pylist()
    rows.sort(key=lambda r: (r["rcept_no"], r["section_order"]))
    records: dict[str, dict[str, object]] = {}
    for r in rows:
        rec = records.setdefault(
            r["rcept_no"],
            {
                "format": "refgate.dart.filing/1",
                "filing": {
                    "rcept_no": r["rcept_no"],
                    "corp_code": r["corp_code"],
                    "corp_name": r["corp_name"],
                    "stock_code": r["stock_code"],
                    "rcept_dt": r["rcept_date"],
                    "report_nm": r["report_type"],
                },
                "sections": [],
            },
        )
        sections = rec["sections"]
        assert isinstance(sections, list)
        sections.append(
            {
                "id": f"s{int(r['section_order']):02d}",
                "title": r["section_title"],
                "text": r["section_content"] or "",
                "tables": [],
            }
        )
    return records


def write_filings(folder: Path, parquet: Path = NCSOFT_SECTIONS) -> list[Path]:
    """Write every filing to ``folder/<corp_code>/<rcept_no>.dart`` (as ``refgate dart sync``
    lays them out); returns the paths."""
    paths = []
    for rcept_no, rec in filing_records(parquet).items():
        filing = rec["filing"]
        assert isinstance(filing, dict)
        path = folder / str(filing["corp_code"]) / f"{rcept_no}.dart"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rec, ensure_ascii=False), encoding="utf-8")
        paths.append(path)
    return paths


def questions(path: Path = QUESTIONS) -> list[dict[str, object]]:
    """The questions written on the real filings (benchmarks/data/dart-real/README.md)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]
