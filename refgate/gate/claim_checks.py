"""Stage 4 of the GATE: bind each mention of each claim to a place of the refs the claim cites.

Input: the claims with their mentions (stage 2, ``mentions.ClaimMentions``), the cited refs'
indexes (stage 3, ``cited.index_cited``) and the ledger (``evidence.Ledger``). Output: ``Bound``,
each claim's ``ClaimCheck`` and the issues binding found, and what the verdict's ranking rules
read. A number binds as a quantity to one place (``quantity``, ``binding``); a date to a ref's
dates; a ranking to a cited tableRef's rows; a claim cited only to documentation (apiRef,
skillRef) that names what it documents to that documentation (``documented``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .binding import Binder, Vocabulary
from .documented import is_documented
from .evidence import Ledger
from .findings import ClaimCheck, GateIssue, Match, MentionCheck
from .index import DOC_KINDS, NUMERIC_KINDS
from .lookup import RefIndex
from .markdown import Unit
from .matching import match_number, nearest
from .mentions import ClaimMentions, Mention
from .numbers import Num
from .quantity import ClaimWords, Quantity, quantities
from .ranking import ranks
from .row_names import Quoted, inside, named_rows, quoted_rows

#: Refs of external text: a claim citing one is about a document or page, not about data.
_TEXT_KINDS = frozenset({"docRef", "webRef"})

_BARE_YEAR = re.compile(r"(?:19|20)\d\d")


@dataclass(frozen=True, slots=True)
class Bound:
    """What stage 4 found: each claim with mentions and its checks (answer order), the issues of
    those checks, and for the verdict's ranking rules the claims that rank in prose and the
    evidence-table rows with a rank; ``data_claim``: some claim states data (a number, date or
    ranking cited to data, or uncited), so the ledger must hold an emitted result."""

    claims: list[ClaimCheck]
    issues: list[GateIssue]
    ranking_prose: list[str]
    rank_rows: list[Unit]
    data_claim: bool


def bind_claims(
    found: Sequence[ClaimMentions],
    indexes: Mapping[str, RefIndex],
    ledger: Ledger,
    vocabulary: Mapping[str, str] | None,
) -> Bound:
    """Check every claim that states something against the refs it cites, in answer order (a
    claim's metric words carry to the next claim: "It rose 5% in 2020")."""
    checker = _ClaimChecker(ledger, indexes, Binder(Vocabulary(vocabulary)))
    previous: ClaimWords | None = None
    for claim in found:
        if claim.mentions:
            previous = checker.check_claim(claim, previous)
    return checker.bound()


@dataclass(slots=True)
class _Cited:
    """One claim and the refs it cites, while its mentions are checked."""

    unit: Unit
    mentions: list[Mention]
    row_labels: list[str]
    #: The ids it cites that are in the ledger, first citation first.
    cited: list[str]
    indexes: list[RefIndex]
    #: Cited only to documentation (apiRef / skillRef).
    doc_only: bool
    #: ... and about what that documentation documents (``documented.is_documented``).
    documented: bool
    #: The refs its numbers and dates bound to (a ranking in that table ranks their rows).
    table_hits: set[str] = field(default_factory=set)


class _ClaimChecker:
    """The checks of one ``check_answer`` call, claim by claim."""

    def __init__(self, ledger: Ledger, indexes: Mapping[str, RefIndex], binder: Binder) -> None:
        self.ref_map = ledger.refs
        self.secondary_blocks = ledger.secondary_blocks
        self.indexes = indexes
        self.binder = binder
        self.claims: list[ClaimCheck] = []
        self.issues: list[GateIssue] = []
        self.ranking_prose: list[str] = []
        self.rank_rows: list[Unit] = []
        self.data_claim = False

    def bound(self) -> Bound:
        return Bound(self.claims, self.issues, self.ranking_prose, self.rank_rows, self.data_claim)

    def check_claim(self, claim: ClaimMentions, previous: ClaimWords | None) -> ClaimWords | None:
        """Check one claim; returns its metric words (the next claim's ``previous``)."""
        unit = claim.unit
        cited = self._known_cites(unit)
        if unit.cells is not None and any(c.rank and c.text for c in unit.cells):
            self.rank_rows.append(unit)
        if not cited:
            self._uncited(unit, claim.mentions)
            return previous
        at = self._open(claim, cited)
        qs, own = quantities(unit, claim.mentions, claim.row_labels, previous)
        checks = self._numbers_and_dates(at, qs)
        checks += [self._ranking(at, m) for m in at.mentions if m.kind == "ranking"]
        self.claims.append(ClaimCheck(unit.claim, unit.kind, unit.line, cited, checks))
        return own

    def _known_cites(self, unit: Unit) -> list[str]:
        """The ids ``unit`` cites that are in the ledger, once each."""
        unit_cites = unit.cites
        if len(unit_cites) == 1:  # the common case, without the de-duplication
            return list(unit_cites) if unit_cites[0] in self.ref_map else []
        return list(dict.fromkeys(c for c in unit_cites if c in self.ref_map))

    def _open(self, claim: ClaimMentions, cited: list[str]) -> _Cited:
        """The claim with its cited indexes. A claim cited only to documentation (apiRef /
        skillRef) that names what it documents (the capability, a parameter, the skill) is about
        a documented behaviour: its numbers must be in that documentation. Any other claim
        citing data is a data claim."""
        indexes = [self.indexes[c] for c in cited]
        doc_only = (
            indexes[0].ref.kind in DOC_KINDS
            if len(indexes) == 1
            else all(i.ref.kind in DOC_KINDS for i in indexes)
        )
        documented = doc_only and is_documented(claim.unit.claim, indexes)
        if not self.data_claim and not documented:
            self.data_claim = not all(i.ref.kind in _TEXT_KINDS for i in indexes)
        return _Cited(
            claim.unit, claim.mentions, claim.row_labels, cited, indexes, doc_only, documented
        )

    def _numbers_and_dates(self, at: _Cited, qs: list[Quantity]) -> list[MentionCheck]:
        """The checks of the claim's numbers (each stated as its quantity) and dates, in order.
        Numbered row labels the claim quotes ("$500 3.125% notes due 2022") name rows."""
        checks: list[MentionCheck] = []
        q_iter = iter(qs)
        quoted = (
            quoted_rows(at.unit.text, at.indexes)
            if at.unit.cells is None and not at.doc_only
            else []
        )
        for m in at.mentions:
            if m.kind == "number":
                q = next(q_iter) if m.num is not None else None
                checks.append(self._number_in_claim(at, m, q, quoted))
            elif m.kind == "date":
                checks.append(self._date(at, m))
        return checks

    def _number_in_claim(
        self, at: _Cited, m: Mention, q: Quantity | None, quoted: list[Quoted]
    ) -> MentionCheck:
        """A number inside a quoted row label is that label's; any other binds to a place (in
        the rows the quoted labels name, when they name some)."""
        if quoted and m.num is not None:
            label = inside(quoted, m.num.start, m.num.end)
            if label is not None:
                where = f"row label {label.label[:120]!r}"
                match = Match(label.ref_id, where, self.indexes[label.ref_id].secondary)
                return MentionCheck("number", m.text, True, [match])
        rows = named_rows(quoted, m.num.start) if quoted and m.num is not None else None
        return self._number(at, m, q, rows)

    def _number(
        self,
        at: _Cited,
        m: Mention,
        q: Quantity | None,
        rows: Mapping[str, frozenset[int]] | None,
    ) -> MentionCheck:
        """Bind one number to a place of the cited refs (documentation: to its text)."""
        assert m.num is not None and q is not None
        if at.doc_only:
            found = match_number(m.num, at.indexes, DOC_KINDS) if at.documented else []
        else:
            # At most one match per ref (``bind`` keeps the first place of each).
            bound = self.binder.bind(m.num, q, at.indexes, NUMERIC_KINDS, rows)
            if bound.code:
                self.issues.append(GateIssue(bound.code, at.unit.claim, bound.detail, at.cited))
                return MentionCheck("number", m.text, False, note=bound.code)
            found = bound.matches
        for x in found:
            at.table_hits.add(x.ref_id)
        if not found:
            return self._unsupported_number(at, m, m.num)
        return self._supported_number(at, m, found)

    def _unsupported_number(self, at: _Cited, m: Mention, num: Num) -> MentionCheck:
        kinds_cited = ", ".join(f"{i.ref.id} ({i.ref.kind})" for i in at.indexes)
        if at.doc_only and not at.documented:
            detail = (
                f"{m.text} is cited only to documentation ({kinds_cited}) and the "
                "claim names nothing it documents: a documented default or bound must "
                "name its capability, parameter or skill; a value from data needs an "
                "emitted result"
            )
        else:
            kinds = DOC_KINDS if at.doc_only else NUMERIC_KINDS
            detail = (
                f"{m.text} is not in the cited refs {kinds_cited}"
                f"{nearest(num, at.indexes, kinds)}"
                "; the gate does no arithmetic: emit a derived number as its own value"
            )
        self.issues.append(GateIssue("unsupported_numeric_claim", at.unit.claim, detail, at.cited))
        return MentionCheck("number", m.text, False, note="no cited ref holds it")

    def _supported_number(self, at: _Cited, m: Mention, found: list[Match]) -> MentionCheck:
        """Authority: a number only secondary refs back is ``external_only_numeric``."""
        internal = (
            not found[0].secondary if len(found) == 1 else any(not x.secondary for x in found)
        )
        if not internal:
            self.issues.append(
                GateIssue(
                    "external_only_numeric",
                    at.unit.claim,
                    f"{m.text} is supported only by secondary refs (web pages: "
                    f"{', '.join(x.ref_id for x in found)}); confirm it from a primary "
                    "source (a dataset, a computation, a workspace document)",
                    [x.ref_id for x in found],
                    "block" if self.secondary_blocks else "warn",
                )
            )
        return MentionCheck("number", m.text, True, found, "" if internal else "secondary only")

    def _date(self, at: _Cited, m: Mention) -> MentionCheck:
        found_d: list[Match] = []
        for idx in at.indexes:
            if m.keys == ("asof",):
                if idx.dates:
                    found_d.append(Match(idx.ref.id, "carries a date / asOf"))
            elif idx.dates.issuperset(m.keys):
                found_d.append(Match(idx.ref.id, f"date {'/'.join(m.keys)}"))
                at.table_hits.add(idx.ref.id)
        if not found_d and _BARE_YEAR.fullmatch(m.text):
            # A bare 1900-2099 reads as a year; a cited ref holding it as a number
            # (a count of 1,900 written "1900") supports it as that number instead.
            as_num = Num(m.text, 0, 0, float(m.text), 1.0, 1.0, False, "plain", False)
            found_d = match_number(as_num, at.indexes)
        if not found_d:
            self.issues.append(
                GateIssue(
                    "unsupported_date_claim",
                    at.unit.claim,
                    f"{m.text} ({'/'.join(m.keys)}) is not a date, period or asOf of the "
                    f"cited refs {', '.join(at.cited)}",
                    at.cited,
                )
            )
        return MentionCheck("date", m.text, bool(found_d), found_d)

    def _ranking(self, at: _Cited, m: Mention) -> MentionCheck:
        """A ranking is supported by the documentation that states one (documented behaviour)
        or by a cited tableRef whose rows hold the ranked items."""
        if at.documented:
            doc_hits = [
                Match(i.ref.id, "documented behaviour")
                for i in at.indexes
                if ranks(i.doc_text, i.doc_text)
            ]
            if doc_hits:
                return MentionCheck("ranking", m.text, True, doc_hits)
        if at.unit.cells is None:
            self.ranking_prose.append(at.unit.claim)
        tables = [i for i in at.indexes if i.ref.kind == "tableRef"]
        ok = [
            Match(t.ref.id, "tableRef rows hold the ranked items")
            for t in tables
            if _holds_ranked_items(at, t)
        ]
        if not ok:
            why = (
                "cites no tableRef"
                if not tables
                else "none of the cited tableRefs' rows contain the ranked items"
            )
            self.issues.append(
                GateIssue(
                    "missing_ranking_table_ref",
                    at.unit.claim,
                    f"ranking '{m.text}' {why}; rank from an emitted table and cite it",
                    at.cited,
                )
            )
        return MentionCheck("ranking", m.text, bool(ok), ok)

    def _uncited(self, unit: Unit, mentions: list[Mention]) -> None:
        self.data_claim = True
        what = ", ".join(dict.fromkeys(m.text for m in mentions))
        bad = [c for c in unit.cites if c not in self.ref_map]
        note = "cites only unknown ids" if bad else "no citation"
        self.issues.append(
            GateIssue(
                "uncited_claim",
                unit.claim,
                f"{what}: {note}; cite the ref that holds each value as [refId]",
                bad,
            )
        )
        checks = [MentionCheck(m.kind, m.text, False, note=note) for m in mentions]
        self.claims.append(ClaimCheck(unit.claim, unit.kind, unit.line, [], checks))
        if unit.cells is None and any(m.kind == "ranking" for m in mentions):
            self.ranking_prose.append(unit.claim)


def _holds_ranked_items(at: _Cited, table: RefIndex) -> bool:
    """Does a cited table hold what the claim ranks? A rank row: one of its identifier cells is
    (in) a row label (a row of numbers only: a number of it bound to this table). Prose: a
    number or date of it bound to this table, or it names one of the table's row labels."""
    if at.unit.cells is not None:
        items = at.row_labels
        hit = any(lbl in table.labels or any(lbl in x for x in table.labels) for lbl in items)
        return hit or (not items and table.ref.id in at.table_hits)
    low = at.unit.text.lower()
    return table.ref.id in at.table_hits or any(
        len(lbl) >= 2 and lbl in low for lbl in table.labels
    )
