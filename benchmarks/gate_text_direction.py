"""GATE direction words in text on real annual-report paragraphs (TAT-QA dev, CC BY 4.0): does a
claim that restates a sentence's change ("Sales grew 12%") pass, one that reverses it ("Sales
fell 12%") block, and one that states the number as a level ("Sales was 12%") pass as before?

Run: ``python benchmarks/gate_text_direction.py [--dir ../shared/data/tatqa-dev] [--part tuning]``.
Each paragraph becomes a docRef (``{"text": paragraph}``); items are split as in
``gate_binding.py`` (held-out = ``held_out(table uid)``). A sentence is used where a direction
verb states a number as the size of a change ("increased 5%", "decreased by $2.1 million", "grew
12%", "declined 3%"; not "rose to 12%", a level) after subject words with no number of their
own, or where a noun does ("saw an increase of 5%", "a decrease of $2.1 million": groups
"noun, ..."; the subject words are those before it, less a verb such as "saw" or "recorded", and none with a change word of their own).
Claims, each "<subject words> <verb> <number> [doc].":

- **same**: the sentence's direction, verbs rotated (rose / increased by / grew / was up; fell /
  decreased by / declined / was ... lower): must pass;
- **reversed**: the other direction: must block;
- **level**: "<subject words> was <number> [doc].": must pass (a claim that states no direction);
- **level sentence**: where the sentence states a level reached ("rose to 12%"), claims of either
  direction ("<subject words> rose 12%", "... fell 12%"): must pass (the sentence states no size
  of a change; the claim is not checked against it).

Groups split percent numbers from amounts; rates are printed per part and group, with examples
of each failure.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Iterator

from shared.claim_scores import Claim, score_tatqa_claims

from refgate.refs import Ref

_RISE_VERBS = "increased|rose|grew|climbed|improved|(?:was|were) up"
_FALL_VERBS = "decreased|declined|fell|dropped|(?:was|were) down"
#: "<subject> <verb> [by] <number>": the benchmark's own reading of a change in a sentence.
_CHANGE = re.compile(
    rf"(?P<verb>\b(?:{_RISE_VERBS}|{_FALL_VERBS}))(?:[ ]+(?P<to>by|to))?"
    r"(?:[ ]+(?:approximately|about))?"
    r"[ ]+(?P<num>\$?\d[\d,]*(?:\.\d+)?(?:[ ]*(?:%|percent\b|percentage points?\b"
    r"|basis points\b|million\b|billion\b|thousand\b))?)",
    re.I,
)
_RISE_NOUNS = "increase|rise|growth|gain|improvement"
_FALL_NOUNS = "decrease|decline|drop|reduction"
#: "<subject> [saw] a <noun> of <number>": a change stated with a noun.
_NOUN_CHANGE = re.compile(
    rf"(?:\b(?:an?|the)[ ]+)?(?P<verb>\b(?:{_RISE_NOUNS}|{_FALL_NOUNS}))[ ]+of"
    r"(?:[ ]+(?:approximately|about))?"
    r"[ ]+(?P<num>\$?\d[\d,]*(?:\.\d+)?(?:[ ]*(?:%|percent\b|percentage points?\b"
    r"|basis points\b|million\b|billion\b|thousand\b))?)",
    re.I,
)
#: Verbs that introduce a noun of change ("Revenue saw an increase of"): not subject words.
_NOUN_VERB_END = re.compile(
    r"(?:\s+(?:saw|had|has|have|showed|shows|recorded|posted|reported|experienced|reflected"
    r"|reflects|represented|represents|was|were|is|are))+$",
    re.I,
)
_ANY_CHANGE_WORD = re.compile(
    rf"\b(?:{_RISE_VERBS}|{_FALL_VERBS}|{_RISE_NOUNS}|{_FALL_NOUNS}|offset|attributable)\b", re.I
)
#: The same change restated after it: "increased by $2.1 million, or 5%".
_RESTATED = re.compile(r"^,?[ ]+or[ ]+(?:approximately[ ]+)?(\d[\d,]*(?:\.\d+)?[ ]*%)")
_SENTENCES = re.compile(r"(?<=[.;])\s+(?=[A-Z(])")
_CLAUSE_START = re.compile(r".*(?:[,;:(]|\b(?:and|while|whereas|but|as|which|that)\b)", re.I)
_LEAD = re.compile(r"^(?:the|our|its|this|in addition|overall|also)\s+", re.I)
_PRONOUN = re.compile(r"^(?:it|this|they|these|which|that|there|we|he|she)$", re.I)
_FALLS = ("fell {}", "decreased by {}", "declined {}", "was {} lower")
_RISES = ("rose {}", "increased by {}", "grew {}", "was up {}")


def doc_ref(uid: str, text: str) -> Ref:
    return Ref(
        id="doc_" + hashlib.sha1(uid.encode()).hexdigest()[:10],
        kind="docRef",
        payload={"text": text},
    )


def _found(sentence: str) -> Iterator[tuple[re.Match[str], bool]]:
    """Each change a sentence states with a verb, then each it states with a noun."""
    for m in _CHANGE.finditer(sentence):
        yield m, False
    for m in _NOUN_CHANGE.finditer(sentence):
        yield m, True


def changes(paragraph: str) -> Iterator[tuple[str, str, bool, bool, bool]]:
    """(subject words, number as written, a rise?, a level reached?, stated with a noun?) of
    each change a sentence states ("rose 5%", "an increase of 5%") and each level it says a
    change reached ("rose to 12%")."""
    for sentence in _SENTENCES.split(paragraph):
        for m, noun in _found(sentence):
            num = m.group("num").rstrip(".,")
            if num.endswith(","):
                continue
            head = sentence[: m.start()]
            start = _CLAUSE_START.match(head)
            subject = _LEAD.sub("", head[start.end() if start else 0 :].strip())
            if noun:
                subject = _NOUN_VERB_END.sub("", subject)
                if _ANY_CHANGE_WORD.search(subject):  # "increase ... was offset by a decrease"
                    continue
            words = subject.split()[-8:]
            if not words or _PRONOUN.match(words[0]) and len(words) == 1:
                continue
            if any(ch.isdigit() for ch in subject) or not any(w.isalpha() for w in words):
                continue
            rise = re.match(_RISE_NOUNS if noun else _RISE_VERBS, m.group("verb"), re.I)
            level = not noun and (m.group("to") or "").lower() == "to"
            yield " ".join(words), num, rise is not None, level, noun
            again = _RESTATED.match(sentence[m.end() :])
            if again and not level:
                yield " ".join(words), again.group(1), rise is not None, False, noun


def claims_of(ctx: dict) -> Iterator[Claim]:
    """(group, cited ref, claim, should pass) for each change stated in the item's paragraphs."""
    for p in ctx["paragraphs"]:
        ref = doc_ref(p["uid"], p["text"])
        for i, (subject, num, rise, level, noun) in enumerate(changes(p["text"])):
            kind = ("noun, " if noun else "") + (
                "percent" if "%" in num or "percent" in num else "amount"
            )
            same, other = (_RISES, _FALLS) if rise else (_FALLS, _RISES)
            verb = i % len(same)
            if level:  # "rose to 12%": a claim of either direction binds the level as today
                for words in (same, other):
                    claim = f"{subject} {words[verb].format(num)} [{ref.id}]."
                    yield "level sentence: either", ref, claim, True
                continue
            yield f"{kind}: same", ref, f"{subject} {same[verb].format(num)} [{ref.id}].", True
            yield (
                f"{kind}: reversed",
                ref,
                f"{subject} {other[verb].format(num)} [{ref.id}].",
                False,
            )
            yield f"{kind}: level", ref, f"{subject} was {num} [{ref.id}].", True


if __name__ == "__main__":
    sys.exit(score_tatqa_claims(claims_of, examples=4, default_part="tuning", group_width=20))
