"""What a deep-research run depends on: its backend and web providers, fixed or resolved lazily.

Nothing is resolved when the graph is compiled: the first step that needs a backend or a web
provider builds it (from the factory arguments, else from ``configurable`` and settings) and
caches it per workspace, so compiling needs no key, no network and no heavy library.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from langchain_core.runnables import RunnableConfig

from refgate.config import apply_context, context_workspace, load_settings
from refgate.models import ModelProvider
from refgate.nodes.common import run_context
from refgate.nodes.research.backends import ChatModelBackend, make_backend
from refgate.tools.web_providers import default_providers
from refgate.workspace import load_served_workspace, load_workspace

#: The model-factory pass name research uses (``REFGATE_MODEL_RESEARCH`` is not read; the default
#: model applies unless settings carry a ``research`` entry in ``pass_models``).
PASS_NAME = "research"


class ResearchDeps:
    """Backend and web providers for the run, from the factory arguments or resolved lazily."""

    def __init__(
        self,
        *,
        model: Any = None,
        provider: Any = None,
        backend: Any = None,
        web_search: Any = None,
        web_fetch: Any = None,
        settings: Any = None,
        workspace: Any = None,
    ) -> None:
        self.model = model
        self.provider = provider
        self.fixed_backend = backend
        self.web_search = web_search
        self.web_fetch = web_fetch
        self.settings = settings
        self.workspace = workspace
        self._lock = threading.Lock()
        self._cache: dict[Any, Any] = {}

    def workspace_for(self, config: RunnableConfig) -> Any:
        """The run's workspace (the graph's, else ``configurable.workspace``, else
        ``REFGATE_WORKSPACE``), loaded through the served allowlist check."""
        if self.workspace is not None:
            return self.workspace
        where = (
            context_workspace(run_context())
            or (config.get("configurable") or {}).get("workspace")
            or os.environ.get("REFGATE_WORKSPACE")
        )
        if not where:
            return None

        def cached(folder: str) -> Any:
            with self._lock:
                if ("ws", folder) not in self._cache:
                    self._cache[("ws", folder)] = load_workspace(folder)
                return self._cache[("ws", folder)]

        # The same allowlist check as the workbench (REFGATE_ALLOWED_WORKSPACES), every run.
        return load_served_workspace(where, loader=cached)

    def backend(self, config: RunnableConfig) -> Any:
        if self.fixed_backend is not None:
            return self.fixed_backend
        if self.model is not None:
            key: Any = ("backend", "model")
            with self._lock:
                if key not in self._cache:
                    self._cache[key] = ChatModelBackend(self.model)
                return self._cache[key]
        name = (config.get("configurable") or {}).get("backend") or "chat"
        ws = self.workspace_for(config)
        settings = None
        key = ("backend", name, getattr(ws, "root", None))
        if name == "chat":
            base = self.settings or load_settings(workspace_settings=getattr(ws, "settings", None))
            # the run context (Studio, SDK) may pick another model or timeout per run
            settings = apply_context(base, run_context())
            key = (*key, settings.model_for(PASS_NAME), settings.timeout, settings.max_tokens)
        with self._lock:
            if key not in self._cache:
                if name == "chat":
                    provider = self.provider or ModelProvider()
                    self._cache[key] = ChatModelBackend(provider.for_pass(PASS_NAME, settings))
                else:
                    self._cache[key] = make_backend(name)
            return self._cache[key]

    def web(self, config: RunnableConfig) -> tuple[Any, Any]:
        if self.web_search is not None and self.web_fetch is not None:
            return self.web_search, self.web_fetch
        ws = self.workspace_for(config)
        key = ("web", getattr(ws, "root", None))
        with self._lock:
            if key not in self._cache:
                self._cache[key] = default_providers(ws, settings=self.settings)
            search, fetch = self._cache[key]
        return self.web_search or search, self.web_fetch or fetch
