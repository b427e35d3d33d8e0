"""The GATE's findings, shared by every stage: issue codes, issues, matches, per-claim checks and
the report they make (``GateReport.to_dict`` gives the kernel's ``refgate.verdict.Verdict``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import cast

from refgate.verdict import IssueRecord, MentionRecord, Severity, Verdict

#: Every issue code the gate emits, with what it means (for docs and the verifyRef payload).
ISSUE_CODES: dict[str, str] = {
    "uncited_claim": "a number, date or ranking with no citation",
    "fake_ref_token": "a cited id that is not in the ledger (or a truncated id)",
    "unsupported_numeric_claim": "a number that no cited ref supports",
    "unsupported_date_claim": "a date or period absent from the cited refs",
    "missing_ranking_table_ref": "a ranking without a cited tableRef holding the ranked items, "
    "or a ranking answer without its markdown evidence table",
    "missing_ranking_frame": "a ranking answer that does not state its universe and metric, or "
    "whose evidence table shows no raw value",
    "missing_required_evidence": "a ref kind the selected skills require is absent",
    "unknown_required_evidence": "a requiredEvidence item that is neither a ref kind nor "
    "'primarySource'",
    "emit_result_missing": "the answer states data claims (or the skills require results) and "
    "WORK emitted no valueRef/tableRef/dateRef (a dataset's schema table does not count)",
    "external_only_numeric": "a number supported only by secondary refs (web pages); blocking by "
    "default, a warning when a skill lists 'secondaryAllowed' or secondary_numbers = 'warn' "
    "(never when a skill requires 'primarySource')",
    "value_of_other_quantity": "a number found in the cited refs only at a place whose labels "
    "name another quantity than the claim's metric words (the detail names the place)",
    "value_of_other_period": "a number found in the cited refs only at a place of another period "
    "than the claim states (its column, its row's period, the ref's period)",
    "value_of_other_sign": "a number written without a sign whose only matching place holds a "
    "negative value, in a claim that does not say in words that it is negative (a loss, a cost, "
    "a fall); or one the claim states as a fall ('fell 5%') whose only matching place is a "
    "change that rose (+5 under '% Change', a revenue_growth value)",
    "unit_kind_mismatch": "a number found in the cited refs only in another unit kind (percent, "
    "multiple, currency amount, count)",
    "value_not_computed": "a number backed only by an emitted value the code wrote as a literal, "
    "or from a call that read no dataset, and by no dataset-backed ref",
    "question_not_covered": "a quantity or period the question names that no verified claim "
    "states; a warning, blocking with question_coverage = 'block'",
    "invalid_ref": "a ref in the ledger that is not a valid Ref",
    "empty_answer": "the answer is empty",
}


@dataclass(slots=True)
class GateIssue:
    """One finding. ``claim`` is the sentence, list item or table row it is about ('' if global)."""

    code: str
    claim: str
    detail: str
    ref_ids: list[str] = field(default_factory=list)
    severity: Severity = "block"

    def to_dict(self) -> IssueRecord:
        return cast("IssueRecord", asdict(self))


@dataclass(slots=True)
class Match:
    """A ref value that supports a mention, and how (``where`` names the payload field/cell)."""

    ref_id: str
    how: str
    #: The ref is secondary evidence (a web page): alone it does not make a number primary.
    secondary: bool = False


@dataclass(slots=True)
class MentionCheck:
    """One number, date or ranking inside a claim, and what supports it."""

    kind: str  # number | date | ranking
    text: str
    supported: bool
    matches: list[Match] = field(default_factory=list)
    note: str = ""

    def to_dict(self) -> MentionRecord:
        return cast("MentionRecord", asdict(self))


@dataclass(slots=True)
class ClaimCheck:
    """One claim (sentence, list item, heading or table row) with its citations and mentions."""

    text: str
    unit: str
    line: int
    ref_ids: list[str]
    mentions: list[MentionCheck]

    @property
    def supported(self) -> bool:
        return bool(self.ref_ids) and all(m.supported for m in self.mentions)


@dataclass(slots=True)
class GateReport:
    """The verdict: ``passed`` is False iff some issue has severity "block"."""

    passed: bool
    issues: list[GateIssue]
    claims: list[ClaimCheck]

    @property
    def blocking(self) -> list[GateIssue]:
        return [i for i in self.issues if i.severity == "block"]

    @property
    def warnings(self) -> list[GateIssue]:
        return [i for i in self.issues if i.severity == "warn"]

    def to_dict(self) -> Verdict:
        """JSON-able form (the verifyRef payload and the graph state)."""
        return {
            "passed": self.passed,
            "issues": [i.to_dict() for i in self.issues],
            "claims": [
                {
                    "text": c.text,
                    "unit": c.unit,
                    "line": c.line,
                    "ref_ids": list(c.ref_ids),
                    "supported": c.supported,
                    "mentions": [m.to_dict() for m in c.mentions],
                }
                for c in self.claims
            ],
            "counts": {
                "claims": len(self.claims),
                "supported_claims": sum(1 for c in self.claims if c.supported),
                "blocking": len(self.blocking),
                "warnings": len(self.warnings),
            },
        }
