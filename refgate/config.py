"""Settings: one pydantic-settings model for the environment, a ``.env`` file, a workspace's
``refgate.toml [settings]`` table and the Studio run context.

Precedence, highest first: explicit overrides (``--model``, the Studio context) > environment >
``.env`` (in the current folder) > ``[settings]`` > defaults. Every value is validated by the one
model below (types and ranges); a bad one is a ``ConfigError`` naming where it came from and the
field (``REFGATE_WORK_MAX_ROUNDS``, ``./.env: REFGATE_TIMEOUT``, ``[settings] work_max_rounds``);
the CLI exits 2 with it. ``python -m refgate.config`` prints the settings table (docs/usage.md);
``settings_table()`` renders the settings table (docs/usage.md) from the model (a test
checks docs/usage.md against it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from refgate.errors import SettingsError

#: The pass names. Each is defined here once, as a constant the graph wires by.
BRIEF: Final = "brief"
WORK: Final = "work"
CRITIQUE: Final = "critique"
COMPOSE: Final = "compose"
GATE: Final = "gate"
HARVEST: Final = "harvest"
DELIVER: Final = "deliver"
RESEARCH: Final = "research"


@dataclass(frozen=True)
class Pass:
    """One pass of refgate's graphs."""

    name: str
    #: The pass calls a chat model (whose model a setting may name: ``REFGATE_MODEL_<NAME>``).
    model: bool
    #: A node of the workbench graph (False: the deep-research graph's model role).
    workbench: bool = True


#: Every pass, once, in the order the workbench graph runs them; every list of passes derives
#: from this one.
PASS_TABLE: tuple[Pass, ...] = (
    Pass(BRIEF, model=True),
    Pass(WORK, model=True),
    Pass(CRITIQUE, model=True),
    Pass(COMPOSE, model=True),
    Pass(GATE, model=False),
    Pass(HARVEST, model=True),
    Pass(DELIVER, model=False),
    Pass(RESEARCH, model=True, workbench=False),
)
#: Where WORK goes next (``graph/builder.py``'s route; Studio draws the edges from it).
AfterWork = Literal["critique", "compose"]
#: Every pass name.
PASSES = tuple(p.name for p in PASS_TABLE)
#: The workbench graph's nodes, in the order they run (``graph/builder.py`` wires them so).
WORKBENCH_PASSES = tuple(p.name for p in PASS_TABLE if p.workbench)
#: Workbench passes that call a model.
MODEL_PASSES = tuple(p.name for p in PASS_TABLE if p.workbench and p.model)
#: Passes whose model a setting or the run's context may set (``model_<pass>``).
CONTEXT_PASSES = tuple(p.name for p in PASS_TABLE if p.model)
#: The passes ``pass_models`` may name: those that call a model and the GATE (kept as it was).
SETTABLE_PASSES = tuple(p.name for p in PASS_TABLE if p.model or p.name == GATE)

#: Environment names that do not follow ``REFGATE_<FIELD>``.
ENV_OVERRIDES = {"base_url": "OPENAI_BASE_URL", "api_key": "OPENAI_API_KEY"}


class ConfigError(SettingsError, ValueError):
    """A setting is missing or invalid; the CLI exits with code 2 and prints this message."""


#: The injection detector's second layers are switched by this environment variable, read where
#: untrusted text is scanned (``refgate.provenance.injection.layer``); ``load_settings`` checks
#: its value so a typo fails at start with a clear message, not in the middle of a run.
INJECTION_CLASSIFIER_ENV = "REFGATE_INJECTION_CLASSIFIER"
#: Its values (case-insensitive) and the layers each turns on.
INJECTION_CLASSIFIER_VALUES: dict[str, frozenset[str]] = {
    **dict.fromkeys(("1", "true", "yes", "on", "ngram"), frozenset({"ngram"})),
    **dict.fromkeys(("0", "false", "no", "off"), frozenset()),
    "semantic": frozenset({"semantic"}),
    "both": frozenset({"ngram", "semantic"}),
}


def check_injection_classifier(env: Mapping[str, str]) -> None:
    """Raise ``ConfigError`` when ``REFGATE_INJECTION_CLASSIFIER`` in ``env`` has no meaning."""
    raw = str(env.get(INJECTION_CLASSIFIER_ENV, "")).strip().lower()
    if raw and raw not in INJECTION_CLASSIFIER_VALUES:
        raise ConfigError(
            f"{INJECTION_CLASSIFIER_ENV} must be one of ngram, semantic, both, 1/0, true/false,"
            f" yes/no, on/off; got {raw!r}"
        )


class Settings(BaseSettings):
    """refgate's settings (field descriptions are the settings table's and Studio's)."""

    model_config = SettingsConfigDict(frozen=True, extra="forbid", validate_default=False)

    model: str = Field(
        "gpt-4o-mini",
        description="model string: `provider:model` (`anthropic:claude-sonnet-4-5`, "
        "`ollama:qwen2.5`, `google_genai:gemini-2.5-flash`, `openai:gpt-4.1-mini`) or a bare "
        "name for the OpenAI-compatible endpoint",
    )
    pass_models: dict[str, str] = Field(
        default_factory=dict,
        description="per-pass model (`REFGATE_MODEL_BRIEF`, `REFGATE_MODEL_WORK`, ...)",
        json_schema_extra={"env": "REFGATE_MODEL_<PASS>", "default_text": "the model"},
    )
    base_url: str | None = Field(
        None,
        description="OpenAI-compatible endpoint for bare model names (OpenAI, vLLM, Ollama, "
        "llama.cpp)",
        json_schema_extra={"default_text": "OpenAI"},
    )
    api_key: str | None = Field(None, description="key of that endpoint", repr=False)
    timeout: float = Field(120.0, gt=0, le=3600, description="request timeout in seconds")
    max_retries: int = Field(3, ge=0, le=20, description="retries on 429 and 5xx")
    max_tokens: int | None = Field(
        None,
        ge=1,
        le=1_000_000,
        description="reply length cap in tokens",
        json_schema_extra={"default_text": "the server's"},
    )
    work_max_rounds: int = Field(8, ge=1, le=100, description="WORK tool rounds")
    max_rounds: int = Field(4, ge=1, le=100, description="tool rounds of the other passes")
    sandbox: Literal["bwrap", "rlimits"] = Field(
        "bwrap", description="`bwrap`, or `rlimits` (weaker; for machines without bubblewrap)"
    )
    embeddings: Literal["minilm", "openai"] = Field(
        "minilm", description="`minilm` (local) or `openai`"
    )
    korean_embeddings: Literal["minilm", "e5"] = Field(
        "minilm",
        description="local embedder of a mostly Korean index: `minilm` or `e5` "
        "(multilingual-e5-small, from scripts/setup.sh)",
    )
    database_url: str | None = Field(
        None,
        description="checkpoints and memory (`postgresql://...`)",
        json_schema_extra={"default_text": "SQLite under `<workspace>/.refgate/`"},
    )
    web_search: str | None = Field(
        None,
        description="web search for WebSearch and research: `snapshot` (the workspace's offline "
        "web) or `searx:<url>` (a SearxNG server; the network)",
        json_schema_extra={"default_text": "`snapshot` (offline)"},
    )
    web_fetch: Literal["snapshot", "http"] | None = Field(
        None,
        description="page fetching: `snapshot` or `http` (the network)",
        json_schema_extra={"default_text": "`snapshot` (offline)"},
    )
    secondary_numbers: Literal["block", "warn"] = Field(
        "block",
        description="GATE: a number backed only by secondary evidence (web pages, model output) "
        "blocks, or warns",
    )
    question_coverage: Literal["warn", "block"] = Field(
        "warn",
        description="GATE: an answer whose verified claims leave a quantity or period of the "
        "question uncovered warns, or blocks",
    )
    max_tool_calls_per_pass: int = Field(
        40, ge=1, le=10_000, description="run budget: tool calls in one pass"
    )
    max_tool_calls_per_run: int = Field(
        150, ge=1, le=100_000, description="run budget: tool calls in one run (GATE retry included)"
    )
    sandbox_seconds_per_run: float = Field(
        600.0, gt=0, le=86_400, description="run budget: RunPython seconds in one run"
    )
    max_code_timeout: float = Field(
        60.0, ge=1, le=600, description="run budget: the longest RunPython timeout the model gets"
    )
    max_question_chars: int = Field(
        8_000, ge=1, le=10_000_000, description="run budget: characters of a question"
    )
    max_answer_chars: int = Field(
        40_000, ge=100, le=10_000_000, description="run budget: characters of an answer"
    )
    history_turns: int = Field(
        6,
        ge=0,
        le=1_000,
        description="follow-ups: earlier turns of a thread shown to each pass (older ones are "
        "dropped from the prompt)",
    )
    keep_checkpoints: Literal["latest", "all"] = Field(
        "latest",
        description="a finished turn keeps only its thread's latest checkpoint (linear growth), "
        "or every checkpoint (time travel)",
    )
    max_check_chars: int = Field(
        100_000,
        ge=1_000,
        le=10_000_000,
        description="GATE alone (refgate check, MCP check): characters of an answer",
    )
    max_check_refs: int = Field(
        5_000,
        ge=10,
        le=1_000_000,
        description="GATE alone (refgate check, MCP check): refs in the ledger",
    )
    max_run_seconds: float = Field(
        1_800.0, gt=0, le=604_800, description="run budget: wall time of a run in seconds"
    )
    outbound_workspace_data: bool = Field(
        False,
        description="outbound: a search query or URL may carry workspace data (numbers and "
        "strings of the run's trusted results)",
    )
    influenced_numbers: Literal["warn", "block"] = Field(
        "warn",
        description="GATE: a number whose only support was computed after an untrusted read "
        "warns, or blocks",
    )
    containment: Literal["warn", "block"] = Field(
        "warn",
        description="GATE: what an injection may have steered (a number computed after an "
        "untrusted read, through memory, a document or a data cell) warns, or blocks "
        "(`block` implies influenced_numbers = block)",
    )
    memory_min_score: float = Field(
        0.6,
        ge=0,
        le=1,
        description="memory: least relevance (cosine similarity) of a recalled decision "
        "(benchmarks/memory_relevance.py)",
    )
    untrusted_memory_days: float = Field(
        30.0, ge=0, le=36_500, description="memory: days an untrusted decision is kept"
    )
    local_llm: bool = Field(
        True,
        description="the embedded smoke model when no model is configured (`0` disables it)",
        json_schema_extra={"default_text": "on when `refgate[local]` is installed"},
    )
    prices: dict[str, tuple[float, float]] = Field(
        default_factory=dict,
        description="USD per million (input, output) tokens per model, added to the built-in "
        "table (JSON in the environment)",
        json_schema_extra={"default_text": "a small built-in table"},
    )
    ingest_memory_mb: int = Field(
        3072,
        ge=256,
        le=1_048_576,
        description="indexing: memory bound of one document's parse (MB)",
    )
    ingest_timeout_s: float = Field(
        600.0, gt=0, le=86_400, description="indexing: seconds one document may take to parse"
    )
    ingest_max_unzipped_mb: int = Field(
        512, ge=1, le=1_048_576, description="indexing: a DOCX/XLSX's total uncompressed size (MB)"
    )
    ingest_max_member_mb: int = Field(
        128, ge=1, le=1_048_576, description="indexing: one part of a DOCX/XLSX, uncompressed (MB)"
    )
    ingest_max_ratio: int = Field(
        100, ge=2, le=100_000, description="indexing: a DOCX/XLSX part's largest compression ratio"
    )
    ingest_max_cells: int = Field(
        1_000_000,
        ge=1,
        le=1_000_000_000,
        description="indexing: cells a workbook may declare and that are read from it",
    )
    filing_citation: Literal["analyst", "dart"] = Field(
        "analyst",
        description=(
            "how a DART filing is cited: analyst '엔씨소프트 사업보고서 (2024.03.20 접수, 접수번호 "
            "20240320001965), III. 재무에 관한 사항'; dart the design's '[docRef:<rcept_no>] "
            "[tableRef:<section_id>]' before the filing's name"
        ),
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        *args: object,
        **kwargs: object,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # ``load_settings`` layers the sources itself so that an error names its origin;
        # ``Settings(...)`` alone is the defaults plus what it is given.
        return (init_settings,)

    @model_validator(mode="after")
    def _containment_blocks(self) -> Settings:
        if self.containment == "block" and self.influenced_numbers != "block":
            object.__setattr__(self, "influenced_numbers", "block")
        return self

    @field_validator("pass_models")
    @classmethod
    def _known_passes(cls, value: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(value) - set(SETTABLE_PASSES))
        if unknown:
            known = ", ".join(SETTABLE_PASSES)
            raise ValueError(f"unknown pass(es) {', '.join(unknown)}; passes: {known}")
        return value

    @field_validator("web_search")
    @classmethod
    def _web_search(cls, value: str | None) -> str | None:
        if value and value != "snapshot" and not (value.startswith("searx:") and value[6:]):
            raise ValueError("expected 'snapshot' or 'searx:<url>'")
        if value and value.startswith("searx:"):
            url = value[6:]
            try:
                parts = urlsplit(url)
                host = parts.hostname
                parts.port  # noqa: B018 - raises on a malformed port
            except ValueError:
                host = None
            if (
                parts.scheme not in ("http", "https")
                or not host
                or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url)
            ):
                raise ValueError(
                    "expected 'searx:<url>' with an http(s) URL of a SearxNG server "
                    "(e.g. searx:http://127.0.0.1:8888)"
                )
        return value

    @field_validator("model")
    @classmethod
    def _model(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the model string is empty")
        return value.strip()

    def model_for(self, pass_name: str) -> str:
        """The model string a pass uses (its override, else the default)."""
        return self.pass_models.get(pass_name, self.model)

    def rounds_for(self, pass_name: str) -> int:
        """How many tool rounds a pass may run before it moves on."""
        return self.work_max_rounds if pass_name == "work" else self.max_rounds

    @property
    def has_endpoint(self) -> bool:
        return bool(self.base_url or self.api_key)

    def with_overrides(self, **values: object) -> Settings:
        """A copy with the given values (None: unchanged), validated like any other source."""
        changes = {k: v for k, v in values.items() if v is not None}
        if not changes:
            return self
        data = {k: getattr(self, k) for k in type(self).model_fields}
        data.update(changes)
        return _validate(data, {k: k for k in changes})


def env_name(field: str) -> str:
    """The environment variable of a field."""
    return ENV_OVERRIDES.get(field, f"REFGATE_{field.upper()}")


def _from_env(env: Mapping[str, str], label: str) -> tuple[dict[str, Any], dict[str, str]]:
    """Field values from environment-style names, and where each came from."""
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for name in Settings.model_fields:
        if name == "pass_models":
            continue
        raw = env.get(env_name(name))
        if raw is None or raw.strip() == "":
            continue
        where = f"{label}{env_name(name)}"
        if name == "prices":
            try:
                raw = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{where}: not JSON ({exc.msg})") from None
        values[name] = raw.strip() if isinstance(raw, str) else raw
        origin[name] = where
    passes = {
        p: env[f"REFGATE_MODEL_{p.upper()}"].strip()
        for p in SETTABLE_PASSES
        if (env.get(f"REFGATE_MODEL_{p.upper()}") or "").strip()
    }
    if passes:
        values["pass_models"] = passes
        origin["pass_models"] = label + ", ".join(f"REFGATE_MODEL_{p.upper()}" for p in passes)
    return values, origin


def _read_dotenv(path: Path) -> dict[str, str]:
    # deferred: optional dependency (python-dotenv)
    from dotenv import dotenv_values

    try:
        return {k: v for k, v in dotenv_values(path).items() if v is not None}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read ({exc})") from None


def _validate(data: Mapping[str, Any], origin: Mapping[str, str]) -> Settings:
    try:
        return Settings(**data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = str(err["loc"][0]) if err.get("loc") else ""
        where = origin.get(field, field)
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        got = err.get("input")
        shown = "" if isinstance(got, dict) or got is None else f", got {got!r}"
        more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
        raise ConfigError(f"{where}: {msg}{shown}{more}") from None


def load_settings(
    env: Mapping[str, str] | None = None,
    workspace_settings: Mapping[str, object] | None = None,
    *,
    dotenv: Path | None = None,
) -> Settings:
    """Settings from ``[settings]``, a ``.env`` file and the environment (see the module doc).

    With ``env`` omitted the process environment and ``./.env`` are read; an explicit ``env``
    mapping reads ``dotenv`` only when given."""
    use_process = env is None
    env = os.environ if env is None else env
    ws = dict(workspace_settings or {})
    known = set(Settings.model_fields)
    unknown = sorted(set(ws) - known)
    if unknown:
        raise ConfigError(
            f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    data: dict[str, Any] = dict(ws)
    origin: dict[str, str] = {k: f"[settings] {k}" for k in ws}
    if dotenv is None and use_process and Path(".env").is_file():
        dotenv = Path(".env")
    layers = []
    if dotenv is not None:
        layers.append(_from_env(_read_dotenv(dotenv), f"{dotenv}: "))
    layers.append(_from_env(env, ""))
    check_injection_classifier(env)
    for values, where in layers:
        for key, value in values.items():
            if key == "pass_models":  # per-pass entries merge across layers
                value = {**(data.get("pass_models") or {}), **value}
            data[key] = value
        origin.update(where)
    return _validate(data, origin)


def settings_table() -> list[tuple[str, str, str, str]]:
    """(environment variable, ``[settings]`` key, what, default) per setting, for docs/usage.md."""
    rows = []
    for name, info in Settings.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        env = str(extra.get("env") or env_name(name))
        default = extra.get("default_text")
        if default is None:
            value = info.get_default(call_default_factory=True)
            default = "none" if value is None else f"`{value}`"
        rows.append((env, name, str(info.description or name), str(default)))
    return rows


#: Settings a run's context may set (LangGraph runtime context: Studio, the SDK, ``invoke``).
CONTEXT_SETTINGS = (
    "model",
    "work_max_rounds",
    "max_rounds",
    "timeout",
    "max_retries",
    "max_tokens",
)


class RunContext(BaseModel):
    """Per-run settings (Studio's editable context); unset fields keep the server's."""

    # The graphs' ``context_schema`` (Studio, ``langgraph dev``, the SDK's ``context=``): each
    # field's docstring is its description there, its type and range are the ``Settings``
    # field's, and tests/foundation/test_run_context.py keeps the three in step with
    # ``CONTEXT_SETTINGS``, ``CONTEXT_PASSES`` and ``Settings``. Passes read it through
    # ``Runtime[RunContext]``; ``apply_context`` lays it over the run's settings.
    model_config = ConfigDict(extra="ignore", use_attribute_docstrings=True)

    model: str | None = None
    """model string: `provider:model` (`anthropic:claude-sonnet-4-5`, `ollama:qwen2.5`, `google_genai:gemini-2.5-flash`, `openai:gpt-4.1-mini`) or a bare name for the OpenAI-compatible endpoint (REFGATE_MODEL)"""  # noqa: E501
    work_max_rounds: int | None = Field(None, ge=1, le=100)
    """WORK tool rounds (REFGATE_WORK_MAX_ROUNDS)"""
    max_rounds: int | None = Field(None, ge=1, le=100)
    """tool rounds of the other passes (REFGATE_MAX_ROUNDS)"""
    timeout: float | None = Field(None, gt=0, le=3600)
    """request timeout in seconds (REFGATE_TIMEOUT)"""
    max_retries: int | None = Field(None, ge=0, le=20)
    """retries on 429 and 5xx (REFGATE_MAX_RETRIES)"""
    max_tokens: int | None = Field(None, ge=1, le=1_000_000)
    """reply length cap in tokens (REFGATE_MAX_TOKENS)"""
    model_brief: str | None = None
    """BRIEF's model string (default: model)"""
    model_work: str | None = None
    """WORK's model string (default: model)"""
    model_critique: str | None = None
    """CRITIQUE's model string (default: model)"""
    model_compose: str | None = None
    """COMPOSE's model string (default: model)"""
    model_harvest: str | None = None
    """HARVEST's model string (default: model)"""
    model_research: str | None = None
    """RESEARCH's model string (default: model)"""
    workspace: str | None = None
    """workspace folder of the run (default: the input's, else REFGATE_WORKSPACE; bounded by REFGATE_ALLOWED_WORKSPACES)"""  # noqa: E501


def apply_context(settings: Settings, context: BaseModel | Mapping[str, object] | None) -> Settings:
    """``settings`` with a run context's values (a ``RunContext``, a mapping or None) applied and
    validated; a bad value is a ``ConfigError`` naming ``context.<field>``."""
    if context is None:
        return settings
    if isinstance(context, BaseModel):
        data = context.model_dump(exclude_none=True)
    else:
        data = {k: v for k, v in dict(context).items() if v is not None}
    data.pop("workspace", None)
    passes = {p: data.pop(f"model_{p}") for p in CONTEXT_PASSES if f"model_{p}" in data}
    values = {k: v for k, v in data.items() if k in CONTEXT_SETTINGS}
    if passes:
        values["pass_models"] = {**settings.pass_models, **passes}
    if not values:
        return settings
    merged = {k: getattr(settings, k) for k in Settings.model_fields}
    merged.update(values)
    return _validate(merged, {k: f"context.{k}" for k in values})


def context_workspace(context: object) -> str | None:
    """The workspace a run context names, if any."""
    if context is None:
        return None
    value = getattr(context, "workspace", None)
    if value is None and isinstance(context, Mapping):
        value = context.get("workspace")
    return str(value) if value else None


if __name__ == "__main__":  # python -m refgate.config: the settings table of docs/usage.md
    print("| environment | `[settings]` key | what | default |")
    print("| --- | --- | --- | --- |")
    for _env, _key, _what, _default in settings_table():
        print(f"| `{_env}` | `{_key}` | {_what} | {_default} |")
