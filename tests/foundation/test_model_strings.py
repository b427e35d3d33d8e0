"""Model strings the LangChain way: each provider's chat model constructed and bound to tools
without network, settings translated to its parameters, a missing package named as an extra."""

import pytest
from pydantic import BaseModel, Field

from refgate.config import ConfigError, Settings, load_settings
from refgate.models import chat_model, endpoint_of, is_configured, split_model


class Lookup(BaseModel):
    """Look a value up."""

    series: str = Field(description="series name")


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def _tools_of(bound) -> list[str]:
    tools = bound.kwargs.get("tools") or []
    names = []
    for t in tools:
        names.append(
            t.get("name")
            or (t.get("function") or {}).get("name")
            or (t.get("function_declarations") or [{}])[0].get("name")
        )
    return names


def test_split_model_keeps_bare_names_and_ollama_tags():
    assert split_model("anthropic:claude-sonnet-4-5") == ("anthropic", "claude-sonnet-4-5")
    assert split_model("ollama:qwen2.5:7b") == ("ollama", "qwen2.5:7b")
    assert split_model("qwen2.5:7b") == (None, "qwen2.5:7b")
    assert split_model("gpt-4o-mini") == (None, "gpt-4o-mini")


@pytest.mark.parametrize(
    ("model", "cls", "fields"),
    [
        (
            "anthropic:claude-sonnet-4-5",
            "ChatAnthropic",
            {"model": "claude-sonnet-4-5", "max_retries": 5, "max_tokens": 321},
        ),
        ("ollama:qwen2.5", "ChatOllama", {"model": "qwen2.5", "num_predict": 321}),
        (
            "google_genai:gemini-2.5-flash",
            "ChatGoogleGenerativeAI",
            {"model": "gemini-2.5-flash", "max_retries": 5, "max_output_tokens": 321},
        ),
    ],
)
def test_each_provider_is_built_and_binds_tools_offline(keys, model, cls, fields):
    settings = load_settings(
        {
            "REFGATE_MODEL": model,
            "REFGATE_MAX_RETRIES": "5",
            "REFGATE_MAX_TOKENS": "321",
            "REFGATE_TIMEOUT": "9",
        }
    )
    llm = chat_model(settings, "work")
    assert type(llm).__name__ == cls
    for name, value in fields.items():
        assert str(getattr(llm, name)).endswith(str(value)), name
    assert llm.temperature == 0
    bound = llm.bind_tools([Lookup])
    assert _tools_of(bound) == ["Lookup"]
    assert is_configured(settings)  # no OpenAI endpoint needed, no smoke model started


def test_per_pass_model_strings_mix_providers(keys):
    settings = load_settings(
        {"REFGATE_MODEL": "ollama:qwen2.5", "REFGATE_MODEL_COMPOSE": "anthropic:claude-haiku-4-5"}
    )
    assert type(chat_model(settings, "work")).__name__ == "ChatOllama"
    assert type(chat_model(settings, "compose")).__name__ == "ChatAnthropic"
    assert endpoint_of(settings, "compose") == "https://api.anthropic.com"


def test_openai_prefix_and_bare_name_take_the_same_path():
    s = Settings(model="openai:gpt-4.1-mini", base_url="http://127.0.0.1:1/v1", api_key="k")
    prefixed, bare = chat_model(s), chat_model(s.with_overrides(model="gpt-4.1-mini"))
    assert type(prefixed) is type(bare)
    assert prefixed.model_name == bare.model_name == "gpt-4.1-mini"
    assert str(prefixed.openai_api_base) == "http://127.0.0.1:1/v1"
    assert endpoint_of(s) == "http://127.0.0.1:1/v1"


def test_a_missing_provider_package_is_one_line_naming_the_extra(monkeypatch):
    import sys

    from langchain.chat_models import base

    monkeypatch.setitem(sys.modules, "langchain_mistralai", None)  # as if not installed
    base._get_chat_model_creator.cache_clear()
    with pytest.raises(ConfigError) as info:
        chat_model(Settings(model="mistralai:mistral-large-latest"))
    message = str(info.value)
    assert "\n" not in message
    assert "langchain-mistralai" in message and "pip install 'refgate[mistral]'" in message


def test_a_provider_without_its_key_is_a_configuration_error(monkeypatch):
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="google_genai:gemini-2.5-flash.*API key"):
        chat_model(Settings(model="google_genai:gemini-2.5-flash"))


def test_the_research_graph_uses_the_same_factory(keys):
    from refgate.nodes.research.deps import ResearchDeps, run_backend

    deps = ResearchDeps(settings=Settings(model="anthropic:claude-sonnet-4-5"))
    backend = run_backend(deps, {"configurable": {}})
    assert type(backend.model).__name__ == "ChatAnthropic"
