"""Stage 5 of the GATE: give the verdict on the answer, and the "Not verified" section.

Input: the answer, the ledger (``evidence.Ledger``), the claims (stage 1, ``markdown.Claims``),
what binding found (stage 4, ``claim_checks.Bound``) and what the caller asked (``Asked``).
Output: the ``GateReport`` (``findings``; ``to_dict`` gives the kernel's plain
``refgate.verdict.Verdict``). Its issues come in this order: the ledger's, the answer-wide ones
(no emitted result when required, an empty answer), fake ref ids, the claims' in answer order,
the ranking rules, a data claim without an emitted result, then the question's coverage.
"""

from __future__ import annotations

from dataclasses import dataclass

from refgate.verdict import Severity

from .claim_checks import Bound
from .coverage import uncovered
from .evidence import NO_EMITTED, Ledger
from .findings import ClaimCheck, GateIssue, GateReport
from .markdown import Citation, Claims, Unit
from .names import NamePattern
from .ranking import ranking_frame


@dataclass(frozen=True, slots=True)
class Asked:
    """What the caller asked of the verdict besides the stages' outputs."""

    #: What was asked: the quantities and periods it names must be stated by verified claims.
    question: str
    #: The severity of ``question_not_covered``.
    coverage: Severity
    #: Block when WORK emitted no result even if no claim needs one.
    require_emitted: bool


def give_verdict(
    answer: str, ledger: Ledger, claims: Claims, bound: Bound, asked: Asked, names: NamePattern
) -> GateReport:
    """The report: ``passed`` unless some issue blocks."""
    issues = [
        *ledger.issues,
        *_answer_issues(answer, ledger, asked),
        *_fake_refs(answer, claims.citations, ledger),
        *bound.issues,
        *_ranking_rules(claims.units, bound, names),
    ]
    if bound.data_claim and not ledger.emitted and not asked.require_emitted:
        issues.append(GateIssue("emit_result_missing", "", NO_EMITTED))
    if asked.question.strip():
        issues.extend(_not_covered(asked, bound.claims))
    passed = not any(i.severity == "block" for i in issues)
    return GateReport(passed, issues, bound.claims)


def _answer_issues(answer: str, ledger: Ledger, asked: Asked) -> list[GateIssue]:
    """No emitted result though the plan requires one; an empty answer."""
    out = []
    if asked.require_emitted and not ledger.emitted:
        out.append(GateIssue("emit_result_missing", "", NO_EMITTED))
    if not answer.strip():
        out.append(GateIssue("empty_answer", "", "the answer is empty"))
    return out


def _fake_refs(answer: str, citations: list[Citation], ledger: Ledger) -> list[GateIssue]:
    """``fake_ref_token`` for each cited id that is not in the ledger (once per line)."""
    out: list[GateIssue] = []
    lines = answer.splitlines()
    seen_fake: set[Citation] = set()
    for tok, line in citations:
        if tok in ledger.refs or (tok, line) in seen_fake:
            continue
        seen_fake.add((tok, line))
        full = [i for i in ledger.refs if i.startswith(tok) and i != tok]
        why = (
            f"[{tok}] looks truncated (prefix of {full[0]})"
            if full
            else f"[{tok}] is not an id in the ref ledger"
        )
        text = lines[line].strip() if line < len(lines) else ""
        out.append(GateIssue("fake_ref_token", text, why, [tok]))
    return out


def _ranking_rules(units: list[Unit], bound: Bound, names: NamePattern) -> list[GateIssue]:
    """A ranking answer renders its evidence table and states its frame."""
    out: list[GateIssue] = []
    ranking_prose, rank_rows = bound.ranking_prose, bound.rank_rows
    if ranking_prose and not rank_rows:
        out.append(
            GateIssue(
                "missing_ranking_table_ref",
                ranking_prose[0],
                "a ranking answer must render the markdown evidence table (identifier, "
                "period, raw value, metric, rank) with each row citing its tableRef",
            )
        )
    if ranking_prose or rank_rows:
        frame = ranking_frame(units, rank_rows, names)
        if frame:
            out.append(
                GateIssue(
                    "missing_ranking_frame",
                    ranking_prose[0] if ranking_prose else rank_rows[0].claim,
                    "a ranking answer must state " + "; ".join(frame) + ". State the "
                    "universe, filter and formula in the text and render the evidence table "
                    "with identifier, period, raw value, metric and rank",
                )
            )
    return out


def _not_covered(asked: Asked, claims: list[ClaimCheck]) -> list[GateIssue]:
    """``question_not_covered`` for what the question asks that no verified claim states."""
    verified = [c.text for c in claims if c.supported]
    return [
        GateIssue("question_not_covered", "", what, [], asked.coverage)
        for what in uncovered(asked.question, verified, verified=True)
    ]


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def unmet_section(report: GateReport) -> str:
    """The short markdown "Not verified" section: each unmet claim and why ('' when none)."""
    rows: list[str] = []
    seen: set[tuple[str, str, str]] = set()
    for issue in report.blocking:
        key = (issue.code, issue.claim, issue.detail)
        if key in seen:
            continue
        seen.add(key)
        what = f'"{_short(issue.claim)}"' if issue.claim.strip() else "(whole answer)"
        why = _short(issue.detail, 240).replace("\n", " ")
        rows.append(f"- {what}: {why} (`{issue.code}`)")
    if not rows:
        return ""
    head = "### Not verified\n\nThese claims could not be checked against the cited evidence:\n\n"
    return head + "\n".join(rows) + "\n"
