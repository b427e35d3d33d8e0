"""The path an answer takes through the GATE: stays, modules, and returns to a module left before.

Issue 49 counted the path by hand ("19 stays in 11 modules, 8 returns"); this script counts it
by tracing. ``check_answer`` runs on a small answer (a prose claim with a percent, an amount and
a year, and an evidence-table row) under ``sys.setprofile``; every call of a function of the
GATE's package down to ``--depth`` calls below ``check_answer`` is a visit to its module, and so
is the return to the caller's module. A stay is a run of visits to one module; a return counts
each stay in a module visited before. Generated code (a dataclass's ``__init__``: building data)
is not counted. ``--baseline REV`` traces the GATE of git revision REV instead (read as
``gate_speed.py --baseline`` reads it).

    python benchmarks/gate_stays.py --depth 2
    python benchmarks/gate_stays.py --depth 2 --baseline 312edb2
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from types import FrameType

from gate_speed import baseline_gate

from refgate.gate import check_answer
from refgate.refs import Ref

ANSWER = (
    "Revenue rose 12.5% to $4.5 billion in 2023 [val_0000000001].\n\n"
    "| Company | Revenue | Rank |\n|---|---|---|\n| Acme | 4,500 | 1 |\n"
    " [tbl_0000000002]\n"
)
REFS = [
    Ref(
        id="val_0000000001",
        kind="valueRef",
        payload={
            "values": {"revenue": 4.5e9, "revenue_growth": 12.5},
            "period": "2023",
            "units": {"revenue_growth": "%"},
        },
    ),
    Ref(
        id="tbl_0000000002",
        kind="tableRef",
        payload={
            "columns": ["company", "revenue", "rank"],
            "rows": [["Acme", 4500, 1]],
            "meta": {"scale": "million"},
        },
    ),
]


def visits(check: Callable[..., object], package: str, depth: int) -> list[str]:
    """The modules of ``package`` that ``check(ANSWER, REFS)`` is in, call by call and return by
    return, down to ``depth`` calls below the check."""
    seq: list[str] = []
    stack: list[str | None] = []

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        if event not in ("call", "return"):
            return
        module = str(frame.f_globals.get("__name__", ""))
        if event == "call":
            if not stack:
                if frame.f_code.co_name == "check_answer" and module.startswith(package):
                    stack.append(module)
                    seq.append(module)
                return
            inside = (
                module.startswith(package)
                and len(stack) <= depth
                and not frame.f_code.co_filename.startswith("<")
            )
            stack.append(module if inside else None)
            if inside:
                seq.append(module)
            return
        if stack:
            stack.pop()
            back = next((m for m in reversed(stack) if m is not None), None)
            if back is not None:
                seq.append(back)

    sys.setprofile(profile)
    try:
        check(ANSWER, REFS)
    finally:
        sys.setprofile(None)
    return seq


def stays(seq: list[str]) -> tuple[list[str], int, int]:
    """(the stays in order, returns to a module left before, those not to the entry module)."""
    runs = [m for i, m in enumerate(seq) if i == 0 or seq[i - 1] != m]
    seen: set[str] = set()
    returns = elsewhere = 0
    for m in runs:
        if m in seen:
            returns += 1
            elsewhere += m != runs[0]
        seen.add(m)
    return runs, returns, elsewhere


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=2, help="calls below check_answer (default 2)")
    ap.add_argument("--baseline", help="trace the GATE of this git revision")
    args = ap.parse_args()
    if args.baseline:
        check, package = baseline_gate(args.baseline), "gate_baseline"
    else:
        check, package = check_answer, "refgate.gate"
    runs, returns, elsewhere = stays(visits(check, package, args.depth))
    print(
        f"depth {args.depth}: {len(runs)} stays in {len(set(runs))} modules, {returns} returns "
        f"to a module left before ({elsewhere} to a module other than check_answer's)"
    )
    print(" > ".join(m.rsplit(".", 1)[-1] for m in runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
