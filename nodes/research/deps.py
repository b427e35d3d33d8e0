"""What the research nodes are built with, and how a node resolves it for its run.

``ResearchDeps`` is the workbench's ``Deps`` (model provider, settings, default workspace) plus
what only research uses: a fixed ``ResearchBackend``, the web providers and the run's limits.
Nothing is resolved when the graph is compiled: the first node that needs a backend or a web
provider builds it (``run_backend``, ``run_web``) and caches it on the deps, so compiling needs no
key, no network and no heavy library. The run's workspace is the workbench's resolution
(``refgate.nodes.common.resolve_workspace``, allowlist included), with ``configurable.workspace``
as the client-named folder.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig

from refgate.nodes.common import Deps, resolve_workspace
from refgate.nodes.research.backends import ChatModelBackend, make_backend
from refgate.nodes.research.core import ResearchLimits
from refgate.tools.web_providers import default_providers
from refgate.workspace import Workspace

#: The model-factory pass name research uses (``REFGATE_MODEL_RESEARCH`` is not read; the default
#: model applies unless settings carry a ``research`` entry in ``pass_models``).
PASS_NAME = "research"


@dataclass
class ResearchDeps(Deps):
    """The workbench's dependencies plus a fixed backend, web providers and limits."""

    backend: Any = None
    web_search: Any = None
    web_fetch: Any = None
    limits: ResearchLimits = field(default_factory=ResearchLimits)
    #: The outbound policy of the run that started this one (``OutboundPolicy``), else None:
    #: the settings' default (``nodes.research.outbound.policy_of``).
    outbound: Any = None
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    _lock: Any = field(default_factory=threading.Lock, repr=False, compare=False)

    def cached(self, key: Any, build: Any) -> Any:
        with self._lock:
            if key not in self._cache:
                self._cache[key] = build()
            return self._cache[key]


def run_workspace(deps: ResearchDeps, config: RunnableConfig) -> Workspace | None:
    """The run's workspace (``configurable.workspace``, the run context's, the graph's, else
    ``REFGATE_WORKSPACE``), through the served allowlist check."""
    named = (config.get("configurable") or {}).get("workspace")
    return resolve_workspace({"workspace": named}, deps)


def run_backend(deps: ResearchDeps, config: RunnableConfig) -> Any:
    """The fixed backend, else ``configurable.backend`` (``chat``/``codex``/``agy``); ``chat``
    wraps the research pass's model (the graph's, else built from settings and run context)."""
    if deps.backend is not None:
        return deps.backend
    name = (config.get("configurable") or {}).get("backend") or "chat"
    if name != "chat":
        return deps.cached(("backend", name), lambda: make_backend(name))
    settings = deps.settings_for(run_workspace(deps, config))
    model = deps.model(PASS_NAME, settings)
    return deps.cached(("backend", "chat", id(model)), lambda: ChatModelBackend(model))


def run_web(deps: ResearchDeps, config: RunnableConfig) -> tuple[Any, Any]:
    """``(search, fetch)``: the graph's providers, else the workspace's defaults."""
    if deps.web_search is not None and deps.web_fetch is not None:
        return deps.web_search, deps.web_fetch
    ws = run_workspace(deps, config)
    search, fetch = deps.cached(
        ("web", getattr(ws, "root", None)),
        lambda: default_providers(ws, settings=deps.settings),
    )
    return deps.web_search or search, deps.web_fetch or fetch
