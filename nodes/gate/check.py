"""``check_answer``: bind every claim of an answer to the refs it cites and check the values.

Verdict assembly: split the answer into units (``markdown``), scan their mentions (``mentions``),
index the cited refs (``index``), check each number (``matching``), date and ranking against
them, apply the ledger and ranking rules (``evidence``, ``ranking``, ``documented``) and return
the ``GateReport``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from refgate.refs import Ref, is_emitted_result

from .documented import is_documented
from .evidence import NO_EMITTED, SECONDARY_POLICIES, coerce_refs, read_required
from .index import DOC_KINDS, NUMERIC_KINDS, build_index
from .lookup import RefIndex
from .markdown import Unit, split_units
from .matching import match_number, nearest
from .mentions import scan_units
from .names import check_names, compiled
from .numbers import Num
from .ranking import ranking_frame, ranks
from .report import ClaimCheck, GateIssue, GateReport, Match, MentionCheck

#: Refs of external text: a claim citing one is about a document or page, not about data.
_TEXT_KINDS = frozenset({"docRef", "webRef"})

_BARE_YEAR = re.compile(r"(?:19|20)\d\d")


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
    ref_map = coerce_refs(refs, issues)
    kinds = {r.kind for r in ref_map.values()}
    if secondary_numbers not in SECONDARY_POLICIES:
        raise ValueError(
            f"secondary_numbers must be one of {', '.join(SECONDARY_POLICIES)}, "
            f"got {secondary_numbers!r}"
        )
    primary, relaxed = read_required(required_evidence, kinds, issues)
    # Authority: a number whose only support is secondary (web) evidence blocks by default; a
    # skill (secondaryAllowed) or the setting relaxes it, unless a skill requires primarySource.
    secondary_blocks = primary or (secondary_numbers == "block" and not relaxed)
    emitted = any(is_emitted_result(r) for r in ref_map.values())
    if require_emitted and not emitted:
        issues.append(GateIssue("emit_result_missing", "", NO_EMITTED))
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
    scanned = scan_units(units, name_pat)
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
        documented = doc_only and is_documented(claim_text, indexes)
        if not data_claim and not documented:
            data_claim = not all(i.ref.kind in _TEXT_KINDS for i in indexes)
        num_kinds = DOC_KINDS if doc_only else NUMERIC_KINDS
        table_hits: set[str] = set()
        for m in mentions:
            if m.kind == "number":
                assert m.num is not None
                found = (
                    match_number(m.num, indexes, num_kinds) if documented or not doc_only else []
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
                            f"{nearest(m.num, indexes, num_kinds)}"
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
                    found_d = match_number(as_num, indexes)
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
                    if ranks(i.doc_text, i.doc_text)
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
        frame = ranking_frame(units, rank_rows, name_pat)
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
        issues.append(GateIssue("emit_result_missing", "", NO_EMITTED))
    passed = not any(i.severity == "block" for i in issues)
    return GateReport(passed, issues, claims)
