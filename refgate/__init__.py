"""refgate: an evidence-gated analyst agent on LangGraph.

The public Python API (``refgate.ask``, ``refgate.research``, their asyncio forms ``refgate.aask``
and ``refgate.aresearch``, ``refgate.Answer``,
``refgate.ResearchResult``, ``refgate.RunFailed``) is implemented in ``refgate.api.public``, the
front layer beside the CLI, and served from here on first use (PEP 562), so that importing the
core (``refgate.refs``, ``refgate.config``, ...) never loads the graph, nodes, tools or retrieval,
and ``import refgate`` alone (``refgate --version``) loads nothing but this file.
"""

from typing import Any

__version__ = "0.1.0"

#: Names served lazily from ``refgate.api.public``.
_API = ("ask", "aask", "research", "aresearch", "Answer", "ResearchResult", "RunFailed")
#: Names served lazily from ``refgate.refs`` (pydantic models: ``refgate --version`` needs none).
_REFS = ("Ref", "new_ref_id")

__all__ = ["__version__", *_REFS, *_API]


def __getattr__(name: str) -> Any:
    if name in _API:
        # Deferred: the front layer loads the whole graph stack; only a caller of the API pays.
        from refgate.api import public as api

        return getattr(api, name)
    if name in _REFS:
        # Deferred: building the pydantic models costs a second at startup.
        from refgate import refs

        return getattr(refs, name)
    raise AttributeError(f"module 'refgate' has no attribute {name!r}")
