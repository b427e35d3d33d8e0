"""The scan: find anchor words, run rules in small windows around them, map hits to character
spans, add the hidden scopes (tag characters, encoded payloads) and merge overlapping signals.

Speed: the text is split once with ``str.split``; each distinct word is classified once
(memoised across calls); rules run only around the rare anchor words; per-character offsets are
computed only when a candidate signal exists.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from itertools import repeat

from refgate.provenance.injection import catalog, layer
from refgate.provenance.injection.decode import (
    decoded_scopes,
    masked_word,
    readable,
    reversed_words,
    rot13_words,
    shifted_words,
)
from refgate.provenance.injection.findings import (
    MAX_EXCERPT,
    InjectionReport,
    InjectionSignal,
    excerpt,
)
from refgate.provenance.injection.lexicon import ANCHORS
from refgate.provenance.injection.patterns import all_rules
from refgate.provenance.injection.rules import (
    Hit,
    WindowState,
    regex_window_hits,
    token_rule_hits,
)
from refgate.provenance.injection.sentence import mention
from refgate.provenance.injection.tokens import (
    _MEMO_LIMIT,
    EMPTY_TOKEN,
    NO_RAW,
    RawInfo,
    TokenInfo,
    classify,
    classify_raw,
)
from refgate.provenance.levels import RANK
from refgate.provenance.unicode_scan import decode_tags

_SEEN_RAW: set[str] = set()
_HOT_RAW: set[str] = set()
_ROT13_RAW: set[str] = set()  # raw words that are ROT13 forms of lexicon words
_REV_RAW: set[str] = set()  # raw words that are lexicon words spelled backwards
_MASKED_RAW: set[str] = set()  # raw words in leetspeak or with look-alike letters
_SHIFTED_RAW: dict[str, int] = {}  # raw words that are Caesar forms of lexicon words -> shift
_HEX_PAIR_RAW: set[str] = set()  # "6e", "2e": a digit and a hex letter (spaced hex bytes)
_HEX_PAIR_RE = re.compile(r"[0-9][a-fA-F]|[a-fA-F][0-9]")
_SHORT_RUN_RE = re.compile(rb"[\x01-\x03]{3,}")
# Unicode tag characters (U+E0000-E007F) spell ASCII; the same offset over the rest of plane 14
# spells any other character (garak's Tag probe writes Korean so: U+E0000 + U+AC00 ...)
_TAG_RUN_RE = re.compile("[\U000e0000-\U000effff]+")
_RAW_TOKEN_RE = re.compile(r"\S+")
_WIN_BEFORE, _WIN_AFTER = 10, 12
# decoded scopes whose readable text is no signal by itself (the plain text is readable too)
_NO_PROSE_SIGNAL = frozenset(
    {
        "korean_obfuscated",
        "zero_width",
        "reversed",
        "reversed_words",
        "letter_spaced",
        "normalized",
        "caesar",
        "hex_spaced",
        "morse",
    }
)


def _forget_seen() -> None:
    _SEEN_RAW.clear()
    _HOT_RAW.clear()
    _ROT13_RAW.clear()
    _REV_RAW.clear()
    _MASKED_RAW.clear()
    _SHIFTED_RAW.clear()
    _HEX_PAIR_RAW.clear()


catalog.on_change(_forget_seen)


def _letter_runs(
    tokens: list[str], anchors: list[int]
) -> tuple[dict[int, RawInfo], dict[int, int]]:
    """Letter-spaced runs (``i g n o r e``): three or more one-character words in a row, found
    on a byte string of token lengths (C speed), joined when the joined word is hot."""
    override: dict[int, RawInfo] = {}
    run_end: dict[int, int] = {}
    lengths = bytes(map(min, map(len, tokens), repeat(9)))
    for m in _SHORT_RUN_RE.finditer(lengths):
        run = [j for j in range(m.start(), m.end()) if classify_raw(tokens[j]).single]
        stretch: list[int] = []
        for j in [*run, -2]:
            if stretch and j == stretch[-1] + 1:
                stretch.append(j)
                continue
            if len(stretch) >= 3:
                joined = classify_raw("".join(tokens[k] for k in stretch))
                if joined.hot:
                    override[stretch[0]] = joined
                    run_end[stretch[0]] = stretch[-1]
                    for k in stretch[1:]:
                        override[k] = NO_RAW
                    anchors.append(stretch[0])
            stretch = [j]
    return override, run_end


def _rejoin_fragments(infos: list[TokenInfo]) -> None:
    """Rejoin words split in two or three (``ign ore``) when the whole is a rule word."""
    for k in range(len(infos) - 1):
        if infos[k].fragment:
            for extra in (1, 2):
                if k + extra >= len(infos):
                    break
                probe = classify("".join(infos[m].norm for m in range(k, k + extra + 1)))
                if probe.tags & ANCHORS or "INSTR" in probe.tags:
                    infos[k] = probe
                    for m in range(k + 1, k + extra + 1):
                        infos[m] = EMPTY_TOKEN
                    break


def _learn_words(new: set[str]) -> None:
    """Classify words not seen before once, into the memo sets (hot, ROT13, reversed, shifted,
    masked, hex pairs)."""
    if len(_SEEN_RAW) >= _MEMO_LIMIT:
        _forget_seen()
    rot, rev, shifted = rot13_words(), reversed_words(), shifted_words()
    for t in new:
        if classify_raw(t).hot:
            _HOT_RAW.add(t)
        if len(t) >= 6:
            bare = t.strip(".,;:!?\"'()").lower()
            if bare in rot:
                _ROT13_RAW.add(t)
            elif bare in rev:
                _REV_RAW.add(t)
            elif bare in shifted:
                _SHIFTED_RAW[t] = shifted[bare]
        if masked_word(t):
            _MASKED_RAW.add(t)
        if len(t) <= 3 and _HEX_PAIR_RE.match(t):
            _HEX_PAIR_RAW.add(t)
    _SEEN_RAW.update(new)


def _note_obfuscation(notes: dict[str, int], uniq: set[str]) -> None:
    """Count the text's obfuscated words (masked, hex pairs, Caesar shift, ROT13, reversed)."""
    if _MASKED_RAW:
        notes["masked"] = len(uniq & _MASKED_RAW)
    if _HEX_PAIR_RAW:
        notes["hex_pairs"] = len(uniq & _HEX_PAIR_RAW)
    if _SHIFTED_RAW:
        shifts = Counter(_SHIFTED_RAW[t] for t in uniq if t in _SHIFTED_RAW)
        if shifts:
            k, count = shifts.most_common(1)[0]
            notes["caesar"] = k if count >= 2 else 0
    for key, found in (("rot13", _ROT13_RAW), ("reversed", _REV_RAW)):
        if found:
            notes[key] = len({t.strip(".,;:!?\"'()").lower() for t in uniq & found})


def _anchor_hits(
    tokens: list[str], i: int, override: dict[int, RawInfo], run_end: dict[int, int]
) -> list[Hit]:
    """The token rules' hits in the window around anchor token ``i`` (token positions)."""
    lo, hi = max(0, i - _WIN_BEFORE), min(len(tokens), run_end.get(i, i) + _WIN_AFTER)
    infos: list[TokenInfo] = []
    owner: list[int] = []
    for j in range(lo, hi):
        raw = override.get(j) or classify_raw(tokens[j])
        infos.extend(raw.subs)
        owner.extend([j] * len(raw.subs))
    _rejoin_fragments(infos)
    centers = [k for k, o in enumerate(owner) if o == i]
    return [
        (kind, conf, rule, family, owner[a], run_end.get(owner[b], owner[b]))
        for kind, conf, rule, family, a, b in token_rule_hits(infos, centers)
    ]


def token_hits(
    text: str, notes: dict[str, int] | None = None
) -> list[tuple[str, str, str, str, int, int]]:
    """Rule hits of ``text`` as (kind, confidence, rule, family, start char, end char);
    ``notes["rot13"]``: how many distinct words are ROT13 forms of lexicon words."""
    tokens = text.split()
    if not tokens:
        return []
    uniq = set(tokens)
    new = uniq - _SEEN_RAW
    if new:
        _learn_words(new)
    if notes is not None:
        _note_obfuscation(notes, uniq)
    hot = uniq & _HOT_RAW
    anchors = [i for i, t in enumerate(tokens) if t in hot] if hot else []
    override, run_end = _letter_runs(tokens, anchors)
    if not anchors:
        return []
    raw_hits: list[Hit] = []
    state: WindowState = {}
    rules = all_rules()
    for i in sorted(set(anchors)):
        hinted = classify_raw(tokens[i]).rules
        if hinted:
            rlo = max(0, i - 12)
            state["window_start_is_text_start"] = rlo == 0
            reach = max(20, *(rules[k].reach for k in hinted))
            raw_hits += regex_window_hits(
                tokens, rlo, min(len(tokens), i + reach), set(hinted), text, state
            )
        if i in override or classify_raw(tokens[i]).anchor:
            raw_hits += _anchor_hits(tokens, i, override, run_end)
    if not raw_hits:
        return []
    offsets = [m.span() for m in _RAW_TOKEN_RE.finditer(text)]
    return [(k, c, r, f, offsets[a][0], offsets[b][1]) for k, c, r, f, a, b in raw_hits]


def scan(
    text: str,
    scope: str,
    span_of: Callable[[int, int], tuple[int, int] | None] | None = None,
    notes: dict[str, int] | None = None,
) -> list[InjectionSignal]:
    """Signals of one scope; ``span_of`` maps spans of a decoded scope back to ``text``'s
    (None: drop the signal)."""
    signals: list[InjectionSignal] = []
    seen: set[tuple[str, int, int]] = set()
    for kind, conf, rule, family, start, end in sorted(
        token_hits(text, notes), key=lambda h: (h[4], h[5])
    ):
        if (kind, start, end) in seen:
            continue
        seen.add((kind, start, end))
        if conf != "low" and mention(text, start, end):
            conf, rule = "low", f"{rule}:mention"
        span = span_of(start, end) if span_of else (start, end)
        if span is None:
            continue
        signals.append(
            InjectionSignal(kind, conf, excerpt(text, start, end), span, scope, rule, family)  # type: ignore[arg-type]
        )
    return signals


def _tag_scope(text: str) -> list[InjectionSignal]:
    """Text spelled with Unicode tag characters, decoded and scanned as a scope of its own."""
    hidden = [(m.span(), decode_tags(m.group())) for m in _TAG_RUN_RE.finditer(text)]
    hidden = [(s, h) for s, h in hidden if h.strip()]
    if not hidden:
        return []
    joined = " ".join(h for _, h in hidden)
    bounds = []
    pos = 0
    for span, h in hidden:
        bounds.append((pos, pos + len(h), span))
        pos += len(h) + 1

    def to_original(start: int, end: int) -> tuple[int, int]:
        spans = [sp for lo, hi, sp in bounds if lo < end and start < hi]
        if not spans:
            return hidden[0][0]
        return spans[0][0], spans[-1][1]

    found = scan(joined, "tag_characters", to_original)
    if not found and readable(joined):
        # words spelled in invisible tag characters are an obfuscation signal by themselves
        found = [
            InjectionSignal(
                "instruction_override",
                "medium",
                excerpt(joined, 0, min(len(joined), MAX_EXCERPT)),
                (hidden[0][0][0], hidden[-1][0][1]),
                "tag_characters",
                "hidden_tag_text",
                "encoded_payload",
            )
        ]
    return found


def merge(signals: list[InjectionSignal]) -> list[InjectionSignal]:
    """One signal per kind and place: keep the highest confidence where spans overlap."""
    signals.sort(key=lambda s: (s.span[0], -RANK[s.confidence]))
    merged: list[InjectionSignal] = []
    # Kept signals start at or before ``s``: a non-empty ``s`` overlaps one of its kind and scope
    # iff the furthest end among them passes its start (one look-up, not a scan of all kept).
    furthest: dict[tuple[str, str], int] = {}
    for s in signals:
        key = (s.kind, s.scope)
        if s.span[0] < s.span[1]:
            if furthest.get(key, -1) > s.span[0]:
                continue
        elif any(
            m.kind == s.kind
            and m.span[0] < s.span[1]
            and s.span[0] < m.span[1]
            and m.scope == s.scope
            for m in merged
        ):
            continue
        merged.append(s)
        if s.span[1] > furthest.get(key, -1):
            furthest[key] = s.span[1]
    return merged


def _decoded(text: str, scopes: list[str], notes: dict[str, int]) -> list[InjectionSignal]:
    """Signals of decoded payloads, reported under the family encoded_payload."""
    out: list[InjectionSignal] = []
    hints = notes.get("rot13", 0) >= 2, notes.get("reversed", 0) >= 2, notes.get("masked", 0) >= 2
    caesar, spaced_hex = notes.get("caesar", 0), notes.get("hex_pairs", 0) >= 2
    for scope, decoded, span_of in decoded_scopes(text, *hints, caesar, spaced_hex):
        found = scan(decoded, scope, span_of)
        if scope == "rot13":
            found = [s for s in found if s.rule != "decode_and_follow"]
        elif not found and scope not in _NO_PROSE_SIGNAL and readable(decoded):
            # readable prose hidden in an encoding is an obfuscation signal by itself
            found = [
                InjectionSignal(
                    "instruction_override",
                    "medium",
                    excerpt(decoded, 0, min(len(decoded), MAX_EXCERPT)),
                    span_of(0, len(decoded)) or (0, len(text)),
                    scope,
                    "encoded_text",
                )
            ]
        if found and scope not in scopes:
            scopes.append(scope)
        out += [
            replace(s, family="encoded_payload", rule=f"decoded_{scope}:{s.rule}") for s in found
        ]
    return out


def inspect_injection(text: str, *, classifier: bool | str | None = None) -> InjectionReport:
    """Deterministic injection signals in ``text`` (English and Korean). ``classifier`` turns
    the second layers (family ``classifier``) on or off: ``True``/``"ngram"`` (the shipped
    n-gram model), ``"semantic"`` (MiniLM embeddings), ``"both"``, ``False``; ``None`` follows
    ``REFGATE_INJECTION_CLASSIFIER`` and its default (``layer.DEFAULT``: off)."""
    if not text:
        return InjectionReport()
    notes: dict[str, int] = {}
    signals = scan(text, "text", notes=notes)
    scopes = ["text"]
    if not text.isascii() and _TAG_RUN_RE.search(text):
        hidden = [decode_tags(m.group()) for m in _TAG_RUN_RE.finditer(text)]
        if any(h.strip() for h in hidden):
            scopes.append("tag_characters")
            signals += _tag_scope(text)
    signals += _decoded(text, scopes, notes)
    which = layer.layers(classifier)
    if which:
        signals += layer.classifier_signals(text, which)
    return InjectionReport(signals=merge(signals), scopes=scopes)
