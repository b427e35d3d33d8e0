"""Stage 2 of the GATE: find what each claim states: its numbers, dates, periods and rankings.

Input: the claims (stage 1, ``markdown.Claims``). Output: one ``ClaimMentions`` per claim
(``find_mentions``).

``scan_units`` reads every unit (sentence, list item, heading, table row) scanner by scanner:
rankings, dates and "as of" phrases, then numbers outside the name, ranking and date spans; a
table cell's numbers take its column header's unit.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from .dates import find_as_of, find_dates
from .markdown import Cell, Unit
from .names import NamePattern
from .numbers import Num, dec_step, find_numbers, span_test
from .ranking import ranks
from .units import parse_unit

_DIGIT = re.compile(r"\d")


@dataclasses.dataclass(slots=True)
class Mention:
    """One number, date or ranking a claim states."""

    kind: str  # number | date | ranking
    text: str
    num: Num | None = None
    keys: tuple[str, ...] = ()
    #: A table cell's column header ("" in prose): part of what the cell's number measures.
    header: str = ""


def _with_header(num: Num, header: str) -> Num:
    """Apply a table column header's unit ("Revenue (USD bn)", "Margin (%)") to a bare cell."""
    if num.has_scale or num.kind != "plain" or not header:
        return num
    hu = parse_unit(header)
    # Num(...) directly: dataclasses.replace is several times slower.
    if hu.kind in ("percent", "bp", "x"):
        return Num(
            num.text, num.start, num.end, num.shown, num.step, num.scale, num.has_scale,
            hu.kind, num.signed, num.currency,
        )  # fmt: skip
    if hu.has_scale:
        return Num(
            num.text, num.start, num.end, num.shown, num.step, hu.scale, True,
            num.kind, num.signed, num.currency,
        )  # fmt: skip
    return num


#: What an "as of" / "as at" phrase (``dates.find_as_of``, case-insensitive) holds once lower-cased
#: ("ſ" is a case form of "s"): most texts' "as" ("was", "has") is followed by no "of" or "at".
_AS_OF_HINT = re.compile(r"a[sſ]\s+(?:of|at)")


def _mentions_batch(
    texts: list[str], headers: list[str] | None = None, names: NamePattern | None = None
) -> list[list[Mention]]:
    """The mentions of each text: rankings, dates, "as of" phrases, then numbers (outside the
    name, ranking and date spans), each cell's numbers taking its column header's unit
    (``headers``). ``names`` matches names that contain numbers ("S&P 500": not a claim).

    Each scanner runs over all the texts before the next one starts: one kind of work at a time
    keeps its patterns and code hot in the CPU caches (see ``check_answer``)."""
    lows = [t.lower() for t in texts]
    outs: list[list[Mention]] = [[] for _ in texts]
    has_digit = [_DIGIT.search(t) is not None for t in texts]
    if names is not None:
        masks: list[list[tuple[int, int]]] = [
            names.spans(t, low) if d else []
            for t, low, d in zip(texts, lows, has_digit, strict=True)
        ]
    else:
        masks = [[] for _ in texts]
    for text, low, out, masked in zip(texts, lows, outs, masks, strict=True):
        for a, b, rtext in ranks(text, low):
            out.append(Mention("ranking", rtext))
            masked.append((a, b))
    # Without a digit the only possible date is an ordinal quarter with no year ("first quarter").
    all_dms = [
        find_dates(t) if d or "quarter" in low else []
        for t, low, d in zip(texts, lows, has_digit, strict=True)
    ]
    for dms, out, masked in zip(all_dms, outs, masks, strict=True):
        # Dates never overlap one another (find_dates reads on after each), so a date is masked
        # only by a name or ranking span.
        in_rank = span_test(list(masked)) if masked else None
        for dm in dms:
            start = dm.start
            if in_rank is not None and in_rank(start):
                continue
            out.append(Mention("date", dm.text, None, dm.keys))
            masked.append((start, dm.end))
    for text, low, dms, out in zip(texts, lows, all_dms, outs, strict=True):
        # "as of" / "as at" / 기준 / 현재 (the case-insensitive "as" is [aA][sSſ]).
        if (("as" in low or "aſ" in low) and _AS_OF_HINT.search(low) is not None) or (
            "기준" in text or "현재" in text
        ):
            for a, b in find_as_of(text):
                if not any(b <= d.start <= b + 40 for d in dms):
                    out.append(Mention("date", text[a:b], keys=("asof",)))
    for i, (text, out, masked) in enumerate(zip(texts, outs, masks, strict=True)):
        if has_digit[i]:
            header = headers[i] if headers else ""
            for num in find_numbers(text, masked):
                # Positional arguments: a keyword call of the dataclass __init__ costs more.
                out.append(
                    Mention(
                        "number",
                        num.text.strip(),
                        _with_header(num, header) if header else num,
                        (),
                        header,
                    )
                )
    return outs


@dataclasses.dataclass(frozen=True, slots=True)
class ClaimMentions:
    """What stage 2 found in one claim: its mentions in order and, for a table row, its
    identifier cells (the cells with letters and no mention, lower-cased)."""

    unit: Unit
    mentions: list[Mention]
    row_labels: list[str]


def find_mentions(units: list[Unit], names: NamePattern | None = None) -> list[ClaimMentions]:
    """The mentions of every claim (``scan_units``), each beside its claim."""
    return [
        ClaimMentions(unit, mentions, labels)
        for unit, (mentions, labels) in zip(units, scan_units(units, names), strict=True)
    ]


#: A table cell holding one plain number ("1,234.5", "17", ".5"): read directly, as
#: ``_mentions_batch`` would (a cell starting 19 or 20 may be a year, so it takes the full path).
_PLAIN_CELL = re.compile(r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+")


def _plain_cell(text: str, header: str) -> Mention | None:
    if _PLAIN_CELL.fullmatch(text) is None or text.startswith(("19", "20")):
        return None
    digits = text.replace(",", "") if "," in text else text
    step = dec_step(digits)
    num = Num(text, 0, len(text), float(digits), step, 1.0, False, "plain", False)
    return Mention("number", text, _with_header(num, header), (), header)


def scan_units(
    units: list[Unit], names: NamePattern | None = None
) -> list[tuple[list[Mention], list[str]]]:
    """Mentions of each unit, and (for table rows) its identifier cells."""
    prose = [u.text for u in units if u.cells is None]
    prose_found = iter(_mentions_batch(prose, None, names))
    # Table cells: rank and period cells, and plain numbers, are read here; the rest are
    # scanned in one batch, then each row's mentions are put back together in cell order.
    cell_texts: list[str] = []
    cell_heads: list[str] = []
    plans: list[list[tuple[str, Any, Cell]]] = []
    for u in units:
        if u.cells is None:
            continue
        plan: list[tuple[str, Any, Cell]] = []
        for cell in u.cells:
            if not cell.text:
                continue
            if cell.rank:
                plan.append(
                    ("direct", [Mention("ranking", f"{cell.header or 'rank'} {cell.text}")], cell)
                )
                continue
            if cell.period:
                found = find_dates(cell.text)
                if found:
                    plan.append(
                        ("direct", [Mention("date", d.text, None, d.keys) for d in found], cell)
                    )
                    continue
            plain = _plain_cell(cell.text, cell.header)
            if plain is not None:
                plan.append(("direct", [plain], cell))
                continue
            plan.append(("scan", len(cell_texts), cell))
            cell_texts.append(cell.text)
            cell_heads.append(cell.header)
        plans.append(plan)
    cells_found = _mentions_batch(cell_texts, cell_heads, names) if cell_texts else []
    rows = iter(plans)
    out: list[tuple[list[Mention], list[str]]] = []
    for u in units:
        if u.cells is None:
            out.append((next(prose_found), []))
            continue
        mentions: list[Mention] = []
        labels: list[str] = []
        for how, what, cell in next(rows):
            if how == "direct":
                mentions.extend(what)
                continue
            ms = cells_found[what]
            if not ms and any(ch.isalpha() for ch in cell.text):
                labels.append(cell.text.lower())
            mentions.extend(ms)
        out.append((mentions, labels))
    return out
