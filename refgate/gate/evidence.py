"""The GATE's ledger rules: refs read from any form, the plan's required evidence, authority.

``read_ledger`` reads what the GATE's stages check against (``Ledger``): ``coerce_refs`` reads
the refs (``Ref`` objects or their dict form; invalid ones become ``invalid_ref`` issues);
``read_required`` reads a skill's requiredEvidence (ref kinds, ``primarySource``,
``secondaryAllowed``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass

from pydantic import ValidationError

from refgate.catalog.skillbook import PRIMARY_SOURCE, SECONDARY_ALLOWED
from refgate.refs import REF_KINDS, Ref, coerce_ref, is_emitted_result

from .findings import GateIssue

#: ``secondary_numbers`` values: a number backed only by secondary refs blocks, or warns.
SECONDARY_POLICIES = ("block", "warn")


@dataclass(frozen=True, slots=True)
class Ledger:
    """The refs an answer may cite, read once before the stages run, and the policy on them."""

    #: The valid refs by id.
    refs: dict[str, Ref]
    #: What reading them found: invalid refs, missing or unknown required evidence.
    issues: tuple[GateIssue, ...]
    #: Authority: a number only secondary refs back blocks (else it warns).
    secondary_blocks: bool
    #: WORK emitted some result (``refs.is_emitted_result``).
    emitted: bool


def read_ledger(
    refs: Mapping[str, object] | Iterable[object],
    required_evidence: Sequence[str],
    secondary_numbers: str,
) -> Ledger:
    """The ledger and its policy. Authority: a number whose only support is secondary (web)
    evidence blocks by default; a skill (secondaryAllowed) or the setting relaxes it, unless a
    skill requires primarySource."""
    issues: list[GateIssue] = []
    ref_map = coerce_refs(refs, issues)
    # the ledger's kinds are read only when the plan requires some evidence
    kinds = {r.kind for r in ref_map.values()} if required_evidence else frozenset()
    primary, relaxed = read_required(required_evidence, kinds, issues)
    secondary_blocks = primary or (secondary_numbers == "block" and not relaxed)
    emitted = any(is_emitted_result(r) for r in ref_map.values())
    return Ledger(ref_map, tuple(issues), secondary_blocks, emitted)


def coerce_refs(refs: object, issues: list[GateIssue]) -> dict[str, Ref]:
    """The ledger as {id: Ref}; an item that is not a valid Ref becomes an ``invalid_ref`` issue."""
    if refs is None:
        return {}
    if isinstance(refs, Ref):
        refs = [refs]
    items = refs.values() if isinstance(refs, Mapping) else refs
    if not isinstance(items, Iterable) or isinstance(items, str | bytes):
        raise TypeError(f"refs must be a mapping or an iterable of refs, got {type(refs).__name__}")
    out: dict[str, Ref] = {}
    for n, item in enumerate(items):
        if type(item) is Ref:  # the common case, without a call
            out[item.id] = item
            continue
        try:
            ref = coerce_ref(item)
        except (TypeError, ValueError, ValidationError) as exc:
            rid = str(item.get("id", f"#{n}")) if isinstance(item, Mapping) else f"#{n}"
            first = str(exc).splitlines()
            issues.append(
                GateIssue(
                    "invalid_ref",
                    "",
                    f"ref {rid} is not a valid Ref: {' '.join(first[:3])[:300]}",
                    [rid],
                )
            )
            continue
        out[ref.id] = ref
    return out


def read_required(
    required_evidence: Sequence[str], kinds: Set[str], issues: list[GateIssue]
) -> tuple[bool, bool]:
    """(primarySource required, secondaryAllowed listed); unknown or missing kinds are issues."""
    items = [required_evidence] if isinstance(required_evidence, str) else list(required_evidence)
    primary = relaxed = False
    for item in items:
        if item == PRIMARY_SOURCE:
            primary = True
        elif item == SECONDARY_ALLOWED:
            relaxed = True
        elif item in REF_KINDS:
            if item not in kinds:
                issues.append(
                    GateIssue(
                        "missing_required_evidence",
                        "",
                        f"the selected skills require a {item} and none was issued",
                    )
                )
        else:
            issues.append(
                GateIssue(
                    "unknown_required_evidence",
                    "",
                    f"requiredEvidence item {item!r} is not a ref kind ({', '.join(REF_KINDS)}) "
                    f"nor {PRIMARY_SOURCE!r} / {SECONDARY_ALLOWED!r}",
                )
            )
    return primary, relaxed


NO_EMITTED = (
    "WORK emitted no result (no valueRef, tableRef or dateRef; a dataset's schema from "
    "InspectDataset is not a result) and the answer states data claims: compute the answer in "
    "WORK and emit it with emit_result, or state no numbers, dates or rankings"
)
