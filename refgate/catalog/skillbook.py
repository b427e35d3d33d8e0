"""The skillbook: skill files parsed, validated and searchable.

A skill is a markdown file with YAML front matter (skills as procedures: the procedures' single source of
truth)::

    ---
    id: single-value-lookup
    title: Single value lookup
    category: lookup
    purpose: ...
    whenToUse: [...]
    requiredEvidence: [valueRef, dateRef, primarySource]
    toolRefs: [InspectDataset, RunPython]
    knowledgeRefs: []
    capabilityRefs: []
    linkedSkills: [period-change]
    forbidden: [...]
    failureModes: [...]
    status: active
    ---
    ## Procedure
    1. ...

Every field is required (lists may be empty); unknown fields are errors. ``requiredEvidence``
items are ref kind names (``valueRef``, ``tableRef``, ...), ``primarySource`` (numbers backed
only by secondary refs block at the GATE even where a setting relaxed it) or ``secondaryAllowed``
(they only warn: the GATE blocks them by default). ``toolRefs`` name catalog tools; ``linkedSkills`` name
skills of the same skillbook. Errors are ``SkillError`` and name the file and the field.

Skills come from the built-in ``skills/`` folder of refgate plus a workspace's own ``[skills]``
folder; a workspace skill with a built-in skill's id replaces it.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from refgate.catalog.capabilities import catalog
from refgate.catalog.tool_names import CATALOG
from refgate.errors import InputError
from refgate.lexical import FUNCTION_WORDS, LexicalRanker
from refgate.paths import is_within, real
from refgate.payloads import JsonDict
from refgate.refs import REF_KINDS

#: The front matter fields, in the order skill files write them.
FIELDS: tuple[str, ...] = (
    "id",
    "title",
    "category",
    "purpose",
    "whenToUse",
    "requiredEvidence",
    "toolRefs",
    "knowledgeRefs",
    "capabilityRefs",
    "linkedSkills",
    "forbidden",
    "failureModes",
    "status",
)
#: The fields that hold one line of text; every other field is a list.
TEXT_FIELDS = frozenset({"id", "title", "category", "purpose", "status"})
LIST_FIELDS = frozenset(FIELDS) - TEXT_FIELDS
_CAMEL_HUMP = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _attribute_of(name: str) -> str:
    """The ``Skill`` attribute a front matter field fills: its name in snake case."""
    return _CAMEL_HUMP.sub("_", name).lower()


#: The special requiredEvidence item: numbers backed only by external refs block at the GATE.
PRIMARY_SOURCE = "primarySource"
#: The special item that relaxes the GATE's default: a number backed only by secondary evidence
#: (web pages) is a warning, not a block, for questions about what the web reports.
SECONDARY_ALLOWED = "secondaryAllowed"
EVIDENCE_ITEMS: frozenset[str] = frozenset(REF_KINDS) | {PRIMARY_SOURCE, SECONDARY_ALLOWED}
STATUSES = ("active", "draft", "deprecated")
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]{1,63}$")
_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
_FRONT_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.S)
_WORD_RE = re.compile(r"\w+", re.U)
#: Words too common to say anything about which skill fits.
_STOP = FUNCTION_WORDS | frozenset(
    {
        "did",
        "has",
        "have",
        "i",
        "me",
        "my",
        "their",
        "was",
        "when",
        "who",
        "why",
        "will",
        "you",
        "your",
    }
)


class SkillError(InputError, ValueError):
    """A skill file is malformed; ``file`` and ``field`` say where."""

    def __init__(self, file: Path | str, field_name: str | None, message: str) -> None:
        self.file = str(file)
        self.field = field_name
        where = f"{self.file}: {field_name}" if field_name else self.file
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Skill:
    id: str
    title: str
    category: str
    purpose: str
    when_to_use: tuple[str, ...]
    required_evidence: tuple[str, ...]
    tool_refs: tuple[str, ...]
    knowledge_refs: tuple[str, ...]
    capability_refs: tuple[str, ...]
    linked_skills: tuple[str, ...]
    forbidden: tuple[str, ...]
    failure_modes: tuple[str, ...]
    status: str
    procedure: str
    path: Path | None = None
    origin: str = "builtin"

    def payload(self) -> JsonDict:
        """What a skillRef carries (the GATE's checklist comes from ``requiredEvidence``): the
        front matter fields under their own names, then the procedure, origin and path."""
        out: JsonDict = {}
        for name in FIELDS:
            value = getattr(self, _attribute_of(name))
            out[name] = value if name in TEXT_FIELDS else list(value)
        out["procedure"] = self.procedure
        out["origin"] = self.origin
        out["path"] = str(self.path) if self.path else ""
        return out

    def listed(self, name: str) -> tuple[str, ...]:
        """The items of the list field ``name``, by its front matter name (``linkedSkills``)."""
        items: tuple[str, ...] = getattr(self, _attribute_of(name))
        return items

    def search_text(self) -> str:
        return " ".join(
            [self.id.replace("-", " "), self.title, self.category, self.purpose, *self.when_to_use]
        )


def _tokens(text: str) -> list[str]:
    out = []
    for word in _WORD_RE.findall(text.lower()):
        if word in _STOP or (len(word) < 2 and not word.isdigit()):
            continue
        if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.append(word)
    return out


def _as_str(file: Path, name: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SkillError(file, name, f"must be a non-empty string, got {value!r}")
    return value.strip()


def _as_list(file: Path, name: str, value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise SkillError(file, name, f"must be a list, got {type(value).__name__}")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise SkillError(file, f"{name}[{i}]", f"must be a non-empty string, got {item!r}")
        out.append(item.strip())
    return tuple(out)


def _front_matter(text: str, file: Path) -> tuple[dict[object, object], str]:
    """A skill file's front matter (a mapping) and the procedure after it."""
    match = _FRONT_RE.match(text.lstrip("\ufeff"))
    if not match:
        raise SkillError(
            file,
            None,
            "no YAML front matter (the file must start with a '---' "
            "line and close the front matter with another '---' line)",
        )
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise SkillError(file, None, f"front matter is not valid YAML: {exc}") from exc
    except RecursionError as exc:
        raise SkillError(file, None, "front matter is nested too deeply to read") from exc
    if not isinstance(meta, dict):
        raise SkillError(file, None, "front matter must be a mapping of fields")
    return meta, match.group(2)


def _read_fields(
    file: Path, meta: dict[object, object]
) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """Every front matter field, present and known: the text fields and the list fields."""
    unknown = sorted(str(k) for k in meta if k not in FIELDS)
    if unknown:
        raise SkillError(file, unknown[0], f"unknown field (known: {', '.join(FIELDS)})")
    for name in FIELDS:
        if name not in meta:
            raise SkillError(
                file,
                name,
                "missing (every skill declares all front matter fields; lists may be empty)",
            )
    texts: dict[str, str] = {}
    lists: dict[str, tuple[str, ...]] = {}
    for name in FIELDS:
        if name in LIST_FIELDS:
            lists[name] = _as_list(file, name, meta[name])
        else:
            texts[name] = _as_str(file, name, meta[name])
    return texts, lists


#: Per list field, the rule each item keeps and what is wrong with an item that breaks it.
_ITEM_RULES: tuple[tuple[str, Callable[[str], bool], Callable[[str], str]], ...] = (
    (
        "requiredEvidence",
        lambda item: item in EVIDENCE_ITEMS,
        lambda item: (
            f"{item!r} is not a ref kind, {PRIMARY_SOURCE!r} or {SECONDARY_ALLOWED!r} "
            f"(known: {', '.join(sorted(EVIDENCE_ITEMS))})"
        ),
    ),
    (
        "toolRefs",
        lambda item: item in CATALOG,
        lambda item: f"{item!r} is not a catalog tool (known: {', '.join(sorted(CATALOG))})",
    ),
    (
        "capabilityRefs",
        lambda item: bool(_IDENT_RE.match(item)),
        lambda item: f"{item!r} is not a capability name (a Python identifier)",
    ),
    (
        "knowledgeRefs",
        lambda item: not (Path(item).is_absolute() or ".." in Path(item).parts),
        lambda item: f"{item!r} must be a path relative to the workspace, inside it",
    ),
)


def _check_texts(file: Path, texts: dict[str, str]) -> None:
    """The id's form and the status."""
    if not _ID_RE.match(texts["id"]):
        raise SkillError(
            file,
            "id",
            f"{texts['id']!r} must be lowercase letters, digits and dashes (2-64 characters)",
        )
    if texts["status"] not in STATUSES:
        raise SkillError(file, "status", f"{texts['status']!r} is not one of {', '.join(STATUSES)}")


def _check_lists(file: Path, lists: dict[str, tuple[str, ...]]) -> None:
    """Evidence items, tools, capabilities and knowledge paths the skill may name; no evidence
    item twice."""
    for name, rule, problem in _ITEM_RULES:
        for i, item in enumerate(lists[name]):
            if not rule(item):
                raise SkillError(file, f"{name}[{i}]", problem(item))
        if name == "requiredEvidence" and len(set(lists[name])) != len(lists[name]):
            raise SkillError(file, "requiredEvidence", "lists an item twice")


def parse_skill(text: str, file: Path | str = "<skill>", *, origin: str = "builtin") -> Skill:
    """Parse and validate one skill file's text (cross-skill checks are the skillbook's)."""
    file = Path(file)
    meta, body = _front_matter(text, file)
    texts, lists = _read_fields(file, meta)
    _check_texts(file, texts)
    _check_lists(file, lists)
    if file.suffix == ".md" and file.stem != texts["id"]:
        raise SkillError(
            file,
            "id",
            f"{texts['id']!r} differs from the file name {file.name!r} (name the file <id>.md)",
        )
    procedure = body.strip()
    if not procedure:
        raise SkillError(
            file,
            "procedure",
            "the body after the front matter is empty (write the procedure there)",
        )
    return Skill(
        id=texts["id"],
        title=texts["title"],
        category=texts["category"],
        purpose=texts["purpose"],
        status=texts["status"],
        # The list fields under their attribute names, as ``Skill.payload`` reads them back.
        **{_attribute_of(name): items for name, items in lists.items()},
        procedure=procedure,
        path=file,
        origin=origin,
    )


def load_skill_file(path: Path | str, *, origin: str = "builtin") -> Skill:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SkillError(path, None, f"not UTF-8 text: {exc}") from exc
    except OSError as exc:
        raise SkillError(path, None, f"cannot read: {exc}") from exc
    return parse_skill(text, path, origin=origin)


@dataclass(frozen=True)
class SkillHit:
    skill: Skill
    score: float
    matched: str  # "id" or "text"


@dataclass
class Skillbook:
    """Validated skills by id, with lookup by id and search by text."""

    skills: dict[str, Skill] = field(default_factory=dict)
    sources: tuple[Path, ...] = ()

    def __len__(self) -> int:
        return len(self.skills)

    def ids(self) -> list[str]:
        return sorted(self.skills)

    def get(self, skill_id: str) -> Skill | None:
        return self.skills.get(skill_id.strip())

    def search(self, query: str, *, limit: int = 3, include_drafts: bool = False) -> list[SkillHit]:
        """Skills for ``query``: an exact id first, else ranked by BM25 over their text.

        Deprecated skills are never returned by text; drafts only with ``include_drafts``.
        """
        query = (query or "").strip()
        if not query:
            return []
        exact = self.get(query) or self.get(query.lower())
        if exact is not None:
            return [SkillHit(exact, 1.0, "id")]
        pool = [
            s
            for s in self.skills.values()
            if s.status == "active" or (include_drafts and s.status == "draft")
        ]
        if not pool:
            return []
        pool.sort(key=lambda s: s.id)  # ties rank by id
        ranker = LexicalRanker([_tokens(s.search_text()) for s in pool])
        hits = [
            SkillHit(pool[i], round(score, 4), "text")
            for i, score in ranker.rank(_tokens(query), max(1, limit))
        ]
        return hits[: max(1, limit)]


def builtin_skills_dir() -> Path:
    """refgate's own ``skills/`` folder (the ``refgate.skills`` data package)."""
    try:  # located, not imported: ``refgate.skills`` holds data (markdown), no code
        spec = importlib.util.find_spec("refgate.skills")
    except ImportError:
        spec = None
    for entry in (spec.submodule_search_locations or []) if spec else []:
        if Path(entry).is_dir():
            return Path(entry)
    package = Path(__file__).resolve().parent.parent  # refgate/ (this module is refgate/catalog/)
    for candidate in (package / "skills", package.parent / "skills"):
        if candidate.is_dir():
            return candidate
    return package.parent / "skills"


def _collect(folder: Path, origin: str, out: dict[str, Skill], seen: dict[str, Path]) -> None:
    if not folder.is_dir():
        raise SkillError(folder, None, "skills folder not found")
    for path in sorted(folder.glob("*.md")):
        if path.name.lower() == "readme.md":
            continue
        if not is_within(path, [folder]):
            raise SkillError(path, None, f"resolves to {real(path)}, outside the skills folder")
        skill = load_skill_file(path, origin=origin)
        if skill.id in seen and seen[skill.id].parent == path.parent:
            raise SkillError(path, "id", f"{skill.id!r} is also declared by {seen[skill.id]}")
        seen[skill.id] = path
        out[skill.id] = skill


def _unknown_items(
    skills: Iterable[Skill], name: str, known: Collection[str], what: str
) -> list[SkillError]:
    """A ``SkillError`` per item of the list field ``name`` (``linkedSkills``,
    ``capabilityRefs``) that names nothing in ``known``, in skill and item order."""
    return [
        SkillError(
            skill.path or skill.id,
            f"{name}[{i}]",
            f"{item!r} is not a {what} (known: {', '.join(sorted(known))})",
        )
        for skill in skills
        for i, item in enumerate(skill.listed(name))
        if item not in known
    ]


def load_skillbook(
    folders: Iterable[Path | str] | None = None, *, workspace_dir: Path | str | None = None
) -> Skillbook:
    """Load the built-in skills (or ``folders``) plus a workspace's own skills folder.

    Raises ``SkillError`` naming the file and field of the first problem found.
    """
    dirs = [Path(f) for f in folders] if folders is not None else [builtin_skills_dir()]
    skills: dict[str, Skill] = {}
    seen: dict[str, Path] = {}
    for folder in dirs:
        _collect(folder, "builtin", skills, seen)
    if workspace_dir is not None:
        dirs.append(Path(workspace_dir))
        _collect(Path(workspace_dir), "workspace", skills, seen)
    unknown = _unknown_items(skills.values(), "linkedSkills", skills, "known skill")
    if unknown:
        raise unknown[0]
    return Skillbook(skills, tuple(dirs))


def validate_folders(folders: Sequence[Path | str]) -> list[SkillError]:
    """Every error in ``folders`` (not only the first), for a lint command or a test."""
    errors: list[SkillError] = []
    good: dict[str, Skill] = {}
    for folder in folders:
        for path in sorted(Path(folder).glob("*.md")):
            if path.name.lower() == "readme.md":
                continue
            try:
                skill = load_skill_file(path)
            except SkillError as exc:
                errors.append(exc)
                continue
            good[skill.id] = skill
    return errors + _unknown_items(good.values(), "linkedSkills", good, "known skill")


_CACHE: dict[tuple[object, ...], Skillbook] = {}


def _stamp(folder: Path) -> tuple[object, ...]:
    if not folder.is_dir():
        return (str(folder), None)
    return (str(folder), tuple(sorted((p.name, p.stat().st_mtime_ns) for p in folder.glob("*.md"))))


def skillbook_for(workspace: object = None) -> Skillbook:
    """The skillbook of a workspace (built-in skills plus its ``[skills]`` folder), cached until a
    skill file changes."""
    builtin = builtin_skills_dir()
    ws_dir = getattr(workspace, "skills_path", None) if workspace is not None else None
    key = (_stamp(builtin), _stamp(Path(ws_dir)) if ws_dir else None)
    book = _CACHE.get(key)
    if book is None:
        book = load_skillbook([builtin], workspace_dir=ws_dir)
        _CACHE.clear()
        _CACHE[key] = book
    return book


def merge_required_evidence(skills: Iterable[Mapping[str, Any] | Skill]) -> list[str]:
    """The union of the skills' requiredEvidence, in first-seen order (the GATE's checklist)."""
    out: list[str] = []
    for skill in skills:
        items = (
            skill.required_evidence
            if isinstance(skill, Skill)
            else skill.get("requiredEvidence") or []
        )
        for item in items:
            if item not in out:
                out.append(str(item))
    return out


def check_capability_refs(book: Skillbook, known: Iterable[str] | None = None) -> list[SkillError]:
    """``capabilityRefs`` naming no registered engine capability. The catalog holds what was
    registered so far (``register_default_capabilities`` in the graph layer registers them all),
    so loading skills never needs it; call this from a lint step or a test, or pass ``known``."""
    if known is None:
        known = catalog()
    return _unknown_items(
        book.skills.values(), "capabilityRefs", set(known), "registered capability"
    )
