"""Claims known to be right or wrong, scored per part (tuning, held-out) and group: the GATE
benchmarks on TAT-QA (gate_binding.py, gate_direction.py, gate_text_direction.py)."""

from __future__ import annotations

from collections import defaultdict

from refgate.nodes.gate import GateReport


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
