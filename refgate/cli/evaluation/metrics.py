"""Per-question outcome cells and the run summary.

The four cells that matter for an evidence-gated system (content correctness against the GATE's
verdict): ``correct_passed``, ``correct_blocked`` (a false block), ``wrong_passed`` (a false
acceptance: the worst outcome, listed first everywhere), ``wrong_blocked``. A run that failed
(an error, not an answer) is counted as ``failed`` and sits in no cell.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal, TypeAlias

from typing_extensions import TypedDict

from refgate.cli.evaluation.store import EvalResult

#: A cell of the four, or ``failed``; ``Counted`` adds the summary's two totals.
Cell: TypeAlias = Literal[
    "wrong_passed", "correct_blocked", "correct_passed", "wrong_blocked", "failed"
]
Counted: TypeAlias = Literal[
    "wrong_passed",
    "correct_blocked",
    "correct_passed",
    "wrong_blocked",
    "failed",
    "correct",
    "passed",
]
CELLS: tuple[Cell, ...] = ("wrong_passed", "correct_blocked", "correct_passed", "wrong_blocked")


class Summary(TypedDict):
    """A run's summary (``summarize``): the cells' counts, then rates and costs."""

    n: int
    wrong_passed: int
    correct_blocked: int
    correct_passed: int
    wrong_blocked: int
    failed: int
    correct: int
    passed: int
    false_acceptance_rate: float | None
    false_block_rate: float | None
    exact_numeric: float | None
    text_match: float | None
    refusals_expected: int
    refused_correct: int
    tokens: dict[str, int]
    cost_usd: float | None
    cost_known_for: int
    seconds: float
    tool_calls: int
    retries: int


def cell_of(result: Mapping[str, object]) -> Cell:
    """The cell of one question result (``failed`` when the run produced no answer)."""
    if result.get("error"):
        return "failed"
    correct, passed = bool(result.get("correct")), bool(result.get("passed"))
    if correct:
        return "correct_passed" if passed else "correct_blocked"
    return "wrong_passed" if passed else "wrong_blocked"


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def summarize(results: Iterable[EvalResult]) -> Summary:
    """The summary of a run: cells first (false acceptance first), then rates and costs."""
    rows = list(results)
    counts: dict[Cell, int] = {c: 0 for c in (*CELLS, "failed")}
    for r in rows:
        counts[cell_of(r)] += 1
    numeric = [r for r in rows if r.get("gold_numbers")]
    texts = [r for r in rows if r.get("gold_text")]
    refuse = [r for r in rows if r.get("expect") == "refuse"]
    tokens: dict[str, int] = {}
    for r in rows:
        for k, v in (r.get("tokens") or {}).items():
            tokens[k] = tokens.get(k, 0) + int(v or 0)
    costs = [r.get("cost_usd") for r in rows]
    known = [c for c in costs if c is not None]
    out: Summary = {
        "n": len(rows),
        "wrong_passed": counts["wrong_passed"],
        "correct_blocked": counts["correct_blocked"],
        "correct_passed": counts["correct_passed"],
        "wrong_blocked": counts["wrong_blocked"],
        "failed": counts["failed"],
        "correct": counts["correct_passed"] + counts["correct_blocked"],
        "passed": counts["correct_passed"] + counts["wrong_passed"],
        "false_acceptance_rate": _rate(
            counts["wrong_passed"], counts["wrong_passed"] + counts["correct_passed"]
        ),
        "false_block_rate": _rate(
            counts["correct_blocked"], counts["correct_blocked"] + counts["correct_passed"]
        ),
        "exact_numeric": _rate(
            sum(1 for r in numeric if not r.get("numbers_missing") and not r.get("error")),
            len(numeric),
        ),
        "text_match": _rate(
            sum(1 for r in texts if not r.get("text_missing") and not r.get("error")), len(texts)
        ),
        "refusals_expected": len(refuse),
        "refused_correct": sum(1 for r in refuse if r.get("correct")),
        "tokens": tokens,
        "cost_usd": round(sum(known), 6) if known else None,
        "cost_known_for": len(known),
        "seconds": round(sum(float(r.get("seconds") or 0) for r in rows), 3),
        "tool_calls": sum(int(r.get("tool_calls") or 0) for r in rows),
        "retries": sum(int(r.get("retries") or 0) for r in rows),
    }
    return out
