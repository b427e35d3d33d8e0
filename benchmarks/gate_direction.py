"""GATE direction words on real annual-report tables (TAT-QA dev, CC BY 4.0): does a claim that
states a direction ("fell 5%", "rose 5%") pass where the cited change has that direction, and
block where it has the other?

Run: ``python benchmarks/gate_direction.py [--dir ../shared/data/tatqa-dev] [--part tuning]``.
Tables become tableRefs as in ``gate_binding.py`` (and are split the same way: held-out =
``held_out(uid)``). Claims:

- **change column**: a cell of a column headed as a change ("% Change", "Increase (Decrease)",
  "Variance", "2019 vs. 2018") worded with its row label and a direction: the cell's own
  ("<label> fell 5% [tbl]." for -5; must pass) and the other ("<label> rose 5% [tbl]." for -5;
  must block), the verbs rotated (fell / decreased by / declined / was ... lower; rose /
  increased by / grew / was up);
- **change row**: the same for a cell of a row labelled as a change of its own quantity ("Total
  growth", "Net increase (decrease) in cash", "Change in valuation allowance") under a year
  column, with its year;
- **level with direction**: a positive cell of a year column of any other row, as a level
  reached: "<label> fell to V in <year> [tbl]." and "... rose to V ..." (both must pass);
- **change then level**: where a row has a change column and the latest year's level, "<label>
  fell 5% to V in <year> [tbl]." in the right direction (must pass) and the other (must block);
- **question**: TAT-QA arithmetic questions asking a percentage change whose answer is a cell of
  the table: "The <what> rose/fell <answer>% [tbl]." right (must pass) and reversed (must block);
- **noun, change column / change row**: the same changes stated with nouns, after the label
  ("<label> saw a decline of 5%", "posted growth of 5%", "had a 5% reduction") and as the
  subject ("The decline in <label> was 5%"), rotated as the verbs are.

Rates are printed per part and group, with examples of each failure kind.
"""

from __future__ import annotations

import re
import sys

from gate_binding import _label, _shown, _value, table_ref
from shared.claim_scores import Claim, score_tatqa_claims
from shared.tatqa_tables import YEAR, number_cell

#: A header or row label that names a change (the benchmark's own reading, broader than the
#: GATE's: what a reader would call a change column).
_CHANGE = re.compile(
    r"chang|growth|increase|decrease|varian|variation|differen|\bvs\b|versus|yoy|y/y", re.I
)
#: A row label that names a change of its own quantity ("Total growth", "Net increase (decrease)
#: in cash", "Change in valuation allowance"; not "Rate of compensation increase", a level).
_CHANGE_ROW = re.compile(
    r"^(?:net |total )?(?:changes?|increase|decrease|growth)\b|\bgrowth$|% change|change \(%\)",
    re.I,
)
_FALLS = ("fell {}", "decreased by {}", "declined {}", "was {} lower")
_RISES = ("rose {}", "increased by {}", "grew {}", "was up {}")
#: The same directions stated with nouns ("saw a decline of 5%", "The decline in X was 5%").
_FALL_NOUNS = ("saw a decline of {}", "posted a decrease of {}", "had a {} reduction",
               "recorded a drop of {}")  # fmt: skip
_RISE_NOUNS = ("saw an increase of {}", "posted growth of {}", "had a {} gain",
               "recorded a rise of {}")  # fmt: skip
_SUBJECT_NOUNS = ({True: "increase", False: "decline"}, {True: "growth", False: "decrease"},
                  {True: "rise", False: "drop"}, {True: "gain", False: "reduction"})  # fmt: skip
_PCT_QUESTION = re.compile(r"percentage change|% change|percent change|change in percentage", re.I)
_WHAT = re.compile(r"(?:percentage|percent|%) change (?:in|of) (?:the )?(.+?)(?: from| between|$)")


def _magnitude(cell: str, percent: bool) -> str:
    """A cell's size as a writer states it after a direction word ("5%", "$1,234")."""
    c = _shown(cell).replace("(", "").replace(")", "").replace("-", "").strip()
    c = c.replace("$ ", "$")
    if percent and not c.endswith("%"):
        c += "%"
    return c


def _percent(head: str, label: str, cell: str) -> bool:
    return "%" in cell or any("%" in x or "percent" in x.lower() for x in (head, label))


def _directed(value: float, size: str, i: int, reverse: bool) -> str:
    up = (value > 0) != reverse
    verbs = _RISES if up else _FALLS
    return verbs[i % len(verbs)].format(size)


def _noun_claims(label: str, value: float, size: str, i: int, reverse: bool) -> list[str]:
    """A change stated with a noun: after the label ("<label> saw a decline of 5%") and as the
    subject ("The decline in <label> was 5%")."""
    up = (value > 0) != reverse
    after = (_RISE_NOUNS if up else _FALL_NOUNS)[i % len(_FALL_NOUNS)].format(size)
    noun = _SUBJECT_NOUNS[i % len(_SUBJECT_NOUNS)][up]
    return [f"{label} {after}", f"The {noun} in {label} was {size}"]


def claims_of(ctx: dict) -> list[Claim]:
    """(group, cited ref, claim, should pass) for one table."""
    ref, cols, rows = table_ref(ctx)
    out: list[tuple[str, str, bool]] = []
    change_cols = [j for j, c in enumerate(cols) if j and _CHANGE.search(c)]
    years = [j for j, c in enumerate(cols) if j and YEAR.match(c.strip()[-4:])]
    years = [j for j in years if j not in change_cols]
    latest = max(years, key=lambda j: cols[j].strip()[-4:]) if years else None
    labels = [_label(row[0]) if row else "" for row in rows]
    k = 0
    for r, row in enumerate(rows):
        label = labels[r]
        if not re.search(r"[A-Za-z]", label) or labels.count(label) > 1:
            continue
        change_row = bool(_CHANGE_ROW.search(label))
        for j in change_cols:
            if j >= len(row) or not number_cell(row[j]) or _value(row[j]) == 0:
                continue
            v = _value(row[j])
            size = _magnitude(row[j], _percent(cols[j], label, row[j]))
            for reverse in (False, True):
                verb = _directed(v, size, k, reverse)
                group = "change column: " + ("reversed" if reverse else "right")
                group += " (value +)" if v > 0 else " (value -)"
                out.append((group, f"{label} {verb} [{ref.id}].", not reverse))
                for claim in _noun_claims(label, v, size, k, reverse):
                    out.append(("noun, " + group, f"{claim} [{ref.id}].", not reverse))
            k += 1
            if latest is not None and latest < len(row) and number_cell(row[latest]):
                level = _value(row[latest])
                year = cols[latest].strip()[-4:]
                if level > 0 and size.endswith("%"):
                    for reverse in (False, True):
                        verb = _directed(v, size, 0, reverse).replace(" by ", " ")
                        out.append(
                            (
                                "change then level: " + ("reversed" if reverse else "right"),
                                f"{label} {verb} to {_shown(row[latest])} in {year} [{ref.id}].",
                                not reverse,
                            )
                        )
        for j in years:
            if j >= len(row) or not number_cell(row[j]) or _value(row[j]) == 0:
                continue
            v = _value(row[j])
            year = cols[j].strip()[-4:]
            if change_row:
                size = _magnitude(row[j], _percent(cols[j], label, row[j]))
                for reverse in (False, True):
                    verb = _directed(v, size, k, reverse)
                    group = "change row: " + ("reversed" if reverse else "right")
                    group += " (value +)" if v > 0 else " (value -)"
                    out.append((group, f"{label} {verb} in {year} [{ref.id}].", not reverse))
                    for claim in _noun_claims(label, v, size, k, reverse):
                        out.append(
                            ("noun, " + group, f"{claim} in {year} [{ref.id}].", not reverse)
                        )
                k += 1
            elif v > 0 and j == latest:
                shown = _shown(row[j])
                for verb in ("fell to", "rose to"):
                    out.append(
                        (
                            "level with direction",
                            f"{label} {verb} {shown} in {year} [{ref.id}].",
                            True,
                        )
                    )
    for q in ctx["questions"]:
        if q["answer_type"] != "arithmetic" or not _PCT_QUESTION.search(q["question"]):
            continue
        try:
            ans = float(str(q["answer"]).replace(",", ""))
        except ValueError:
            continue
        hits = [
            (r, j)
            for r, row in enumerate(rows)
            for j in range(1, len(row))
            if number_cell(row[j]) and abs(_value(row[j]) - ans) < 0.005 + abs(ans) * 1e-4
        ]
        m = _WHAT.search(q["question"].rstrip("?"))
        if len(hits) != 1 or not m or ans == 0:
            continue
        size = f"{abs(ans):g}%"
        for reverse in (False, True):
            verb = _directed(ans, size, 0, reverse)
            out.append(
                (
                    "question: " + ("reversed" if reverse else "right"),
                    f"The {m.group(1)} {verb} [{ref.id}].",
                    not reverse,
                )
            )
    return [(group, ref, claim, ok) for group, claim, ok in out]


if __name__ == "__main__":
    sys.exit(score_tatqa_claims(claims_of, examples=4, group_width=40))
