"""What a refutation must show, and what one site may decide (voters a planted page cannot
steer).

**A refutation quotes a contradiction.** A vote that refutes a claim on a page other than the
claim's own must quote a sentence that (beyond being in the page and bearing on the claim,
``verify.check_vote``):

- carries no instruction: no detector signal (``scan_untrusted``, as every page) and, whether
  or not the detector runs, no clause that disqualifies other sources wholesale ("every statement
  ... published elsewhere is wrong", "ignore other reports"): an order to the reader, not a fact;
- contradicts the claim: a negation of a term the claim states, an opposite direction
  (raised / lowered), or a different number for what the claim quantifies.

A refutation that fails is **rejected**: it is not a refutation, and the vote falls back to the
claim's own verified quote (a skeptic who found no contradiction leaves the claim standing). The
ballot says so and why.

**One voice per text.** Refutations quoting the same sentence on several sites are copies, one
voice; a page whose statement no independent site corroborates cannot by itself refute a claim
that independent sites confirm (``overrule_single_voice``). The report shows when a claim's fate
rests on one site (``fate_site``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from refgate.lexical import terms
from refgate.provenance.boundaries import scan_untrusted

#: A clause that declares other sources wrong wholesale, or tells the reader to disregard them.
_DISQUALIFY = re.compile(
    r"\b(?:every|all|any|each|other)\s+(?:\w+\s+){0,8}?(?:statements?|reports?|sources?|figures?|"
    r"claims?|numbers?|pages?|articles?|accounts?|data|information|sites?)\b[^.;]{0,160}?"
    r"\b(?:is|are|was|were|(?:must|should|shall|will|can|may)\s+be(?:\s+(?:treated|regarded|"
    r"considered|seen|taken))?(?:\s+as)?)\s+(?:\w+\s+)?(?:wrong|false|incorrect|"
    r"outdated|invalid|fabricated|fake|unreliable|erroneous|void|superseded|misleading)\b"
    r"|\b(?:ignore|disregard|discard|do\s+not\s+(?:trust|use|rely\s+on|cite))\s+(?:\w+\s+){0,3}"
    r"(?:other|all|any|previous|earlier|those)\b"
    r"|\b(?:published|reported|stated|found)\s+elsewhere\b"
    r"|(?:다른|모든|기타)\s*(?:출처|보도|기사|자료|문서|수치|발표)[^.]{0,40}(?:틀렸|잘못|무시|거짓|오류)",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:not|no|never|neither|nor|didn't|did\s+not|was\s+not|were\s+not|has\s+not|have\s+not|"
    r"had\s+not|isn't|wasn't|weren't|hasn't|haven't|denied|false|untrue|incorrect)\b"
    r"|않|없|아니",
    re.IGNORECASE,
)
_OPPOSITES = (
    (
        {
            "raise",
            "raised",
            "raises",
            "increase",
            "increased",
            "rose",
            "higher",
            "up",
            "tighten",
            "tightened",
            "hike",
            "hiked",
        },
        {
            "lower",
            "lowered",
            "lowers",
            "decrease",
            "decreased",
            "cut",
            "fell",
            "reduce",
            "reduced",
            "down",
            "ease",
            "eased",
        },
    ),  # fmt: skip
)
_STEADY = {"unchanged", "steady", "maintained", "kept", "held", "left", "flat", "stable"}
_NUMBER = re.compile(r"\d+(?:[.,/-]\d+)*")


def carries_instruction(sentence: str) -> str | None:
    """Why a quoted sentence is an order rather than a fact, else None."""
    if _DISQUALIFY.search(sentence or ""):
        return "its quoted sentence tells the reader to disregard other sources"
    signals, _ = scan_untrusted(sentence or "")
    if any(s["confidence"] in ("high", "medium") for s in signals):
        return "its quoted sentence carries an instruction (an injection signal)"
    return None


def contradicts(sentence: str, claim: Mapping[str, object]) -> bool:
    """True when ``sentence`` contradicts the claim: it negates what the claim states, states
    the opposite direction, or gives a different number in the claim's context."""
    about = f"{claim.get('claim', '')} {claim.get('quote', '')}"
    said = set(terms(about))
    quoted = set(terms(sentence))
    shared = said & quoted
    if not shared:
        return False
    if _NEGATION.search(sentence):
        return True
    words_said = set(re.findall(r"[a-z]+", about.lower()))
    words_quoted = set(re.findall(r"[a-z]+", sentence.lower()))
    for up, down in _OPPOSITES:
        if (words_said & up and words_quoted & down) or (words_said & down and words_quoted & up):
            return True
        moved = words_said & (up | down)
        if (moved and words_quoted & _STEADY) or (
            words_said & _STEADY and words_quoted & (up | down)
        ):
            return True
    numbers_said = set(_NUMBER.findall(about))
    numbers_quoted = set(_NUMBER.findall(sentence))
    return bool(numbers_said and numbers_quoted and not numbers_quoted <= numbers_said)


def refutation_problem(sentence: str, claim: Mapping[str, object]) -> str | None:
    """Why a refutation resting on another page's ``sentence`` is rejected, else None."""
    why = carries_instruction(sentence)
    if why:
        return why
    if not contradicts(sentence, claim):
        return "its quoted sentence does not contradict the claim"
    return None


def _voice(quote: str) -> frozenset[str]:
    return frozenset(terms(quote or "")) | frozenset(_NUMBER.findall(quote or ""))


def _quote(vote: Mapping[str, object]) -> str:
    verdict = vote.get("verdict")
    return str(verdict.get("sourceQuote") or "") if isinstance(verdict, Mapping) else ""


def page_refutations(
    claim: Mapping[str, object], cast: Sequence[Mapping[str, object]]
) -> list[Mapping[str, object]]:
    """The refuting votes that rest on a page other than the claim's own."""
    own = str(claim.get("sourceUrl") or "")
    out = []
    for v in cast:
        verdict = v.get("verdict")
        if v.get("status") != "refute" or not isinstance(verdict, Mapping):
            continue
        if str(verdict.get("counterSource") or "") != own:
            out.append(v)
    return out


def overrule_single_voice(
    claim: Mapping[str, object],
    cast: Sequence[Mapping[str, object]],
    support_sites: Sequence[str],
) -> list[int]:
    """The voters whose refutations cannot by themselves refute the claim: the claim is
    confirmed by two or more independent sites, and every refutation rests on pages of one
    voice (one site, or copies of one sentence) that no independent site corroborates."""
    if len(support_sites) < 2:
        return []
    refuting = page_refutations(claim, cast)
    if not refuting:
        return []
    sites = {str(v.get("site") or "") for v in refuting}
    voices = {_voice(_quote(v)) for v in refuting}
    if len(sites) > 1 and len(voices) > 1:
        return []
    if sites & set(support_sites):
        return []
    return [int(v["voter"]) for v in refuting]  # type: ignore[call-overload]


def copied_voices(claim: Mapping[str, object], cast: Sequence[Mapping[str, object]]) -> list[int]:
    """The voters whose page refutation repeats a sentence another voter already quoted from
    another page: copies of one text are one voice, so only the first counts."""
    seen: set[frozenset[str]] = set()
    copies: list[int] = []
    for v in page_refutations(claim, cast):
        voice = _voice(_quote(v))
        if voice in seen:
            copies.append(int(v["voter"]))  # type: ignore[call-overload]
        seen.add(voice)
    return copies


def fate_site(
    outcome: str,
    claim: Mapping[str, object],
    cast: Sequence[Mapping[str, object]],
    support_sites: Sequence[str],
) -> str | None:
    """The one site a claim's fate rests on, when it rests on one: a refuted claim whose
    refutations all rest on one site (or copies of one sentence), a surviving claim supported
    by one site only."""
    if outcome == "refuted":
        refuting = page_refutations(claim, cast)
        if not refuting or len(refuting) < sum(
            1 for v in cast if v.get("status") in ("refute", "uncertain")
        ):
            return None
        sites = sorted({str(v.get("site") or "") for v in refuting})
        voices = {_voice(_quote(v)) for v in refuting}
        if len(sites) == 1 or len(voices) == 1:
            return sites[0] if len(sites) == 1 else f"one text on {', '.join(sites)}"
        return None
    if outcome == "survives" and len(support_sites) == 1:
        return support_sites[0]
    return None
