"""A finished turn of a conversation, as plain data (the ``turns`` state channel).

HARVEST appends one per question of a thread (``nodes/conversation.py: turn_record``); later
questions of the thread, the reports and the API read them.
"""

from __future__ import annotations

# typing_extensions' TypedDict: pydantic (LangServe, Studio schemas) refuses typing's on 3.11.
from typing_extensions import TypedDict


class Turn(TypedDict):
    """One finished question of a thread: what was asked and answered, the GATE's verdict on
    it, the ref ids its answer cited, and the run that answered it."""

    question: str
    answer: str
    passed: bool
    cited: list[str]
    run_id: str
