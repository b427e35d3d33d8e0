"""Write eval.jsonl: questions about the (synthetic) statements with gold numbers computed from
data/dart/statements.csv (consolidated, annual reports), written in 억원 (the scorer reads them
with the GATE's parser and compares magnitudes, so 25조 8,935억원 matches 258,935억원). Run from the repository root:
``python examples/kr-filings/make_eval.py``."""

from __future__ import annotations

import csv
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    with (HERE / "data/dart/statements.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))

    def value(corp: str, account: str, year: int) -> int:
        for r in rows:
            if (r["corp_name"], r["account_nm"], r["basis"], r["period"], r["term"]) == (
                corp,
                account,
                "연결",
                "FY",
                "당기",
            ) and int(r["fiscal_year"]) == year:
                return int(r["amount"])
        raise KeyError((corp, account, year))

    out = []
    for corp, slug in (("한빛전자", "hanbit"), ("새봄화학", "saebom"), ("누리자동차", "nuri")):
        rev23, rev22 = value(corp, "매출액", 2023), value(corp, "매출액", 2022)
        change = round((rev23 - rev22) / rev22 * 100, 1)
        out.append(
            {
                "id": f"{slug}-revenue-2023",
                "question": f"{corp}의 2023년 연결 기준 매출액은 얼마였고 전년 대비 얼마나 변했나요?",
                "numbers": [f"{round(rev23 / 1e8):,}억원", f"{abs(change)}%"],
                "refs_required": ["valueRef"],
            }
        )
        op23 = value(corp, "영업이익(손실)", 2023)
        out.append(
            {
                "id": f"{slug}-operating-2023",
                "question": f"{corp}의 2023년 연결 영업이익(손실)은 얼마인가요? 억원 단위로 답하세요.",
                "numbers": [f"{abs(round(op23 / 1e8)):,}억원"],
                "refs_required": ["valueRef"],
            }
        )
    with (HERE / "eval.jsonl").open("w", encoding="utf-8") as fh:
        for item in out:
            fh.write(json.dumps(item, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
