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

from .dates import DateMention, find_as_of, find_dates
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
    batch = _Batch(texts, names)
    batch.rankings()
    dates = batch.dates()
    batch.as_of(dates)
    batch.numbers(headers)
    return batch.outs


class _Batch:
    """Texts being scanned together: each text's mentions so far, and the spans (names,
    rankings, dates) its numbers may not come from."""

    def __init__(self, texts: list[str], names: NamePattern | None) -> None:
        self.texts = texts
        self.lows = [t.lower() for t in texts]
        self.outs: list[list[Mention]] = [[] for _ in texts]
        self.has_digit = [_DIGIT.search(t) is not None for t in texts]
        if names is not None:
            self.masks: list[list[tuple[int, int]]] = [
                names.spans(t, low) if d else []
                for t, low, d in zip(texts, self.lows, self.has_digit, strict=True)
            ]
        else:
            self.masks = [[] for _ in texts]

    def rankings(self) -> None:
        for text, low, out, masked in zip(
            self.texts, self.lows, self.outs, self.masks, strict=True
        ):
            for a, b, rtext in ranks(text, low):
                out.append(Mention("ranking", rtext))
                masked.append((a, b))

    def dates(self) -> list[list[DateMention]]:
        """Each text's dates (outside the name and ranking spans become mentions)."""
        # Without a digit the only possible date is an ordinal quarter with no year ("first
        # quarter").
        all_dms = [
            find_dates(t) if d or "quarter" in low else []
            for t, low, d in zip(self.texts, self.lows, self.has_digit, strict=True)
        ]
        for dms, out, masked in zip(all_dms, self.outs, self.masks, strict=True):
            # Dates never overlap one another (find_dates reads on after each), so a date is
            # masked only by a name or ranking span.
            in_rank = span_test(list(masked)) if masked else None
            for dm in dms:
                start = dm.start
                if in_rank is not None and in_rank(start):
                    continue
                out.append(Mention("date", dm.text, None, dm.keys))
                masked.append((start, dm.end))
        return all_dms

    def as_of(self, all_dms: list[list[DateMention]]) -> None:
        """ "as of" / "as at" / 기준 / 현재 with no date right after (the case-insensitive "as" is
        [aA][sSſ])."""
        for text, low, dms, out in zip(self.texts, self.lows, all_dms, self.outs, strict=True):
            if (("as" in low or "aſ" in low) and _AS_OF_HINT.search(low) is not None) or (
                "기준" in text or "현재" in text
            ):
                for a, b in find_as_of(text):
                    if not any(b <= d.start <= b + 40 for d in dms):
                        out.append(Mention("date", text[a:b], keys=("asof",)))

    def numbers(self, headers: list[str] | None) -> None:
        """The numbers outside the masked spans, a cell's taking its column header's unit."""
        for i, (text, out, masked) in enumerate(
            zip(self.texts, self.outs, self.masks, strict=True)
        ):
            if self.has_digit[i]:
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
    batch = _CellBatch()
    plans = [batch.plan_row(u.cells) for u in units if u.cells is not None]
    cells_found = _mentions_batch(batch.texts, batch.heads, names) if batch.texts else []
    rows = iter(plans)
    out: list[tuple[list[Mention], list[str]]] = []
    for u in units:
        if u.cells is None:
            out.append((next(prose_found), []))
        else:
            out.append(_row_mentions(next(rows), cells_found))
    return out


#: How a cell's mentions are found: read directly, or the index of its text in the scanned batch.
CellPlan = tuple[list[Mention] | int, Cell]


class _CellBatch:
    """The table cells a row scan leaves to the batch scanner: their texts and headers."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.heads: list[str] = []

    def plan_row(self, cells: list[Cell]) -> list[CellPlan]:
        return [(self._plan(cell), cell) for cell in cells if cell.text]

    def _plan(self, cell: Cell) -> list[Mention] | int:
        """A rank cell, a period cell or a plain number is read here; another cell joins the
        batch (its index there)."""
        if cell.rank:
            return [Mention("ranking", f"{cell.header or 'rank'} {cell.text}")]
        if cell.period:
            found = find_dates(cell.text)
            if found:
                return [Mention("date", d.text, None, d.keys) for d in found]
        plain = _plain_cell(cell.text, cell.header)
        if plain is not None:
            return [plain]
        self.texts.append(cell.text)
        self.heads.append(cell.header)
        return len(self.texts) - 1


def _row_mentions(
    plan: list[CellPlan], cells_found: list[list[Mention]]
) -> tuple[list[Mention], list[str]]:
    """A row's mentions in cell order, and its identifier cells (letters and no mention)."""
    mentions: list[Mention] = []
    labels: list[str] = []
    for what, cell in plan:
        if isinstance(what, list):
            mentions.extend(what)
            continue
        ms = cells_found[what]
        if not ms and any(ch.isalpha() for ch in cell.text):
            labels.append(cell.text.lower())
        mentions.extend(ms)
    return mentions, labels
