"""The GATE on claims written from real DART statements (issue 43): the 14 companies'
fnlttSinglAcntAll rows in ``../shared/data/dart-real/statements`` (real OpenDART output; see its
SOURCES.md), turned into dataset rows by refgate's own ``retrieval.dart.statements`` (the
``statements`` dataset ``refgate dart sync`` writes).

Run: ``python benchmarks/gate_korean_real.py [--lang ko|en|both] [--examples N]
[--baseline REV]`` (from ``benchmarks/``; ``--baseline 1c5416a`` scores that revision's GATE).

For each company and fiscal year with a 사업보고서 in both bases (연결 CFS, 별도 OFS), the refs
are what WORK would emit from that dataset: a tableRef of a peer query (the company and the next
one in stock-code order: corp_name, basis, account_nm, period_label, amount in KRW, FY and FY-1,
both bases, 매출액 / 영업이익 / 당기순이익), a valueRef of the ratios computed from it (매출액
증감률 %, 영업이익률 %, 영업이익률 증감 %p), and for the year's 3분기 and 반기 reports a tableRef
of the quarter and the year to date (Q3 and 9M; Q2 and H1). Claims are written the way Korean
analysts write them (조/억 rounded to 억, 억 with commas, 소수 조, 백만원, 전년 대비 증감률 and
%p with a direction, 당기/전기, 연결/별도, 3분기 누적, 상반기, FY) and, for ``--lang en``, the
same claims in English (KRW trillion / billion / million, year on year, percentage points,
9M, Q3, H1, consolidated / separate).

Right claims must pass; each wrong one changes one thing and must block, counted by kind:
account (another account's value), year (the previous year's), quarter (Q3 for 9M, 9M for Q3,
Q2 for H1), basis (the OFS value where the claim says 연결), company (the value of the peer
claimed for the other company), unit slip (억 and 조 swapped; billion and trillion), sign of a
change (증가 for a fall, 상승 for a fall in %p).

Companies are split before any tuning: held-out = sha1(stock_code) % 3 == 0.
"""

from __future__ import annotations

import argparse
import hashlib
from collections import defaultdict
from pathlib import Path
from typing import Any

import pandas as pd
from shared.claim_scores import ClaimScores, gate_of

from refgate.refs import Ref
from refgate.retrieval.dart.statements import statement_rows

DATA = Path(__file__).resolve().parents[3] / "shared/data/dart-real/statements"
EOK = 100_000_000
JO = 1_000_000_000_000
#: account_id of the three accounts (account_nm differs by company: 매출액, 수익(매출액), 영업수익).
ACCOUNTS = {
    "rev": ("ifrs-full_Revenue",),
    "op": ("dart_OperatingIncomeLoss",),
    "ni": ("ifrs-full_ProfitLoss",),
}
KO_NAME = {"rev": "매출액", "op": "영업이익", "ni": "당기순이익"}
EN_NAME = {"rev": "revenue", "op": "operating profit", "ni": "net income"}


def held_out(stock_code: str) -> bool:
    return int(hashlib.sha1(stock_code.encode()).hexdigest(), 16) % 3 == 0


# --- amounts as analysts write them -------------------------------------------------------


def jo_eok(v: int) -> str:
    """25조 8,935억원 (rounded to 억)."""
    eok = round(abs(v) / EOK)
    jo, rest = divmod(eok, 10_000)
    parts = ([f"{jo}조"] if jo else []) + ([f"{rest:,}억"] if rest else [])
    return " ".join(parts) + "원"


def eok_comma(v: int) -> str:
    return f"{round(abs(v) / EOK):,}억원"


def million(v: int) -> str:
    return f"{round(abs(v) / 1e6):,}백만원"


def en_amount(v: int) -> str:
    """KRW 258.9 trillion / KRW 6,567 billion (one decimal of trillions, whole billions)."""
    a = abs(v)
    return f"KRW {a / JO:.1f} trillion" if a >= JO else f"KRW {round(a / 1e9):,} billion"


def slip_ko(v: int) -> str:
    """억 and 조 swapped: the 억 count written as 조 (2,589억 -> 2,589조)."""
    return f"{round(abs(v) / EOK):,}조원"


def slip_en(v: int) -> str:
    a = abs(v)
    return f"KRW {a / JO:.1f} billion" if a >= JO else f"KRW {round(a / 1e9):,} trillion"


# --- the data -------------------------------------------------------------------------------


def dataset_rows(path: Path) -> list[dict[str, Any]]:
    """The statements dataset rows of one company, as ``refgate dart sync`` writes them."""
    df = pd.read_parquet(path)
    df = df[df["account_id"].isin([a for ids in ACCOUNTS.values() for a in ids])]
    rows: list[dict[str, Any]] = []
    for (rcept, fs_div), g in df.groupby(["rcept_no", "fs_div"]):
        first = g.iloc[0]
        filing = {
            "corp_code": first["corp_code"],
            "corp_name": first["corp_name"],
            "stock_code": first["stock_code"],
            "rcept_no": rcept,
            "report_nm": first["reprt_nm"],
            "reprt_code": first["reprt_code"],
            "bsns_year": first["bsns_year"],
        }
        items = g.drop(columns=["__index_level_0__"], errors="ignore")
        answer = {"list": items.astype(object).where(items.notna(), None).to_dict("records")}
        rows += statement_rows(answer, filing, str(fs_div))
    return rows


def _key(r: dict[str, Any]) -> str:
    for k, ids in ACCOUNTS.items():
        if r["account_id"] in ids:
            return k
    return ""


class Company:
    """One company's amounts: (account, basis, report code, fiscal year, period) -> row."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.name = rows[0]["corp_name"]
        self.stock = rows[0]["stock_code"]
        self.at: dict[tuple[str, str, str, int, str], dict[str, Any]] = {}
        for r in rows:
            k = (_key(r), r["fs_div"], r["reprt_code"], int(r["fiscal_year"]), r["period"])
            # the newest filing's figure wins (a later report restates the year before)
            self.at.setdefault(k, r)

    def get(self, acc: str, basis: str, code: str, year: int, period: str) -> int | None:
        r = self.at.get((acc, basis, code, year, period))
        return int(r["amount"]) if r else None

    def row(self, acc: str, basis: str, code: str, year: int, period: str) -> list[Any] | None:
        r = self.at.get((acc, basis, code, year, period))
        if r is None:
            return None
        return [r["corp_name"], r["basis"], r["account_nm"], r["period_label"], int(r["amount"])]

    def years(self, code: str) -> list[int]:
        return sorted({k[3] for k in self.at if k[2] == code and k[0] == "rev" and k[4] != "FY"}
                      | {k[3] for k in self.at if k[2] == code and k[0] == "rev"})  # fmt: skip


_N = [0]


def _ref_id(prefix: str) -> str:
    _N[0] += 1
    return f"{prefix}_{_N[0]:010x}"


def table_ref(rows: list[list[Any]], title: str) -> Ref:
    """A tableRef as RunPython emits a query of the statements dataset."""
    payload = {
        "columns": ["corp_name", "basis", "account_nm", "period_label", "amount"],
        "rows": rows,
        "units": {"amount": "KRW"},
        "meta": {"read": ["statements"], "sources": ["statements"], "rows": len(rows),
                 "title": title},
    }  # fmt: skip
    return Ref(id=_ref_id("tbl"), kind="tableRef", payload=payload, title=title,
               source="statements", source_type="internal", created_by="RunPython")  # fmt: skip


def value_ref(values: dict[str, float], units: dict[str, str], period: str) -> Ref:
    payload = {"values": values, "units": units, "period": period,
               "meta": {"read": ["statements"], "sources": ["statements"]}}  # fmt: skip
    return Ref(id=_ref_id("val"), kind="valueRef", payload=payload, title="ratios",
               source="statements", source_type="internal", created_by="RunPython")  # fmt: skip


# --- the claims -----------------------------------------------------------------------------

Item = tuple[str, str, list[Ref], bool]  # (group, claim, refs, should pass)


def _differ(a: int, b: int) -> bool:
    """Two amounts the claims' roundings tell apart (to 억, to 0.1조, to KRW 0.1 trillion or
    1 billion): a wrong claim must not be a right one rounded."""
    return all(f(a) != f(b) for f in (jo_eok, en_amount, lambda v: f"{abs(v) / JO:.1f}")) and (
        abs(a - b) >= 2 * EOK
    )


def annual_claims(a: Company, b: Company, year: int, lang: str) -> list[Item]:
    g = {
        (acc, basis, y): a.get(acc, basis, "11011", y, "FY")
        for acc in KO_NAME for basis in ("CFS", "OFS") for y in (year, year - 1)
    }  # fmt: skip
    if any(v is None for v in g.values()) or not g[("rev", "CFS", year - 1)]:
        return []
    peer = b.get("rev", "CFS", "11011", year, "FY")
    if peer is None:
        return []
    rows = [
        c.row(acc, basis, "11011", y, "FY")
        for c in (a, b) for basis in ("CFS", "OFS") for acc in KO_NAME for y in (year, year - 1)
    ]  # fmt: skip
    t = table_ref([r for r in rows if r], f"주요 손익 비교 FY{year}")
    rev, rev0 = g[("rev", "CFS", year)], g[("rev", "CFS", year - 1)]
    op, op0, ni = g[("op", "CFS", year)], g[("op", "CFS", year - 1)], g[("ni", "CFS", year)]
    rev_ofs = g[("rev", "OFS", year)]
    assert rev is not None and rev0 is not None and op is not None and op0 is not None
    assert ni is not None and rev_ofs is not None
    chg = round((rev - rev0) / abs(rev0) * 100, 1)
    margin, margin0 = round(op / rev * 100, 1), round(op0 / rev0 * 100, 1)
    dpp = round(margin - margin0, 1)
    v = value_ref(
        {"매출액 증감률": chg, "영업이익률": margin, "영업이익률 증감": dpp},
        {"매출액 증감률": "%", "영업이익률": "%", "영업이익률 증감": "%p"},
        f"FY{year}",
    )
    refs = [t, v]
    T, V = f"[{t.id}]", f"[{v.id}]"
    out: list[Item] = []

    def add(kind: str, claim: str, ok: bool) -> None:
        out.append((f"{'right' if ok else 'wrong'}: {kind}", claim, refs, ok))

    A, B = a.name, b.name
    if lang == "ko":
        up, down = ("증가", "감소") if chg >= 0 else ("감소", "증가")
        mup, mdown = ("상승", "하락") if dpp >= 0 else ("하락", "상승")
        op_word = "영업이익" if op >= 0 else "영업손실"
        ni_word = "당기순이익" if ni >= 0 else "당기순손실"
        add("조/억", f"{A}의 {year}년 연결 기준 매출액은 {jo_eok(rev)}입니다 {T}.", True)
        add("억", f"{year}년 {A} 연결 {op_word}은 {eok_comma(op)}이었습니다 {T}.", True)
        add("백만원 별도", f"{A}의 {year}년 별도 기준 매출액은 {million(rev_ofs)}입니다 {T}.", True)
        add("소수 조", f"{A}의 FY{year} 연결 매출액은 약 {rev / JO:.1f}조원입니다 {T}.", True)
        add("당기/전기 증감률", f"{A}의 {year}년 연결 매출액은 {jo_eok(rev)}으로 전기 "
            f"{jo_eok(rev0)} 대비 {abs(chg)}% {up}했습니다 {T}{V}.", True)  # fmt: skip
        add("%p", f"{year}년 연결 영업이익률은 {margin}%로 전년 대비 {abs(dpp)}%p {mup}했습니다 "
            f"{V}.", True)  # fmt: skip
        add("순이익", f"{A}의 {year}년 연결 기준 {ni_word}은 {jo_eok(ni)}입니다 {T}.", True)
        add("전년", f"{A}의 {year - 1}년 연결 매출액은 {jo_eok(rev0)}이었습니다 {T}.", True)
        if _differ(op, rev):
            add("account", f"{A}의 {year}년 연결 기준 매출액은 {jo_eok(op)}입니다 {T}.", False)
        if _differ(rev, rev0):
            add("year", f"{A}의 {year}년 연결 기준 매출액은 {jo_eok(rev0)}입니다 {T}.", False)
        if _differ(rev, rev_ofs):
            add("basis (OFS for CFS)",
                f"{A}의 {year}년 연결 기준 매출액은 {jo_eok(rev_ofs)}입니다 {T}.", False)  # fmt: skip
        if _differ(rev, peer):
            add("company", f"{B}의 {year}년 연결 기준 매출액은 {jo_eok(rev)}입니다 {T}.", False)
        add("unit slip (억/조)", f"{A}의 {year}년 연결 기준 매출액은 {slip_ko(rev)}입니다 {T}.",
            False)  # fmt: skip
        if chg:
            add("sign of change",
                f"{A}의 {year}년 연결 매출액은 전년 대비 {abs(chg)}% {down}했습니다 {V}.", False)  # fmt: skip
        if dpp:
            add("sign of change", f"{year}년 연결 영업이익률은 전년 대비 {abs(dpp)}%p {mdown}했습니다 "
                f"{V}.", False)  # fmt: skip
    else:
        up, down = ("rose", "fell") if chg >= 0 else ("fell", "rose")
        mup, mdown = ("up", "down") if dpp >= 0 else ("down", "up")
        op_word = "operating profit" if op >= 0 else "operating loss"
        ni_word = "net income" if ni >= 0 else "net loss"
        add("trillion/billion", f"{A}'s consolidated revenue in FY{year} was {en_amount(rev)} {T}.",
            True)  # fmt: skip
        add("billion", f"{A}'s consolidated {op_word} for {year} was {en_amount(op)} {T}.", True)
        add("million separate", f"{A}'s separate revenue in {year} was KRW "
            f"{round(rev_ofs / 1e6):,} million {T}.", True)  # fmt: skip
        add("year on year", f"{A}'s consolidated revenue {up} {abs(chg)}% year on year in {year} "
            f"{V}.", True)  # fmt: skip
        add("%p", f"In {year} the consolidated operating margin was {margin}%, {mup} {abs(dpp)} "
            f"percentage points {V}.", True)  # fmt: skip
        add("net income", f"{A}'s consolidated {ni_word} for FY{year} was {en_amount(ni)} {T}.",
            True)  # fmt: skip
        add("previous year", f"{A}'s consolidated revenue in FY{year - 1} was {en_amount(rev0)} "
            f"{T}.", True)  # fmt: skip
        if _differ(op, rev):
            add("account", f"{A}'s consolidated revenue in FY{year} was {en_amount(op)} {T}.",
                False)  # fmt: skip
        if _differ(rev, rev0):
            add("year", f"{A}'s consolidated revenue in FY{year} was {en_amount(rev0)} {T}.",
                False)  # fmt: skip
        if _differ(rev, rev_ofs):
            add("basis (OFS for CFS)",
                f"{A}'s consolidated revenue in FY{year} was {en_amount(rev_ofs)} {T}.", False)  # fmt: skip
        if _differ(rev, peer):
            add("company", f"{B}'s consolidated revenue in FY{year} was {en_amount(rev)} {T}.",
                False)  # fmt: skip
        add("unit slip (bn/tn)", f"{A}'s consolidated revenue in FY{year} was {slip_en(rev)} "
            f"{T}.", False)  # fmt: skip
        if chg:
            add("sign of change", f"{A}'s consolidated revenue {down} {abs(chg)}% year on year "
                f"in {year} {V}.", False)  # fmt: skip
        if dpp:
            add("sign of change", f"In {year} the consolidated operating margin was {margin}%, "
                f"{mdown} {abs(dpp)} percentage points {V}.", False)  # fmt: skip
    return out


def interim_claims(a: Company, year: int, lang: str) -> list[Item]:
    """The 3분기 report's quarter and nine months, the 반기 report's Q2 and H1 (연결 매출액)."""
    out: list[Item] = []
    for code, q, ytd in (("11014", "Q3", "9M"), ("11012", "Q2", "H1")):
        vq = a.get("rev", "CFS", code, year, q)
        vy = a.get("rev", "CFS", code, year, ytd)
        if vq is None or vy is None:
            continue
        rows = [a.row("rev", "CFS", code, y, p) for y in (year, year - 1) for p in (q, ytd)]
        t = table_ref([r for r in rows if r], f"{a.name} {year} {q}/{ytd}")
        T, A = f"[{t.id}]", a.name
        if lang == "ko":
            ytd_ko = "3분기 누적" if ytd == "9M" else "상반기"
            q_ko = "3분기" if q == "Q3" else "2분기"
            said = (f"{A}의 {year}년 {ytd_ko} 연결 매출액은 {{}}입니다 {T}.",
                    f"{A}의 {year}년 {q_ko} 연결 매출액은 {{}}입니다 {T}.")  # fmt: skip
            fmt = jo_eok
        else:
            ytd_en = f"9M {year}" if ytd == "9M" else f"H1 {year}"
            q_en = f"{q[1]}Q{year % 100:02d}"
            said = (f"{A}'s consolidated revenue for {ytd_en} was {{}} {T}.",
                    f"{A}'s consolidated revenue in {q_en} was {{}} {T}.")  # fmt: skip
            fmt = en_amount
        out.append(("right: 누적/반기 (year to date)", said[0].format(fmt(vy)), [t], True))
        out.append(("right: 분기 (quarter)", said[1].format(fmt(vq)), [t], True))
        if _differ(vq, vy):
            out.append(("wrong: quarter", said[0].format(fmt(vq)), [t], False))
            if code == "11014":
                out.append(("wrong: quarter", said[1].format(fmt(vy)), [t], False))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", type=Path, default=DATA)
    ap.add_argument("--lang", choices=("ko", "en", "both"), default="both")
    ap.add_argument("--examples", type=int, default=3)
    ap.add_argument("--years", type=int, default=3, help="latest N fiscal years per company")
    ap.add_argument("--baseline", help="score the GATE of this git revision instead")
    args = ap.parse_args()
    check_answer = gate_of(args.baseline)
    companies = []
    for path in sorted(args.dir.glob("*.parquet")):
        rows = dataset_rows(path)
        if rows:
            companies.append(Company(rows))
    langs = ("ko", "en") if args.lang == "both" else (args.lang,)
    scores = ClaimScores(args.examples, 260)
    counted: dict[str, set[str]] = defaultdict(set)
    for i, a in enumerate(companies):
        b = companies[(i + 1) % len(companies)]
        part = "held-out" if held_out(a.stock) else "tuning"
        counted[part].add(a.name)
        fy = sorted({k[3] for k in a.at if k[2] == "11011" and k[4] == "FY"})[-args.years :]
        for lang in langs:
            for year in fy:
                items = annual_claims(a, b, year, lang) + interim_claims(a, year, lang)
                for group, claim, refs, ok in items:
                    scores.add(part, f"{lang} {group}", claim, check_answer(claim, refs), ok)
    print({k: sorted(v) for k, v in counted.items()})
    scores.print(44, 8)
    print("\nsummary (right claims accepted; wrong claims blocked, lowest kind)")
    for part in ("tuning", "held-out"):
        for lang in langs:
            rows = {g: c for (p, g), c in scores.counts.items() if p == part and g.startswith(lang)}
            ok = [c for g, c in rows.items() if " right: " in g]
            bad = {g.split("wrong: ")[1]: c for g, c in rows.items() if " wrong: " in g}
            acc = sum(c[0] for c in ok) / max(1, sum(c[1] for c in ok))
            blk = sum(c[0] for c in bad.values()) / max(1, sum(c[1] for c in bad.values()))
            low = min(bad.items(), key=lambda kv: kv[1][0] / kv[1][1])
            print(f"{part:9} {lang}: right accepted {acc:.2%} of {sum(c[1] for c in ok)}; wrong "
                  f"blocked {blk:.2%} of {sum(c[1] for c in bad.values())} (lowest: {low[0]} "
                  f"{low[1][0]}/{low[1][1]})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
