"""The run's provenance state: external text spans (taint), URLs seen in search results, trusted
text, and calls withheld after an injection signal. Checkpointed in graph state between passes
through ``to_state()`` / ``RunProvenance.from_state()``.

Taint test: a string "carries" external text when it shares a run of ``MIN_SPAN`` (20) or more
columns with a registered external span, after both are normalised (case folded, invisible
characters removed, whitespace runs collapsed; URL arguments are percent-decoded first). A wide
character (Hangul, CJK, kana, fullwidth forms) counts two columns, as a terminal shows it: ten
Hangul syllables say as much as twenty Latin letters ("이전 지시를 무시하고" is a whole command
in 10 characters), so a short Korean command copied from a page is caught like an English one. Runs
that also occur in trusted text (the user's question, registered with ``register_trusted``) do
not count, so a query may repeat the user's own words even when a page quotes them.

Algorithm: any common run of 20 characters contains one of the argument's 10-character blocks
at offsets 0, 10, 20, ...; each block is looked up in the joined external text (C-speed
substring search) and only the hits are extended.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote_plus, urlsplit, urlunsplit

# typing_extensions' TypedDict: pydantic (LangServe, Studio schemas) refuses typing's on 3.11.
from typing_extensions import TypedDict

MIN_SPAN = 20
_BLOCK = MIN_SPAN // 2
#: Cap on stored external text per run (characters, after normalisation); older spans go first.
MAX_TAINT_CHARS = 4_000_000
_INVISIBLE_RE = re.compile("[\u00ad\u200b-\u200f\u2060-\u2064\ufeff\u202a-\u202e\u2066-\u2069]")
_URL_RE = re.compile(r"https?://[^\s<>\"'`)\]]+", re.I)
SEP = "\x00"
#: Wide characters (East Asian width W or F) are followed by this filler in normalised text, so
#: that every length below counts columns.
WIDE_FILL = "\x01"
_WIDE_RE = re.compile(
    "([\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f"
    "\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6])"
)
#: Most echoed arguments remembered per run (the newest are kept).
MAX_ECHOES = 64


def normalise(text: str) -> str:
    """Case folded, invisible characters removed, whitespace collapsed; each wide character
    followed by ``WIDE_FILL`` (two columns)."""
    text = str(text)
    if text.isascii():
        return " ".join(text.casefold().split())
    text = " ".join(_INVISIBLE_RE.sub("", text.replace(WIDE_FILL, "")).casefold().split())
    return _WIDE_RE.sub("\\1" + WIDE_FILL, text)


def normalise_url(url: str) -> str:
    """Scheme and host lower-cased, default port, fragment and trailing slash dropped."""
    url = str(url).strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    host = (parts.hostname or "").lower()
    port = parts.port if parts.port not in (None, 80, 443) else None
    netloc = f"{host}:{port}" if port else host
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), netloc, path, parts.query, ""))


def _runs(arg: str, haystack: str) -> list[tuple[int, int]]:
    """Intervals of ``arg`` that occur in ``haystack`` as runs of MIN_SPAN+ characters."""
    if len(arg) < MIN_SPAN or not haystack:
        return []
    found: list[tuple[int, int]] = []
    for b in range(0, len(arg) - _BLOCK + 1, _BLOCK):
        if any(lo <= b and b + _BLOCK <= hi for lo, hi in found):
            continue
        block = arg[b : b + _BLOCK]
        pos = haystack.find(block)
        best: tuple[int, int] | None = None
        seen = 0
        while pos >= 0 and seen < 2000:
            seen += 1
            left = 0
            while b - left > 0 and pos - left > 0 and arg[b - left - 1] == haystack[pos - left - 1]:
                left += 1
            right = _BLOCK
            while (
                b + right < len(arg)
                and pos + right < len(haystack)
                and arg[b + right] == haystack[pos + right]
            ):
                right += 1
            span = (b - left, b + right)
            if span[1] - span[0] >= MIN_SPAN and (
                best is None or span[1] - span[0] > best[1] - best[0]
            ):
                best = span
            pos = haystack.find(block, pos + 1)
        if best:
            found.append(best)
    return found


@dataclass
class TaintHit:
    source: str
    excerpt: str
    length: int


def sent_entry(tool: str, to: str, text: str, slot: str) -> dict[str, str]:
    """One item sent off the machine, as ``RunProvenance.sent`` and the reports keep it."""
    return {"tool": tool, "to": to, "slot": slot, "text": str(text)[:2000]}


class ProvenanceState(TypedDict):
    """``RunProvenance`` as plain data (the ``provenance`` state channel)."""

    version: int
    spans: list[dict[str, str]]
    urls: dict[str, str]
    trusted: list[str]
    echoes: list[str]
    withheld: list[dict[str, object]]
    withheld_refs: dict[str, str]
    sent: list[dict[str, str]]


@dataclass
class RunProvenance:
    """Per-run provenance registry (lives on ``ToolContext.provenance``)."""

    spans: list[dict[str, str]] = field(default_factory=list)  # {"source", "text"} normalised
    urls: dict[str, str] = field(default_factory=dict)  # normalised url -> source
    trusted: list[str] = field(default_factory=list)  # normalised trusted texts
    #: Slot arguments the model wrote that passed the taint check: echoed back in a result
    #: (a search repeating its query) they are not external text.
    echoes: list[str] = field(default_factory=list)
    withheld: list[dict[str, object]] = field(default_factory=list)
    #: Refs whose text was withheld (B5), by id -> source: they back no claim (the GATE).
    withheld_refs: dict[str, str] = field(default_factory=dict)
    #: What left the machine: every query and URL an outbound tool sent (the audit record).
    sent: list[dict[str, str]] = field(default_factory=list)
    _digests: set[str] = field(default_factory=set, repr=False)
    _joined: str | None = field(default=None, repr=False)

    # ---- state ---------------------------------------------------------------------------
    @classmethod
    def from_state(cls, state: Mapping[str, Any] | None) -> RunProvenance:
        state = state or {}
        prov = cls(
            spans=[dict(s) for s in state.get("spans", [])],
            urls=dict(state.get("urls", {})),
            trusted=list(state.get("trusted", [])),
            echoes=list(state.get("echoes", [])),
            withheld=[dict(w) for w in state.get("withheld", [])],
            withheld_refs=dict(state.get("withheld_refs", {})),
            sent=[dict(x) for x in state.get("sent", [])],
        )
        prov._digests = {hashlib.sha1(s["text"].encode()).hexdigest() for s in prov.spans}
        return prov

    def to_state(self) -> ProvenanceState:
        return {
            "version": 1,
            "spans": [dict(s) for s in self.spans],
            "urls": dict(self.urls),
            "trusted": list(self.trusted),
            "echoes": list(self.echoes),
            "withheld": [dict(w) for w in self.withheld],
            "withheld_refs": dict(self.withheld_refs),
            "sent": [dict(x) for x in self.sent],
        }

    # ---- registration --------------------------------------------------------------------
    def register_text(self, text: str, *, source: str) -> bool:
        """Record an external text span (only spans of MIN_SPAN+ characters matter)."""
        norm = normalise(text)
        if len(norm) < MIN_SPAN:
            return False
        digest = hashlib.sha1(norm.encode()).hexdigest()
        if digest in self._digests:
            return False
        self._digests.add(digest)
        self.spans.append({"source": str(source)[:200], "text": norm})
        total = sum(len(s["text"]) for s in self.spans)
        while total > MAX_TAINT_CHARS and len(self.spans) > 1:
            old = self.spans.pop(0)
            total -= len(old["text"])
        self._joined = None
        return True

    def register_url(self, url: str, *, source: str) -> None:
        """Record a URL a search returned (fetching it later is allowed)."""
        if url:
            self.urls.setdefault(normalise_url(url), str(source)[:200])

    def register_trusted(self, text: str) -> None:
        """Text the user or code wrote (the question): its words may go into queries, and its
        URLs may be fetched."""
        norm = normalise(text)
        if norm and norm not in self.trusted:
            self.trusted.append(norm)
        for url in _URL_RE.findall(str(text)):
            self.urls.setdefault(normalise_url(url.rstrip(".,;")), "trusted")

    def register_echo(self, text: str) -> None:
        """A slot argument the model wrote (checked untainted): a result that echoes it does not
        taint it. Unlike ``register_trusted``, its URLs do not become fetchable."""
        norm = normalise(text)
        if len(norm) >= MIN_SPAN and norm not in self.echoes:
            self.echoes.append(norm)
            del self.echoes[:-MAX_ECHOES]

    def record_withheld(self, tool: str, key: str, signals: Sequence[Mapping[str, object]]) -> None:
        self.withheld.append({"tool": tool, "key": key, "signals": signals})

    def record_withheld_refs(self, refs: dict[str, str]) -> None:
        """Refs (id -> source) whose text was withheld: they back no claim."""
        self.withheld_refs.update(refs)

    def record_sent(self, tool: str, to: str, text: str, slot: str) -> None:
        """One query or URL an outbound tool sent off the machine."""
        self.sent.append(sent_entry(tool, to, text, slot))

    def was_withheld(self, key: str) -> bool:
        return any(w.get("key") == key for w in self.withheld)

    # ---- checks --------------------------------------------------------------------------
    def _haystack(self) -> str:
        if self._joined is None:
            self._joined = SEP.join(s["text"] for s in self.spans)
        return self._joined

    def tainted_by(self, value: str, *, url: bool = False) -> TaintHit | None:
        """The external span ``value`` carries (20+ columns not also in trusted text)."""
        raw = str(value)
        if url:
            raw = unquote_plus(raw)
        arg = normalise(raw)
        if len(arg) < MIN_SPAN or not self.spans:
            return None
        ext = _runs(arg, self._haystack())
        if not ext:
            return None
        trusted = SEP.join([*self.trusted, *self.echoes])
        covered = [False] * len(arg)
        for lo, hi in _runs(arg, trusted) if trusted else []:
            for k in range(lo, hi):
                covered[k] = True
        for lo, hi in ext:
            run = 0
            for k in range(lo, hi):
                run = 0 if covered[k] else run + 1
                if run >= MIN_SPAN:
                    piece = arg[lo:hi]
                    shown = piece.replace(WIDE_FILL, "")
                    return TaintHit(self._source_of(piece), shown[:80], len(shown))
        return None

    def _source_of(self, piece: str) -> str:
        for s in self.spans:
            if piece[:MIN_SPAN] in s["text"]:
                return s["source"]
        return "external content"

    def url_seen(self, url: str) -> bool:
        return normalise_url(url) in self.urls

    def summary(self) -> dict[str, int]:
        return {"spans": len(self.spans), "urls": len(self.urls), "withheld": len(self.withheld)}

    def __repr__(self) -> str:  # keep texts out of logs
        return f"RunProvenance({json.dumps(self.summary())})"
