"""``check_answer``: run the GATE's stages on an answer and the refs it cites.

The stages, in order (``refgate.gate.STAGES``), each a function with typed input and output, data
moving forward only: read the ledger (``evidence.read_ledger``), split the answer into claims
(``markdown``), find their mentions (``mentions``), index the cited refs (``cited``), bind each
mention to a place (``claim_checks``) and give the verdict (``verdict``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from refgate.config import Settings
from refgate.errors import InputError

from .cited import index_cited
from .claim_checks import bind_claims
from .collection import without_collection
from .evidence import SECONDARY_POLICIES, read_ledger
from .findings import GateReport
from .markdown import Claims, split_units
from .mentions import find_mentions
from .names import check_names, compiled
from .verdict import Asked, give_verdict


def check_input_error(answer: str, refs: int, *, max_chars: int, max_refs: int) -> str | None:
    """Why an answer and ledger brought to the GATE alone (``refgate check``, MCP ``check``) are
    refused before any work, or None: over ``max_chars`` characters or ``max_refs`` refs (the
    settings ``max_check_chars`` / ``max_check_refs``), so one request cannot take minutes."""
    if len(answer) > max_chars:
        return (
            f"the answer has {len(answer):,} characters; the limit is {max_chars:,} "
            "(REFGATE_MAX_CHECK_CHARS)"
        )
    if refs > max_refs:
        return f"{refs:,} refs given; the limit is {max_refs:,} (REFGATE_MAX_CHECK_REFS)"
    return None


class CheckRefused(InputError):
    """An answer or ledger brought to the GATE alone is over its bound (the message says which)."""


def check_alone(
    answer: str,
    refs: Sequence[object],
    settings: Settings,
    *,
    required_evidence: Sequence[str] = (),
    require_emitted: bool = False,
    names: Sequence[str] = (),
) -> GateReport:
    """The GATE alone (``refgate check``, MCP ``check``) under ``settings``: ``CheckRefused`` over
    its bounds (``check_input_error``), else ``check_answer`` with the settings' policy for
    numbers backed only by web pages (REFGATE_SECONDARY_NUMBERS, as in the graph's GATE)."""
    too_big = check_input_error(
        answer, len(refs), max_chars=settings.max_check_chars, max_refs=settings.max_check_refs
    )
    if too_big:
        raise CheckRefused(too_big)
    return check_answer(
        answer,
        refs,
        required_evidence=required_evidence,
        require_emitted=require_emitted,
        names=names,
        secondary_numbers=settings.secondary_numbers,
    )


@without_collection
def check_answer(
    answer: str,
    refs: Mapping[str, object] | Iterable[object],
    *,
    required_evidence: Sequence[str] = (),
    require_emitted: bool = False,
    names: Sequence[str] = (),
    secondary_numbers: str = "block",
    vocabulary: Mapping[str, str] | None = None,
    question: str = "",
    coverage: str = "warn",
) -> GateReport:
    """Check every number, date and ranking claim of ``answer`` against the refs it cites.

    Pure and deterministic; see the package docstring for the support rule. ``refs`` may hold
    ``Ref`` objects or their dict form; invalid ones are reported (``invalid_ref``), not raised.
    ``names`` adds names that contain numbers to the built-in list (``names.DEFAULT_NAMES``);
    ``require_emitted`` blocks when WORK emitted no result even if no claim needs one;
    ``vocabulary`` maps the workspace's column names to their descriptions (synonyms of the
    metric words a claim may use for a value of that column); ``question`` is what was asked:
    the quantities and periods it names that no verified claim states are listed
    (``question_not_covered``, severity ``coverage``: "warn" or "block").
    """
    _check_arguments(answer, secondary_numbers)
    ledger = read_ledger(refs, required_evidence, secondary_numbers)
    name_pattern = compiled(check_names(names) if names else ())
    claims = Claims(*split_units(answer, ledger.refs))
    # Each stage runs over every claim before the next starts: one kind of work at a time keeps
    # its patterns and code hot in the CPU caches.
    found = find_mentions(claims.units, name_pattern)
    indexes = index_cited(found, ledger.refs)
    bound = bind_claims(found, indexes, ledger, vocabulary)
    asked = Asked(question, "block" if coverage == "block" else "warn", require_emitted)
    return give_verdict(answer, ledger, claims, bound, asked, name_pattern)


def _check_arguments(answer: object, secondary_numbers: str) -> None:
    """A caller's mistake is a clear error, before any work."""
    if not isinstance(answer, str):
        raise TypeError(f"answer must be a string, got {type(answer).__name__}")
    if secondary_numbers not in SECONDARY_POLICIES:
        raise ValueError(
            f"secondary_numbers must be one of {', '.join(SECONDARY_POLICIES)}, "
            f"got {secondary_numbers!r}"
        )
