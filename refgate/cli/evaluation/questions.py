"""The eval question file: JSONL, one question object a line.

Fields: ``id`` and ``question`` (required); ``numbers`` (gold values: numbers, or strings such as
``"12.99 billion"`` or ``"9.6%"``), ``text`` (regular expressions that must appear in the answer),
``refs_required`` (ref kinds that the answer must cite, e.g. ``["valueRef"]``), ``expect``
(``answer``, the default, or ``refuse`` for questions the data cannot answer), ``tolerance`` (a
relative tolerance for the numbers, default 0: match at the precision the answer writes).
Blank lines and lines starting with ``#`` are skipped.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Literal

import regex
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from refgate.errors import InputError

#: Seconds one gold pattern may take on one answer (the ``regex`` engine's timeout): a pattern
#: such as ``(a+)+$`` can backtrack for hours on a crafted answer.
PATTERN_TIMEOUT_S = 1.0
_NOT_FINITE = {"nan", "inf", "infinity"}
#: Texts each pattern is tried on when the file is read, so a pathological one fails there.
_PROBES = ("a" * 5_000 + "!", "1" * 5_000 + "x", " " * 5_000 + "x", "ab" * 2_500 + "!")


def search_pattern(pattern: str, text: str) -> bool:
    """True when ``pattern`` occurs in ``text`` (case-insensitive), within ``PATTERN_TIMEOUT_S``;
    ``TimeoutError`` past it."""
    return regex.search(pattern, text, regex.IGNORECASE, timeout=PATTERN_TIMEOUT_S) is not None


class EvalError(InputError, ValueError):
    """A question file, a run folder or a comparison cannot be used; the message says why."""


class EvalQuestion(BaseModel):
    """One question with its gold."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=200)
    question: str = Field(min_length=1)
    numbers: list[float | str] = Field(default_factory=list)
    text: list[str] = Field(default_factory=list)
    refs_required: list[str] = Field(default_factory=list)
    expect: Literal["answer", "refuse"] = "answer"
    tolerance: float = Field(default=0.0, ge=0.0, lt=1.0)

    @field_validator("id")
    @classmethod
    def _plain_id(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", value):
            raise ValueError("use letters, digits, '.', '_' and '-' only (it names a thread)")
        return value

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the question is blank")
        return value

    @field_validator("text")
    @classmethod
    def _valid_patterns(cls, value: list[str]) -> list[str]:
        for pattern in value:
            try:
                regex.compile(pattern)
                for probe in _PROBES:
                    search_pattern(pattern, probe)
            except regex.error as exc:
                raise ValueError(f"bad regular expression {pattern!r}: {exc}") from exc
            except TimeoutError:
                raise ValueError(
                    f"regular expression {pattern!r} takes over {PATTERN_TIMEOUT_S:g} s on a "
                    "5,000-character text (catastrophic backtracking); simplify it"
                ) from None
        return value

    @field_validator("numbers")
    @classmethod
    def _finite_numbers(cls, value: list[float | str]) -> list[float | str]:
        for gold in value:
            text = str(gold).strip().lower().lstrip("+-")
            if (isinstance(gold, float) and not math.isfinite(gold)) or text in _NOT_FINITE:
                raise ValueError(f"gold number {gold!r} is not a finite number")
        return value


def parse_questions(
    lines: list[str], name: str = "<questions>", *, max_chars: int | None = None
) -> list[EvalQuestion]:
    """Questions from JSONL lines; an error names the file, the line and the field. A question
    longer than ``max_chars`` (the ``max_question_chars`` run budget) is refused here, before
    any run starts."""
    out: list[EvalQuestion] = []
    seen: dict[str, int] = {}
    for lineno, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if max_chars is not None and len(line) > 8 * max_chars + 10_000:
            # JSON escapes take at most 6 characters per character: far past the budget
            raise EvalError(
                f"{name}:{lineno}: the line has {len(line)} characters; a question may have "
                f"{max_chars} (REFGATE_MAX_QUESTION_CHARS)"
            )
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise EvalError(f"{name}:{lineno}: not a JSON object ({exc})") from None
        if not isinstance(obj, dict):
            raise EvalError(f"{name}:{lineno}: expected a JSON object, got {type(obj).__name__}")
        try:
            q = EvalQuestion.model_validate(obj)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first.get("loc", ())) or "?"
            raise EvalError(f"{name}:{lineno}: field {field}: {first.get('msg')}") from None
        if max_chars is not None and len(q.question) > max_chars:
            raise EvalError(
                f"{name}:{lineno}: the question has {len(q.question)} characters; the limit is "
                f"{max_chars} (REFGATE_MAX_QUESTION_CHARS)"
            )
        if q.id in seen:
            raise EvalError(f"{name}:{lineno}: id {q.id!r} repeats line {seen[q.id]}")
        seen[q.id] = lineno
        out.append(q)
    if not out:
        raise EvalError(f"{name}: no questions")
    return out


def load_questions(path: Path, *, max_chars: int | None = None) -> list[EvalQuestion]:
    """Read and validate a question file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EvalError(f"{path}: no such question file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalError(f"{path}: cannot read ({exc})") from None
    return parse_questions(text.splitlines(), str(path), max_chars=max_chars)


def write_questions(path: Path, questions: list[EvalQuestion]) -> None:
    """Write questions as JSONL (defaults left out)."""
    lines = [json.dumps(q.model_dump(exclude_defaults=True), ensure_ascii=False) for q in questions]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
