"""``inspect_injection``: deterministic prompt-injection signals in external text (no model).

Kinds and confidence: role_impersonation, instruction_override, tool_directive
(high); authority_claim, exfiltration_hint (medium); delimiter_break (low). Each signal also
names its attack family (``FAMILIES``), the rule that fired and the matched span, so that a
withheld page can be explained to the user.

Layout: the word lists are data (``lexicon/en.toml``, ``lexicon/ko.toml``), the regex rules
are data, one file per family (``patterns/*.toml``); the engine is code: ``tokens``
(normalisation, typo matching, classification), ``patterns`` (loading and hinting regex
rules), ``rules`` (co-occurrence rules over token windows), ``scan`` (windows, spans, scopes,
merging); ``classifier``, ``semantic`` and ``layer``: optional second layers (a shipped
n-gram linear model; frozen MiniLM embeddings with a small head) whose signals have family
``classifier`` (off by default, ``REFGATE_INJECTION_CLASSIFIER=ngram|semantic|both``). Tool names
come from the tool name table (``refgate.catalog.tool_names``).
"""

from refgate.provenance.injection.catalog import register_tool_names
from refgate.provenance.injection.findings import (
    FAMILIES,
    KINDS,
    MAX_EXCERPT,
    Confidence,
    InjectionReport,
    InjectionSignal,
)
from refgate.provenance.injection.scan import inspect_injection

__all__ = [
    "FAMILIES",
    "KINDS",
    "MAX_EXCERPT",
    "Confidence",
    "InjectionReport",
    "InjectionSignal",
    "inspect_injection",
    "register_tool_names",
]
