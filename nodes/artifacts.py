"""Artifacts of a document-heavy run: B1 keeps its unit, the turn.

A WORK turn that read untrusted text loses SaveArtifact (B1), so a run whose prompt held a
document could never save its computed tables. After the GATE, code saves them instead: every
trusted tableRef the answer cites (an emitted result over the datasets, not a schema table, not
document text) is written as CSV and markdown through the SaveArtifact tool, with a title and a
path fixed by code (B2). Nothing model-written after an untrusted read decides what is written:
the table is data the GATE checked, the cited ids come from the answer that passed it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from refgate.catalog.toolspec import ToolContext
from refgate.events import TraceEvent, event
from refgate.gate.markdown import split_units
from refgate.nodes.state import WorkbenchState
from refgate.refs import SCHEMA_ROLE, Ref
from refgate.tools.registry import get_spec


def lost_save_to_b1(trace: Sequence[TraceEvent]) -> bool:
    """True when a WORK turn of this run had SaveArtifact removed by B1."""
    return any(
        e.get("type") == "write_tools_removed"
        and e.get("pass") == "work"
        and "SaveArtifact" in (e.get("tools") or [])
        for e in trace
    )


def savable_tables(answer: str, refs: Mapping[str, Ref]) -> list[Ref]:
    """The trusted computed tables the answer cites, in citation order."""
    units, _ = split_units(answer, refs)
    out = []
    for rid in dict.fromkeys(c for u in units for c in u.cites):
        ref = refs.get(rid)
        if (
            ref is not None
            and ref.kind == "tableRef"
            and not ref.is_external
            and (ref.payload.get("meta") or {}).get("role") != SCHEMA_ROLE
        ):
            out.append(ref)
    return out


def save_cited_tables(
    state: WorkbenchState, trace: Sequence[TraceEvent], ctx: ToolContext
) -> tuple[list[Ref], list[TraceEvent]]:
    """Save the answer's cited trusted tables when B1 took SaveArtifact from WORK; returns the
    artifactRefs and trace events (a failure is an event, never an error of the run)."""
    gate = state.get("gate") or {}
    if not gate.get("passed") or not lost_save_to_b1(trace) or ctx.artifacts_dir is None:
        return [], []
    spec = get_spec("SaveArtifact")
    saved: list[Ref] = []
    events: list[TraceEvent] = []
    for table in savable_tables(str(state.get("answer") or ""), ctx.ledger.all()):
        before = len(ctx.ledger.issued)
        try:
            result = spec.func(spec.args_schema.model_validate({"ref": table.id}), ctx)
        except Exception as exc:  # an artifact is an aid: it must not end the run
            events.append(event("artifact_failed", ctx.pass_name, ref=table.id, error=str(exc)))
            continue
        if not result.ok:
            events.append(event("artifact_failed", ctx.pass_name, ref=table.id, error=result.error))
            continue
        new = [r for r in ctx.ledger.issued[before:] if r.kind == "artifactRef"]
        saved.extend(new)
        events.append(
            event(
                "artifact_saved_by_code",
                ctx.pass_name,
                ref=table.id,
                artifacts=[r.id for r in new],
                reason="WORK lost SaveArtifact to B1; the cited trusted table is saved by code",
            )
        )
    return saved, events
