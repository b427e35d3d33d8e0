"""Every engine capability a run can reach, listed in one place and registered by one call.

Each capability module ends with its list (``CAPABILITIES``); ``DEFAULT_CAPABILITIES`` names those
lists, and ``register_default_capabilities`` enters them into the catalog. ``build_graph`` calls it,
so a run sees the same catalog whatever was imported before; nothing registers on import.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from refgate.catalog.capabilities import register
from refgate.graph import research_capability
from refgate.retrieval import capability as document_capabilities
from refgate.tools import capabilities as dataset_capabilities

#: The capability lists of every layer, in the order they are registered.
DEFAULT_CAPABILITIES: tuple[Sequence[Callable[..., object]], ...] = (
    dataset_capabilities.CAPABILITIES,
    document_capabilities.CAPABILITIES,
    research_capability.CAPABILITIES,
)


def register_default_capabilities() -> None:
    """Enter every layer's capabilities into the catalog (again: no change)."""
    for capabilities in DEFAULT_CAPABILITIES:
        register(capabilities)
