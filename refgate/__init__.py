"""refgate: an evidence-gated analyst agent on LangGraph.

The public Python API (``refgate.ask``, ``refgate.research``, their asyncio forms ``refgate.aask``
and ``refgate.aresearch``, ``refgate.Answer``,
``refgate.ResearchResult``, ``refgate.RunFailed``) is implemented in ``refgate.api.public``, the
front layer beside the CLI, and served from here on first use (PEP 562), so that importing the
core (``refgate.refs``, ``refgate.config``, ...) never loads the graph, nodes, tools or retrieval,
and ``import refgate`` alone loads nothing but this file. The ``refgate`` console script starts
here too: ``refgate --version`` answers before any command-line machinery loads.
"""

import sys
from typing import Any

__version__ = "0.1.0"

#: Names served lazily from ``refgate.api.public``.
_API = ("ask", "aask", "research", "aresearch", "Answer", "ResearchResult", "RunFailed")
#: Names served lazily from ``refgate.refs`` (pydantic models: ``refgate --version`` needs none).
_REFS = ("Ref", "new_ref_id")

__all__ = ["__version__", *_REFS, *_API]


def __getattr__(name: str) -> Any:
    if name in _API:
        # deferred: the front layer loads the whole graph stack; only a caller of the API pays.
        from refgate.api import public as api

        return getattr(api, name)
    if name in _REFS:
        # deferred: building the pydantic models costs a second at startup.
        from refgate import refs

        return getattr(refs, name)
    raise AttributeError(f"module 'refgate' has no attribute {name!r}")


def _console_main() -> None:
    """The ``refgate`` console script: ``--version`` is answered here; everything else runs
    ``refgate.cli.main`` (typer, rich and the command table)."""
    if sys.argv[1:] in (["--version"], ["-V"]):
        print(f"refgate {__version__}")
        return
    # deferred: the command-line stack loads only when a command (or --help) needs it
    from refgate.cli import main

    main()
