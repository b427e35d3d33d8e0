"""Token usage of a run, per pass and in total, and its estimated cost.

Counts come from the trace's ``model_call`` events (the workbench; they survive a resume) or from
LangChain's usage callback (the research graph), which sees one process only: each process that
runs a research thread appends its counts to the workspace's usage ledger (``record_usage``), and
the thread's usage is their sum (``thread_usage``), so a resumed run reports all of its tokens. Costs use list prices in USD per million tokens
from a small table; a workspace extends or corrects it with ``[settings] prices``
(``prices = { "my-model" = [0.5, 1.5] }``: input, output) or ``REFGATE_PRICES`` (JSON).
A model with no known price has no cost (``None``), never a guessed one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# typing_extensions' TypedDict: pydantic (LangServe, Studio schemas) refuses typing's on 3.11.
from typing_extensions import TypedDict

from refgate.events import TraceEvent, run_events
from refgate.models import SMOKE_MODEL_NAME, split_model

#: USD per million (input, output) tokens, list prices as published by the providers.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "claude-sonnet-4-5": (3.00, 15.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-opus-4-1": (15.00, 75.00),
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.5-pro": (1.25, 10.00),
}

#: Providers that run on the user's machine: their tokens cost nothing.
LOCAL_PROVIDERS = ("ollama",)
#: Models that run on the user's machine whatever the endpoint: the embedded smoke model.
LOCAL_MODELS = (SMOKE_MODEL_NAME,)

KEYS = ("input_tokens", "output_tokens", "total_tokens")


def _zero() -> dict[str, int]:
    return dict.fromkeys(KEYS, 0)


class UsageRecord(TypedDict, total=False):
    """``Usage`` as plain data (the ``usage`` state channel and the reports); ``to_dict`` writes
    every key, ``{}`` is a turn that has not finished."""

    per_pass: dict[str, dict[str, int]]
    total: dict[str, int]
    models: dict[str, str]
    cost_usd: float | None


@dataclass
class Usage:
    """Tokens per pass (``per_pass[pass] = {input_tokens, output_tokens, total_tokens}``), the
    total, the model per pass, and the estimated cost in USD (None when a price is unknown)."""

    per_pass: dict[str, dict[str, int]] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
    cost_usd: float | None = None

    @property
    def total(self) -> dict[str, int]:
        out = _zero()
        for counts in self.per_pass.values():
            for k in KEYS:
                out[k] += int(counts.get(k, 0) or 0)
        return out

    def to_dict(self) -> UsageRecord:
        return {
            "per_pass": self.per_pass,
            "total": self.total,
            "models": self.models,
            "cost_usd": self.cost_usd,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Usage:
        """The inverse of ``to_dict`` (a stored run's usage; odd values read as none)."""
        raw_per_pass, raw_models = data.get("per_pass"), data.get("models")
        per_pass: Mapping[str, object] = raw_per_pass if isinstance(raw_per_pass, Mapping) else {}
        models: Mapping[str, object] = raw_models if isinstance(raw_models, Mapping) else {}
        cost = data.get("cost_usd")
        return cls(
            per_pass={
                str(p): {k: int(c.get(k, 0) or 0) for k in KEYS}
                for p, c in per_pass.items()
                if isinstance(c, Mapping)
            },
            models={str(p): str(m) for p, m in models.items()},
            cost_usd=float(cost)
            if isinstance(cost, int | float) and not isinstance(cost, bool)
            else None,
        )

    def summary(self) -> str:
        """One line for the end of a CLI run."""
        t = self.total
        line = (
            f"tokens: {t['total_tokens']:,} ({t['input_tokens']:,} in, {t['output_tokens']:,} out)"
        )
        if self.cost_usd is not None:
            line += f", estimated cost ${self.cost_usd:.4f}"
        elif t["total_tokens"]:
            line += ", cost unknown (no price for the model; add it to [settings] prices)"
        return line


def from_trace(trace: Iterable[TraceEvent]) -> dict[str, dict[str, int]]:
    """Tokens per pass from a workbench trace's ``model_call`` events."""
    per_pass: dict[str, dict[str, int]] = {}
    for e in trace:
        if e.get("type") != "model_call":
            continue
        counts = per_pass.setdefault(str(e.get("pass") or "?"), _zero())
        for k in KEYS:
            counts[k] += int((e.get("usage") or {}).get(k, 0) or 0)
    return per_pass


def price_of(
    model: str, prices: Mapping[str, Iterable[float]] | None = None
) -> tuple[float, float] | None:
    """(input, output) USD per million tokens for a model string, or None when unknown."""
    provider, name = split_model(model)
    if provider in LOCAL_PROVIDERS or name in LOCAL_MODELS:
        return (0.0, 0.0)
    extra: dict[str, Any] = {k: tuple(v) for k, v in (prices or {}).items()}
    table: dict[str, tuple[float, float]] = {**PRICES, **extra}
    for key in (model, name):
        if key in table:
            return table[key]
    # dated snapshots ("gpt-4o-mini-2024-07-18", "claude-sonnet-4-5-20250929") use their family
    for key in sorted(table, key=len, reverse=True):
        if name.startswith(key + "-"):
            return table[key]
    return None


def estimate_cost(
    per_pass: Mapping[str, Mapping[str, int]],
    models: Mapping[str, str],
    prices: Mapping[str, Iterable[float]] | None = None,
) -> float | None:
    """USD for the tokens of each pass at its model's price; None if any used price is unknown."""
    cost = 0.0
    for pass_name, counts in per_pass.items():
        if not counts.get("total_tokens") and not counts.get("input_tokens"):
            continue
        price = price_of(models.get(pass_name, ""), prices)
        if price is None:
            return None
        cost += counts.get("input_tokens", 0) * price[0] / 1e6
        cost += counts.get("output_tokens", 0) * price[1] / 1e6
    return round(cost, 6)


def build_usage(
    per_pass: dict[str, dict[str, int]],
    models: Mapping[str, str],
    prices: Mapping[str, Iterable[float]] | None = None,
) -> Usage:
    used = {p: models.get(p, "") for p in per_pass}
    return Usage(per_pass=per_pass, models=used, cost_usd=estimate_cost(per_pass, used, prices))


def record_usage(ledger: Path, thread: str, counts: Mapping[str, int]) -> None:
    """Append one process's token counts for ``thread`` to the JSONL ``ledger`` (none: no line)."""
    line = {"thread": thread, **{k: int(counts.get(k, 0) or 0) for k in KEYS}}
    if not any(line[k] for k in KEYS):
        return
    ledger.parent.mkdir(parents=True, exist_ok=True)
    with ledger.open("a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def thread_usage(ledger: Path, thread: str) -> dict[str, int]:
    """The summed counts of every line of ``ledger`` for ``thread`` (a damaged line is skipped)."""
    totals = _zero()
    if not ledger.is_file():
        return totals
    for raw in ledger.read_text(encoding="utf-8").splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict) and line.get("thread") == thread:
            for k in KEYS:
                value = line.get(k, 0)
                totals[k] += value if isinstance(value, int) and value > 0 else 0
    return totals


def turn_usage(result: Mapping[str, Any], models: Mapping[str, str]) -> UsageRecord:
    """The run's usage as HARVEST stored it, else counted from this turn's trace events (a run
    stored before usage was kept in the state, or one that stopped before HARVEST)."""
    stored = result.get("usage")
    if isinstance(stored, Mapping) and stored.get("per_pass"):
        plain: UsageRecord = json.loads(json.dumps(stored, default=str))
        return plain
    turn = run_events(result.get("trace") or [], result.get("run_id"))
    return build_usage(from_trace(turn), models).to_dict()
