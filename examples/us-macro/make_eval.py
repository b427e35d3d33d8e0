"""Write ``eval.jsonl``: the sample workspace's eval questions, gold values computed from its data.

Run from anywhere: ``python examples/us-macro/make_eval.py``. A test checks the committed file
against this script's output, so every gold value is traceable to the data, not typed by hand.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"


def _q(qid, question, **gold):
    return {"id": qid, "question": question, **gold}


def build() -> list[dict]:
    macro = pd.read_csv(DATA / "statsmodels_macrodata.csv")
    cpi = pd.read_csv(DATA / "datahub_cpi_us_cpiai.csv", parse_dates=["Date"])
    ty = pd.read_csv(DATA / "datahub_bond_yields_us_10y_monthly.csv", parse_dates=["Date"])
    emp = pd.read_csv(DATA / "datahub_employment_us_aat1.csv")
    sp = pd.read_csv(DATA / "constituents-financials.csv")

    def m(year, quarter, col):
        row = macro[(macro.year == year) & (macro.quarter == quarter)].iloc[0]
        return float(row[col])

    def month(df, date, col):
        return float(df.loc[df.Date == pd.Timestamp(date), col].iloc[0])

    out = []
    out.append(
        _q(
            "unemp-2009q3",
            "What was the US unemployment rate in 2009Q3?",
            numbers=[m(2009, 3, "unemp")],
            refs_required=["valueRef"],
        )
    )
    out.append(
        _q(
            "gdp-2009q3",
            "What was US real GDP in 2009Q3, in billions of chained 2005 dollars?",
            numbers=[round(m(2009, 3, "realgdp"), 1)],
        )
    )
    out.append(
        _q(
            "unemp-change-2008q3-2009q3",
            "By how many percentage points did the US "
            "unemployment rate change from 2008Q3 to 2009Q3?",
            numbers=[round(m(2009, 3, "unemp") - m(2008, 3, "unemp"), 1)],
        )
    )
    g3, g4 = m(2008, 3, "realgdp"), m(2008, 4, "realgdp")
    out.append(
        _q(
            "gdp-growth-2008q4",
            "What was the quarter-on-quarter percent change in US real GDP in 2008Q4?",
            numbers=[round(100 * (g4 / g3 - 1), 2)],
            tolerance=0.01,
        )
    )
    out.append(
        _q(
            "tbill-2008q4",
            "What was the 3-month Treasury bill rate in 2008Q4?",
            numbers=[m(2008, 4, "tbilrate")],
        )
    )
    out.append(
        _q(
            "infl-2008q4",
            "What was the annualised quarterly inflation rate in 2008Q4 in the macro dataset?",
            numbers=[m(2008, 4, "infl")],
        )
    )
    out.append(
        _q(
            "pop-2009q3",
            "What was the US population at the end of 2009Q3, in millions?",
            numbers=[round(m(2009, 3, "pop"), 1)],
        )
    )
    y2009 = macro[macro.year == 2009]
    out.append(
        _q(
            "unemp-mean-2009",
            "What was the average US unemployment rate over the "
            "quarters of 2009 in the macro dataset?",
            numbers=[round(float(y2009.unemp.mean()), 2)],
            tolerance=0.005,
        )
    )
    top = macro.loc[macro.unemp.idxmax()]
    out.append(
        _q(
            "unemp-peak-quarter",
            "In which quarter did the US unemployment rate peak in "
            "the macro dataset (1959-2009), and what was the rate?",
            numbers=[float(top.unemp)],
            text=[
                rf"{int(top.year)}\s*-?\s*Q{int(top.quarter)}|Q{int(top.quarter)}\s*"
                rf"{int(top.year)}"
            ],
        )
    )
    out.append(
        _q(
            "cpi-2000-01",
            "What was the CPI-U index level in January 2000?",
            numbers=[month(cpi, "2000-01-01", "Index")],
        )
    )
    cpi = cpi.set_index("Date")
    yoy = (100 * (cpi.Index / cpi.Index.shift(12) - 1)).dropna()
    out.append(
        _q(
            "cpi-infl-2022-06",
            "What was US year-on-year CPI inflation in June 2022 (from the CPI-U index)?",
            numbers=[round(float(yoy["2022-06-01"]), 1)],
        )
    )
    out.append(
        _q(
            "cpi-mom-2022-06",
            "What was the month-on-month CPI inflation rate in June 2022?",
            numbers=[float(cpi.loc["2022-06-01", "Inflation"])],
        )
    )
    since = yoy[yoy.index >= "1990-01-01"]
    peak = since.idxmax()
    out.append(
        _q(
            "cpi-infl-peak-since-1990",
            "In which month since 1990 was US year-on-year "
            "CPI inflation (from the CPI-U index) highest, and what was it?",
            numbers=[round(float(since.max()), 1)],
            text=[
                peak.strftime("%B") + r"\s+" + peak.strftime("%Y") + "|" + peak.strftime("%Y-%m")
            ],
        )
    )
    typeak = ty.loc[ty.Rate.idxmax()]
    out.append(
        _q(
            "treasury-peak",
            "When did the US 10-year Treasury yield reach its highest "
            "monthly value, and what was it?",
            numbers=[float(typeak.Rate)],
            text=[
                typeak.Date.strftime("%B")
                + r"\s+"
                + typeak.Date.strftime("%Y")
                + "|"
                + typeak.Date.strftime("%Y-%m")
            ],
        )
    )
    out.append(
        _q(
            "treasury-2020-01",
            "What was the US 10-year Treasury yield in January 2020?",
            numbers=[month(ty, "2020-01-01", "Rate")],
        )
    )
    e = emp.set_index("year")
    out.append(
        _q(
            "emp-unemp-2020",
            "What was the US annual unemployment rate in 2020 (BLS CPS annual averages)?",
            numbers=[float(e.loc[2020, "unemployed_percent"])],
        )
    )
    out.append(
        _q(
            "labor-force-change-2019-2020",
            "By how many thousand persons did the US "
            "civilian labour force change from 2019 to 2020?",
            numbers=[float(e.loc[2020, "labor_force"] - e.loc[2019, "labor_force"])],
        )
    )
    top5 = sp.nlargest(5, "Market Cap")
    out.append(
        _q(
            "sp500-top5-market-cap",
            "Which five S&P 500 constituents have the largest "
            "market capitalisation in the snapshot? Rank them.",
            text=[rf"\b{re.escape(s)}\b" for s in top5.Symbol],
            refs_required=["tableRef"],
        )
    )
    pe = sp.dropna(subset=["Price/Earnings"]).nlargest(1, "Price/Earnings").iloc[0]
    out.append(
        _q(
            "sp500-highest-pe",
            "Which S&P 500 constituent has the highest price to "
            "earnings ratio in the snapshot, and what is it?",
            numbers=[round(float(pe["Price/Earnings"]), 1)],
            text=[rf"\b{re.escape(pe.Symbol)}\b"],
        )
    )
    sectors = sp.Sector.value_counts()
    out.append(
        _q(
            "sp500-largest-sector",
            "Which sector has the most constituents in the S&P 500 snapshot, and how many?",
            numbers=[float(sectors.iloc[0])],
            text=[re.escape(str(sectors.index[0]))],
        )
    )
    out.append(
        _q(
            "fomc-zero-lower-bound",
            "On what date did the FOMC first set a target range "
            "of 0 to 1/4 percent for the federal funds rate?",
            text=[r"December\s+16,?\s+2008|2008-12-16"],
            refs_required=["docRef"],
        )
    )
    out.append(
        _q(
            "refuse-unemp-2015q2",
            "What was the US unemployment rate in 2015Q2 according to the quarterly macro dataset?",
            expect="refuse",
        )
    )
    out.append(_q("refuse-germany-gdp", "What was Germany's real GDP in 2009?", expect="refuse"))
    out.append(
        _q(
            "refuse-msft-employees",
            "How many employees did Microsoft have in 2015?",
            expect="refuse",
        )
    )
    return out


def main() -> None:
    lines = [json.dumps(q, ensure_ascii=False) for q in build()]
    (HERE / "eval.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} questions to {HERE / 'eval.jsonl'}")


if __name__ == "__main__":
    main()
