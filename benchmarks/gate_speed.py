"""GATE speed: median ms of ``check_answer`` on a ~2,000-word answer with 200 claims against 1,000
refs, and the curve from 20 to 2,000 claims (targets: <= 20 ms at 200; 10x claims -> <= 12x time).

Run: ``python benchmarks/gate_speed.py`` (``--repeat N`` to change the samples per point).
The answer mixes prose sentences (English and Korean formats, percents, scale words, dates),
list items and evidence-table rows; every claim cites one or two refs, and all claims pass.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from refgate.nodes.gate import check_answer
from refgate.refs import Ref

N_REFS = 1000


def make_refs(rng: random.Random) -> list[Ref]:
    refs: list[Ref] = []
    for i in range(N_REFS):
        if i % 10 == 0:
            rows = [
                [f"Company {i}-{r}", f"{2015 + r % 9}", round(rng.uniform(10, 9000), 1), r + 1]
                for r in range(20)
            ]
            refs.append(
                Ref(
                    id=f"tbl_{i:010x}",
                    kind="tableRef",
                    payload={
                        "columns": ["company", "period", "revenue", "rank"],
                        "rows": rows,
                        "units": {"revenue": "USD"},
                        "meta": {"scale": "million"},
                    },
                )
            )
        else:
            refs.append(
                Ref(
                    id=f"val_{i:010x}",
                    kind="valueRef",
                    payload={
                        "values": {
                            "revenue": round(rng.uniform(100, 99999), 2),
                            "margin": round(rng.uniform(-30, 60), 3),
                            "won": rng.randrange(10**9, 9 * 10**12, 10**7),
                        },
                        "units": {"revenue": "USD", "margin": "%", "won": "KRW"},
                        "scale": {"revenue": "million"},
                        "period": f"{2010 + i % 15}Q{1 + i % 4}",
                    },
                )
            )
    return refs


def _korean(won: int) -> str:
    eok, rest = divmod(won, 10**8)
    cheonman = rest // 10**7
    return f"{eok:,}억 {cheonman}천만 원" if cheonman else f"{eok:,}억 원"


def make_answer(n_claims: int, refs: list[Ref], rng: random.Random) -> str:
    vals = [r for r in refs if r.kind == "valueRef"]
    tables = [r for r in refs if r.kind == "tableRef"]
    parts: list[str] = ["# Findings", ""]
    k = 0
    while k < n_claims:
        if k % 20 == 19:
            t = rng.choice(tables)
            parts += [
                "",
                "| Rank | Company | Period | Revenue (USD million) |",
                "|---|---|---|---|",
            ]
            for row in t.payload["rows"][:3]:
                parts.append(f"| {row[3]} | {row[0]} | {row[1]} | {row[2]:,.1f} | [{t.id}]")
                k += 1
            parts.append("")
            continue
        r = rng.choice(vals)
        v = r.payload["values"]
        y, q = r.payload["period"].split("Q")
        style = k % 4
        if style == 0:
            s = (
                f"In Q{q} {y} revenue was ${v['revenue']:,.1f} million at a "
                f"{v['margin']:.1f}% margin [{r.id}]."
            )
        elif style == 1:
            s = f"- Revenue reached ${v['revenue'] / 1000:,.2f} billion in {y}, above plan [{r.id}]"
        elif style == 2:
            s = f"{y}년 {q}분기 매출은 {_korean(v['won'])}, 이익률은 {v['margin']:.2f}%였다 [{r.id}]."
        else:
            r2 = rng.choice(vals)
            s = (
                f"Margins were {v['margin']:.1f}% and {r2.payload['values']['margin']:.1f}% "
                f"for the two units [{r.id}][{r2.id}]."
            )
        parts.append(s)
        k += 1
    return "\n".join(parts)


def median_ms(answer: str, refs: list[Ref], repeat: int) -> tuple[float, float, bool]:
    """Median wall-clock and CPU (process) ms of ``check_answer``; CPU time is the steadier figure
    on a shared machine."""
    wall, cpu = [], []
    report = None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        report = check_answer(answer, refs)
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - t0) * 1000)
    assert report is not None
    return statistics.median(wall), statistics.median(cpu), report.passed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    rng = random.Random(7)
    refs = make_refs(rng)
    print(f"refs: {len(refs)}")
    print(
        f"{'claims':>7} {'words':>7} {'wall ms':>9} {'cpu ms':>8} {'cpu ms/claim':>13} {'passed':>7}"
    )
    cpu_at: dict[int, float] = {}
    for n in (20, 50, 100, 200, 500, 1000, 2000):
        answer = make_answer(n, refs, random.Random(n))
        wall, cpu, passed = median_ms(answer, refs, args.repeat)
        cpu_at[n] = cpu
        words = len(answer.split())
        print(f"{n:>7} {words:>7} {wall:>9.2f} {cpu:>8.2f} {cpu / n:>13.3f} {passed!s:>7}")
    print(
        f"cpu time 200 vs 20 claims: x{cpu_at[200] / cpu_at[20]:.1f}; "
        f"2000 vs 200 claims: x{cpu_at[2000] / cpu_at[200]:.1f} (linear = x10)"
    )


if __name__ == "__main__":
    main()
