"""Untrusted content: provenance flags, nonce armor, injection / unicode / hidden-text inspection,
HTML to text, the run's taint registry and the boundaries that change the flow (B1-B5).

Public interface (external evaluation code calls these names):

- ``armor(text, *, source_label) -> str``
- ``inspect_injection(text) -> InjectionReport`` (``.clean``, ``.signal_count``,
  ``.highest_confidence``, ``.signals`` with ``kind``, ``confidence``, ``excerpt``, ``span``)
- ``inspect_unicode(text) -> UnicodeReport``; ``inspect_hidden(html) -> HiddenReport``
- ``html_to_text(html) -> str``
- ``guard_external(text, *, source_label) -> str``: armor, or withhold on a high signal
- ``RunProvenance`` (``from_state`` / ``to_state``); ``refgate.provenance.map.provenance_map(entries)``
  (entries: ``refgate.tools.registry.iter_specs()``)
"""

from __future__ import annotations

from refgate.provenance.armor import armor, is_own_fence, neutralise_fences
from refgate.provenance.boundaries import guard_external
from refgate.provenance.html import HiddenReport, html_to_text, inspect_hidden
from refgate.provenance.injection import InjectionReport, InjectionSignal, inspect_injection
from refgate.provenance.record import RunProvenance
from refgate.provenance.unicode_scan import UnicodeFinding, UnicodeReport, inspect_unicode

#: Alias: a signal of an InjectionReport.
Signal = InjectionSignal

__all__ = [
    "armor",
    "is_own_fence",
    "neutralise_fences",
    "inspect_injection",
    "InjectionReport",
    "InjectionSignal",
    "Signal",
    "inspect_unicode",
    "UnicodeReport",
    "UnicodeFinding",
    "inspect_hidden",
    "HiddenReport",
    "html_to_text",
    "guard_external",
    "RunProvenance",
]
