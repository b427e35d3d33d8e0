"""Follow-ups on a thread: the finished turns of a conversation, and how later passes see them.

A thread that has answered takes a new question as a follow-up: the full pass graph runs again,
the ledger keeps every earlier ref (so the new answer may cite them and the GATE checks those
citations like any other), and HARVEST appends the finished turn to the ``turns`` channel.
Turns are plain data (``Turn``), so every checkpointer stores them and Studio's thread view
shows the conversation as it is.

An earlier answer is model output: it is shown to later passes as context, never as evidence
(only refs are evidence). When it cites external refs, its text may carry untrusted words, so
it is shown fenced like any untrusted text (``guard_external``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from refgate.nodes.state import WorkbenchState
from refgate.provenance.boundaries import guard_external
from refgate.refs import as_ref_map, cited_ids
from refgate.turns import Turn

#: Characters of one earlier answer shown to a pass (the refs it cites are in the ledger whole).
MAX_ANSWER_CHARS = 2_000
#: Earlier turns shown to a pass when no setting says (``history_turns``), newest last.
MAX_TURNS = 6


def turn_record(state: WorkbenchState) -> Turn:
    """The finished turn of this run, as plain data: question, answer, verdict, cited ref ids."""
    answer = str(state.get("answer") or "")
    refs = state.get("refs") or {}
    gate = state.get("gate") or {}
    return {
        "question": str(state.get("question") or ""),
        "answer": answer,
        "passed": bool(gate.get("passed")),
        "cited": cited_ids(answer, refs),
        "run_id": str(state.get("run_id") or ""),
    }


def earlier_turns(state: WorkbenchState) -> list[Turn]:
    """The turns finished before this run (``turns`` is appended only when a run ends)."""
    turns = [t for t in state.get("turns") or [] if isinstance(t, Mapping)]
    run_id = state.get("run_id")
    # a HARVEST that re-runs after a failure must not see its own turn as an earlier one
    return [t for t in turns if not run_id or t.get("run_id") != run_id]


def conversation_block(state: WorkbenchState, limit: int = MAX_TURNS) -> str:
    """Earlier questions and answers for a pass's prompt ("" on a thread's first question): the
    last ``limit`` turns (the ``history_turns`` setting); older ones are dropped from the prompt
    and counted, so a long thread's prompt stays bounded (bounded history)."""
    earlier = earlier_turns(state)
    turns = earlier[-limit:] if limit > 0 else []
    if not turns:
        return ""
    dropped = len(earlier) - len(turns)
    refs = as_ref_map(state.get("refs") or {})
    lines = [
        "\n\nThis question is a follow-up in a conversation. Earlier questions and answers "
        "(context only: an earlier answer is not evidence; its refs are still in the ledger "
        "and may be cited by id):"
    ]
    if dropped:
        lines.append(f"({dropped} earlier turns of this conversation are not shown.)")
    for n, turn in enumerate(turns, dropped + 1):
        cited: Sequence[str] = [str(c) for c in turn.get("cited") or []]
        answer = str(turn.get("answer") or "")
        if len(answer) > MAX_ANSWER_CHARS:
            answer = answer[:MAX_ANSWER_CHARS] + " ..."
        if any(refs[c].is_external for c in cited if c in refs):
            answer = guard_external(answer, source_label=f"earlier answer {n}")
        lines.append(f"Q{n}: {turn.get('question', '')}")
        lines.append(f"A{n}: {answer}")
        if cited:
            lines.append(f"A{n} cited: {', '.join(cited)}")
    return "\n".join(lines)


def earlier_questions(state: WorkbenchState) -> list[str]:
    """The user's own earlier questions (trusted words, like the question itself)."""
    return [str(t.get("question") or "") for t in earlier_turns(state) if t.get("question")]
