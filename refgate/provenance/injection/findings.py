"""The result types of ``inspect_injection``: one signal per finding, one report per text."""

from __future__ import annotations

from dataclasses import dataclass, field

from refgate.provenance.levels import Level, highest

#: How sure a signal is.
Confidence = Level

#: Signal kinds: what the text tries to do to the agent.
KINDS = (
    "role_impersonation",
    "instruction_override",
    "tool_directive",
    "authority_claim",
    "exfiltration_hint",
    "delimiter_break",
)

#: Attack families (issue 14): how the attack is written; each rule belongs to one.
FAMILIES = (
    "instruction_override",
    "impersonation",
    "fake_delimiter",
    "task_injection",
    "tool_call",
    "encoded_payload",
    "exfiltration",
    "role_reassignment",
)
MAX_EXCERPT = 200


@dataclass(frozen=True)
class InjectionSignal:
    """One finding: its kind and family, the rule that fired and the matched span."""

    kind: str
    confidence: Confidence
    excerpt: str
    span: tuple[int, int]
    scope: str = "text"
    rule: str = ""
    family: str = ""

    def as_dict(self, *, excerpt: bool = True) -> dict[str, object]:
        out: dict[str, object] = {
            "kind": self.kind,
            "family": self.family,
            "confidence": self.confidence,
            "span": list(self.span),
            "scope": self.scope,
            "rule": self.rule,
        }
        if excerpt:
            out["excerpt"] = self.excerpt
        return out

    def explain(self) -> str:
        """One line for a user: which family fired, by which rule, on what text."""
        where = f"{self.scope} {self.span[0]}-{self.span[1]}"
        return f"{self.family or self.kind} ({self.rule}, {self.confidence}) at {where}: {self.excerpt!r}"


@dataclass
class InjectionReport:
    signals: list[InjectionSignal] = field(default_factory=list)
    scopes: list[str] = field(default_factory=lambda: ["text"])

    @property
    def clean(self) -> bool:
        return not self.signals

    @property
    def signal_count(self) -> int:
        return len(self.signals)

    @property
    def highest_confidence(self) -> Confidence | None:
        return highest(s.confidence for s in self.signals)

    def kinds(self) -> set[str]:
        return {s.kind for s in self.signals}

    def families(self) -> set[str]:
        return {s.family for s in self.signals}

    def as_dict(self, *, excerpts: bool = True) -> dict[str, object]:
        return {
            "clean": self.clean,
            "signalCount": self.signal_count,
            "highestConfidence": self.highest_confidence,
            "scanScopes": list(self.scopes),
            "families": sorted(self.families()),
            "signals": [s.as_dict(excerpt=excerpts) for s in self.signals],
        }


def excerpt(text: str, start: int, end: int) -> str:
    """The matched span with a little context, whitespace collapsed, at most MAX_EXCERPT."""
    if end - start >= MAX_EXCERPT:
        return text[start : start + MAX_EXCERPT]
    pad = (MAX_EXCERPT - (end - start)) // 2
    lo = max(0, start - min(pad, 40))
    hi = min(len(text), end + min(pad, 40))
    return " ".join(text[lo:hi].split())[:MAX_EXCERPT]
