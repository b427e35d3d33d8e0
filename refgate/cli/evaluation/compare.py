"""Two eval runs side by side: per-question changes of cell, correctness and verdict."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from typing_extensions import TypedDict

from refgate.cli.evaluation.metrics import CELLS, Counted, Summary, summarize
from refgate.cli.evaluation.store import EvalResult

#: How bad a cell is, worst first (a move towards the front is a regression).
_RANK = {
    "wrong_passed": 0,
    "failed": 1,
    "wrong_blocked": 2,
    "correct_blocked": 3,
    "correct_passed": 4,
}


class Change(TypedDict):
    """A question whose cell differs between two runs."""

    id: str
    a: str | None
    b: str | None
    change: Literal["better", "worse"]
    why_b: str


class Comparison(TypedDict):
    """Two runs compared (``compare_runs``)."""

    summary_a: Summary
    summary_b: Summary
    delta: dict[Counted, int]
    changes: list[Change]
    only_a: list[str]
    only_b: list[str]


def _count(summary: Summary, key: Counted) -> int:
    return summary[key]


def compare_runs(a: Sequence[EvalResult], b: Sequence[EvalResult]) -> Comparison:
    """Per-question changes from run ``a`` to run ``b`` and the two summaries.

    ``changes`` lists only questions whose cell differs, each marked ``better`` or ``worse``
    (by cell order: wrong_passed < failed < wrong_blocked < correct_blocked < correct_passed);
    ``only_a`` / ``only_b`` list ids run in one of them only.
    """
    by_a = {r["id"]: r for r in a}
    by_b = {r["id"]: r for r in b}
    changes: list[Change] = []
    for qid in [r["id"] for r in a if r["id"] in by_b]:
        ra, rb = by_a[qid], by_b[qid]
        if ra.get("cell") == rb.get("cell"):
            continue
        changes.append(
            {
                "id": qid,
                "a": ra.get("cell"),
                "b": rb.get("cell"),
                "change": "better"
                if _RANK.get(str(rb.get("cell")), 0) > _RANK.get(str(ra.get("cell")), 0)
                else "worse",
                "why_b": rb.get("why", ""),
            }
        )
    sa, sb = summarize(a), summarize(b)
    counted: tuple[Counted, ...] = (*CELLS, "failed", "correct", "passed")
    delta = {k: _count(sb, k) - _count(sa, k) for k in counted}
    return {
        "summary_a": sa,
        "summary_b": sb,
        "delta": delta,
        "changes": changes,
        "only_a": sorted(set(by_a) - set(by_b)),
        "only_b": sorted(set(by_b) - set(by_a)),
    }
