"""GATE binding on real annual-report tables (TAT-QA dev, CC BY 4.0): does a claim's number bind
to the quantity, period and unit kind it names?

Run: ``python benchmarks/gate_binding.py [--dir ../shared/data/tatqa-dev]``. Each table becomes a
tableRef (leading rows without numbers are the header, as in tests/gate/test_tatqa.py; the
table's scale is the one its questions state). Claims, per numeric cell under a year column:

- correct, worded with the row label: "The <row label> was <cell> in <year> [tbl]."
- correct, worded as TAT-QA asks ("What was the X in 2019?" -> "The X was V in 2019 [tbl].") for
  questions answered by one cell of the table;
- the same claims with another row's value of the same year, the same row's value of another
  year, and a unit-kind swap (a percent cell claimed as a dollar amount, any other cell claimed
  as a percentage): each must block.

Tables are split before any tuning by a hash of their id: held-out = sha1(uid) % 5 == 0. Rates
are printed per group for the tuning and held-out parts, with examples of each failure kind.
"""

from __future__ import annotations

import hashlib
import re
import sys

from shared.claim_scores import Claim, score_tatqa_claims
from shared.tatqa_tables import YEAR, column_years, header_and_rows, number_cell

from refgate.refs import Ref
from refgate.retrieval.loaders.base import markdown_table, table_from_rows

_QUESTION = re.compile(
    r"^(?:What|How much) (?:was|is|were|are) (?:the )?(.+?) (?:in|for|during|as at|at) "
    r"(?:fiscal |FY ?)?((?:19|20)\d\d)\s*\??$",
    re.I,
)


def _value(cell: str) -> float:
    digits = re.sub(r"[^\d.]", "", cell)
    v = float(digits) if digits and digits != "." else float("nan")
    return -v if "(" in cell or "-" in cell.strip().lstrip("$ ")[:1] else v


def table_ref(ctx: dict) -> tuple[Ref, list[str], list[list[str]]]:
    cols, rows = header_and_rows(ctx["table"]["table"])
    scales = [q["scale"] for q in ctx["questions"] if q["scale"] in ("thousand", "million")]
    meta = {"source": "TAT-QA dev", "uid": ctx["table"]["uid"]}
    if scales:
        meta["scale"] = max(set(scales), key=scales.count)
    payload = {"columns": cols, "rows": rows, "units": {}, "meta": meta}
    rid = "tbl_" + hashlib.sha1(ctx["table"]["uid"].encode()).hexdigest()[:10]
    return Ref(id=rid, kind="tableRef", payload=payload), cols, rows


def _label(cell: str) -> str:
    """A row label as a writer would use it: no footnote marker ("Working capital (1)")."""
    return re.sub(r"\s*\(\d\)\s*$", "", cell.strip()).rstrip(":").strip()


def _shown(cell: str) -> str:
    return re.sub(r"\$\s+", "$", cell.strip())


def _percent_label(label: str) -> bool:
    """A row label that says its numbers are percentages ("Gross margin (%)", "Effective tax
    rate, percent"): a writer states its bare cells with a "%"."""
    return "%" in label or "percent" in label.lower()


def _as_written(cell: str, percent_row: bool) -> str:
    """A cell as a writer states it: a bare number of a percentage row with its "%"."""
    c = _shown(cell)
    if percent_row and not c.endswith("%") and "$" not in c:
        return c + "%"
    return c


def _swap(cell: str) -> str:
    c = _shown(cell)
    if c.endswith("%"):
        return "$" + c.rstrip("%").strip()
    return c.replace("$", "") + "%"


def claims_of(ctx: dict) -> list[Claim]:
    """(group, cited ref, claim, should pass) for one table."""
    ref, cols, rows = table_ref(ctx)
    years = [j for j, c in enumerate(cols) if YEAR.match(c.strip()[-4:]) and j > 0]
    if len(years) < 2:
        return []
    out: list[tuple[str, str, bool]] = []

    def variants(kind: str, label: str, r: int, j: int) -> None:
        pct = _percent_label(label)
        cell = _as_written(rows[r][j], pct)
        year = cols[j].strip()[-4:]
        v = _value(cell)
        out.append((f"{kind}: correct", f"The {label} was {cell} in {year} [{ref.id}].", True))
        own = {_value(rows[r][k]) for k in range(1, len(rows[r])) if k < len(rows[r])}
        others = [
            rows[o][j]
            for o in range(len(rows))
            if o != r
            and j < len(rows[o])
            and number_cell(rows[o][j])
            and _value(rows[o][j]) != v
            and _value(rows[o][j]) not in own
        ]
        if others:
            bad = others[(r * 7 + j) % len(others)]
            out.append(
                (
                    f"{kind}: other row",
                    f"The {label} was {_as_written(bad, pct)} in {year} [{ref.id}].",
                    False,
                )
            )
        same_col = {
            _value(rows[o][j])
            for o in range(len(rows))
            if j < len(rows[o]) and number_cell(rows[o][j])
        }
        for k in years:
            if year in cols[k]:
                continue  # a split fiscal year ("2018/2019") names both years: no other year
            if k != j and k < len(rows[r]) and number_cell(rows[r][k]):
                w = _value(rows[r][k])
                if w != v and w not in same_col:
                    out.append(
                        (
                            f"{kind}: other year",
                            f"The {label} was {_as_written(rows[r][k], pct)} in {year} [{ref.id}].",
                            False,
                        )
                    )
                    break
        out.append(
            (f"{kind}: unit swap", f"The {label} was {_swap(cell)} in {year} [{ref.id}].", False)
        )

    labels = [_label(row[0]) if row else "" for row in rows]
    for r, row in enumerate(rows):
        label = labels[r]
        # A label shared by rows of several sections ("Granted" under RSUs and PSUs) does not
        # say which row a claim means: not a claim the row label alone can word.
        if not re.search(r"[A-Za-z]", label) or labels.count(label) > 1:
            continue
        for j in years:
            if j < len(row) and number_cell(row[j]):
                variants("row label", label, r, j)
    for q in ctx["questions"]:
        m = _QUESTION.match(q["question"].strip())
        if not m or q["answer_from"] != "table" or q["answer_type"] != "span":
            continue
        if len(q["answer"]) != 1 or not number_cell(str(q["answer"][0])):
            continue
        what, year = m.group(1), m.group(2)
        hits = [
            (r, j)
            for r, row in enumerate(rows)
            for j in years
            if j < len(row)
            and cols[j].strip().endswith(year)
            and _value(row[j]) == _value(str(q["answer"][0]))
        ]
        if len(hits) == 1:
            variants("question wording", what, *hits[0])
    return [(group, ref, claim, ok) for group, claim, ok in out] + shape_claims(ctx)


def loader_ref(ctx: dict, kind: str = "tableRef") -> Ref | None:
    """The table as a loader issues it (issue 47): its first row as the columns (an empty cell
    named "column N"), the rest as rows; as a tableRef, or as a docRef whose excerpt lays the
    table out in markdown rows (a PDF's ruled table)."""
    kept = table_from_rows(ctx["table"]["table"])
    if kept is None:
        return None
    uid = ctx["table"]["uid"]
    if kind == "docRef":
        text = f"The table below is taken from the annual report.\n{markdown_table(kept)}\n"
        rid = "doc_" + hashlib.sha1(uid.encode()).hexdigest()[:10]
        return Ref(id=rid, kind="docRef", payload={"excerpt": text, "source": "report.pdf"})
    rid = "tbl_" + hashlib.sha1((uid + "/loader").encode()).hexdigest()[:10]
    payload = {"columns": kept["columns"], "rows": kept["rows"], "meta": {"source": "TAT-QA"}}
    return Ref(id=rid, kind="tableRef", payload=payload)


_NUMBERED = re.compile(r"\d")
_FOOTNOTE = re.compile(r"\s*\((?:\d|[a-z])\)", re.I)
_DECREASE = re.compile(
    r"\b(?:forfeit\w*|repurchase\w*|impairment\w*|loss(?:es)?|declines?|decreases?"
    r"|cancell?ed|cancellations?|expired|redeemed|retired)\b",
    re.I,
)


def shape_claims(ctx: dict) -> list[Claim]:
    """Issue 47's classes, on the table as a loader issues it: numbered labels, caption-then-
    period headers, repeated periods, sign words, and the caption-then-period claims against
    the same table laid out in a docRef's text."""
    table = ctx["table"]["table"]
    if len(table) < 3 or len(table[0]) < 3:
        return []
    n_head, years, measures = column_years(table)
    year_cols = [j for j in range(1, len(years)) if years[j]]
    if len(year_cols) < 2 or n_head < 1:
        return []
    ref = loader_ref(ctx)
    doc = loader_ref(ctx, "docRef")
    if ref is None or doc is None:
        return []
    body = table[n_head:]
    labels = [_label(_FOOTNOTE.sub("", r[0])) if r else "" for r in body]
    caption_first = not any(YEAR.match(_year(c)) for c in table[0][1:])
    repeated = len({years[j] for j in year_cols}) < len(year_cols)
    out: list[Claim] = []

    def cell(r: int, j: int) -> str | None:
        row = body[r]
        return row[j] if j < len(row) and number_cell(row[j]) else None

    def wording(label: str, r: int, j: int, value: str, verb: str = "was") -> str:
        m = f", {measures[j]}," if repeated and measures[j] else ""
        return f"The {label}{m} {verb} {value} in {years[j]}"

    for r, label in enumerate(labels):
        if not re.search(r"[A-Za-z]", label) or labels.count(label) > 1:
            continue
        numbered = bool(_NUMBERED.search(label))
        decrease = bool(_DECREASE.search(label))
        pct = _percent_label(label)
        for j in year_cols:
            c = cell(r, j)
            if c is None:
                continue
            v = _value(c)
            shown = _as_written(c, pct)
            # a value also in another row or year of this column or row says nothing apart
            col_vals = [_value(x) for x in (cell(o, j) for o in range(len(body))) if x]
            row_vals = [_value(x) for x in (cell(r, k) for k in year_cols) if x]
            if col_vals.count(v) > 1 or row_vals.count(v) > 1:
                continue
            others = [
                o for o in range(len(body))
                if o != r and cell(o, j) and _value(cell(o, j) or "") not in row_vals
                and (not numbered or _NUMBERED.search(labels[o]))
            ]  # fmt: skip
            other_row = cell(others[(r * 7 + j) % len(others)], j) if others else None
            other_year = next(
                (cell(r, k) for k in year_cols
                 if years[k] != years[j] and measures[k] == measures[j] and cell(r, k)
                 and _value(cell(r, k) or "") not in col_vals), None,
            )  # fmt: skip
            other_measure = next(
                (cell(r, k) for k in year_cols
                 if years[k] == years[j] and k != j and measures[k] != measures[j] and cell(r, k)
                 and _value(cell(r, k) or "") not in col_vals + [v]), None,
            )  # fmt: skip
            groups = []
            if numbered:
                groups.append(("numbered labels", ref))
            if caption_first:
                groups.append(("caption-then-period", ref))
                groups.append(("docRef ruled table", doc))
            if repeated:
                groups.append(("repeated periods", ref))
            for group, cited in groups:
                out.append(
                    (
                        f"{group}: correct",
                        cited,
                        f"{wording(label, r, j, shown)} [{cited.id}].",
                        True,
                    )
                )
                if other_row:
                    out.append(
                        (
                            f"{group}: other row",
                            cited,
                            f"{wording(label, r, j, _as_written(other_row, pct))} [{cited.id}].",
                            False,
                        )
                    )
                if other_year:
                    out.append(
                        (
                            f"{group}: other year",
                            cited,
                            f"{wording(label, r, j, _as_written(other_year, pct))} [{cited.id}].",
                            False,
                        )
                    )
                if group == "repeated periods" and other_measure:
                    out.append(
                        (
                            f"{group}: other measure",
                            cited,
                            f"{wording(label, r, j, _as_written(other_measure, pct))} [{cited.id}].",
                            False,
                        )
                    )
            if decrease and v < 0:
                mag = _as_written(c, pct).replace("(", "").replace(")", "").replace("-", "")
                out.append(
                    ("sign words: correct", ref, f"{wording(label, r, j, mag)} [{ref.id}].", True)
                )
                out.append(
                    (
                        "sign words: stated rise",
                        ref,
                        f"{wording(label, r, j, mag, 'rose')} [{ref.id}].",
                        False,
                    )
                )
                plain = [o for o in range(len(body)) if o != r and labels[o] and not _DECREASE.search(labels[o])
                         and labels.count(labels[o]) == 1 and cell(o, j)]  # fmt: skip
                if plain:
                    o = plain[(r + j) % len(plain)]
                    out.append(
                        (
                            "sign words: other row",
                            ref,
                            f"{wording(labels[o], o, j, mag)} [{ref.id}].",
                            False,
                        )
                    )
    return out


def _year(cell: str) -> str:
    c = cell.strip()
    return c[-4:] if len(c) >= 4 else c


if __name__ == "__main__":
    sys.exit(
        score_tatqa_claims(claims_of, examples=3, group_width=32, rate_width=7, detail_chars=200)
    )
