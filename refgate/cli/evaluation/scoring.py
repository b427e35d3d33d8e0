"""Score one answer against its gold: numbers at the precision written, regexes, cited ref kinds,
refusals, question coverage. Numbers are read with the GATE's own parser, so "12,990.3 billion", "9.6%" and "1.2
조원" mean the same here as they do to the GATE.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

from refgate.cli.evaluation.questions import EvalQuestion, search_pattern
from refgate.gate.coverage import uncovered
from refgate.gate.numbers import Num, find_numbers
from refgate.refs import cited_ids

#: The GATE appends this heading to an answer that went out with unmet claims; what follows it
#: lists claims the answer could not back, so it is not part of the answer being scored.
UNMET_HEADING = "### Not verified"

#: Phrases that say the data cannot answer the question (English and Korean).
REFUSAL_PATTERNS: tuple[str, ...] = (
    r"\b(?:cannot|can ?not|can't|unable to|not (?:possible|able) to)\b[^.\n]{0,80}?"
    r"\b(?:answer|determine|find|compute|calculate|say|tell|provide|identify|establish|verify)\b",
    r"\b(?:no|not enough|insufficient|lacks?(?: the)?)\s+(?:data|information|evidence|records?)\b",
    r"\b(?:does|do|did) not (?:contain|include|cover|have|extend|go)\b",
    r"\b(?:is|are|was|were)(?:n't| not) (?:available|covered|included|present|reported|recorded)\b",
    r"\b(?:outside|beyond|before|after) the (?:range|coverage|period|span|end|start)\b",
    r"\bnot in the (?:data|dataset|workspace|documents?)\b",
    r"(?:답할 수 없|알 수 없|확인할 수 없|제공하지 않|포함되어 있지 않|데이터가 없)",
)
_REFUSAL = re.compile("|".join(f"(?:{p})" for p in REFUSAL_PATTERNS), re.IGNORECASE)


@dataclass(slots=True)
class Score:
    """How one answer fares against its gold; ``correct`` is the verdict on content alone (the
    GATE's verdict is kept beside it, never mixed in)."""

    correct: bool
    refused: bool
    numbers_found: list[str] = field(default_factory=list)
    numbers_missing: list[str] = field(default_factory=list)
    text_missing: list[str] = field(default_factory=list)
    kinds_missing: list[str] = field(default_factory=list)
    why: str = ""

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def answer_body(answer: str) -> str:
    """The answer without the GATE's "Not verified" section."""
    cut = answer.find(UNMET_HEADING)
    return answer if cut < 0 else answer[:cut]


def is_refusal(text: str) -> bool:
    """Does the text say that the question cannot be answered from the data?"""
    return bool(_REFUSAL.search(text))


def _gold_values(gold: float | str) -> list[tuple[float, float]]:
    """A gold value as (value, step) pairs to look for: a float is exact (step 0); a string goes
    through the GATE's parser, as written and in full ("12.99 billion" -> (12.99, 0.01) and
    (1.299e10, 1e7))."""
    if isinstance(gold, int | float):
        return [(float(gold), 0.0)]
    nums = find_numbers(str(gold))
    if not nums:
        raise ValueError(f"gold value {gold!r} holds no number")
    n = nums[0]
    return [(n.shown, n.step), (n.shown * n.scale, n.step * n.scale)]


def _matches(num: Num, gold: tuple[float, float], tolerance: float) -> bool:
    """Do a stated number and a gold value agree at the coarser of their two precisions (or
    within the relative tolerance)? Compared by magnitude: "fell 0.5 points" states -0.5 too."""
    g, gold_step = abs(gold[0]), gold[1]
    for value, step in (
        (abs(num.shown), num.step),
        (abs(num.shown) * num.scale, num.step * num.scale),
    ):
        if abs(value - g) <= max(step, gold_step) / 2 + 1e-9 * max(1.0, g):
            return True
        if tolerance and abs(value - g) <= tolerance * g:
            return True
    return False


def cited_kinds(answer: str, refs: Mapping[str, object]) -> set[str]:
    """Kinds of the ledger refs that the answer cites."""
    kinds: set[str] = set()
    for ref_id in cited_ids(answer, refs):
        ref = refs.get(ref_id)
        if ref is None:
            continue
        kind = ref.get("kind") if isinstance(ref, dict) else getattr(ref, "kind", None)
        if kind:
            kinds.add(str(kind))
    return kinds


def _found(pattern: str, body: str) -> bool:
    """The gold pattern in the answer, within the time bound (past it: not found)."""
    try:
        return search_pattern(pattern, body)
    except TimeoutError:
        return False


def score_answer(
    q: EvalQuestion, answer: str | None, refs: Mapping[str, object] | None = None
) -> Score:
    """Score ``answer`` (markdown, with citations) against ``q``'s gold."""
    body = answer_body(answer or "")
    refused = is_refusal(body)
    if q.expect == "refuse":
        ok = refused
        return Score(
            correct=ok,
            refused=refused,
            why="" if ok else "answered a question the data cannot answer",
        )
    if not body.strip():
        return Score(correct=False, refused=False, why="no answer")
    stated = find_numbers(body)
    found, missing = [], []
    for gold in q.numbers:
        wanted = _gold_values(gold)
        if any(_matches(n, w, q.tolerance) for n in stated for w in wanted):
            found.append(str(gold))
        else:
            missing.append(str(gold))
    text_missing = [p for p in q.text if not _found(p, body)]
    kinds_missing = sorted(set(q.refs_required) - cited_kinds(body, refs or {}))
    why = []
    if missing:
        why.append("missing number(s) " + ", ".join(missing))
    if text_missing:
        why.append("missing text " + ", ".join(repr(p) for p in text_missing))
    if kinds_missing:
        why.append("no cited " + ", ".join(kinds_missing))
    if refused and not q.numbers and not q.text:
        why.append("refused a question the data can answer")
    if not refused:
        # An answer that states nothing about the asked quantity or period answers another
        # question, whatever numbers it holds (the GATE's question coverage, on the answer).
        why += uncovered(q.question, [body])
    return Score(
        correct=not why,
        refused=refused,
        numbers_found=found,
        numbers_missing=missing,
        text_missing=text_missing,
        kinds_missing=kinds_missing,
        why="; ".join(why),
    )
