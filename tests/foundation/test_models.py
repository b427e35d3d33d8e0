import pytest

from refgate.config import ConfigError, Settings, load_settings
from refgate.models import chat_model


def test_no_endpoint_is_a_clear_configuration_error():
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        chat_model(Settings(api_key=None, base_url=None))


def test_per_pass_model_and_client_settings():
    settings = load_settings(
        {
            "OPENAI_API_KEY": "k",
            "REFGATE_MODEL": "base",
            "REFGATE_MODEL_WORK": "strong",
            "REFGATE_TIMEOUT": "7",
            "REFGATE_MAX_RETRIES": "5",
        }
    )
    work, brief = chat_model(settings, "work"), chat_model(settings, "brief")
    assert (work.model_name, brief.model_name) == ("strong", "base")
    assert work.max_retries == 5 and work.request_timeout == 7


def test_local_servers_also_get_the_legacy_max_tokens():
    local = chat_model(Settings(base_url="http://127.0.0.1:8080/v1", api_key="x", max_tokens=64))
    remote = chat_model(Settings(base_url="https://api.example.com/v1", api_key="x", max_tokens=64))
    assert local.extra_body == {"max_tokens": 64}
    assert not remote.extra_body and remote.max_tokens == 64


def test_bad_settings_are_named():
    with pytest.raises(ConfigError, match="REFGATE_WORK_MAX_ROUNDS"):
        load_settings({"REFGATE_WORK_MAX_ROUNDS": "many"})
    with pytest.raises(ConfigError, match="REFGATE_SANDBOX"):
        load_settings({"REFGATE_SANDBOX": "docker"})
