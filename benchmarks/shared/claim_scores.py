"""Claims known to be right or wrong, scored per part (tuning, held-out) and group: the GATE
benchmarks on TAT-QA (gate_binding.py, gate_direction.py, gate_text_direction.py)."""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

from refgate.gate import GateReport, check_answer
from refgate.refs import Ref

TATQA_DIR = Path(__file__).resolve().parents[3] / "shared/data/tatqa-dev"
Claim = tuple[str, Ref, str, bool]  # (group, cited ref, claim, should pass)


def held_out(uid: str) -> bool:
    """The held-out part of TAT-QA, fixed before any tuning: sha1(table uid) % 5 == 0."""
    return int(hashlib.sha1(uid.encode()).hexdigest(), 16) % 5 == 0


class ClaimScores:
    """Right/total per (part, group) and the first ``examples`` failures of each, with the codes
    and details of what blocked them (cut at ``detail_chars``)."""

    def __init__(self, examples: int, detail_chars: int = 220) -> None:
        self.examples, self.detail_chars = examples, detail_chars
        self.counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
        self.failures: dict[tuple[str, str], list[str]] = defaultdict(list)

    def add(self, part: str, group: str, claim: str, report: GateReport, should_pass: bool) -> None:
        """Score one claim: right when the GATE passed it exactly when it should."""
        right = report.passed == should_pass
        c = self.counts[(part, group)]
        c[0] += right
        c[1] += 1
        if not right and len(self.failures[(part, group)]) < self.examples:
            why = "; ".join(f"{i.code}: {i.detail}" for i in report.blocking)[: self.detail_chars]
            self.failures[(part, group)].append(f"{claim}  -> {why or 'passed'}")

    def print(self, group_width: int, rate_width: int = 8) -> None:
        """The rate per part and group, then the failures of each."""
        print(f"{'part':9} {'group':{group_width}} {'right':>7} {'n':>6} {'rate':>{rate_width}}")
        for (part, group), (right, n) in sorted(self.counts.items()):
            print(f"{part:9} {group:{group_width}} {right:7d} {n:6d} {right / n:{rate_width}.2%}")
        for (part, group), ex in sorted(self.failures.items()):
            print(f"\n{part} / {group}: failures")
            for e in ex:
                print("   ", e)


def gate_of(rev: str | None) -> Callable[..., GateReport]:
    """``check_answer`` of today, or of git revision ``rev`` (its GATE package read into a
    temporary package, as ``gate_speed.py --baseline`` does): the same claims, before and after."""
    if not rev:
        return check_answer
    from gate_speed import baseline_gate  # benchmarks/ is the script's folder

    return baseline_gate(rev)  # type: ignore[no-any-return]


def score_tatqa_claims(
    claims_of: Callable[[dict], Iterable[Claim]],
    *,
    examples: int,
    default_part: str = "both",
    group_width: int = 40,
    rate_width: int = 8,
    detail_chars: int = 220,
) -> int:
    """The command line of a GATE benchmark on TAT-QA dev: each item's claims checked against
    the ref they cite, scored per part and group, tables with claims counted per part."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", type=Path, default=TATQA_DIR)
    ap.add_argument("--examples", type=int, default=examples)
    ap.add_argument(
        "--part",
        choices=("tuning", "held-out", "both"),
        default=default_part,
        help="score only one part (tune on 'tuning'; read 'held-out' once the rule is fixed)",
    )
    ap.add_argument("--baseline", help="score the GATE of this git revision instead")
    args = ap.parse_args()
    check = gate_of(args.baseline)
    data = json.loads((args.dir / "tatqa_dataset_dev.json").read_text(encoding="utf-8"))
    scores = ClaimScores(args.examples, detail_chars)
    n_tables = {"tuning": 0, "held-out": 0}
    for ctx in data:
        part = "held-out" if held_out(ctx["table"]["uid"]) else "tuning"
        if args.part != "both" and part != args.part:
            continue
        n_claims = 0
        for group, ref, claim, should_pass in claims_of(ctx):
            scores.add(part, group, claim, check(claim, [ref]), should_pass)
            n_claims += 1
        n_tables[part] += n_claims > 0
    print(f"tables: {n_tables}")
    scores.print(group_width, rate_width)
    return 0
