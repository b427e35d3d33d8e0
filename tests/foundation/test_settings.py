"""One settings model for the environment, `.env`, `refgate.toml [settings]` and overrides:
validated, errors naming where and which field, and docs/usage.md's table checked against it."""

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from refgate.api import local_llm
from refgate.cli import app
from refgate.config import ConfigError, Settings, load_settings, settings_table
from refgate.usage import price_of
from refgate.workspace import WorkspaceError, load_workspace

#: The settings table lives in the usage page (the README links to it).
USAGE = Path(__file__).resolve().parents[2] / "docs" / "usage.md"


def _workspace(root: Path, settings: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "refgate.toml").write_text(f'name = "w"\n[settings]\n{settings}\n', encoding="utf-8")
    return root


@pytest.mark.parametrize("value", ['"eight"', "-3", "0", "1.5", "1000"])
def test_a_bad_settings_value_names_the_file_and_the_field(tmp_path, value):
    ws = _workspace(tmp_path / "ws", f"work_max_rounds = {value}")
    with pytest.raises(WorkspaceError) as info:
        load_workspace(ws)
    message = str(info.value)
    assert str(ws / "refgate.toml") in message and "[settings] work_max_rounds" in message


def test_the_cli_exits_2_on_a_bad_settings_value(tmp_path, monkeypatch):
    ws = _workspace(tmp_path / "ws", 'sandbox = "docker"')
    result = CliRunner().invoke(app, ["ask", "What was GDP?", "--workspace", str(ws)])
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    # whitespace-free for the path: a long tmp path (xdist's popen-gwN/) wraps mid-name
    assert "[settings] sandbox" in text and "'docker'" in text
    assert "/ws/refgate.toml:" in "".join(text.split())


def test_unknown_settings_and_passes_are_refused(tmp_path):
    with pytest.raises(WorkspaceError, match="unknown setting.*work_rounds"):
        load_workspace(_workspace(tmp_path / "a", "work_rounds = 3"))
    with pytest.raises(WorkspaceError, match="unknown pass.*draft"):
        load_workspace(_workspace(tmp_path / "b", 'pass_models = { draft = "x" }'))


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("REFGATE_TIMEOUT", "-1"),
        ("REFGATE_TIMEOUT", "soon"),
        ("REFGATE_MAX_RETRIES", "-1"),
        ("REFGATE_MAX_TOKENS", "0"),
        ("REFGATE_EMBEDDINGS", "bert"),
        ("REFGATE_WEB_SEARCH", "bing"),
        ("REFGATE_WEB_FETCH", "ftp"),
        ("REFGATE_LOCAL_LLM", "maybe"),
        ("REFGATE_PRICES", "{x"),
    ],
)
def test_bad_environment_values_name_the_variable(name, value):
    with pytest.raises(ConfigError, match=name):
        load_settings({name: value})


def test_precedence_environment_over_dotenv_over_settings(tmp_path):
    dotenv = tmp_path / ".env"
    dotenv.write_text(
        "REFGATE_MAX_ROUNDS=5\nREFGATE_WORK_MAX_ROUNDS=6\nREFGATE_MODEL_WORK=ollama:qwen2.5\n",
        encoding="utf-8",
    )
    s = load_settings(
        {"REFGATE_WORK_MAX_ROUNDS": "7"},
        {
            "max_rounds": 2,
            "work_max_rounds": 3,
            "timeout": 30,
            "pass_models": {"compose": "anthropic:claude-haiku-4-5"},
        },
        dotenv=dotenv,
    )
    assert (s.max_rounds, s.work_max_rounds, s.timeout) == (5, 7, 30)
    assert s.model_for("work") == "ollama:qwen2.5"
    assert s.model_for("compose") == "anthropic:claude-haiku-4-5"
    dotenv.write_text("REFGATE_MAX_ROUNDS=none\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\.env: REFGATE_MAX_ROUNDS"):
        load_settings({}, dotenv=dotenv)


def test_the_process_reads_dotenv_in_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REFGATE_TIMEOUT", raising=False)
    (tmp_path / ".env").write_text("REFGATE_TIMEOUT=42\n", encoding="utf-8")
    assert load_settings().timeout == 42


def test_overrides_are_validated_too():
    with pytest.raises(ConfigError, match="work_max_rounds"):
        Settings().with_overrides(work_max_rounds=-1)
    assert Settings().with_overrides(model=" ollama:qwen2.5 ").model == "ollama:qwen2.5"


def test_prices_extend_the_built_in_table():
    s = load_settings({"REFGATE_PRICES": '{"my-model": [1, 2]}'}, {"prices": {"b": [3, 4]}})
    assert price_of("my-model", s.prices) == (1, 2)
    assert price_of("openai:gpt-4o-mini-2024-07-18") == (0.15, 0.60)
    assert price_of("ollama:qwen2.5") == (0.0, 0.0)
    assert price_of(local_llm.MODEL_NAME) == (0.0, 0.0)  # the embedded smoke model
    assert price_of("unknown-model") is None


def _settings_table_in_docs() -> list[tuple[str, str, str, str]]:
    text = USAGE.read_text(encoding="utf-8")
    section = text.split("## Configuration", 1)[1]
    rows = []
    for line in section.splitlines()[1:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] in ("environment",) or set(cells[0]) <= {"-", " "}:
            continue
        rows.append((cells[0].strip("`"), cells[1].strip("`"), cells[2], cells[3]))
    return rows


def test_the_documented_settings_table_is_the_model():
    expected = settings_table()
    assert _settings_table_in_docs() == expected
    names = {r[0] for r in expected}
    for name in ("REFGATE_MAX_TOKENS", "REFGATE_WEB_SEARCH", "REFGATE_WEB_FETCH"):
        assert name in names
    # every REFGATE_/OPENAI_ variable the usage page mentions is a setting or a documented extra
    extra = {
        "REFGATE_WORKSPACE",
        "REFGATE_ALLOWED_WORKSPACES",
        "REFGATE_STORE_EMBED",
        "REFGATE_TEST_POSTGRES_URL",
        "REFGATE_PG_DIR",
        # environment-only knobs of one component, documented where that component is
        "REFGATE_OCR",  # the PDF loader's OCR (on/off)
        "REFGATE_OCR_TIMEOUT",  # its bound per page
        "REFGATE_CHROMIUM",  # the browser that prints PDF reports (refgate.report.pdf)
        "REFGATE_LLAMA_CMAKE_ARGS",  # scripts/setup.sh: the embedded model's build flags
    }
    mentioned = set(re.findall(r"\b(?:REFGATE|OPENAI)_[A-Z_]+\b", USAGE.read_text()))
    known = {n for n in names if "<" not in n} | {
        f"REFGATE_MODEL_{p}"
        for p in ("BRIEF", "WORK", "CRITIQUE", "COMPOSE", "HARVEST", "RESEARCH", "GATE")
    }
    assert mentioned - known - extra - {"REFGATE_MODEL_"} == set()


def test_web_settings_in_refgate_toml_reach_the_providers(tmp_path):
    from refgate.tools.web_providers import default_providers

    ws = load_workspace(
        _workspace(tmp_path / "w", 'web_search = "searx:http://127.0.0.1:1"\nweb_fetch = "http"')
    )
    search, fetch = default_providers(ws, env={})
    assert type(search).__name__ == "SearxSearch" and type(fetch).__name__ == "HttpFetch"
    with pytest.raises(WorkspaceError, match="web_search"):
        load_workspace(_workspace(tmp_path / "x", 'web_search = "google"'))


def test_the_run_context_shares_the_settings_model():
    from refgate.config import RunContext, apply_context

    base = Settings(pass_models={"brief": "ollama:qwen2.5"})
    s = apply_context(base, RunContext(model="m", model_compose="c", work_max_rounds=3))
    assert (s.model_for("work"), s.model_for("compose"), s.model_for("brief")) == (
        "m",
        "c",
        "ollama:qwen2.5",
    )
    assert s.work_max_rounds == 3 and apply_context(base, None) is base
    with pytest.raises(ConfigError, match="context.timeout"):
        apply_context(base, {"timeout": -1})
    with pytest.raises(ValueError):
        RunContext(max_rounds=0)  # Studio and the SDK get the same ranges
    schema = RunContext.model_json_schema()["properties"]
    assert schema["timeout"]["description"].startswith(Settings.model_fields["timeout"].description)


def test_web_and_smoke_model_settings_come_from_dotenv_like_every_setting(tmp_path, env):
    """`.env` and `[settings]` reach the web providers and the smoke-model switch, not only the
    process environment (they used to read os.environ themselves)."""
    from refgate.api.public import model_endpoint
    from refgate.tools.web_providers import default_providers

    for name in ("REFGATE_WEB_SEARCH", "REFGATE_WEB_FETCH", "REFGATE_LOCAL_LLM"):
        env.delenv(name, raising=False)
    env.chdir(tmp_path)
    (tmp_path / ".env").write_text(
        "REFGATE_WEB_SEARCH=searx:http://127.0.0.1:1\nREFGATE_WEB_FETCH=http\nREFGATE_LOCAL_LLM=0\n",
        encoding="utf-8",
    )
    search, fetch = default_providers(None)
    assert type(search).__name__ == "SearxSearch" and type(fetch).__name__ == "HttpFetch"
    with pytest.raises(ConfigError, match="no model"), model_endpoint(load_settings()):
        pass
    ws = load_workspace(_workspace(tmp_path / "w", "local_llm = false"))
    (tmp_path / ".env").unlink()
    with (
        pytest.raises(ConfigError, match="no model"),
        model_endpoint(load_settings(None, ws.settings)),
    ):
        pass


def test_a_bad_injection_classifier_switch_fails_at_start_not_mid_run(tmp_path, monkeypatch):
    """REFGATE_INJECTION_CLASSIFIER is read where untrusted text is scanned; a typo must stop
    the run before it starts (exit 2, the variable named), not fail every later scan."""
    with pytest.raises(ConfigError, match="REFGATE_INJECTION_CLASSIFIER.*'semntic'"):
        load_settings({"REFGATE_INJECTION_CLASSIFIER": "semntic"})
    for good in ("", "off", "NGRAM", " both ", "semantic", "1", "false"):
        load_settings({"REFGATE_INJECTION_CLASSIFIER": good})
    monkeypatch.setenv("REFGATE_INJECTION_CLASSIFIER", "maybe")
    ws = _workspace(tmp_path / "ws", "")
    result = CliRunner().invoke(app, ["ask", "What was GDP?", "--workspace", str(ws)])
    assert result.exit_code == 2
    assert "REFGATE_INJECTION_CLASSIFIER" in " ".join(result.output.split())
