"""``check_answer``: bind every claim of an answer to the refs it cites and check the values.

Verdict assembly: split the answer into units (``markdown``), scan their mentions (``mentions``),
index the cited refs (``index``), bind each number to a place of them as a quantity
(``quantity``, ``binding``), check each date and ranking, apply the ledger and ranking rules
(``evidence``, ``ranking``, ``documented``) and return the ``GateReport``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from refgate.refs import is_emitted_result
from refgate.verdict import Severity

from .binding import Binder, Vocabulary
from .collection import without_collection
from .coverage import uncovered
from .documented import is_documented
from .evidence import NO_EMITTED, SECONDARY_POLICIES, coerce_refs, read_required
from .index import DOC_KINDS, NUMERIC_KINDS, build_index
from .lookup import RefIndex
from .markdown import Unit, split_units
from .matching import match_number, nearest
from .mentions import Mention, scan_units
from .names import NamePattern, check_names, compiled
from .numbers import Num
from .quantity import ClaimWords, Quantity, quantities
from .ranking import ranking_frame, ranks
from .row_names import inside, named_rows, quoted_rows
from .verdict import ClaimCheck, GateIssue, GateReport, Match, MentionCheck

#: Refs of external text: a claim citing one is about a document or page, not about data.
_TEXT_KINDS = frozenset({"docRef", "webRef"})

_BARE_YEAR = re.compile(r"(?:19|20)\d\d")


def check_input_error(answer: str, refs: int, *, max_chars: int, max_refs: int) -> str | None:
    """Why an answer and ledger brought to the GATE alone (``refgate check``, MCP ``check``) are
    refused before any work, or None: over ``max_chars`` characters or ``max_refs`` refs (the
    settings ``max_check_chars`` / ``max_check_refs``), so one request cannot take minutes."""
    if len(answer) > max_chars:
        return (
            f"the answer has {len(answer):,} characters; the limit is {max_chars:,} "
            "(REFGATE_MAX_CHECK_CHARS)"
        )
    if refs > max_refs:
        return f"{refs:,} refs given; the limit is {max_refs:,} (REFGATE_MAX_CHECK_REFS)"
    return None


@without_collection
def check_answer(
    answer: str,
    refs: Mapping[str, object] | Iterable[object],
    *,
    required_evidence: Sequence[str] = (),
    require_emitted: bool = False,
    names: Sequence[str] = (),
    secondary_numbers: str = "block",
    vocabulary: Mapping[str, str] | None = None,
    question: str = "",
    coverage: str = "warn",
) -> GateReport:
    """Check every number, date and ranking claim of ``answer`` against the refs it cites.

    Pure and deterministic; see the package docstring for the support rule. ``refs`` may hold
    ``Ref`` objects or their dict form; invalid ones are reported (``invalid_ref``), not raised.
    ``names`` adds names that contain numbers to the built-in list (``names.DEFAULT_NAMES``);
    ``require_emitted`` blocks when WORK emitted no result even if no claim needs one;
    ``vocabulary`` maps the workspace's column names to their descriptions (synonyms of the
    metric words a claim may use for a value of that column); ``question`` is what was asked:
    the quantities and periods it names that no verified claim states are listed
    (``question_not_covered``, severity ``coverage``: "warn" or "block").
    """
    if not isinstance(answer, str):
        raise TypeError(f"answer must be a string, got {type(answer).__name__}")
    if secondary_numbers not in SECONDARY_POLICIES:
        raise ValueError(
            f"secondary_numbers must be one of {', '.join(SECONDARY_POLICIES)}, "
            f"got {secondary_numbers!r}"
        )
    run = _Run(refs, required_evidence, secondary_numbers, vocabulary)
    if require_emitted and not run.emitted:
        run.issues.append(GateIssue("emit_result_missing", "", NO_EMITTED))
    if not answer.strip():
        run.issues.append(GateIssue("empty_answer", "", "the answer is empty"))
    name_pat = compiled(check_names(names) if names else ())
    units, all_cites = split_units(answer, run.ref_map)
    run.fake_refs(answer, all_cites)
    # Scan every unit, then index every ref a claim cites, then check: one kind of work at a
    # time keeps each phase's patterns and code hot in the CPU caches (claim by claim, between
    # index builds and look-ups, the date-anchor scan ran ~3x slower; this order alone gave x1.3).
    scanned = scan_units(units, name_pat)
    run.index_cited(units, scanned)
    previous: ClaimWords | None = None
    for unit, (mentions, row_labels) in zip(units, scanned, strict=True):
        if not mentions:
            continue
        previous = run.check_unit(unit, mentions, row_labels, previous)
    run.ranking_rules(units, name_pat)
    if run.data_claim and not run.emitted and not require_emitted:
        run.issues.append(GateIssue("emit_result_missing", "", NO_EMITTED))
    if question.strip():
        run.coverage(question, "block" if coverage == "block" else "warn")
    passed = not any(i.severity == "block" for i in run.issues)
    return GateReport(passed, run.issues, run.claims)


class _Run:
    """One ``check_answer`` call: the ledger, the policy, and the verdict being assembled."""

    def __init__(
        self,
        refs: Mapping[str, object] | Iterable[object],
        required_evidence: Sequence[str],
        secondary_numbers: str,
        vocabulary: Mapping[str, str] | None,
    ) -> None:
        self.issues: list[GateIssue] = []
        self.ref_map = coerce_refs(refs, self.issues)
        # the ledger's kinds are read only when the plan requires some evidence
        kinds = {r.kind for r in self.ref_map.values()} if required_evidence else frozenset()
        primary, relaxed = read_required(required_evidence, kinds, self.issues)
        # Authority: a number whose only support is secondary (web) evidence blocks by default;
        # a skill (secondaryAllowed) or the setting relaxes it, unless a skill requires
        # primarySource.
        self.secondary_blocks = primary or (secondary_numbers == "block" and not relaxed)
        self.emitted = any(is_emitted_result(r) for r in self.ref_map.values())
        self.binder = Binder(Vocabulary(vocabulary))
        self.cache: dict[str, RefIndex] = {}
        self.claims: list[ClaimCheck] = []
        self.ranking_prose: list[str] = []
        self.rank_rows: list[Unit] = []
        self.data_claim = False

    def coverage(self, question: str, severity: Severity) -> None:
        """``question_not_covered`` for what the question asks that no verified claim states."""
        verified = [c.text for c in self.claims if c.supported]
        for what in uncovered(question, verified, verified=True):
            self.issues.append(GateIssue("question_not_covered", "", what, [], severity))

    def fake_refs(self, answer: str, all_cites: list[tuple[str, int]]) -> None:
        """``fake_ref_token`` for each cited id that is not in the ledger (once per line)."""
        lines = answer.splitlines()
        seen_fake: set[tuple[str, int]] = set()
        for tok, line in all_cites:
            if tok in self.ref_map or (tok, line) in seen_fake:
                continue
            seen_fake.add((tok, line))
            full = [i for i in self.ref_map if i.startswith(tok) and i != tok]
            why = (
                f"[{tok}] looks truncated (prefix of {full[0]})"
                if full
                else f"[{tok}] is not an id in the ref ledger"
            )
            text = lines[line].strip() if line < len(lines) else ""
            self.issues.append(GateIssue("fake_ref_token", text, why, [tok]))

    def index_cited(
        self, units: list[Unit], scanned: list[tuple[list[Mention], list[str]]]
    ) -> None:
        """Index every ref that a claim with mentions cites (once each)."""
        cache, ref_map = self.cache, self.ref_map
        for unit, (mentions, _) in zip(units, scanned, strict=True):
            if mentions:
                for c in unit.cites:
                    if c not in cache and c in ref_map:
                        cache[c] = build_index(ref_map[c])

    def _cited(self, unit: Unit) -> list[str]:
        unit_cites = unit.cites
        if len(unit_cites) == 1:  # the common case, without the de-duplication
            return list(unit_cites) if unit_cites[0] in self.ref_map else []
        return list(dict.fromkeys(c for c in unit_cites if c in self.ref_map))

    def check_unit(
        self,
        unit: Unit,
        mentions: list[Mention],
        row_labels: list[str],
        previous: ClaimWords | None,
    ) -> ClaimWords | None:
        """Check one claim; returns its metric words (the next claim's ``previous``)."""
        cited = self._cited(unit)
        if unit.cells is not None and any(c.rank and c.text for c in unit.cells):
            self.rank_rows.append(unit)
        if not cited:
            self._uncited(unit, mentions)
            return previous
        indexes = [self.cache[c] for c in cited]
        # A claim cited only to documentation (apiRef / skillRef) that names what it documents
        # (the capability, a parameter, the skill) is about a documented behaviour: its numbers
        # must be in that documentation. Any other claim citing data is a data claim.
        doc_only = (
            indexes[0].ref.kind in DOC_KINDS
            if len(indexes) == 1
            else all(i.ref.kind in DOC_KINDS for i in indexes)
        )
        documented = doc_only and is_documented(unit.claim, indexes)
        if not self.data_claim and not documented:
            self.data_claim = not all(i.ref.kind in _TEXT_KINDS for i in indexes)
        qs, own = quantities(unit, mentions, row_labels, previous)
        table_hits: set[str] = set()
        checks: list[MentionCheck] = []
        q_iter = iter(qs)
        # Numbered row labels the claim quotes ("$500 3.125% notes due 2022"): they name rows.
        quoted = quoted_rows(unit.text, indexes) if unit.cells is None and not doc_only else []
        for m in mentions:
            if m.kind == "number":
                q = next(q_iter) if m.num is not None else None
                if quoted and m.num is not None:
                    label = inside(quoted, m.num.start, m.num.end)
                    if label is not None:
                        where = f"row label {label.label[:120]!r}"
                        match = Match(label.ref_id, where, self.cache[label.ref_id].secondary)
                        checks.append(MentionCheck("number", m.text, True, [match]))
                        continue
                rows = named_rows(quoted, m.num.start) if quoted and m.num is not None else None
                checks.append(
                    self._number(unit, m, q, indexes, cited, doc_only, documented, table_hits, rows)
                )
            elif m.kind == "date":
                checks.append(self._date(unit, m, indexes, cited, table_hits))
        for m in mentions:
            if m.kind == "ranking":
                checks.append(
                    self._ranking(unit, m, indexes, cited, documented, row_labels, table_hits)
                )
        self.claims.append(ClaimCheck(unit.claim, unit.kind, unit.line, cited, checks))
        return own

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

    def _number(
        self,
        unit: Unit,
        m: Mention,
        q: Quantity | None,
        indexes: list[RefIndex],
        cited: list[str],
        doc_only: bool,
        documented: bool,
        table_hits: set[str],
        rows: Mapping[str, frozenset[int]] | None = None,
    ) -> MentionCheck:
        """Bind one number to a place of the cited refs (documentation: to its text)."""
        assert m.num is not None and q is not None
        if doc_only:
            found = match_number(m.num, indexes, DOC_KINDS) if documented else []
            code = ""
        else:
            # At most one match per ref (``bind`` keeps the first place of each).
            bound = self.binder.bind(m.num, q, indexes, NUMERIC_KINDS, rows)
            found, code = bound.matches, bound.code
            if code:
                self.issues.append(GateIssue(code, unit.claim, bound.detail, cited))
                return MentionCheck("number", m.text, False, note=code)
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
                kinds = DOC_KINDS if doc_only else NUMERIC_KINDS
                detail = (
                    f"{m.text} is not in the cited refs {kinds_cited}"
                    f"{nearest(m.num, indexes, kinds)}"
                    "; the gate does no arithmetic: emit a derived number as its own value"
                )
            self.issues.append(GateIssue("unsupported_numeric_claim", unit.claim, detail, cited))
            return MentionCheck("number", m.text, False, note="no cited ref holds it")
        internal = (
            not found[0].secondary if len(found) == 1 else any(not x.secondary for x in found)
        )
        if not internal:
            self.issues.append(
                GateIssue(
                    "external_only_numeric",
                    unit.claim,
                    f"{m.text} is supported only by secondary refs (web pages: "
                    f"{', '.join(x.ref_id for x in found)}); confirm it from a primary "
                    "source (a dataset, a computation, a workspace document)",
                    [x.ref_id for x in found],
                    "block" if self.secondary_blocks else "warn",
                )
            )
        return MentionCheck("number", m.text, True, found, "" if internal else "secondary only")

    def _date(
        self,
        unit: Unit,
        m: Mention,
        indexes: list[RefIndex],
        cited: list[str],
        table_hits: set[str],
    ) -> MentionCheck:
        found_d: list[Match] = []
        for idx in indexes:
            if m.keys == ("asof",):
                if idx.dates:
                    found_d.append(Match(idx.ref.id, "carries a date / asOf"))
            elif idx.dates.issuperset(m.keys):
                found_d.append(Match(idx.ref.id, f"date {'/'.join(m.keys)}"))
                table_hits.add(idx.ref.id)
        if not found_d and _BARE_YEAR.fullmatch(m.text):
            # A bare 1900-2099 reads as a year; a cited ref holding it as a number
            # (a count of 1,900 written "1900") supports it as that number instead.
            as_num = Num(m.text, 0, 0, float(m.text), 1.0, 1.0, False, "plain", False)
            found_d = match_number(as_num, indexes)
        if not found_d:
            self.issues.append(
                GateIssue(
                    "unsupported_date_claim",
                    unit.claim,
                    f"{m.text} ({'/'.join(m.keys)}) is not a date, period or asOf of the "
                    f"cited refs {', '.join(cited)}",
                    cited,
                )
            )
        return MentionCheck("date", m.text, bool(found_d), found_d)

    def _ranking(
        self,
        unit: Unit,
        m: Mention,
        indexes: list[RefIndex],
        cited: list[str],
        documented: bool,
        row_labels: list[str],
        table_hits: set[str],
    ) -> MentionCheck:
        if documented:
            doc_hits = [
                Match(i.ref.id, "documented behaviour")
                for i in indexes
                if ranks(i.doc_text, i.doc_text)
            ]
            if doc_hits:
                return MentionCheck("ranking", m.text, True, doc_hits)
        if unit.cells is None:
            self.ranking_prose.append(unit.claim)
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
            self.issues.append(
                GateIssue(
                    "missing_ranking_table_ref",
                    unit.claim,
                    f"ranking '{m.text}' {why}; rank from an emitted table and cite it",
                    cited,
                )
            )
        return MentionCheck("ranking", m.text, bool(ok), ok)

    def ranking_rules(self, units: list[Unit], name_pat: NamePattern) -> None:
        """A ranking answer renders its evidence table and states its frame."""
        ranking_prose, rank_rows = self.ranking_prose, self.rank_rows
        if ranking_prose and not rank_rows:
            self.issues.append(
                GateIssue(
                    "missing_ranking_table_ref",
                    ranking_prose[0],
                    "a ranking answer must render the markdown evidence table (identifier, "
                    "period, raw value, metric, rank) with each row citing its tableRef",
                )
            )
        if ranking_prose or rank_rows:
            frame = ranking_frame(units, rank_rows, name_pat)
            if frame:
                self.issues.append(
                    GateIssue(
                        "missing_ranking_frame",
                        ranking_prose[0] if ranking_prose else rank_rows[0].claim,
                        "a ranking answer must state " + "; ".join(frame) + ". State the "
                        "universe, filter and formula in the text and render the evidence table "
                        "with identifier, period, raw value, metric and rank",
                    )
                )
