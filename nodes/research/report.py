"""The research report: one JSON-able dict (``build_report``) rendered as markdown or JSON.

Statuses: ``complete``, ``empty_question``, ``scope_failed``, ``no_sources``, ``no_claims``,
``none_confirmed`` (all refuted or unverified), ``synthesis_failed`` (confirmed claims returned
unmerged). Every path ends in a report with a summary that says what happened.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from refgate.nodes.research.common import emit, release
from refgate.nodes.research.core import build_stats, dedup_sources
from refgate.nodes.research.deps import ResearchDeps
from refgate.nodes.research.state import (
    ClaimOut,
    ClaimRecord,
    CutOut,
    FindingRecord,
    Refusal,
    ResearchReport,
    ResearchState,
    ScopeRecord,
    SearchRecord,
    SourceOut,
    SourceRecord,
    SynthesisRecord,
    TalliedClaim,
    Withheld,
)
from refgate.nodes.state import Step
from refgate.report.cards import sent_lines
from refgate.report.links import research_urls
from refgate.report.markdown import inert_answer
from refgate.tools.urls import norm_url

STATUSES = (
    "complete",
    "empty_question",
    "scope_failed",
    "no_sources",
    "no_claims",
    "none_confirmed",
    "synthesis_failed",
)


def _claim_out(c: TalliedClaim) -> ClaimOut:
    return {
        "id": c["id"],
        "claim": c["claim"],
        "quote": c["quote"],
        "source": c["sourceUrl"],
        "sourceTitle": c.get("sourceTitle", ""),
        "sourceQuality": c.get("sourceQuality"),
        "publishDate": c.get("publishDate"),
        "importance": c.get("importance"),
        "outcome": c["outcome"],
        "vote": c["vote"],
        "votes": {
            "support": c["supportVotes"],
            "refute": c["refutedVotes"] - c.get("uncertainVotes", 0),
            "uncertain": c.get("uncertainVotes", 0),
            "abstain": c["abstained"],
        },
        "verdicts": [
            {
                k: v.get(k)
                for k in ("refuted", "uncertain", "confidence", "evidence", "counterSource")
            }
            for v in c["valid"]
        ],
        "ballots": list(c.get("ballots") or []),
        "corroboratedBy": list(c.get("corroboratedBy") or []),
        "supportSites": list(c.get("supportSites") or []),
        "singleSite": len(c.get("supportSites") or []) <= 1,
        "fateRestsOn": c.get("fateRestsOn"),
    }


def cut_out(cut: list[ClaimRecord]) -> CutOut:
    """The claims past the cut: how many per source, and each with its reason."""
    per_source: dict[str, int] = {}
    for c in cut:
        per_source[c["sourceUrl"]] = per_source.get(c["sourceUrl"], 0) + 1
    return {
        "count": len(cut),
        "bySource": [{"source": u, "count": n} for u, n in per_source.items()],
        "claims": [
            {
                "claim": c["claim"],
                "quote": c["quote"],
                "source": c["sourceUrl"],
                "importance": c.get("importance"),
                "sourceQuality": c.get("sourceQuality"),
                "reason": c.get("cutReason", ""),
            }
            for c in cut
        ],
    }


def summary_for(status: str, **n: int) -> str:
    if status == "empty_question":
        return "No research question was given, so nothing was researched. Ask a question."
    if status == "scope_failed":
        return (
            "The scope step gave no valid decomposition of the question, so nothing was "
            "searched. Rephrase the question or try another model or backend."
        )
    if status == "no_sources":
        return (
            f"The search found no pages to read for any of the {n.get('angles', 0)} angles. "
            "Nothing can be claimed; check the web snapshot or search provider."
        )
    if status == "no_claims":
        return (
            f"No claims extracted. {n.get('fetched', 0)} of {n.get('tried', 0)} sources were "
            "read; none yielded a checkable claim with a verbatim quote."
        )
    if status == "none_confirmed":
        return (
            f"None of the {n.get('voted', 0)} verified claims survived: {n.get('refuted', 0)} "
            f"refuted, {n.get('unverified', 0)} unverified (too few valid votes). "
            "Research inconclusive."
        )
    if status == "synthesis_failed":
        return (
            f"Synthesis step failed — returning {n.get('confirmed', 0)} verified claims "
            "unmerged (see Confirmed claims)."
        )
    return ""


def killed_sources(sources: list[SourceRecord], searches: list[SearchRecord]) -> list[Withheld]:
    """Pages and search results withheld after an injection signal, one entry per URL."""
    found: dict[str, Withheld] = {}
    for s in sources:
        withheld = s.get("withheld")
        if withheld:
            found.setdefault(
                norm_url(s["url"]),
                {
                    "url": s["url"],
                    "title": s.get("title", ""),
                    "reason": withheld["reason"],
                    "kinds": list(withheld.get("kinds", [])),
                },
            )
    for rec in searches:
        for hit in rec.get("withheldHits") or []:
            found.setdefault(norm_url(hit["url"]), hit.copy())
    return list(found.values())


def build_report(
    *,
    question: str,
    status: str,
    scope: ScopeRecord | None,
    searches: list[SearchRecord],
    sources: list[SourceRecord],
    claims_extracted: int,
    tallied: list[TalliedClaim],
    synthesis: SynthesisRecord | None,
    findings: list[FindingRecord],
    notes: list[str],
    votes_per_claim: int,
    cut: list[ClaimRecord] | None = None,
    model_calls: int,
    dupes: int,
    budget_dropped: int,
    sent: list[dict[str, str]] | None = None,
    refused: list[Refusal] | None = None,
) -> ResearchReport:
    confirmed = [c for c in tallied if c["outcome"] == "survives"]
    refuted = [c for c in tallied if c["outcome"] == "refuted"]
    unverified = [c for c in tallied if c["outcome"] == "unverified"]
    angles = len(scope.get("angles", [])) if scope else 0
    extracted = [s for s in sources if s.get("extracted")]
    stats = build_stats(
        angles=angles,
        sources=len(extracted),
        claims=claims_extracted,
        voted=len(tallied),
        confirmed=len(confirmed),
        killed=len(refuted),
        unverified=len(unverified),
        after_synth=len(findings),
        dupes=dupes,
        budget_dropped=budget_dropped,
        votes_per_claim=votes_per_claim,
    )
    killed = killed_sources(sources, searches)
    stats.update(_read_stats(sources, searches, len(killed), len(cut or []), confirmed))
    stats["modelCalls"] = model_calls
    return {
        "question": question,
        "status": status,
        "summary": (synthesis.get("summary") if synthesis else None)
        or summary_for(status, **_outcome_counts(stats, sources)),
        "findings": findings,
        "confirmed": [_claim_out(c) for c in confirmed],
        "refuted": [_claim_out(c) for c in refuted],
        "unverified": [_claim_out(c) for c in unverified],
        "summaryUnquotedNumbers": list(
            (synthesis.get("summaryUnquotedNumbers") if synthesis else None) or []
        ),
        "caveats": synthesis.get("caveats", "") if synthesis else "",
        "openQuestions": list((synthesis.get("openQuestions") if synthesis else None) or []),
        "angles": list(scope.get("angles", []) if scope else []),
        "sources": [_source_out(s) for s in sources],
        "killedSources": killed,
        "cut": cut_out(cut or []),
        "notes": list(notes),
        # every query and URL the run sent off the machine, and the queries it refused
        "sent": [dict(x) for x in sent or []],
        "refusedQueries": [x.copy() for x in refused or []],
        "stats": stats,
    }


def _outcome_counts(stats: Mapping[str, int], sources: list[SourceRecord]) -> dict[str, int]:
    """What ``summary_for`` says of a run: angles, pages read and tried, claims voted on,
    refuted, unverified and confirmed."""
    return {
        "angles": stats["angles"],
        "fetched": sum(1 for s in sources if s.get("fetched")),
        "tried": len(sources),
        "voted": stats["claimsVerified"],
        "refuted": stats["killed"],
        "unverified": stats["unverified"],
        "confirmed": stats["confirmed"],
    }


def _read_stats(
    sources: list[SourceRecord],
    searches: list[SearchRecord],
    withheld: int,
    cut: int,
    confirmed: list[TalliedClaim],
) -> dict[str, int]:
    """What the run read and dropped: pages tried and failed, quotes rejected, pages withheld,
    unretrieved URLs, claims cut, confirmed claims that rest on one site."""
    return {
        "sourcesTried": len(sources),
        "fetchFailed": sum(1 for s in sources if not s.get("fetched")),
        "quotesRejected": sum(s.get("quotesRejected", 0) for s in sources),
        "sourcesWithheld": withheld,
        "unretrievedUrlsDropped": sum(len(s.get("unretrieved", [])) for s in searches),
        "claimsCut": cut,
        "confirmedOneSiteOnly": sum(1 for c in confirmed if len(c.get("supportSites") or []) <= 1),
    }


def _source_out(s: SourceRecord) -> SourceOut:
    """A page as the report lists it."""
    return {
        "url": s["url"],
        "title": s.get("title", ""),
        "angle": s.get("angle"),
        "quality": s.get("sourceQuality"),
        "publishDate": s.get("publishDate"),
        "fetched": bool(s.get("fetched")),
        "withheld": bool(s.get("withheld")),
        "claimCount": len(s.get("claims", [])),
        "error": s.get("error"),
    }


def to_json(report: Mapping[str, object]) -> str:
    return json.dumps(report, ensure_ascii=False, indent=2, default=str)


def _claim_line(c: Mapping[str, object]) -> str:
    return (
        f'- "{c["claim"]}" — vote {c["vote"]}, [{c["sourceTitle"] or c["source"]}]({c["source"]})'
    )


def _sites(c: ClaimOut) -> str:
    sites = c.get("supportSites") or []
    line = f"  supported by {len(sites)} independent site{'s' if len(sites) != 1 else ''}"
    line += f" ({', '.join(sites)})" if sites else ""
    return line + (" — **one site only**" if len(sites) <= 1 else "")


def _ballots(c: ClaimOut) -> list[str]:
    lines = []
    for b in c.get("ballots") or []:
        line = f"  - voter {b['voter']}: {b['status']}"
        if b.get("why"):
            line += f" ({b['why']})"
        if b.get("source") and b["status"] in ("support", "refute"):
            line += f', on <{b["source"]}>: "{b.get("quote") or ""}"'
        if b.get("overruled"):
            line += f" — overruled: {b['overruled']}"
        lines.append(line)
        rejected = b.get("rejected")
        if rejected:
            lines.append(
                f"    (a refutation on <{rejected.get('source') or '?'}> was rejected: "
                f"{rejected.get('why')}; the voter voted again without that page)"
            )
    if c.get("fateRestsOn"):
        lines.append(f"  **its outcome rests on one site: {c['fateRestsOn']}**")
    return lines


def _unquoted(numbers: list[str]) -> str:
    return "_Not in any verified quote (the synthesis's own numbers): " + ", ".join(numbers) + "_"


def to_markdown(report: Mapping[str, Any]) -> str:
    """The report as markdown: what was found, the claims and their votes, what was read,
    sent and cut; page and model text made inert (the workbench's rule)."""
    status = report.get("status", "complete")
    findings = report.get("findings") or []
    confirmed = report.get("confirmed") or []
    lines = _head_lines(report, status)
    lines += _finding_lines(findings)
    if confirmed and (status == "synthesis_failed" or not findings):
        lines += _unmerged_lines(confirmed)
    if report.get("caveats"):
        lines += ["## Caveats", str(report["caveats"]), ""]
    if report.get("openQuestions"):
        lines += ["## Open questions", *[f"- {q}" for q in report["openQuestions"]], ""]
    lines += _vote_lines(confirmed, report.get("refuted") or [], report.get("unverified") or [])
    lines += _killed_lines(report.get("killedSources") or [])
    lines += _source_lines(report.get("sources") or [])
    lines += _sending_lines(report.get("sent") or [], report.get("refusedQueries") or [])
    if report.get("notes"):
        lines += ["## Notes", *[f"- {n}" for n in report["notes"]], ""]
    # Claims, quotes, titles, the summary and the findings are page or model text: images, raw
    # HTML and links to anything but the run's own sources become text (the workbench's rule).
    allowed = research_urls(report)
    body = inert_answer("\n".join(lines), allowed)
    body += _cut_section(report.get("cut"), allowed)
    stats = ["## Stats", "```json", json.dumps(report.get("stats", {}), indent=2), "```"]
    return body + "\n" + "\n".join(stats) + "\n"


def _head_lines(report: Mapping[str, object], status: object) -> list[str]:
    """The question, a status other than complete, the summary and its unquoted numbers."""
    lines = ["# Deep Research", "", f"**Question:** {report.get('question') or '(none)'}", ""]
    if status != "complete":
        lines += [f"_Status: {status}_", ""]
    lines += ["## Summary", str(report.get("summary", "")), ""]
    unquoted = report.get("summaryUnquotedNumbers")
    if unquoted and isinstance(unquoted, list | tuple):
        lines += [_unquoted([str(n) for n in unquoted]), ""]
    return lines


def _finding_lines(findings: Sequence[FindingRecord]) -> list[str]:
    if not findings:
        return []
    lines = ["## Findings"]
    for i, f in enumerate(findings, 1):
        lines.append(f"### {i}. {f['claim']} _({f['confidence']})_")
        if f.get("unquotedNumbers"):
            lines.append(_unquoted(f["unquotedNumbers"]))
        if f.get("evidence"):
            lines.append(f["evidence"])
        lines.append("Sources: " + ", ".join(f"<{u}>" for u in f.get("sources", [])))
        lines.append("")
    return lines


def _unmerged_lines(confirmed: Sequence[ClaimOut]) -> list[str]:
    lines = ["## Confirmed claims (unmerged)"]
    for c in confirmed:
        lines.append(_claim_line(c))
        lines.append(f'  > "{c["quote"]}"')
    return [*lines, ""]


def _vote_lines(
    confirmed: Sequence[ClaimOut], refuted: Sequence[ClaimOut], unverified: Sequence[ClaimOut]
) -> list[str]:
    """Each verified claim with its sites and ballots, the refuted and the unverified ones."""
    lines: list[str] = []
    if confirmed:
        lines.append("## Verified claims and their votes")
        for c in confirmed:
            lines += [_claim_line(c), _sites(c), *_ballots(c)]
        lines.append("")
    if refuted:
        lines.append("## Refuted claims (uncertain votes count as refuted)")
        for c in refuted:
            lines += [_claim_line(c), *_ballots(c)]
        lines.append("")
    if unverified:
        lines += [
            "## Unverified claims (verifiers failed)",
            *[_claim_line(c) for c in unverified],
            "",
        ]
    return lines


def _killed_lines(killed: Sequence[Withheld]) -> list[str]:
    if not killed:
        return []
    lines = ["## Killed sources (withheld from the extractor)"]
    lines += [f"- <{k['url']}> — {k['title'] or 'untitled'}: {k['reason']}" for k in killed]
    return [*lines, ""]


def _source_lines(sources: Sequence[SourceOut]) -> list[str]:
    if not sources:
        return []
    lines = ["## Sources read"]
    for s in sources:
        state = f"{s['claimCount']} claims" if s["fetched"] else f"not read: {s['error']}"
        if s.get("withheld"):
            state = "withheld (see Killed sources)"
        lines.append(f"- <{s['url']}> — {s['title'] or 'untitled'} ({state})")
    return [*lines, ""]


def _sending_lines(sent: Sequence[dict[str, str]], refused: Sequence[Refusal]) -> list[str]:
    """What the run sent off the machine, and the queries the outbound policy refused."""
    lines: list[str] = []
    if sent:
        lines += ["## Sent off the machine", *[f"- {x}" for x in sent_lines(sent)], ""]
    if refused:
        lines.append("## Queries refused (outbound policy)")
        lines += [f'- "{x.get("query", "")}": {x.get("reason", "")}' for x in refused]
        lines.append("")
    return lines


def _cut_section(cut: CutOut | None, allowed: frozenset[str]) -> str:
    """Every claim past the cut, per source and in a collapsed section ("" when none)."""
    if not cut or not cut.get("count"):
        return ""
    head = [f"## Claims not verified ({cut['count']} past the cut)"]
    head += [f"- <{s['source']}>: {s['count']}" for s in cut.get("bySource", [])]
    items = [f'- "{c["claim"]}" — <{c["source"]}> ({c["reason"]})' for c in cut.get("claims", [])]
    body = "\n" + inert_answer("\n".join(head), allowed) + "\n\n<details>\n"
    body += f"<summary>The {cut['count']} claims</summary>\n\n"
    return body + inert_answer("\n".join(items), allowed) + "\n\n</details>\n"


def make_report(deps: ResearchDeps) -> Step[ResearchState, ResearchState]:
    def report(state: ResearchState) -> ResearchState:
        status = state.get("status") or "complete"
        searches = state.get("searches", [])
        sources, _ = dedup_sources(state.get("sources", []))
        doc = build_report(
            question=state.get("question", ""),
            status=status,
            scope=state.get("scope"),
            searches=searches,
            sources=sources,
            claims_extracted=state.get("claims_extracted", 0),
            tallied=state.get("tallied", []),
            synthesis=state.get("synthesis"),
            findings=state.get("findings", []),
            notes=state.get("notes", []),
            votes_per_claim=deps.limits.votes_per_claim,
            cut=state.get("cut_claims", []),
            model_calls=state.get("model_calls", 0),
            dupes=sum(s.get("dupes", 0) for s in searches),
            budget_dropped=sum(s.get("budgetDropped", 0) for s in searches),
            sent=state.get("sent", []),
            refused=state.get("refused", []),
        )
        if state.get("run_token"):
            release(state["run_token"])
        emit("report", status=status, findings=len(doc["findings"]))
        return {"report": doc, "markdown": to_markdown(doc), "status": status}

    return report
