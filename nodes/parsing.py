"""Tolerant parsing of model replies: the one JSON extractor for model text (objects or lists in
prose or code fences), used by the passes and by the research backends.

``extract_json(text, kind)`` tries the whole text, then the fenced blocks (```` ```json {...} ``` ````), then
decodes where a value of that kind can start, in linear time on hostile text: the fence ends are
found once, decoding starts in place without copying the rest, and at most ``MAX_DECODE_TRIES``
start positions are tried (each failed decode costs time linear in the position).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Iterator

#: An opening fence followed by an object or a list, and the end of one (``}``/``]`` then fence).
_FENCE_OPEN: dict[type, re.Pattern[str]] = {
    dict: re.compile(r"```(?:json)?\s*\{"),
    list: re.compile(r"```(?:json)?\s*\["),
}
_FENCE_CLOSE: dict[type, re.Pattern[str]] = {
    dict: re.compile(r"\}\s*```"),
    list: re.compile(r"\]\s*```"),
}
#: Where a JSON object or a list of strings can start inside prose ("see [1]" is no list).
_VALUE_START: dict[type, re.Pattern[str]] = {
    dict: re.compile(r"\{(?=\s*[\"}])"),
    list: re.compile(r"\[(?=\s*\")"),
}
_OPENER: dict[type, str] = {dict: "{", list: "["}
MAX_DECODE_TRIES = 1000
_BULLET = re.compile(r"^(?:[-*•]|\d+[.)])\s+")


def _fenced(text: str, kind: type) -> Iterator[str]:
    """What ``re.finditer(r"```(?:json)?\\s*(\\{.*?\\})\\s*```", text, re.S)`` yields as group 1
    (``[...]`` for lists), with every closing position found once: a run of unclosed fences does
    not rescan the rest of the text from each opening (quadratic)."""
    closes = [(m.start(), m.end()) for m in _FENCE_CLOSE[kind].finditer(text)]
    starts = [a for a, _ in closes]
    pos = 0
    while True:
        m = _FENCE_OPEN[kind].search(text, pos)
        if m is None:
            return
        opener = m.end() - 1
        k = bisect_left(starts, opener)
        if k == len(starts):
            return  # no closing fence after this opening, so none after any later one
        yield text[opener : starts[k] + 1]
        pos = closes[k][1]


def extract_json(text: str | None, kind: type[object] = dict) -> object:
    """The first JSON value of ``kind`` (``dict`` or ``list``) in ``text``: a fenced block first,
    else the first one that decodes where such a value can start; None when there is none."""
    if not text:
        return None
    whole = text.strip()
    if whole.startswith(_OPENER[kind]):  # the whole reply is the value (the common case)
        try:
            value = json.loads(whole)
        except (ValueError, RecursionError):
            pass
        else:
            if isinstance(value, kind):
                return value
    for block in _fenced(text, kind):
        try:
            value = json.loads(block)
        except (ValueError, RecursionError):  # nested past the decoder's limit too
            continue
        if isinstance(value, kind):
            return value
    decoder = json.JSONDecoder()
    for n, m in enumerate(_VALUE_START[kind].finditer(text)):
        if n >= MAX_DECODE_TRIES:
            break
        try:
            value, _ = decoder.raw_decode(text, m.start())
        except (ValueError, RecursionError):
            continue
        if isinstance(value, kind):
            return value
    return None


def parse_json_object(text: str | None) -> dict[str, object] | None:
    """The first JSON object in ``text``, or None."""
    value = extract_json(text, dict)
    return value if isinstance(value, dict) else None


def parse_string_list(text: str | None) -> list[str]:
    """A JSON list of strings, else the bullet or numbered lines, else the non-empty lines."""
    value = extract_json(text, list)
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    bullets = [_BULLET.sub("", ln) for ln in lines if _BULLET.match(ln)]
    return bullets or lines
