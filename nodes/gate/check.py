"""``check_answer``: bind every claim of an answer to the refs it cites and check the values."""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from refgate.refs import REF_KINDS, Ref, coerce_ref, is_emitted_result

from .dates import find_as_of, find_dates
from .index import DOC_KINDS, NUMERIC_KINDS, RefIndex, build_index, where_text
from .markdown import Cell, Unit, split_units
from .names import NamePattern, check_names, compiled
from .numbers import Num, dec_step, find_numbers, parse_unit, span_test
from .report import ClaimCheck, GateIssue, GateReport, Match, MentionCheck

PRIMARY_SOURCE = "primarySource"
#: Refs of external text: a claim citing one is about a document or page, not about data.
_TEXT_KINDS = frozenset({"docRef", "webRef"})

#: A ranking answer states its universe (the set ranked) ...
_UNIVERSE = re.compile(
    r"\b(?:among|amongst|out of|universe|constituents?|components|members of|of all|across all"
    r"|all (?:the )?(?:listed |\w+ )?(?:companies|firms|stocks|shares|countries|states|banks"
    r"|funds|sectors|industries|issuers|quarters|years|months|periods)"
    r"|in the (?:sample|dataset|index|table)|datasets?|sample of|screened|filtered)\b"
    r"|중에서|가운데|대상|유니버스|구성\s?종목|전체"
)
#: ... and its metric (what it is ranked by), in the text or as the evidence table's value column.
_METRIC = re.compile(
    r"\b(?:ranked|ranks|ranking|rank|sorted|ordered|measured|largest|biggest|highest|lowest"
    r"|smallest|greatest|fewest|top|bottom)\b[^.;\n]{0,60}?\b(?:by|on|in terms of|according to)"
    r"\s+[^\W\d_]"
    r"|\b(?:metric|formula|computed as|calculated as|defined as|measured as)\b"
    r"|기준|지표|계산식|순으로"
)

#: A skill's requiredEvidence item that relaxes external_only_numeric to a warning.
SECONDARY_ALLOWED = "secondaryAllowed"
#: ``secondary_numbers`` values: a number backed only by secondary refs blocks, or warns.
SECONDARY_POLICIES = ("block", "warn")

#: Ranking words, matched on lower-cased text. Every branch starts with a literal character, so
#: the scan is a fast prefix search; word boundaries are checked after the first character.
_RANK = re.compile(
    r"(?=[tbfslghrn#상하최가])(?:"
    r"top(?<![a-z0-9_]top)[\s-]?(?:\d{1,3}|one|two|three|four|five|ten|twenty)\b"
    r"|bottom(?<![a-z0-9_]bottom)[\s-]?(?:\d{1,3}|one|two|three|four|five|ten|twenty)\b"
    r"|(?:first|second|third)(?<![a-z0-9_]first)(?<![a-z0-9_]second)(?<![a-z0-9_]third)"
    r"[\s-](?:largest|biggest|highest|lowest|smallest|greatest|place|position)\b"
    r"|(?:largest|biggest|highest|lowest|smallest|greatest|fewest|ranked|ranks|ranking)\b"
    r"|#\s?\d{1,3}\b|no\.\s?\d{1,3}\b|number\s(?:one|two|three)\b"
    r"|상위(?:\s?\d{1,3}(?:개|위|곳|%)?)?|하위(?:\s?\d{1,3}(?:개|위|곳|%)?)?"
    r"|최대|최고|최저|최소|가장)"
)
_RANK_DIGIT = re.compile(
    r"(?=\d)\d{1,3}(?:(?:st|nd|rd|th)[\s-](?:largest|biggest|highest|lowest|smallest|greatest"
    r"|place|position)\b|\s?위(?!안)|\s?등(?!급))"
)


#: A literal every _RANK match contains: most text holds none, and one search for them is far
#: cheaper than _RANK's scan, whose first characters (t, s, l, h, ...) are everywhere in prose.
_RANK_HINT = re.compile(
    r"top|bottom|first|second|third|largest|biggest|highest|lowest|smallest|greatest|fewest"
    r"|rank|#|no\.|number|상위|하위|최대|최고|최저|최소|가장"
)


def _ranks(text: str, low: str) -> list[tuple[int, int, str]]:
    """Ranking phrases of ``text`` (``low`` is ``text.lower()``) as (start, end, text)."""
    out = []
    if _RANK_HINT.search(low) is not None:
        for m in _RANK.finditer(low):
            s = m.start()
            glued = s and low[s - 1].isascii() and (low[s - 1].isalnum() or low[s - 1] == "_")
            if glued and m.group()[0].isascii() and m.group()[0].isalpha():
                continue
            out.append((s, m.end(), text[s : m.end()]))
    # _RANK_DIGIT needs 위, 등, or an ordinal followed by a superlative (…est), place or position.
    if "위" in low or "등" in low or "est" in low or "place" in low or "position" in low:
        for m in _RANK_DIGIT.finditer(low):
            s = m.start()
            if s and (low[s - 1].isdigit() or low[s - 1] in ".,"):
                continue
            out.append((s, m.end(), text[s : m.end()]))
    return out


_BARE_YEAR = re.compile(r"(?:19|20)\d\d")
_DIGIT = re.compile(r"\d")
_EPS = 1e-14  # float slack, relative; far below any shown precision


@dataclasses.dataclass(slots=True)
class _Mention:
    kind: str  # number | date | ranking
    text: str
    num: Num | None = None
    keys: tuple[str, ...] = ()


def _coerce_refs(refs: Any, issues: list[GateIssue]) -> dict[str, Ref]:
    if refs is None:
        return {}
    if isinstance(refs, Ref):
        refs = [refs]
    items = refs.values() if isinstance(refs, Mapping) else refs
    if not isinstance(items, Iterable) or isinstance(items, str | bytes):
        raise TypeError(f"refs must be a mapping or an iterable of refs, got {type(refs).__name__}")
    out: dict[str, Ref] = {}
    for n, item in enumerate(items):
        if type(item) is Ref:  # the common case, without a call
            out[item.id] = item
            continue
        try:
            ref = coerce_ref(item)
        except (TypeError, ValueError, ValidationError) as exc:
            rid = str(item.get("id", f"#{n}")) if isinstance(item, Mapping) else f"#{n}"
            first = str(exc).splitlines()
            issues.append(
                GateIssue(
                    "invalid_ref",
                    "",
                    f"ref {rid} is not a valid Ref: {' '.join(first[:3])[:300]}",
                    [rid],
                )
            )
            continue
        out[ref.id] = ref
    return out


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


def _mentions_batch(
    texts: list[str], headers: list[str] | None = None, names: NamePattern | None = None
) -> list[list[_Mention]]:
    """The mentions of each text: rankings, dates, "as of" phrases, then numbers (outside the
    name, ranking and date spans), each cell's numbers taking its column header's unit
    (``headers``). ``names`` matches names that contain numbers ("S&P 500": not a claim).

    Each scanner runs over all the texts before the next one starts: one kind of work at a time
    keeps its patterns and code hot in the CPU caches (see ``check_answer``)."""
    lows = [t.lower() for t in texts]
    outs: list[list[_Mention]] = [[] for _ in texts]
    has_digit = [_DIGIT.search(t) is not None for t in texts]
    if names is not None:
        masks: list[list[tuple[int, int]]] = [
            names.spans(t, low) if d else []
            for t, low, d in zip(texts, lows, has_digit, strict=True)
        ]
    else:
        masks = [[] for _ in texts]
    for text, low, out, masked in zip(texts, lows, outs, masks, strict=True):
        for a, b, rtext in _ranks(text, low):
            out.append(_Mention("ranking", rtext))
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
            out.append(_Mention("date", dm.text, keys=dm.keys))
            masked.append((start, dm.end))
    for text, low, dms, out in zip(texts, lows, all_dms, outs, strict=True):
        # "as of" / "as at" / 기준 / 현재 (the case-insensitive "as" is [aA][sSſ]).
        if "as" in low or "aſ" in low or "기준" in text or "현재" in text:
            for a, b in find_as_of(text):
                if not any(b <= d.start <= b + 40 for d in dms):
                    out.append(_Mention("date", text[a:b], keys=("asof",)))
    for i, (text, out, masked) in enumerate(zip(texts, outs, masks, strict=True)):
        if has_digit[i]:
            header = headers[i] if headers else ""
            for num in find_numbers(text, masked):
                out.append(_Mention("number", num.text.strip(), num=_with_header(num, header)))
    return outs


#: A table cell holding one plain number ("1,234.5", "17", ".5"): read directly, as
#: ``_mentions_batch`` would (a cell starting 19 or 20 may be a year, so it takes the full path).
_PLAIN_CELL = re.compile(r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+")


def _plain_cell(text: str, header: str) -> _Mention | None:
    if _PLAIN_CELL.fullmatch(text) is None or text.startswith(("19", "20")):
        return None
    digits = text.replace(",", "") if "," in text else text
    step = dec_step(digits)
    num = Num(text, 0, len(text), float(digits), step, 1.0, False, "plain", False)
    return _Mention("number", text, num=_with_header(num, header))


def _scan_units(
    units: list[Unit], names: NamePattern | None = None
) -> list[tuple[list[_Mention], list[str]]]:
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
                    ("direct", [_Mention("ranking", f"{cell.header or 'rank'} {cell.text}")], cell)
                )
                continue
            if cell.period:
                found = find_dates(cell.text)
                if found:
                    plan.append(
                        ("direct", [_Mention("date", d.text, keys=d.keys) for d in found], cell)
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
    out: list[tuple[list[_Mention], list[str]]] = []
    for u in units:
        if u.cells is None:
            out.append((next(prose_found), []))
            continue
        mentions: list[_Mention] = []
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


def _targets(num: Num, idx: RefIndex):
    v, step = num.shown, num.step
    if num.kind == "percent":
        yield idx.pct, v, 0.5 * step, "percent"
    elif num.kind == "bp":
        yield idx.pct, v / 100.0, 0.5 * step / 100.0, "bp"
    elif num.kind == "x":
        yield idx.x, v, 0.5 * step, "multiple"
    elif num.has_scale:
        yield idx.abs, v * num.scale, 0.5 * step * num.scale, "absolute"
    else:
        yield idx.abs, v, 0.5 * step, "absolute"
        yield idx.disp, v, 0.5 * step, "as displayed"


#: Refs with at most this many numbers are matched by a linear scan of their items; larger ones
#: by bisection in sorted per-basis arrays (built on first use). Both find the same value: the
#: smallest magnitude within the rounding interval, first in payload order on ties.
_LINEAR_MAX = 16


def _match_number(
    num: Num, indexes: list[RefIndex], kinds: frozenset[str] = NUMERIC_KINDS
) -> list[Match]:
    matches: list[Match] = []
    signed, currency = num.signed, num.currency
    kind, v, half = num.kind, num.shown, 0.5 * num.step
    for idx in indexes:
        if idx.ref.kind not in kinds:
            continue
        items = idx.items
        linear = len(items) <= _LINEAR_MAX
        # The bases of _targets, inline (the second, "as displayed", only when the first misses).
        for b in (0, 1):
            if kind == "percent":
                if b:
                    break
                basis_id, target, tol, basis = 2, v, half, "percent"
            elif kind == "bp":
                if b:
                    break
                basis_id, target, tol, basis = 2, v / 100.0, half / 100.0, "bp"
            elif kind == "x":
                if b:
                    break
                basis_id, target, tol, basis = 3, v, half, "multiple"
            elif num.has_scale:
                if b:
                    break
                basis_id, target, tol = 0, v * num.scale, half * num.scale
                basis = "absolute"
            elif b:
                basis_id, target, tol, basis = 1, v, half, "as displayed"
            else:
                basis_id, target, tol, basis = 0, v, half, "absolute"
            a = abs(target)
            tol = tol + _EPS * (a if a > tol else tol)
            lo_mag, hi_mag = a - tol, a + tol
            hit = None
            if linear:
                best = 0.0
                for item in items:
                    val, k = item[0], item[1]
                    if basis_id == 0:
                        if k != "plain" and k != "none":
                            continue
                        canon = val * item[2]
                    elif basis_id == 1:
                        canon = val
                    elif basis_id == 2:
                        if k == "none" or k == "percent":
                            canon = val
                        elif k == "ratio":
                            canon = val * 100.0
                        elif k == "bp":
                            canon = val / 100.0
                        else:
                            continue
                    elif k == "none" or k == "x":
                        canon = val
                    else:
                        continue
                    mag = -canon if canon < 0 else canon
                    if mag < lo_mag or mag > hi_mag or (hit is not None and mag >= best):
                        continue
                    if signed and canon != 0 and (canon < 0) != (target < 0):
                        continue
                    if currency and item[3] and currency != item[3]:
                        continue
                    hit, best = item, mag
            else:
                if basis_id == 0:
                    arr = idx.abs
                elif basis_id == 1:
                    arr = idx.disp
                elif basis_id == 2:
                    arr = idx.pct
                else:
                    arr = idx.x
                keys = arr.keys
                lo = bisect_left(keys, lo_mag)
                hi = bisect_right(keys, hi_mag, lo)
                if lo == hi:
                    continue
                for canon, item in arr.entries[lo:hi]:
                    if signed and canon != 0 and (canon < 0) != (target < 0):
                        continue
                    if currency and item[3] and currency != item[3]:
                        continue
                    hit = item
                    break
            if hit is not None:
                where = hit[4]
                where = where[0].format(*where[1:]) if type(where) is tuple else where
                matches.append(Match(idx.ref.id, f"{where} ({basis})", idx.secondary))
                break
    return matches


def _nearest(num: Num, indexes: list[RefIndex], kinds: frozenset[str] = NUMERIC_KINDS) -> str:
    best: tuple[float, str] | None = None
    for idx in indexes:
        if idx.ref.kind not in kinds:
            continue
        for arr, target, _tol, basis in _targets(num, idx):
            near = arr.nearest(target)
            if near is None:
                continue
            gap = abs(abs(near[0]) - abs(target))
            if best is None or gap < best[0]:
                best = (gap, f"{idx.ref.id} {where_text(near[1][4])} ({basis})")
    return f"; closest cited value: {best[1]}" if best else ""


def _required(
    required_evidence: Sequence[str], kinds: set[str], issues: list[GateIssue]
) -> tuple[bool, bool]:
    """(primarySource required, secondaryAllowed listed); unknown or missing kinds are issues."""
    items = [required_evidence] if isinstance(required_evidence, str) else list(required_evidence)
    primary = relaxed = False
    for item in items:
        if item == PRIMARY_SOURCE:
            primary = True
        elif item == SECONDARY_ALLOWED:
            relaxed = True
        elif item in REF_KINDS:
            if item not in kinds:
                issues.append(
                    GateIssue(
                        "missing_required_evidence",
                        "",
                        f"the selected skills require a {item} and none was issued",
                    )
                )
        else:
            issues.append(
                GateIssue(
                    "unknown_required_evidence",
                    "",
                    f"requiredEvidence item {item!r} is not a ref kind ({', '.join(REF_KINDS)}) "
                    f"nor {PRIMARY_SOURCE!r} / {SECONDARY_ALLOWED!r}",
                )
            )
    return primary, relaxed


_NO_EMITTED = (
    "WORK emitted no result (no valueRef, tableRef or dateRef; a dataset's schema from "
    "InspectDataset is not a result) and the answer states data claims: compute the answer in "
    "WORK and emit it with emit_result, or state no numbers, dates or rankings"
)


#: A proper name or ticker in a claim ("Apple", "AAPL", "S&P"): capitalised, not the first word.
_PROPER = re.compile(r"(?<=[\w,;:)] )[A-Z][\w&.-]*")


def _documented(claim: str, indexes: list[RefIndex]) -> bool:
    """True when a claim cited only to documentation is about what it documents: it names the
    capability, a parameter or the skill, and every proper name it holds is in that
    documentation ("According to top_n, Apple is the largest" names Apple, a data item)."""
    low = claim.lower()
    if not _names_documented(low, indexes):
        return False
    text = "\n".join(i.doc_text for i in indexes)
    names = " ".join(n for i in indexes for n in i.doc_names)
    for m in _PROPER.finditer(claim):
        word = m.group().rstrip(".-").lower()
        if word and word not in text and word not in names:
            return False
    return True


def _names_documented(claim_low: str, indexes: list[RefIndex]) -> bool:
    """True when the claim names something a cited documentation ref documents (as a word)."""
    for idx in indexes:
        for name in idx.doc_names:
            at = claim_low.find(name)
            while at != -1:
                end = at + len(name)
                before = claim_low[at - 1] if at else " "
                after = claim_low[end] if end < len(claim_low) else " "
                if not (before.isalnum() or before == "_") and not (
                    after.isalnum() or after == "_"
                ):
                    return True
                at = claim_low.find(name, at + 1)
    return False


def _ranking_frame(
    units: list[Unit], rank_rows: list[Unit], names: NamePattern | None
) -> list[str]:
    """What a ranking answer leaves unstated: its universe, its metric, the raw values."""
    value_headers: list[str] = []
    for row in rank_rows:
        for c in row.cells or ():
            if c.text and not c.rank and not c.period and _DIGIT.search(c.text) is not None:
                value_headers.append(c.header)
    # Unit by unit, stopping at the first that states it (the frame usually opens the answer).
    universe = False
    metric = any(_has_letters(h) for h in value_headers)
    for u in units:
        if u.cells is not None:
            continue
        low = u.text.lower()
        if not universe:
            universe = _UNIVERSE.search(low) is not None or (
                names is not None and bool(names.spans(u.text, low))
            )
        if not metric:
            metric = _METRIC.search(low) is not None
        if universe and metric:
            break
    missing = []
    if not universe:
        missing.append(
            "its universe (the set ranked, e.g. 'among the S&P 500 constituents' or 'of all "
            "quarters in the dataset')"
        )
    if not metric:
        missing.append("its metric (what it is ranked by, e.g. 'ranked by market capitalization')")
    if rank_rows and not value_headers:
        missing.append("the raw value of the metric in the evidence table (a value column)")
    return missing


def _has_letters(text: str) -> bool:
    return any(ch.isalpha() for ch in text)


def check_answer(
    answer: str,
    refs: Mapping[str, Ref] | Iterable[Ref],
    *,
    required_evidence: Sequence[str] = (),
    require_emitted: bool = False,
    names: Sequence[str] = (),
    secondary_numbers: str = "block",
) -> GateReport:
    """Check every number, date and ranking claim of ``answer`` against the refs it cites.

    Pure and deterministic; see the package docstring for the support rule. ``refs`` may hold
    ``Ref`` objects or their dict form; invalid ones are reported (``invalid_ref``), not raised.
    ``names`` adds names that contain numbers to the built-in list (``names.DEFAULT_NAMES``);
    ``require_emitted`` blocks when WORK emitted no result even if no claim needs one.
    """
    if not isinstance(answer, str):
        raise TypeError(f"answer must be a string, got {type(answer).__name__}")
    name_pat = compiled(check_names(names) if names else ())
    issues: list[GateIssue] = []
    ref_map = _coerce_refs(refs, issues)
    kinds = {r.kind for r in ref_map.values()}
    if secondary_numbers not in SECONDARY_POLICIES:
        raise ValueError(
            f"secondary_numbers must be one of {', '.join(SECONDARY_POLICIES)}, "
            f"got {secondary_numbers!r}"
        )
    primary, relaxed = _required(required_evidence, kinds, issues)
    # Authority: a number whose only support is secondary (web) evidence blocks by default; a
    # skill (secondaryAllowed) or the setting relaxes it, unless a skill requires primarySource.
    secondary_blocks = primary or (secondary_numbers == "block" and not relaxed)
    emitted = any(is_emitted_result(r) for r in ref_map.values())
    if require_emitted and not emitted:
        issues.append(GateIssue("emit_result_missing", "", _NO_EMITTED))
    if not answer.strip():
        issues.append(GateIssue("empty_answer", "", "the answer is empty"))

    units, all_cites = split_units(answer, ref_map)
    lines = answer.splitlines()
    seen_fake: set[tuple[str, int]] = set()
    for tok, line in all_cites:
        if tok in ref_map or (tok, line) in seen_fake:
            continue
        seen_fake.add((tok, line))
        full = [i for i in ref_map if i.startswith(tok) and i != tok]
        why = (
            f"[{tok}] looks truncated (prefix of {full[0]})"
            if full
            else f"[{tok}] is not an id in the ref ledger"
        )
        issues.append(
            GateIssue(
                "fake_ref_token", lines[line].strip() if line < len(lines) else "", why, [tok]
            )
        )

    claims: list[ClaimCheck] = []
    ranking_prose: list[str] = []
    has_rank_table = False
    rank_rows: list[Unit] = []
    data_claim = False
    # Scan every unit, then index every ref a claim cites, then check: one kind of work at a
    # time keeps each phase's patterns and code hot in the CPU caches (claim by claim, between
    # index builds and look-ups, the date-anchor scan ran ~3x slower; this order alone gave x1.3).
    scanned = _scan_units(units, name_pat)
    cache: dict[str, RefIndex] = {}
    for unit, (mentions, _) in zip(units, scanned, strict=True):
        if mentions:
            for c in unit.cites:
                if c not in cache and c in ref_map:
                    cache[c] = build_index(ref_map[c])
    for unit, (mentions, row_labels) in zip(units, scanned, strict=True):
        if not mentions:
            continue
        unit_cites = unit.cites
        if len(unit_cites) == 1:  # the common case, without the de-duplication
            cited = list(unit_cites) if unit_cites[0] in ref_map else []
        else:
            cited = list(dict.fromkeys(c for c in unit_cites if c in ref_map))
        claim_text = unit.claim
        checks: list[MentionCheck] = []
        if unit.cells is not None and any(c.rank and c.text for c in unit.cells):
            has_rank_table = True
            rank_rows.append(unit)
        if not cited:
            data_claim = True
            what = ", ".join(dict.fromkeys(m.text for m in mentions))
            bad = [c for c in unit.cites if c not in ref_map]
            note = "cites only unknown ids" if bad else "no citation"
            issues.append(
                GateIssue(
                    "uncited_claim",
                    claim_text,
                    f"{what}: {note}; cite the ref that holds each value as [refId]",
                    bad,
                )
            )
            checks = [MentionCheck(m.kind, m.text, False, note=note) for m in mentions]
            claims.append(ClaimCheck(claim_text, unit.kind, unit.line, [], checks))
            if unit.cells is None and any(m.kind == "ranking" for m in mentions):
                ranking_prose.append(claim_text)
            continue
        indexes = [cache[c] for c in cited]
        # A claim cited only to documentation (apiRef / skillRef) that names what it documents
        # (the capability, a parameter, the skill) is about a documented behaviour: its numbers
        # must be in that documentation. Any other claim citing data is a data claim.
        doc_only = True
        for i in indexes:
            if i.ref.kind not in DOC_KINDS:
                doc_only = False
                break
        documented = doc_only and _documented(claim_text, indexes)
        if not data_claim and not documented:
            data_claim = not all(i.ref.kind in _TEXT_KINDS for i in indexes)
        num_kinds = DOC_KINDS if doc_only else NUMERIC_KINDS
        table_hits: set[str] = set()
        for m in mentions:
            if m.kind == "number":
                assert m.num is not None
                found = (
                    _match_number(m.num, indexes, num_kinds) if documented or not doc_only else []
                )
                for x in found:
                    table_hits.add(x.ref_id)
                if not found:
                    kinds_cited = ", ".join(f"{i.ref.id} ({i.ref.kind})" for i in indexes)
                    if doc_only and not documented:
                        detail = (
                            f"{m.text} is cited only to documentation ({kinds_cited}) and the "
                            "claim names nothing it documents: a documented default or bound must "
                            "name its capability, parameter or skill; a value from data needs an "
                            "emitted result"
                        )
                    else:
                        detail = (
                            f"{m.text} is not in the cited refs {kinds_cited}"
                            f"{_nearest(m.num, indexes, num_kinds)}"
                            "; the gate does no arithmetic: emit a derived number as its own value"
                        )
                    issues.append(GateIssue("unsupported_numeric_claim", claim_text, detail, cited))
                    checks.append(
                        MentionCheck("number", m.text, False, note="no cited ref holds it")
                    )
                    continue
                internal = any(not x.secondary for x in found)
                if not internal:
                    issues.append(
                        GateIssue(
                            "external_only_numeric",
                            claim_text,
                            f"{m.text} is supported only by secondary refs (web pages: "
                            f"{', '.join(x.ref_id for x in found)}); confirm it from a primary "
                            "source (a dataset, a computation, a workspace document)",
                            [x.ref_id for x in found],
                            "block" if secondary_blocks else "warn",
                        )
                    )
                checks.append(
                    MentionCheck(
                        "number", m.text, True, found, "" if internal else "secondary only"
                    )
                )
            elif m.kind == "date":
                found_d: list[Match] = []
                for idx in indexes:
                    if m.keys == ("asof",):
                        if idx.dates:
                            found_d.append(Match(idx.ref.id, "carries a date / asOf"))
                    elif all(k in idx.dates for k in m.keys):
                        found_d.append(Match(idx.ref.id, f"date {'/'.join(m.keys)}"))
                        table_hits.add(idx.ref.id)
                if not found_d and _BARE_YEAR.fullmatch(m.text):
                    # A bare 1900-2099 reads as a year; a cited ref holding it as a number
                    # (a count of 1,900 written "1900") supports it as that number instead.
                    as_num = Num(m.text, 0, 0, float(m.text), 1.0, 1.0, False, "plain", False)
                    found_d = _match_number(as_num, indexes)
                if not found_d:
                    issues.append(
                        GateIssue(
                            "unsupported_date_claim",
                            claim_text,
                            f"{m.text} ({'/'.join(m.keys)}) is not a date, period or asOf of the "
                            f"cited refs {', '.join(cited)}",
                            cited,
                        )
                    )
                checks.append(MentionCheck("date", m.text, bool(found_d), found_d))
        for m in mentions:
            if m.kind != "ranking":
                continue
            if documented:
                doc_hits = [
                    Match(i.ref.id, "documented behaviour")
                    for i in indexes
                    if _ranks(i.doc_text, i.doc_text)
                ]
                if doc_hits:
                    checks.append(MentionCheck("ranking", m.text, True, doc_hits))
                    continue
            if unit.cells is None:
                ranking_prose.append(claim_text)
            tables = [i for i in indexes if i.ref.kind == "tableRef"]
            ok: list[Match] = []
            low = unit.text.lower()
            for t in tables:
                items = row_labels if unit.cells is not None else None
                if items is not None:
                    hit = any(lbl in t.labels or any(lbl in x for x in t.labels) for lbl in items)
                    hit = hit or (not items and t.ref.id in table_hits)
                else:
                    hit = t.ref.id in table_hits or any(
                        len(lbl) >= 2 and lbl in low for lbl in t.labels
                    )
                if hit:
                    ok.append(Match(t.ref.id, "tableRef rows hold the ranked items"))
            if not ok:
                why = (
                    "cites no tableRef"
                    if not tables
                    else "none of the cited tableRefs' rows contain the ranked items"
                )
                issues.append(
                    GateIssue(
                        "missing_ranking_table_ref",
                        claim_text,
                        f"ranking '{m.text}' {why}; rank from an emitted table and cite it",
                        cited,
                    )
                )
            checks.append(MentionCheck("ranking", m.text, bool(ok), ok))
        claims.append(ClaimCheck(claim_text, unit.kind, unit.line, cited, checks))

    if ranking_prose and not has_rank_table:
        issues.append(
            GateIssue(
                "missing_ranking_table_ref",
                ranking_prose[0],
                "a ranking answer must render the markdown evidence table (identifier, period, "
                "raw value, metric, rank) with each row citing its tableRef",
            )
        )
    if ranking_prose or has_rank_table:
        frame = _ranking_frame(units, rank_rows, name_pat)
        if frame:
            issues.append(
                GateIssue(
                    "missing_ranking_frame",
                    ranking_prose[0] if ranking_prose else rank_rows[0].claim,
                    "a ranking answer must state " + "; ".join(frame) + ". State the universe, "
                    "filter and formula in the text and render the evidence table with "
                    "identifier, period, raw value, metric and rank",
                )
            )
    if data_claim and not emitted and not require_emitted:
        issues.append(GateIssue("emit_result_missing", "", _NO_EMITTED))
    passed = not any(i.severity == "block" for i in issues)
    return GateReport(passed, issues, claims)
