"""HTML to text through a real parser (lxml via BeautifulSoup), and ``inspect_hidden``.

``html_to_text`` drops scripts, styles, templates, comments and every element hidden by CSS or
attributes (the same test ``inspect_hidden`` reports), then joins the visible text with block
breaks. Never a regex over markup.

``inspect_hidden(html)`` reports text a browser would not show: ``display:none``,
``visibility:hidden``, ``opacity:0``, zero font size, zero width/height with hidden overflow,
off-screen positioning or indentation, ``clip`` to nothing, text coloured like its background,
the ``hidden`` attribute, ``aria-hidden="true"``, hidden inputs, and HTML comments. Simple
``<style>`` rules (``.class``, ``#id``, ``tag`` selectors) are applied too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from bs4 import BeautifulSoup, Comment, NavigableString, Tag

DROP_TAGS = (
    "script",
    "style",
    "noscript",
    "template",
    "head",
    "iframe",
    "object",
    "embed",
    "svg",
    "canvas",
    "meta",
    "link",
)
BLOCK_TAGS = {
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "tr",
    "table",
    "section",
    "article",
    "header",
    "footer",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "pre",
    "hr",
    "dd",
    "dt",
    "dl",
    "figure",
    "figcaption",
    "main",
    "nav",
    "aside",
    "form",
    "td",
    "th",
}

_DECL_RE = re.compile(r"([a-zA-Z-]+)\s*:\s*([^;]+)")
_RULE_RE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_ZERO_RE = re.compile(r"^\s*-?0+(?:\.0+)?(?:px|em|rem|pt|%|vh|vw)?\s*(?:!important)?\s*$")
_OFFSCREEN_RE = re.compile(r"^\s*-\d{3,}(?:\.\d+)?(?:px|em|rem|pt|vw|vh|%)?")
_NAMED = {
    "white": "#ffffff",
    "black": "#000000",
    "red": "#ff0000",
    "green": "#008000",
    "blue": "#0000ff",
    "gray": "#808080",
    "grey": "#808080",
    "yellow": "#ffff00",
    "silver": "#c0c0c0",
    "transparent": "transparent",
}


@dataclass(frozen=True)
class HiddenFinding:
    kind: str
    tag: str
    reason: str
    excerpt: str
    chars: int

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class HiddenReport:
    findings: list[HiddenFinding] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.findings

    @property
    def hidden_char_count(self) -> int:
        return sum(f.chars for f in self.findings)

    @property
    def hidden_text(self) -> str:
        return "\n".join(f.excerpt for f in self.findings)

    def as_dict(self) -> dict[str, object]:
        return {
            "clean": self.clean,
            "hiddenCharCount": self.hidden_char_count,
            "findings": [f.as_dict() for f in self.findings],
        }


def _parse(html: str) -> BeautifulSoup:
    return BeautifulSoup(html or "", "lxml")


def _style_of(tag: Tag, sheet: list[tuple[str, dict[str, str]]]) -> dict[str, str]:
    decls: dict[str, str] = {}
    classes: str | list[str] = tag.get("class") or []
    for selector, props in sheet:
        for sel in selector.split(","):
            sel = sel.strip()
            if (
                (sel.startswith(".") and sel[1:] in classes)
                or (sel.startswith("#") and sel[1:] == tag.get("id"))
                or sel.lower() == tag.name
            ):
                decls.update(props)
    for name, value in _DECL_RE.findall(str(tag.get("style") or "")):
        decls[name.strip().lower()] = value.strip().lower()
    return decls


def _norm_color(value: str) -> str:
    value = value.replace("!important", "").strip().lower()
    value = _NAMED.get(value, value)
    if re.fullmatch(r"#[0-9a-f]{3}", value):
        value = "#" + "".join(c * 2 for c in value[1:])
    m = re.fullmatch(r"rgba?\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)(?:\s*,\s*[\d.]+)?\s*\)", value)
    if m:
        value = "#" + "".join(f"{int(x):02x}" for x in m.groups())
    return value


def _hidden_reason(
    tag: Tag, sheet: list[tuple[str, dict[str, str]]], inherited_bg: str | None
) -> tuple[str, str] | None:
    if tag.name == "input" and str(tag.get("type", "")).lower() == "hidden":
        return "hidden_input", 'type="hidden"'
    if tag.has_attr("hidden"):
        return "hidden_attribute", "hidden attribute"
    if str(tag.get("aria-hidden", "")).lower() == "true":
        return "aria_hidden", 'aria-hidden="true"'
    css = _style_of(tag, sheet)
    if css.get("display", "").startswith("none"):
        return "display_none", "display:none"
    if css.get("visibility", "").split()[:1] in (["hidden"], ["collapse"]):
        return "visibility_hidden", "visibility:" + css["visibility"]
    if "opacity" in css and _ZERO_RE.match(css["opacity"]):
        return "opacity_zero", "opacity:0"
    if "font-size" in css and _ZERO_RE.match(css["font-size"]):
        return "zero_size", "font-size:0"
    for dim in ("width", "height", "max-width", "max-height"):
        if (
            dim in css
            and _ZERO_RE.match(css[dim])
            and (
                css.get("overflow", "").startswith("hidden")
                or dim.startswith("max")
                or tag.name in ("div", "span", "p")
            )
        ):
            return "zero_size", f"{dim}:0"
    for prop in ("left", "top", "text-indent", "margin-left", "right"):
        if prop in css and _OFFSCREEN_RE.match(css[prop]):
            return "offscreen", f"{prop}:{css[prop]}"
    if "clip" in css and re.search(r"rect\(\s*0", css["clip"]):
        return "clipped", "clip:rect(0...)"
    if "clip-path" in css and re.search(r"inset\(\s*(?:50|100)%", css["clip-path"]):
        return "clipped", "clip-path"
    color = css.get("color")
    bg = css.get("background-color") or css.get("background") or inherited_bg
    if color and bg:
        c, b = _norm_color(color), _norm_color(bg.split()[0])
        if c == b or c == "transparent":
            return "same_color", f"color {c} on background {b}"
    return None


def _sheet(soup: BeautifulSoup) -> list[tuple[str, dict[str, str]]]:
    rules = []
    for style in soup.find_all("style"):
        css = re.sub(r"/\*.*?\*/", "", style.get_text(), flags=re.S)
        for selector, body in _RULE_RE.findall(css):
            props = {k.strip().lower(): v.strip().lower() for k, v in _DECL_RE.findall(body)}
            if props:
                rules.append((selector.strip(), props))
    return rules


def _text_of(tag: Tag) -> str:
    if tag.name == "input":
        return str(tag.get("value") or "")
    return " ".join(tag.get_text(" ").split())


_END = object()


def _walk_hidden(soup: BeautifulSoup) -> list[tuple[Tag | Comment, str, str]]:
    """(node, kind, reason) for the outermost hidden nodes."""
    sheet = _sheet(soup)
    found: list[tuple[Tag | Comment, str, str]] = []

    # Depth first, children in document order, with an explicit stack: a page nested thousands
    # of tags deep must not exhaust Python's recursion limit.
    stack: list[tuple[Iterator[Any], str | None]] = [(iter(list(soup.children)), None)]
    while stack:
        children, bg = stack[-1]
        child = next(children, _END)
        if child is _END:
            stack.pop()
        elif isinstance(child, Comment):
            found.append((child, "html_comment", "HTML comment"))
        elif isinstance(child, Tag):
            if child.name in DROP_TAGS:
                continue
            reason = _hidden_reason(child, sheet, bg)
            if reason:
                found.append((child, *reason))
                continue
            css = _style_of(child, sheet)
            inner_bg = css.get("background-color") or css.get("background") or bg
            stack.append((iter(list(child.children)), inner_bg))
    return found


def inspect_hidden(html: str) -> HiddenReport:
    """Text in ``html`` that a reader does not see but a model would read."""
    soup = _parse(html)
    findings = []
    for node, kind, reason in _walk_hidden(soup):
        if isinstance(node, Comment):
            text = " ".join(str(node).split())
            tag = "#comment"
        else:
            text = _text_of(node)
            tag = node.name
        if not text.strip():
            continue
        findings.append(HiddenFinding(kind, tag, reason, text[:200], len(text)))
    return HiddenReport(findings)


def strip_hidden(html: str) -> tuple[str, str]:
    """``(visible_html, hidden_text)``: ``html`` with every hidden element and comment removed
    (the test of ``inspect_hidden``), and the text that was removed. For extractors that parse
    HTML themselves (trafilatura on the live fetch path): they then never see hidden text."""
    soup = _parse(html)
    hidden: list[str] = []
    for node, _, _ in _walk_hidden(soup):
        text = str(node) if isinstance(node, Comment) else _text_of(node)
        if text.strip():
            hidden.append(" ".join(text.split()))
        node.extract()
    return str(soup), "\n".join(hidden)


def html_to_text(html: str, *, markdown_headings: bool = False) -> str:
    """Visible text of ``html`` (scripts, styles, comments and hidden elements removed).

    With ``markdown_headings`` h1-h6 become ``#``-lines between blank lines (the document
    chunker starts a section at them); the one HTML-to-text of refgate, documents included.
    """
    soup = _parse(html)
    for node, _, _ in _walk_hidden(soup):
        node.extract()
    for tag in soup.find_all(DROP_TAGS):
        tag.decompose()
    if markdown_headings:
        for tag in soup.find_all(["h1", "h2", "h3", "h4", "h5", "h6"]):
            title = " ".join(tag.get_text(" ").split())
            level = int(tag.name[1])
            tag.replace_with(NavigableString(f"\n\n{'#' * level} {title}\n\n") if title else "")
    parts: list[str] = []
    for el in soup.descendants:
        if isinstance(el, NavigableString) and not isinstance(el, Comment):
            parts.append(str(el))
        elif isinstance(el, Tag) and el.name in BLOCK_TAGS:
            parts.append("\n")
    lines = [" ".join(line.split()) for line in "".join(parts).split("\n")]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()
