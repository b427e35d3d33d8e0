"""The GATE's containment checks: what an injection may have steered, over the verdict of
``check_answer`` (one hook in the GATE pass, ``review``).

- **Withheld means withheld** (``withheld_source``, blocks): a claim that cites a ref whose
  text was withheld after an injection signal (B5), or another part of the same document or
  page, is backed by nothing: the text was judged an injection.
- **Influence** (``influenced_only``, warns; blocks with ``influenced_numbers = "block"``): a
  number whose only support is a ref computed in a turn whose prompt held untrusted text
  (``Ref.influenced_by``): the computation may follow the page, not the question.
- **Steered conclusions** (``recommendation_after_untrusted_read``, warns): a sentence that
  recommends an action (buy, sell, sign, 매수, 계약해야) or states any conclusion in a run that
  read untrusted text.
- **Conclusions checked by meaning** (``unsupported_conclusion``, warns, in every run): a
  recommendation, rating, risk verdict or absence claim, English or Korean
  (``refgate.gate.conclusions``), that cites no verified evidence (a primary ref, not withheld, not
  influenced, whose claim the GATE did not block) is flagged, and listed first among the
  conclusions with its kind ("[unsupported rating] The stock is a strong buy.").
- **Conclusions apart**: the answer's sentences that state no number, date or ranking and cite
  nothing verified (outlooks, recommendations, judgements) are listed in the verdict's
  ``conclusions``; the reports show them as the model's conclusions, apart from verified figures.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from refgate.gate.conclusions import KIND_WORDS, conclusion_kind
from refgate.refs import Ref
from refgate.verdict import Severity

from .findings import ISSUE_CODES, GateIssue, GateReport
from .markdown import Unit, split_units

ISSUE_CODES.update(
    {
        "withheld_source": "a claim cites a ref whose text was withheld as an injection (or "
        "another part of that document or page): it backs no claim",
        "influenced_only": "a number supported only by refs computed after an untrusted read "
        "(influenced_by); a warning, blocking with influenced_numbers = 'block'",
        "recommendation_after_untrusted_read": "a recommendation (buy, sell, sign, ...) in a "
        "run that read untrusted text: the model's conclusion, possibly steered",
        "unsupported_conclusion": "a recommendation, rating, risk verdict or absence claim "
        "that cites no verified evidence: the model's conclusion, not a finding",
    }
)

#: Ref kinds that are evidence a conclusion may rest on (a skill, a decision or a verdict is not).
EVIDENCE_KINDS = frozenset({"valueRef", "tableRef", "dateRef", "docRef", "executionRef"})

#: Recommendation language, English and Korean: a call to act, not a finding.
RECOMMENDATION = re.compile(
    r"\b(?:we|i)\s+(?:strongly\s+)?(?:recommend|advise|suggest|urge)\b"
    r"|\brecommend(?:s|ed|ing)?\s+(?:buying|selling|investing|purchasing|signing|shorting"
    r"|holding|that\s+you)\b"
    r"|\b(?:you|investors|clients)\s+(?:should|must|ought\s+to)\s+"
    r"(?:buy|sell|invest|purchase|sign|short|hold|move|switch)\b"
    r"|\b(?:buy|sell|strong\s+buy|overweight|underweight)\s+(?:rating|recommendation|now)\b"
    r"|\b(?:now\s+is\s+the\s+time\s+to|it\s+is\s+time\s+to)\s+(?:buy|sell|invest)\b"
    r"|매수|매도|매입\s*(?:하|을|를)|투자\s*(?:하십시오|하세요|해야|를\s*권)|계약\s*(?:해야|하십시오"
    r"|하세요|을\s*권|를\s*권)|권고(?:합니다|드립니다)|추천(?:합니다|드립니다)|권장(?:합니다|드립니다)",
    re.IGNORECASE,
)


def withheld_ids(refs: Mapping[str, Ref], withheld: Mapping[str, str]) -> set[str]:
    """The ledger's refs that back nothing: withheld ones and external refs of the same source."""
    sources = {s for s in withheld.values() if s}
    return {
        rid
        for rid, ref in refs.items()
        if rid in withheld or (ref.is_external and ref.source and ref.source in sources)
    }


def _influenced(ref: Ref | None) -> bool:
    return bool(ref is not None and getattr(ref, "influenced_by", None))


@dataclass(frozen=True, slots=True)
class _Seen:
    """What the review of one answer reads beside each unit: the ledger, its refs that back
    nothing (withheld), the claims the GATE blocked, and whether the run read untrusted text."""

    refs: Mapping[str, Ref]
    dead: set[str]
    blocked: set[str]
    untrusted_read: bool


def review(
    report: GateReport,
    answer: str,
    refs: Mapping[str, Ref],
    *,
    withheld: Mapping[str, str] | None = None,
    influenced_numbers: str = "warn",
    untrusted_read: bool = False,
) -> tuple[GateReport, list[str]]:
    """``report`` with the containment issues added (``passed`` recomputed), and the answer's
    conclusions (sentences that are not verified claims), the unsupported ones first."""
    blocked = {i.claim for i in report.issues if i.severity == "block"}
    seen = _Seen(refs, withheld_ids(refs, withheld or {}), blocked, untrusted_read)
    units, _ = split_units(answer, refs)
    issues = list(report.issues)
    flagged: list[str] = []
    for unit in units:
        unit_issues, flag = _unit_issues(unit, seen)
        issues.extend(unit_issues)
        if flag:
            flagged.append(flag)
    severity: Severity = "block" if influenced_numbers == "block" else "warn"
    issues.extend(_influenced_only(report, refs, severity))
    passed = not any(i.severity == "block" for i in issues)
    flagged_claims = {f.split("] ", 1)[1] for f in flagged}
    rest = [c for c in _conclusions(units, report) if c not in flagged_claims]
    return GateReport(passed, issues, list(report.claims)), _dedupe([*flagged, *rest])


def _unit_issues(unit: Unit, seen: _Seen) -> tuple[list[GateIssue], str | None]:
    """One unit's containment issues (a withheld citation, an unsupported conclusion, a
    recommendation after an untrusted read) and, for an unsupported conclusion, how the
    conclusions list it ("[unsupported rating] ...")."""
    issues = []
    withheld = _withheld_citation(unit, seen.dead)
    if withheld is not None:
        issues.append(withheld)
    kind = conclusion_kind(unit.text) if unit.kind in ("sentence", "item") else None
    flag = None
    if kind and not _backed(unit.cites, unit.claim, seen.refs, seen.dead, seen.blocked):
        words = KIND_WORDS[kind]
        issues.append(
            GateIssue(
                "unsupported_conclusion",
                unit.claim,
                f"a {words} that no cited verified evidence backs: the model's "
                "conclusion, not a finding; cite the evidence it rests on or drop it",
                list(unit.cites),
                severity="warn",
            )
        )
        flag = f"[unsupported {words}] {unit.claim}"
    if (
        seen.untrusted_read
        and unit.kind != "heading"
        and (kind or RECOMMENDATION.search(unit.text))
    ):
        issues.append(
            GateIssue(
                "recommendation_after_untrusted_read",
                unit.claim,
                "a recommendation written after untrusted text was read: the model's "
                "conclusion, not a verified finding (it may follow an injection)",
                severity="warn",
            )
        )
    return issues, flag


def _withheld_citation(unit: Unit, dead: set[str]) -> GateIssue | None:
    bad = [c for c in unit.cites if c in dead]
    if not bad:
        return None
    return GateIssue(
        "withheld_source",
        unit.claim,
        f"[{', '.join(bad)}] was withheld as an injection (or is part of a "
        "withheld document or page): it backs no claim; cite other evidence or "
        "drop the claim",
        bad,
    )


def _conclusions(units: list[Unit], report: GateReport) -> list[str]:
    """The sentences and list items that are not claims the GATE checked."""
    claimed = {(c.line, c.text) for c in report.claims}
    return [
        unit.claim
        for unit in units
        if unit.kind in ("sentence", "item")
        and (unit.line, unit.claim) not in claimed
        and unit.text.strip()
    ]


def _influenced_only(
    report: GateReport, refs: Mapping[str, Ref], severity: Severity
) -> list[GateIssue]:
    """``influenced_only`` for each supported number whose every match was computed after an
    untrusted read."""
    issues = []
    for claim in report.claims:
        for m in claim.mentions:
            if m.kind != "number" or not m.supported or not m.matches:
                continue
            if all(_influenced(refs.get(x.ref_id)) for x in m.matches):
                seen = sorted(
                    {s for x in m.matches for s in getattr(refs[x.ref_id], "influenced_by", [])}
                )
                issues.append(
                    GateIssue(
                        "influenced_only",
                        claim.text,
                        f"{m.text} is supported only by a computation made after reading "
                        f"untrusted text ({', '.join(seen[:5])}): check its code",
                        [x.ref_id for x in m.matches],
                        severity=severity,
                    )
                )
    return issues


def _backed(
    cites: Sequence[str],
    claim: str,
    refs: Mapping[str, Ref],
    dead: set[str],
    blocked: set[str],
) -> bool:
    """True when a conclusion cites verified evidence: a primary evidence ref, neither withheld
    nor influenced, in a claim the GATE did not block."""
    if claim in blocked:
        return False
    for rid in cites:
        ref = refs.get(rid)
        if (
            ref is not None
            and rid not in dead
            and ref.kind in EVIDENCE_KINDS
            and not ref.is_secondary
            and not _influenced(ref)
        ):
            return True
    return False


def _dedupe(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))
