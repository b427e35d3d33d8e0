"""Sentences of real analytic text for the conclusion-flagging set (benchmarks/
conclusion_flagging.py, benchmarks/build_conclusion_set.py): English and Korean splitters, a DART
document.xml reader, and the digest a pointer keeps to notice a changed source."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

EN_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
KO_SPLIT = re.compile(r"(?<=[다요음함됨임]\.)\s+|(?<=니다)\s+|\n+")


def en_sentences(text: str) -> list[str]:
    out = []
    for s in EN_SPLIT.split(" ".join(text.split())):
        if 40 <= len(s) <= 240 and s[0].isupper() and s.endswith((".", "!")):
            out.append(s)
    return out


def ko_sentences(text: str) -> list[str]:
    out = []
    for s in KO_SPLIT.split(text):
        s = s.strip().lstrip("-•·○ ").strip()
        if (
            15 <= len(s) <= 200
            and not s.startswith(("|", "※", "[", "*"))
            and "|" not in s
            and s.endswith((".", "니다", "습니다"))
            and len(re.findall(r"[가-힣]", s)) >= 8
        ):
            out.append(s)
    return out


def xml_sentences(path: Path) -> list[str]:
    """The sentences of a DART document.xml (EUC-KR or UTF-8), tags removed, in order."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("euc-kr", errors="replace")
    text = re.sub(r"<(?:TABLE|table)\b.*?</(?:TABLE|table)>", "\n", text, flags=re.S)
    text = re.sub(r"<[^>]+>", "\n", text)
    return ko_sentences(text)


def digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]
