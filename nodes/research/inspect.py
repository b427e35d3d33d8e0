"""The inspections every fetched page goes through before the extractor sees it: the workbench's
own (``refgate.provenance.boundaries.scan_untrusted``: injection and unicode) on the page's title
and text, and on the text the fetcher removed as hidden (CSS, size, colour, position). A page
with a high-confidence signal, or hidden text carrying a medium or high injection signal, is
withheld: it is
never put in a prompt, and the report lists it among the killed sources with the reason."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

from refgate.nodes.research.state import PageVerdict, Withheld
from refgate.provenance.boundaries import scan_untrusted

HitT = TypeVar("HitT", bound=Mapping[str, object])


def _kinds(signals: Iterable[Mapping[str, object]], *, high_only: bool) -> list[str]:
    return sorted({str(s["kind"]) for s in signals if not high_only or s["confidence"] == "high"})


def page_verdict(title: str, text: str, hidden_text: str = "") -> PageVerdict | None:
    """Why a fetched page is withheld (``{"reason", "kinds", "where"}``), or None to read it."""
    signals, high = scan_untrusted(f"{title}\n{text}")
    if high:
        kinds = _kinds(signals, high_only=True)
        return {
            "reason": f"high-confidence {', '.join(kinds)} signal in the page text",
            "kinds": kinds,
            "where": "text",
        }
    if hidden_text.strip():
        hidden, hidden_high = scan_untrusted(hidden_text)
        # Hidden text is a red flag in itself: a medium injection signal there is enough (on the
        # tuning split of benchmarks/data/injection every attack scores medium or high, every
        # near miss at most low; see benchmarks/page_withholding.py).
        injection = [s for s in hidden if s["detector"] == "injection" and s["confidence"] != "low"]
        if hidden_high or injection:
            kinds = _kinds(injection or hidden, high_only=False)
            return {
                "reason": f"text hidden from readers carries a {', '.join(kinds)} signal",
                "kinds": kinds,
                "where": "hidden text",
            }
    return None


def screen_hits(hits: Sequence[HitT]) -> tuple[list[HitT], list[Withheld]]:
    """Search results split into those the searcher may see and those withheld (a title or
    snippet with a high-confidence signal): ``(kept, [{url, title, reason, kinds}])``."""
    kept: list[HitT] = []
    withheld: list[Withheld] = []
    for hit in hits:
        verdict = page_verdict(str(hit.get("title") or ""), str(hit.get("snippet") or ""))
        if verdict is None:
            kept.append(hit)
        else:
            withheld.append(
                {
                    "url": str(hit.get("url", "")),
                    "title": str(hit.get("title", "")),
                    "reason": f"search result: {verdict['reason']}",
                    "kinds": verdict["kinds"],
                }
            )
    return kept, withheld
