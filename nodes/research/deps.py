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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from langchain_core.runnables import RunnableConfig

from refgate.nodes.common import Deps, resolve_workspace
from refgate.nodes.research.backends import ChatModelBackend, ResearchBackend, make_backend
from refgate.nodes.research.core import ResearchLimits
from refgate.tools.outbound import OutboundPolicy
from refgate.tools.web_providers import Fetch, WebSearch, default_providers
from refgate.workspace import Workspace

#: The model-factory pass name research uses (``REFGATE_MODEL_RESEARCH`` is not read; the default
#: model applies unless settings carry a ``research`` entry in ``pass_models``).
PASS_NAME = "research"


@dataclass
class ResearchDeps(Deps):
    """The workbench's dependencies plus a fixed backend, web providers and limits."""

    backend: ResearchBackend | None = None
    web_search: WebSearch | None = None
    web_fetch: Fetch | None = None
    limits: ResearchLimits = field(default_factory=ResearchLimits)
    #: The outbound policy of the run that started this one, else None: the settings' default
    #: (``nodes.research.outbound.policy_of``).
    outbound: OutboundPolicy | None = None
    #: What the first node of a run built: backends by name (and model), providers by workspace.
    _backends: dict[tuple[str, int], ResearchBackend] = field(
        default_factory=dict, repr=False, compare=False
    )
    _web: dict[Path | None, tuple[WebSearch, Fetch]] = field(
        default_factory=dict, repr=False, compare=False
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def backend_for(
        self, key: tuple[str, int], build: Callable[[], ResearchBackend]
    ) -> ResearchBackend:
        """The backend cached under ``key``, built on first use."""
        with self._lock:
            if key not in self._backends:
                self._backends[key] = build()
            return self._backends[key]

    def web_for(
        self, root: Path | None, build: Callable[[], tuple[WebSearch, Fetch]]
    ) -> tuple[WebSearch, Fetch]:
        """The web providers of the workspace at ``root``, built on first use."""
        with self._lock:
            if root not in self._web:
                self._web[root] = build()
            return self._web[root]


def run_workspace(deps: ResearchDeps, config: RunnableConfig) -> Workspace | None:
    """The run's workspace (``configurable.workspace``, the run context's, the graph's, else
    ``REFGATE_WORKSPACE``), through the served allowlist check."""
    named = (config.get("configurable") or {}).get("workspace")
    return resolve_workspace({"workspace": named}, deps)


def run_backend(deps: ResearchDeps, config: RunnableConfig) -> ResearchBackend:
    """The fixed backend, else ``configurable.backend`` (``chat``/``codex``/``agy``); ``chat``
    wraps the research pass's model (the graph's, else built from settings and run context)."""
    if deps.backend is not None:
        return deps.backend
    name = (config.get("configurable") or {}).get("backend") or "chat"
    if name != "chat":
        return deps.backend_for((name, 0), lambda: make_backend(name))
    settings = deps.settings_for(run_workspace(deps, config))
    model = deps.model(PASS_NAME, settings)
    return deps.backend_for(("chat", id(model)), lambda: ChatModelBackend(model))


def run_web(deps: ResearchDeps, config: RunnableConfig) -> tuple[WebSearch, Fetch]:
    """``(search, fetch)``: the graph's providers, else the workspace's defaults."""
    if deps.web_search is not None and deps.web_fetch is not None:
        return deps.web_search, deps.web_fetch
    ws = run_workspace(deps, config)
    search, fetch = deps.web_for(
        ws.root if ws is not None else None,
        lambda: default_providers(ws, settings=deps.settings),
    )
    return deps.web_search or search, deps.web_fetch or fetch
