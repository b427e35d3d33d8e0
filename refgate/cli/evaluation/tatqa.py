"""Convert TAT-QA (Zhu et al., ACL 2021; CC BY 4.0) into an eval question file and a workspace.

Each context becomes a dataset (its table as CSV, cells as written: "$ 1,452.4", "(12.3)") and a
document (its paragraphs); each question names its context so it is answerable in a workspace
that holds them all. Gold: arithmetic and count answers, and spans that are a single number,
become ``numbers``; other spans become ``text`` patterns of up to eight words (every span of a multi-span answer must
appear). Questions whose gold is neither (long sentences) are skipped and counted.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from typing_extensions import TypedDict

from refgate.cli.evaluation.questions import EvalError, EvalQuestion, write_questions
from refgate.gate.numbers import find_numbers

ATTRIBUTION = (
    "TAT-QA (Zhu et al., ACL 2021), github.com/NExTplusplus/TAT-QA, "
    "licensed CC BY 4.0; converted by `refgate eval --from-tatqa`."
)
#: Longer text answers are skipped: they would need a judge, not a pattern.
MAX_SPAN_WORDS = 8
_YEAR = re.compile(r"^(?:19|20)\d\d$")
_NUMBER_ONLY = re.compile(r"^[\s$€£(−-]*[\d.,]+[\s%)]*$")


@dataclass
class Conversion:
    """What a conversion wrote."""

    questions: int
    contexts: int
    skipped: int
    questions_file: Path
    workspace: Path


def _is_value(cell: str) -> bool:
    """A data cell: a number that is not a bare year (years head annual-report columns)."""
    bare = re.sub(r"[\s$€£¥()%,−-]", "", str(cell))
    return bool(re.fullmatch(r"\d+(?:\.\d+)?|\.\d+", bare)) and not _YEAR.match(bare)


def _header(rows: list[list[str]]) -> tuple[list[str], list[list[str]]]:
    """Column names from the header rows (those before the first row with a value past the first
    column), de-duplicated; the remaining rows are the data. A header row with one label over
    several columns ("Years Ended September 30,") prefixes every value column's name."""
    width = max((len(r) for r in rows), default=0)
    rows = [[str(c).strip() for c in r] + [""] * (width - len(r)) for r in rows]
    cut = next(
        (i for i, r in enumerate(rows) if any(_is_value(c) for c in r[1:])), 1 if rows else 0
    )
    parts: list[list[str]] = [[] for _ in range(width)]
    for row in rows[:cut]:
        labels = [j for j in range(1, width) if row[j]]
        if len(labels) == 1 and width > 2:
            for j in range(1, width):
                parts[j].append(row[labels[0]])
        else:
            for j in labels:
                parts[j].append(row[j])
        if row and row[0]:
            parts[0].append(row[0])
    names, seen = [], set()
    for j in range(width):
        name = " ".join(parts[j]) or ("item" if j == 0 else f"col{j}")
        base, k = name, 2
        while name in seen:
            name, k = f"{base} ({k})", k + 1
        seen.add(name)
        names.append(name)
    return names, rows[cut:]


class _Gold(TypedDict, total=False):
    """An eval question's gold (``EvalQuestion.numbers`` or ``text``)."""

    numbers: list[float | str]
    text: list[str]


class _Table(TypedDict):
    uid: str
    table: list[list[str]]


class _Paragraph(TypedDict, total=False):
    order: int
    text: str


class _Question(TypedDict, total=False):
    order: int
    question: str
    scale: str
    answer: object
    answer_type: str


class _Context(TypedDict, total=False):
    """One TAT-QA context as its JSON file holds it (what the conversion reads of it)."""

    table: _Table
    paragraphs: list[_Paragraph]
    questions: list[_Question]


def _gold(q: Mapping[str, object]) -> _Gold | None:
    answer = q.get("answer")
    kind = q.get("answer_type")
    if kind in ("arithmetic", "count") and isinstance(answer, int | float):
        return {"numbers": [float(answer)]}
    given = answer if isinstance(answer, list) else [answer]
    spans = [str(s).strip() for s in given if str(s).strip()]
    if not spans:
        return None
    if len(spans) == 1 and _NUMBER_ONLY.match(spans[0]) and find_numbers(spans[0]):
        return {"numbers": [spans[0]]}
    if any(len(s.split()) > MAX_SPAN_WORDS for s in spans):
        return None  # a long span would be matched only by a judge, not by a pattern
    return {"text": [r"\s+".join(re.escape(w) for w in s.split()) for s in spans]}


def _write_context(c: _Context, out_dir: Path, source: Path) -> tuple[str, list[str]]:
    """Write one context's table (``data/``) and paragraphs (``documents/``); its name and its
    dataset's lines of ``refgate.toml``."""
    try:
        uid = str(c["table"]["uid"])
        rows = c["table"]["table"]
    except (KeyError, TypeError):
        raise EvalError(f"{source}: a context lacks table.uid / table.table") from None
    name = "t" + re.sub(r"[^0-9a-f]", "", uid.lower())[:10]
    columns, data = _header(rows)
    with open(out_dir / "data" / f"{name}.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        writer.writerows(data)
    paragraphs = sorted(c.get("paragraphs") or [], key=lambda p: p.get("order", 0))
    (out_dir / "documents" / f"{name}.txt").write_text(
        "\n\n".join(str(p.get("text", "")) for p in paragraphs) + "\n", encoding="utf-8"
    )
    return name, [
        f"[datasets.{name}]",
        f'path = "data/{name}.csv"',
        f'description = "Annual-report table {name} (TAT-QA context {uid}); cells as '
        f'written, parse them before computing"',
        "",
    ]


def _question(q: _Question, name: str, count: int) -> EvalQuestion | None:
    """A TAT-QA question of context ``name`` as an eval question (None: its gold needs a
    judge); ``count``: the questions converted so far."""
    gold = _gold(q)
    if gold is None:
        return None
    scale = f" (answer in {q['scale']})" if q.get("scale") else ""
    return EvalQuestion(
        id=f"{name}-{q.get('order', count)}",
        question=f"In the annual report excerpt {name} (dataset {name}, document "
        f"{name}.txt): {q['question']}{scale}",
        **gold,
    )


def convert_tatqa(source: Path, out_dir: Path, *, limit: int | None = None) -> Conversion:
    """Write ``out_dir/refgate.toml``, ``data/``, ``documents/`` and ``eval.jsonl``."""
    try:
        contexts = json.loads(Path(source).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise EvalError(f"{source}: not a TAT-QA JSON file ({exc})") from None
    if not isinstance(contexts, list) or not all(isinstance(c, dict) for c in contexts):
        raise EvalError(f"{source}: expected a list of TAT-QA contexts")
    out_dir = Path(out_dir)
    if (out_dir / "refgate.toml").exists():
        raise EvalError(f"{out_dir} already holds a workspace; choose an empty folder")
    (out_dir / "data").mkdir(parents=True, exist_ok=True)
    (out_dir / "documents").mkdir(exist_ok=True)
    toml = ['name = "tatqa"', f"# {ATTRIBUTION}", ""]
    questions: list[EvalQuestion] = []
    skipped = 0
    used = contexts[:limit] if limit else contexts
    for c in used:
        name, lines = _write_context(c, out_dir, source)
        toml += lines
        for q in sorted(c.get("questions") or [], key=lambda q: q.get("order", 0)):
            question = _question(q, name, len(questions))
            if question is None:
                skipped += 1
            else:
                questions.append(question)
    toml += [
        "[documents]",
        'path = "documents"',
        'description = "Annual-report paragraphs, one file per TAT-QA context"',
        "",
    ]
    (out_dir / "refgate.toml").write_text("\n".join(toml), encoding="utf-8")
    (out_dir / "SOURCE.txt").write_text(
        ATTRIBUTION + f"\nConverted from {Path(source).name}.\n", encoding="utf-8"
    )
    qfile = out_dir / "eval.jsonl"
    write_questions(qfile, questions)
    return Conversion(len(questions), len(used), skipped, qfile, out_dir)
