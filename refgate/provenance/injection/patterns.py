"""Regex rules read from ``patterns/*.toml`` (one file per attack family), plus the rules
built from the registered tool names; and which rules a raw token hints at."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from refgate.provenance.injection import catalog
from refgate.provenance.injection.findings import FAMILIES, KINDS, Confidence
from refgate.provenance.injection.lexicon import data_files, lexicon, read_data
from refgate.provenance.levels import RANK

_PLACEHOLDER = re.compile(r"<<(\w+)>>")


@dataclass(frozen=True)
class RegexRule:
    kind: str
    confidence: Confidence
    name: str
    pattern: re.Pattern[str]
    substrings: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    family: str = ""
    hint: str = ""  # "colon": hinted by a label word next to a colon
    check: str = ""  # post-check in code: "label", "directive_context"
    reach: int = 0  # words after the hint the window spans (0: the scan's default)


def _rule(entry: dict, defs: dict[str, str], source: str) -> RegexRule:
    name = entry.get("name", "?")
    where = f"{source} rule {name!r}"
    if entry.get("kind") not in KINDS or entry.get("family") not in FAMILIES:
        raise ValueError(f"{where}: unknown kind or family")
    if entry.get("confidence") not in RANK:
        raise ValueError(f"{where}: confidence must be high, medium or low")
    text = _PLACEHOLDER.sub(lambda m: defs[m.group(1)], entry["pattern"])
    flags = re.I if "i" in entry.get("flags", "") else 0
    try:
        pattern = re.compile(text, flags)
    except re.error as exc:
        raise ValueError(f"{where}: {exc}") from exc
    return RegexRule(
        entry["kind"],
        entry["confidence"],
        name,
        pattern,
        tuple(entry.get("substrings", ())),
        tuple(entry.get("words", ())),
        entry["family"],
        entry.get("hint", ""),
        entry.get("check", ""),
        int(entry.get("reach", 0)),
    )


@lru_cache(maxsize=1)
def data_rules() -> tuple[RegexRule, ...]:
    rules: list[RegexRule] = []
    for name in data_files("patterns"):
        data = read_data("patterns", name)
        defs = data.get("defs", {})
        rules += [_rule(entry, defs, name) for entry in data.get("rule", [])]
    return tuple(rules)


@lru_cache(maxsize=8)
def _generic_tool_rule(name: str) -> RegexRule:
    q = re.escape(name)
    return RegexRule(
        "tool_directive",
        "high",
        f"generic_tool_call:{name}",
        re.compile(
            rf"\b(?:call|use|invoke|run|execute)\s+(?:the\s+)?[`'\"]?{q}[`'\"]?\s+(?:tool|function)\b"
            rf"|[`'\"]{q}[`'\"]\s*(?:tool|function)\b|\"name\"\s*:\s*\"{q}\"|\b{q}\s*\(\s*[{{\"'`]",
            re.I,
        ),
        words=(name.lower(),),
        family="tool_call",
    )


@lru_cache(maxsize=64)
def _split_tool_rule(first: str, second: str) -> RegexRule:
    return RegexRule(
        "tool_directive",
        "high",
        f"tool_named_split:{first}{second}",
        re.compile(rf"\b{re.escape(first)}[ \t_\-.·]{{1,3}}{re.escape(second)}\b", re.I),
        words=(first,),
        family="tool_call",
        check="directive_context",
    )


@lru_cache(maxsize=1)
def all_rules() -> tuple[RegexRule, ...]:
    _, _, split = catalog.tool_names()
    extra = [_generic_tool_rule(n) for n in catalog.generic_tool_names()]
    extra += [_split_tool_rule(a, b) for a, b in split]
    return data_rules() + tuple(extra)


def hinted_rules(raw_lower: str, norms: tuple[str, ...]) -> frozenset[int]:
    """Indices (into :func:`all_rules`) of the rules a raw token hints at."""
    lex = lexicon()
    out = set()
    colon = (":" in raw_lower or "：" in raw_lower) and (
        any(n in lex.colon_words for n in norms) or any(st in raw_lower for st in lex.k_colon_stems)
    )
    for k, rule in enumerate(all_rules()):
        if rule.hint == "colon":
            if colon:
                out.add(k)
        elif any(sub in raw_lower for sub in rule.substrings) or any(
            n in rule.words for n in norms
        ):
            out.add(k)
    return frozenset(out)


catalog.on_change(all_rules.cache_clear)
