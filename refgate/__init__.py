"""refgate: an evidence-gated analyst agent on LangGraph.

``refgate.ask``, ``refgate.research``, ``refgate.Answer`` and ``refgate.ResearchResult`` live in
``refgate.api`` (above the graph layer) and are imported on first use, so importing the core
never loads the graph, nodes, tools or retrieval.
"""

from typing import Any

from refgate.refs import Ref, new_ref_id

__version__ = "0.1.0"

#: Names served lazily from ``refgate.api``.
_API = ("ask", "research", "Answer", "ResearchResult", "RunFailed")

__all__ = ["Ref", "new_ref_id", "__version__", *_API]


def __getattr__(name: str) -> Any:
    if name in _API:
        import importlib

        return getattr(importlib.import_module("refgate.api"), name)
    raise AttributeError(f"module 'refgate' has no attribute {name!r}")
