"""Tolerant parsing of model replies (JSON objects or lists inside prose or code fences)."""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def _candidates(text: str) -> list[str]:
    found = [m.group(1) for m in _FENCE.finditer(text)]
    found.append(text)
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = text.find(opener), text.rfind(closer)
        if 0 <= start < end:
            found.append(text[start : end + 1])
    return found


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text``, or None."""
    for cand in _candidates(text or ""):
        try:
            value = json.loads(cand)
        except (ValueError, TypeError, RecursionError):  # nested past the decoder's limit too
            continue
        if isinstance(value, dict):
            return value
    return None


def parse_string_list(text: str) -> list[str]:
    """A JSON list of strings, else the bullet or numbered lines, else the non-empty lines."""
    for cand in _candidates(text or ""):
        try:
            value = json.loads(cand)
        except (ValueError, TypeError, RecursionError):  # nested past the decoder's limit too
            continue
        if isinstance(value, list):
            return [str(v).strip() for v in value if str(v).strip()]
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    bullets = [
        re.sub(r"^(?:[-*•]|\d+[.)])\s+", "", ln)
        for ln in lines
        if re.match(r"^(?:[-*•]|\d+[.)])\s+", ln)
    ]
    return bullets or lines
