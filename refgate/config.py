"""Settings: environment variables first, then a workspace's ``[settings]`` table, then defaults.

| setting | environment | default |
| --- | --- | --- |
| model | ``REFGATE_MODEL`` | ``gpt-4o-mini`` (or the local smoke model) |
| per-pass model | ``REFGATE_MODEL_<PASS>`` (e.g. ``REFGATE_MODEL_WORK``) | the model |
| endpoint | ``OPENAI_BASE_URL`` | none (OpenAI's default when a key is set) |
| key | ``OPENAI_API_KEY`` | none |
| request timeout (s) | ``REFGATE_TIMEOUT`` | 120 |
| retries on 429/5xx | ``REFGATE_MAX_RETRIES`` | 3 |
| reply length cap (tokens) | ``REFGATE_MAX_TOKENS`` | none (the server's default) |
| WORK tool rounds | ``REFGATE_WORK_MAX_ROUNDS`` | 8 |
| other passes' tool rounds | ``REFGATE_MAX_ROUNDS`` | 4 |
| sandbox mode | ``REFGATE_SANDBOX`` (``bwrap`` or ``rlimits``) | ``bwrap`` |
| embeddings | ``REFGATE_EMBEDDINGS`` (``minilm`` or ``openai``) | ``minilm`` |
| checkpoint/store URL | ``REFGATE_DATABASE_URL`` (``postgresql://...``) | SQLite under ``.refgate/`` |
| numbers backed only by web pages | ``REFGATE_SECONDARY_NUMBERS`` (``block`` or ``warn``) | ``block`` |
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

PASSES = ("brief", "work", "critique", "compose", "gate", "harvest", "research")


class ConfigError(ValueError):
    """A setting is missing or invalid; the CLI exits with code 2 and prints this message."""


@dataclass(frozen=True)
class Settings:
    model: str = "gpt-4o-mini"
    pass_models: Mapping[str, str] = field(default_factory=dict)
    base_url: str | None = None
    api_key: str | None = None
    timeout: float = 120.0
    max_retries: int = 3
    max_tokens: int | None = None
    work_max_rounds: int = 8
    max_rounds: int = 4
    sandbox: str = "bwrap"
    embeddings: str = "minilm"
    database_url: str | None = None
    prices: Mapping[str, Any] = field(default_factory=dict)
    #: GATE: a number whose only support is secondary evidence (web pages) blocks, or warns.
    secondary_numbers: str = "block"

    def model_for(self, pass_name: str) -> str:
        """The model name a pass uses (its override, else the default)."""
        return self.pass_models.get(pass_name, self.model)

    def rounds_for(self, pass_name: str) -> int:
        """How many tool rounds a pass may run before it moves on."""
        return self.work_max_rounds if pass_name == "work" else self.max_rounds

    @property
    def has_endpoint(self) -> bool:
        return bool(self.base_url or self.api_key)

    def with_overrides(self, **values: Any) -> Settings:
        return replace(self, **{k: v for k, v in values.items() if v is not None})


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ConfigError(f"{name} must be a whole number, got {raw!r}") from exc
    if value < 1:
        raise ConfigError(f"{name} must be at least 1, got {value}")
    return value


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise ConfigError(f"{name} must be a number of seconds, got {raw!r}") from exc
    if value <= 0:
        raise ConfigError(f"{name} must be positive, got {value}")
    return value


def load_settings(
    env: Mapping[str, str] | None = None, workspace_settings: Mapping[str, Any] | None = None
) -> Settings:
    """Build settings from a workspace's ``[settings]`` table overlaid by the environment."""
    env = os.environ if env is None else env
    base = Settings()
    known = {f.name for f in fields(Settings)}
    ws = dict(workspace_settings or {})
    unknown = sorted(set(ws) - known)
    if unknown:
        raise ConfigError(
            f"unknown workspace setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    if ws:
        base = replace(base, **ws)
    pass_models = dict(base.pass_models)
    for p in PASSES:
        value = env.get(f"REFGATE_MODEL_{p.upper()}")
        if value:
            pass_models[p] = value
    sandbox = env.get("REFGATE_SANDBOX") or base.sandbox
    if sandbox not in ("bwrap", "rlimits"):
        raise ConfigError(f"REFGATE_SANDBOX must be 'bwrap' or 'rlimits', got {sandbox!r}")
    embeddings = env.get("REFGATE_EMBEDDINGS") or base.embeddings
    if embeddings not in ("minilm", "openai"):
        raise ConfigError(f"REFGATE_EMBEDDINGS must be 'minilm' or 'openai', got {embeddings!r}")
    secondary = env.get("REFGATE_SECONDARY_NUMBERS") or base.secondary_numbers
    if secondary not in ("block", "warn"):
        raise ConfigError(
            f"REFGATE_SECONDARY_NUMBERS (or secondary_numbers) must be 'block' or 'warn', "
            f"got {secondary!r}"
        )
    return Settings(
        model=env.get("REFGATE_MODEL") or base.model,
        pass_models=pass_models,
        base_url=env.get("OPENAI_BASE_URL") or base.base_url,
        api_key=env.get("OPENAI_API_KEY") or base.api_key,
        timeout=_float(env, "REFGATE_TIMEOUT", base.timeout),
        max_retries=_int(env, "REFGATE_MAX_RETRIES", base.max_retries),
        max_tokens=_int(env, "REFGATE_MAX_TOKENS", base.max_tokens or 0) or None,
        work_max_rounds=_int(env, "REFGATE_WORK_MAX_ROUNDS", base.work_max_rounds),
        max_rounds=_int(env, "REFGATE_MAX_ROUNDS", base.max_rounds),
        sandbox=sandbox,
        embeddings=embeddings,
        database_url=env.get("REFGATE_DATABASE_URL") or base.database_url,
        secondary_numbers=secondary,
    )
