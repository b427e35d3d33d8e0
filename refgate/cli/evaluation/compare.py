"""Two eval runs side by side: per-question changes of cell, correctness and verdict."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from refgate.cli.evaluation.metrics import CELLS, summarize
from refgate.cli.evaluation.store import EvalResult

#: How bad a cell is, worst first (a move towards the front is a regression).
_RANK = {
    "wrong_passed": 0,
    "failed": 1,
    "wrong_blocked": 2,
    "correct_blocked": 3,
    "correct_passed": 4,
}


def compare_runs(a: Sequence[EvalResult], b: Sequence[EvalResult]) -> dict[str, Any]:
    """Per-question changes from run ``a`` to run ``b`` and the two summaries.

    ``changes`` lists only questions whose cell differs, each marked ``better`` or ``worse``
    (by cell order: wrong_passed < failed < wrong_blocked < correct_blocked < correct_passed);
    ``only_a`` / ``only_b`` list ids run in one of them only.
    """
    by_a = {r["id"]: r for r in a}
    by_b = {r["id"]: r for r in b}
    changes = []
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
    delta = {k: sb[k] - sa[k] for k in (*CELLS, "failed", "correct", "passed")}
    return {
        "summary_a": sa,
        "summary_b": sb,
        "delta": delta,
        "changes": changes,
        "only_a": sorted(set(by_a) - set(by_b)),
        "only_b": sorted(set(by_b) - set(by_a)),
    }
