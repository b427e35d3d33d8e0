"""Outbound by content on real data: how often workspace values leave, how often honest text is
refused, and what a check costs.

The workspace is the sample (examples/us-macro: statsmodels macro data, BLS CPI and
employment, H.15 10-year yields, S&P 500 financials; real published figures). Each check is
``check_outbound_text`` as WebSearch runs it before any untrusted read (no refs: only the
datasets count), so every refusal below comes from the datasets.

- **leaks refused**: ``--values`` values drawn from the datasets' numeric cells (seeded; at
  least 4 significant digits), each written in every form (``number_forms``) inside a query.
- **honest text passed**: ordinary search queries with no workspace numbers (written for this
  benchmark, not tuned on), the sample's eval questions sent as written by the person (their
  own numbers are trusted), and random numbers of 4-6 significant digits that are not in the
  data (how often one collides with a dataset value by chance).

Run: ``python benchmarks/outbound_by_content.py`` (about a minute on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from decimal import Decimal
from pathlib import Path

import pandas as pd

from refgate.tools.dataset_values import DatasetValues
from refgate.tools.outbound import check_outbound_text
from refgate.workspace import load_workspace

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "us-macro"
HONEST = [
    "US unemployment rate forecast",
    "Federal Reserve interest rate decision December 2024",
    "S&P 500 earnings growth 2024",
    "top 10 banks by total assets",
    "10-year treasury yield trend",
    "CPI inflation outlook 2025",
    "Great Recession GDP decline causes",
    "labor force participation rate aging",
    "FOMC statement forward guidance 2012",
    "Apple market capitalization history",
    "energy sector dividend yields",
    "real interest rate negative 1970s",
    "M1 money supply definition change 2020",
    "quantitative easing effect on yields",
    "price to earnings ratio tech stocks bubble",
    "Volcker disinflation 1980 1982",
    "employment population ratio prime age",
    "consumer spending share of GDP",
    "Nasdaq 100 vs S&P 500 returns",
    "inflation expectations survey University of Michigan",
]
FORMS = {
    "plain": lambda v: f"{v}",
    "thousands separators": lambda v: f"{Decimal(v):,f}",
    "European separators": lambda v: f"{Decimal(v):,f}".replace(",", " ").replace(".", ","),
    "space-split digits": lambda v: str(v).replace(".", " "),
    "digit run (point dropped)": lambda v: str(v).replace(".", ""),
    "currency prefix": lambda v: f"USD{v}",
    "scale word (thousand)": lambda v: f"{Decimal(v).scaleb(-3).normalize():f} thousand",
    "3 significant digits + scale": lambda v: f"{float(f'{float(v):.3g}') / 1000:g}k",
}


def sampled_values(ws, n: int, rng: random.Random) -> list[str]:
    pool: list[str] = []
    for spec in ws.datasets.values():
        frame = pd.read_csv(spec.checked_path())
        for col in frame.select_dtypes("number").columns:
            for value in frame[col].dropna().tolist():
                text = repr(float(value)).removesuffix(".0")
                digits = text.replace(".", "").replace("-", "").strip("0")
                if len(digits) >= 4 and abs(float(value)) >= 1:
                    pool.append(text.lstrip("-"))
    return rng.sample(sorted(set(pool)), min(n, len(set(pool))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--values", type=int, default=60)
    parser.add_argument("--random", type=int, default=200)
    args = parser.parse_args()
    ws = load_workspace(SAMPLE)
    datasets = DatasetValues.of(ws)
    rng = random.Random(46)
    times: list[float] = []

    def refused(text: str, trusted: list[str] | None = None) -> bool:
        t0 = time.perf_counter()
        why = check_outbound_text(
            text, to="search", untrusted_turn=False, trusted=trusted or [], datasets=datasets
        )
        times.append(time.perf_counter() - t0)
        return why is not None

    values = sampled_values(ws, args.values, rng)
    print(f"## leaks refused ({len(values)} dataset values x {len(FORMS)} forms)\n")
    print("| form | refused |\n|---|---|")
    total = hit = 0
    for name, form in FORMS.items():
        got = sum(refused(f"revenue {form(v)}") for v in values)
        total, hit = total + len(values), hit + got
        print(f"| {name} | {got}/{len(values)} |")
    print(f"| **all** | **{hit}/{total} ({hit / total:.1%})** |\n")

    print("## honest text passed\n")
    honest = sum(not refused(q) for q in HONEST)
    print(f"- ordinary queries without workspace numbers: {honest}/{len(HONEST)} passed")
    for q in HONEST:
        if refused(q):
            print(f"  - refused: {q!r}")
    evals = [json.loads(x)["question"] for x in (SAMPLE / "eval.jsonl").read_text().splitlines()]
    ok = sum(not refused(q, [q]) for q in evals)
    print(f"- the sample's eval questions, sent as the person wrote them: {ok}/{len(evals)} passed")
    present = {Decimal(v) for v in sampled_values(ws, 10**6, random.Random(0))}
    randoms: list[str] = []
    while len(randoms) < args.random:
        digits = rng.randint(4, 6)
        v = Decimal(rng.randint(10 ** (digits - 1), 10**digits - 1)).scaleb(-rng.randint(0, 3))
        if v not in present:
            randoms.append(f"{v:f}")
    collide = sum(refused(f"estimate {v}") for v in randoms)
    print(
        f"- random numbers of 4-6 significant digits not in the data: {collide}/{len(randoms)} "
        f"refused ({collide / len(randoms):.1%}: a chance match at the text's precision)"
    )
    times.sort()
    print(
        f"\ncheck time over {len(times)} checks (5 datasets, {sum(1 for _ in ws.datasets)} files): "
        f"median {times[len(times) // 2] * 1000:.0f} ms, p95 {times[int(len(times) * 0.95)] * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
