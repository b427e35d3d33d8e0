"""``inspect_unicode``: bytes that read differently from what a person sees.

Findings (kind, severity):

- ``tag_characters`` (high): U+E0000-E007F; the hidden ASCII they spell is decoded.
- ``bidi_override`` (high for LRO/RLO U+202D/U+202E, medium for the other embeddings and isolates
  U+202A-202C, U+2066-2069).
- ``zero_width`` (medium): U+200B/C/D, U+2060-2064, U+FEFF (except a byte-order mark at offset 0),
  U+180E; soft hyphens U+00AD are low.
- ``bidi_mark`` (low): U+200E/U+200F (legitimate in right-to-left text, suspicious in Latin text).
- ``mixed_script`` (medium): a word mixing Latin letters with Cyrillic or Greek look-alikes
  (``pаypal`` with a Cyrillic ``а``).

Deterministic; pure ASCII text is clean by construction and returns at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from refgate.provenance.levels import RANK, Level, highest

#: How grave a finding is.
Severity = Level

ZERO_WIDTH = "\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u180e"
SOFT_HYPHEN = "\u00ad"
BIDI_OVERRIDE_HIGH = "\u202d\u202e"
BIDI_EMBED = "\u202a\u202b\u202c\u2066\u2067\u2068\u2069"
BIDI_MARKS = "\u200e\u200f"

#: Cyrillic and Greek letters that render like Latin ones (lower and upper case) -> Latin.
CONFUSABLES: dict[str, str] = {
    # Cyrillic
    "а": "a",
    "в": "b",
    "е": "e",
    "ё": "e",
    "к": "k",
    "м": "m",
    "н": "h",
    "о": "o",
    "р": "p",
    "с": "c",
    "т": "t",
    "у": "y",
    "х": "x",
    "і": "i",
    "ї": "i",
    "ј": "j",
    "ѕ": "s",
    "ԁ": "d",
    "ԛ": "q",
    "ԝ": "w",
    "һ": "h",
    "ӏ": "l",
    "ɡ": "g",
    "А": "a",
    "В": "b",
    "Е": "e",
    "К": "k",
    "М": "m",
    "Н": "h",
    "О": "o",
    "Р": "p",
    "С": "c",
    "Т": "t",
    "У": "y",
    "Х": "x",
    "І": "i",
    "Ј": "j",
    "Ѕ": "s",
    # Greek
    "α": "a",
    "ο": "o",
    "ρ": "p",
    "ν": "v",
    "τ": "t",
    "ι": "i",
    "κ": "k",
    "υ": "u",
    "χ": "x",
    "ε": "e",
    "Α": "a",
    "Β": "b",
    "Ε": "e",
    "Ζ": "z",
    "Η": "h",
    "Ι": "i",
    "Κ": "k",
    "Μ": "m",
    "Ν": "n",
    "Ο": "o",
    "Ρ": "p",
    "Τ": "t",
    "Υ": "y",
    "Χ": "x",
}

_INVISIBLE_RE = re.compile(
    f"[{ZERO_WIDTH}{SOFT_HYPHEN}{BIDI_OVERRIDE_HIGH}{BIDI_EMBED}{BIDI_MARKS}]+"
    "|[\U000e0000-\U000e007f]+"
)
_CONFUSABLE_CLASS = "".join(sorted(CONFUSABLES))
_HAS_CONFUSABLE_RE = re.compile(f"[{_CONFUSABLE_CLASS}]")
# A word (letters only) that contains at least one Latin letter and one look-alike.
_MIXED_WORD_RE = re.compile(
    rf"(?<![^\W\d_])(?=[^\W\d_]*[A-Za-z])(?=[^\W\d_]*[{_CONFUSABLE_CLASS}])[^\W\d_]+"
)
_EXCERPT = 80


@dataclass(frozen=True)
class UnicodeFinding:
    kind: str
    severity: Severity
    span: tuple[int, int]
    codepoints: tuple[str, ...]
    excerpt: str
    decoded: str = ""

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "kind": self.kind,
            "severity": self.severity,
            "span": list(self.span),
            "codepoints": list(self.codepoints),
            "excerpt": self.excerpt,
        }
        if self.decoded:
            out["decoded"] = self.decoded
        return out


@dataclass
class UnicodeReport:
    findings: list[UnicodeFinding] = field(default_factory=list)
    #: The text as a reader sees it (invisible characters removed, tag characters dropped).
    rendered: str = ""
    #: ASCII spelled by tag characters, in order of appearance.
    hidden_ascii: str = ""

    @property
    def clean(self) -> bool:
        return not self.findings

    @property
    def finding_count(self) -> int:
        return len(self.findings)

    @property
    def highest_severity(self) -> Severity | None:
        return highest(f.severity for f in self.findings)

    @property
    def severity_counts(self) -> dict[str, int]:
        counts = {"high": 0, "medium": 0, "low": 0}
        for f in self.findings:
            counts[f.severity] += 1
        return counts

    def as_dict(self) -> dict[str, object]:
        return {
            "clean": self.clean,
            "findingCount": self.finding_count,
            "highestSeverity": self.highest_severity,
            "severityCounts": self.severity_counts,
            "hiddenAscii": self.hidden_ascii,
            "findings": [f.as_dict() for f in self.findings],
        }


def decode_tags(run: str) -> str:
    """The text spelled by tag characters: each character minus U+E0000 (U+E0020-E007E spell
    ASCII; the rest of plane 14 spells other characters), controls but tab and newline dropped.
    The unicode report and the injection scan both read hidden text so."""
    out = (chr(ord(c) - 0xE0000) for c in run)
    return "".join(c for c in out if c.isprintable() or c in "\n\t")


def _excerpt(text: str, start: int, end: int) -> str:
    lo = max(0, start - _EXCERPT // 2)
    hi = min(len(text), end + _EXCERPT // 2)
    visible = "".join(
        f"<U+{ord(c):04X}>" if c in _ALL_INVISIBLE or 0xE0000 <= ord(c) <= 0xE007F else c
        for c in text[lo:hi]
    )
    return visible[:200]


_ALL_INVISIBLE = set(ZERO_WIDTH + SOFT_HYPHEN + BIDI_OVERRIDE_HIGH + BIDI_EMBED + BIDI_MARKS)


def _classify_run(run: str) -> list[tuple[str, Severity, str]]:
    """Split a run of invisible characters into (kind, severity, chars) groups."""
    groups: list[tuple[str, Severity, str]] = []
    for ch in run:
        cp = ord(ch)
        sev: Severity
        if 0xE0000 <= cp <= 0xE007F:
            kind, sev = "tag_characters", "high"
        elif ch in BIDI_OVERRIDE_HIGH:
            kind, sev = "bidi_override", "high"
        elif ch in BIDI_EMBED:
            kind, sev = "bidi_override", "medium"
        elif ch in BIDI_MARKS:
            kind, sev = "bidi_mark", "low"
        elif ch == SOFT_HYPHEN:
            kind, sev = "zero_width", "low"
        else:
            kind, sev = "zero_width", "medium"
        if groups and groups[-1][0] == kind:
            prev_kind, prev_sev, chars = groups[-1]
            best = prev_sev if RANK[prev_sev] >= RANK[sev] else sev
            groups[-1] = (kind, best, chars + ch)
        else:
            groups.append((kind, sev, ch))
    return groups


def inspect_unicode(text: str) -> UnicodeReport:
    """Find invisible, direction-changing, tag and look-alike characters in ``text``."""
    if text.isascii():
        return UnicodeReport(rendered=text)
    findings: list[UnicodeFinding] = []
    hidden: list[str] = []
    for m in _INVISIBLE_RE.finditer(text):
        pos = m.start()
        for kind, sev, chars in _classify_run(m.group()):
            start, end = pos, pos + len(chars)
            pos = end
            if kind == "zero_width" and start == 0 and chars == "\ufeff":
                continue  # a byte-order mark at the start of a file
            if start == 0 and chars.startswith("\ufeff") and kind == "zero_width":
                chars = chars[1:]
                start = 1
            decoded = decode_tags(chars) if kind == "tag_characters" else ""
            if decoded:
                hidden.append(decoded)
            findings.append(
                UnicodeFinding(
                    kind=kind,
                    severity=sev,
                    span=(start, end),
                    codepoints=tuple(dict.fromkeys(f"U+{ord(c):04X}" for c in chars)),
                    excerpt=_excerpt(text, start, end),
                    decoded=decoded,
                )
            )
    if _HAS_CONFUSABLE_RE.search(text):
        for m in _MIXED_WORD_RE.finditer(text):
            word = m.group()
            looks = [c for c in word if c in CONFUSABLES]
            findings.append(
                UnicodeFinding(
                    kind="mixed_script",
                    severity="medium",
                    span=(m.start(), m.end()),
                    codepoints=tuple(dict.fromkeys(f"U+{ord(c):04X}" for c in looks)),
                    excerpt=_excerpt(text, m.start(), m.end()),
                    decoded="".join(CONFUSABLES.get(c, c) for c in word),
                )
            )
    findings.sort(key=lambda f: f.span)
    rendered = _INVISIBLE_RE.sub("", text) if findings else text
    return UnicodeReport(findings=findings, rendered=rendered, hidden_ascii="".join(hidden))
