"""A set of Korean claims, right and wrong, built from the statements of examples/kr-filings
(SYNTHETIC figures of fictional companies, see its SOURCES.md): each claim cites a valueRef as
RunPython would emit it over the statements dataset, or the tableRef of the filing's
요약재무정보 (백만원). Right claims write the true value the ways Korean analysts do (조/억, 억 with
commas, 소수 조, 백만원, △ and loss words, 전년 대비 with a direction, %p); wrong ones change one
thing: a digit, the scale, the sign or direction, the percentage.

``claims(companies)`` returns ``(claim, refs, right)`` triples; ``TUNING`` are the companies the
rules were written against, ``HELD_OUT`` the ones looked at only to count."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from refgate.refs import Ref

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "kr-filings"
TUNING = ("99100001",)
HELD_OUT = ("99100002", "99100003")
EOK = 100_000_000
JO = 1_000_000_000_000


def jo_eok(v: int) -> str:
    """25조 8,935억원 (rounded to 억)."""
    eok = round(abs(v) / EOK)
    jo, rest = divmod(eok, 10_000)
    parts = ([f"{jo}조"] if jo else []) + ([f"{rest:,}억"] if rest else [])
    return " ".join(parts) + "원"


def eok_comma(v: int) -> str:
    return f"{round(abs(v) / EOK):,}억원"


def jo_decimal(v: int) -> str:
    return f"{abs(v) / JO:.1f}조원"


def million(v: int) -> str:
    return f"{round(abs(v) / 1e6):,}백만원"


def _statements() -> list[dict[str, str]]:
    with (SAMPLE / "data" / "dart" / "statements.csv").open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _value(rows, corp, rcept, account, year) -> int:
    for r in rows:
        if (r["corp_code"], r["rcept_no"], r["account_nm"], r["basis"], r["period"]) == (
            corp,
            rcept,
            account,
            "연결",
            "FY",
        ) and int(r["fiscal_year"]) == year:
            return int(r["amount"])
    raise KeyError((corp, rcept, account, year))


def _summary_table(corp: str, rcept: str) -> dict:
    record = json.loads((SAMPLE / "documents/dart" / corp / f"{rcept}.dart").read_text("utf-8"))
    section = next(s for s in record["sections"] if s["title"] == "III. 재무에 관한 사항")
    return section["tables"][0]


def claims(companies: tuple[str, ...]) -> list[tuple[str, list[Ref], bool]]:
    rows = _statements()
    manifest = json.loads((SAMPLE / "dart" / "manifest.json").read_text("utf-8"))
    out: list[tuple[str, list[Ref], bool]] = []
    n = 0
    for rcept, filing in sorted(manifest["filings"].items()):
        corp = filing["corp_code"]
        if corp not in companies or filing.get("reprt_code") != "11011":
            continue
        y = int(filing["bsns_year"])
        name = filing["corp_name"]
        get = {
            a: (_value(rows, corp, rcept, a, y), _value(rows, corp, rcept, a, y - 1))
            for a in ("매출액", "영업이익(손실)", "당기순이익(손실)")
        }
        rev, rev0 = get["매출액"]
        op, op0 = get["영업이익(손실)"]
        ni, _ = get["당기순이익(손실)"]
        change = round((rev - rev0) / rev0 * 100, 1)
        margin, margin0 = round(op / rev * 100, 1), round(op0 / rev0 * 100, 1)
        dpp = round(margin - margin0, 1)
        n += 1
        vid = f"val_{n:010x}"
        value_ref = Ref(
            id=vid,
            kind="valueRef",
            payload={
                "values": {
                    f"매출액 FY{y}": rev,
                    f"매출액 FY{y - 1}": rev0,
                    f"영업이익 FY{y}": op,
                    f"당기순이익 FY{y}": ni,
                },
                "units": "KRW",
                "period": [f"FY{y}", f"FY{y - 1}"],
            },
            title=f"{name} statements FY{y}",
            source="statements",
            source_type="internal",
            created_by="RunPython",
        )
        pct_ref = Ref(
            id=f"val_{n:09x}f",
            kind="valueRef",
            payload={
                "values": {"매출액 증감률": change, "영업이익률": margin, "영업이익률 증감": dpp},
                "units": {"매출액 증감률": "%", "영업이익률": "%", "영업이익률 증감": "%p"},
                "period": f"FY{y}",
            },
            title=f"{name} ratios FY{y}",
            source="statements",
            source_type="internal",
            created_by="RunPython",
        )
        table = _summary_table(corp, rcept)
        table_ref = Ref(
            id=f"tab_{n:010x}",
            kind="tableRef",
            payload={
                "columns": table["columns"],
                "rows": table["rows"],
                "units": {},
                "meta": {"unit": table["unit"], "rcept_no": rcept, "section_id": "s03"},
            },
            title=f"{name} 사업보고서 요약재무정보",
            source=rcept,
            source_type="external",
            created_by="search_documents",
        )
        v, p, t = f"[{vid}]", f"[{pct_ref.id}]", f"[{table_ref.id}]"
        refs = [value_ref, pct_ref, table_ref]
        down = rev < rev0
        word, wrong_word = ("감소", "증가") if down else ("증가", "감소")
        mword, wrong_mword = ("하락", "상승") if dpp < 0 else ("상승", "하락")
        right = [
            f"{y}년 {name}의 연결 기준 매출액은 {jo_eok(rev)}입니다 {v}.",
            f"{y}년 매출액은 {eok_comma(rev)}이었습니다 {v}.",
            f"FY{y} 매출액은 약 {jo_decimal(rev)}입니다 {v}.",
            f"{y}년 매출액은 {million(rev)}입니다 {t}.",
            f"{y}년 매출액은 {jo_eok(rev)}으로 요약재무정보와 같습니다 {t}.",
            f"{y - 1}년 매출액은 {jo_eok(rev0)}이었습니다 {v}.",
            f"{y}년 매출액은 전년 대비 {abs(change)}% {word}했습니다 {p}.",
            f"매출액은 전년 대비 {abs(change)}% {word}하였습니다 {p}.",
            f"{y}년 영업이익률은 {margin}%로 전년 대비 {abs(dpp)}%p {mword}했습니다 {p}.",
            f"{y}년 당기순이익은 {jo_eok(ni) if ni > 0 else '△' + jo_eok(ni)}입니다 {v}.",
        ]
        if op < 0:
            right += [
                f"{y}년 영업손실은 △{eok_comma(op)}입니다 {v}.",
                f"{y}년 영업손실은 {eok_comma(op)}입니다 {v}.",
                f"{y}년 영업이익은 △{million(op)}입니다 {t}.",
            ]
        else:
            right += [
                f"{y}년 영업이익은 {jo_eok(op)}입니다 {v}.",
                f"영업이익은 {million(op)}입니다 {t}.",
            ]
        bump = rev + (1000 if rev < 10 * JO else 10_000) * EOK  # one digit of the 억 part
        wrong = [
            f"{y}년 매출액은 {jo_eok(bump)}입니다 {v}.",
            f"{y}년 매출액은 {jo_eok(rev // 10)}입니다 {v}.",
            f"{y}년 매출액은 {eok_comma(rev).replace('억원', '만원')}입니다 {v}.",
            f"{y}년 매출액은 {jo_decimal(rev * 10)}입니다 {v}.",
            f"{y}년 매출액은 △{jo_eok(rev)}입니다 {v}.",
            f"{y}년 매출액은 {million(rev * 10)}입니다 {t}.",
            f"{y}년 매출액은 전년 대비 {abs(change)}% {wrong_word}했습니다 {p}.",
            f"{y}년 매출액은 전년 대비 {round(abs(change) + 1.0, 1)}% {word}했습니다 {p}.",
            f"{y}년 영업이익률은 전년 대비 {abs(dpp)}%p {wrong_mword}했습니다 {p}.",
            f"{y}년 영업이익률은 {round(margin + 0.5, 1)}%입니다 {p}.",
            f"{y}년 당기순이익은 {jo_eok(ni * 2)}입니다 {v}.",
            f"{y}년 영업이익은 {'△' if op > 0 else ''}{eok_comma(op)}입니다 {v}.",
        ]
        out += [(c, refs, True) for c in right] + [(c, refs, False) for c in wrong]
    return out
