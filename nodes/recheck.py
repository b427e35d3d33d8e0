"""A recalled decision carries its origin and is re-checked against the data before use.

- ``decision_origin``: where a stored decision came from, in words for BRIEF's prompt and the
  reports (derived by code or remembered by the model, in which run, after which untrusted
  reads).
- ``recheck_recalled``: a decision derived by code that names a dataset or a column the
  workspace no longer has (renamed, dropped, another file behind the name) is dropped before
  BRIEF sees it, with why.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping, Sequence

from refgate.catalog.toolspec import ToolContext

_DATASET_RE = re.compile(r"\bdataset\s+([A-Za-z_][\w.-]*)|datasets\[\s*['\"]([^'\"]+)['\"]\s*\]")
_COLUMN_RE = re.compile(r"\bdataset\s+([A-Za-z_][\w.-]*),\s*column\s+([^\s,()]+)")


def decision_origin(value: Mapping[str, object]) -> str:
    """Where a stored decision came from, in one phrase."""
    run = value.get("run_id") or "an earlier run"
    if value.get("auto"):
        runs = int(value.get("runs") or 1)  # type: ignore[call-overload]
        text = f"derived by code from run {run}"
        if runs > 1:
            text += f" and {runs - 1} later run{'s' if runs > 2 else ''}"
        if value.get("last_outcome"):
            text += f"; last GATE verdict {value['last_outcome']}"
    else:
        text = f"remembered by the model in run {run}"
    prov = value.get("provenance")
    if isinstance(prov, Mapping) and prov.get("untrusted"):
        origins = [str(o) for o in prov.get("origins") or []][:3]
        text += "; written after reading untrusted content" + (
            f" ({', '.join(origins)})" if origins else ""
        )
    return text


def _columns(spec: object) -> set[str] | None:
    """The dataset's column names (declared, else a CSV's header), or None when unknown."""
    declared = getattr(spec, "columns", None) or {}
    path = getattr(spec, "path", None)
    if path is not None and str(path).lower().endswith(".csv"):
        try:
            with open(path, newline="", encoding="utf-8", errors="replace") as fh:
                header = next(csv.reader(fh), [])
            return {h.strip() for h in header} | set(declared)
        except OSError:
            return None
    return set(declared) or None


def stale_reason(decision: str, ctx: ToolContext) -> str | None:
    """Why ``decision`` no longer fits the workspace's data (a dataset or column it names is
    gone), else None."""
    ws = ctx.workspace
    if ws is None:
        return None
    for m in _DATASET_RE.finditer(decision):
        name = m.group(1) or m.group(2)
        if name not in ws.datasets:
            return f"dataset {name!r} is not in the workspace"
    for m in _COLUMN_RE.finditer(decision):
        name, column = m.group(1), m.group(2)
        cols = _columns(ws.datasets[name]) if name in ws.datasets else None
        if cols is not None and column not in cols:
            return f"dataset {name!r} has no column {column!r}"
    return None


def recheck_recalled(
    ids: Sequence[str], ctx: ToolContext
) -> tuple[list[str], list[tuple[str, str]]]:
    """The recalled decision ids that still fit the workspace's data, and ``(id, why)`` for
    those dropped."""
    kept: list[str] = []
    stale: list[tuple[str, str]] = []
    for rid in ids:
        ref = ctx.ledger.get(rid)
        if ref is None:
            continue
        # only decisions derived by code have a known form ("read dataset X, column Y ...");
        # a model's free wording ("the macro dataset for GDP") names no dataset reliably
        auto = bool(ref.payload.get("auto"))
        why = stale_reason(str(ref.payload.get("decision") or ""), ctx) if auto else None
        if why:
            stale.append((rid, why))
        else:
            kept.append(rid)
    return kept, stale
