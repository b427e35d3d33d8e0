"""The answer's markdown as safe HTML, each ``[refId]`` a link to its evidence card.

markdown-it-py (CommonMark + tables) with raw HTML off, images off (an image would be a network
request) and links only to the run's own source URLs (``refgate.report.links``: model output never
chooses URLs, so any other link is shown as text); citations are found in text tokens after inline parsing,
so a citation inside code or inside a link stays text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt
from markdown_it.token import Token

if TYPE_CHECKING:
    from markdown_it.renderer import RendererHTML
    from markdown_it.rules_core import StateCore
    from markdown_it.utils import EnvType, OptionsDict

from refgate.refs import CITATION_BRACKET, bracket_ids
from refgate.report.cards import anchor
from refgate.report.links import allowed_urls, link_allowed

#: What the GATE appends to a blocked answer (``refgate/gate/verdict.py: unmet_section``); the HTML
#: report shows the same issues as its own section instead.
UNMET_HEADING = "### Not verified\n\nThese claims could not be checked against the cited evidence:"


def strip_unmet_section(answer: str) -> str:
    """``answer`` without the trailing "Not verified" section the GATE appended, if any."""
    at = answer.rfind("\n" + UNMET_HEADING)
    if at < 0 and answer.startswith(UNMET_HEADING):
        at = 0
    return answer[:at].rstrip() if at >= 0 else answer


def _split(
    token: Token, refs: Mapping[str, object], numbers: Mapping[str, int]
) -> list[Token] | None:
    text = token.content
    out: list[Token] = []
    pos = 0
    for m in CITATION_BRACKET.finditer(text):
        # what the GATE reads as a citation (``refgate.refs.bracket_ids``): a cited id not in the
        # ledger is shown as a citation to nothing, not as text that looks like one
        ids = bracket_ids(m.group(1), refs)
        if not ids:
            continue
        if m.start() > pos:
            out.append(_text(text[pos : m.start()]))
        out.append(_text("["))
        for n, ref_id in enumerate(ids):
            if n:
                out.append(_text(", "))
            shown = ref_id
            if ref_id in refs:
                open_ = Token("link_open", "a", 1)
                open_.attrs = {"href": "#" + anchor(ref_id), "class": "cite"}
                if ref_id in numbers:  # readers see [1]; the id stays in the anchor and title
                    shown = str(numbers[ref_id])
                    open_.attrs["title"] = ref_id
                close = Token("link_close", "a", -1)
            else:
                open_ = Token("cite_open", "span", 1)
                open_.attrs = {"class": "cite missing", "title": "no such ref in this run"}
                close = Token("cite_close", "span", -1)
            out += [open_, _text(shown), close]
        out.append(_text("]"))
        pos = m.end()
    if not out:
        return None
    if pos < len(text):
        out.append(_text(text[pos:]))
    return out


def _text(content: str) -> Token:
    tok = Token("text", "", 0)
    tok.content = content
    return tok


def _citations_rule(refs: Mapping[str, object], numbers: Mapping[str, int]):
    def rule(state: StateCore) -> None:
        for block in state.tokens:
            if block.type != "inline" or not block.children:
                continue
            children: list[Token] = []
            depth = 0
            for tok in block.children:
                if tok.type == "link_open":
                    depth += 1
                elif tok.type == "link_close":
                    depth -= 1
                parts = _split(tok, refs, numbers) if tok.type == "text" and depth == 0 else None
                children.extend(parts or [tok])
            block.children = children

    return rule


def _link_open(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    tok = tokens[idx]
    if tok.attrGet("class") != "cite":
        tok.attrSet("rel", "noopener noreferrer nofollow")
    return self.renderToken(tokens, idx, options, env)


def answer_html(
    answer: str,
    refs: Mapping[str, object],
    allowed: frozenset[str] | None = None,
    numbers: Mapping[str, int] | None = None,
) -> str:
    """The answer as HTML (escaped; citations link to ``#ref-<id>``, shown as their reader's
    number ``[1]`` when ``numbers`` has one; other links only to ``allowed`` URLs, by default
    the refs' source URLs, the rest shown as text)."""
    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    md.disable("image")
    allowed = allowed_urls(refs) if allowed is None else allowed
    live = frozenset(md.normalizeLink(u) for u in allowed)  # markdown-it checks normalised URLs
    md.validateLink = lambda url: link_allowed(url, live)  # type: ignore[method-assign]
    md.core.ruler.push("refgate_citations", _citations_rule(refs, numbers or {}))
    md.add_render_rule("link_open", _link_open)
    return md.render(answer)
