"""ReadSkill (BRIEF): find skills by id or text; one skillRef per skill returned.

The skills are the procedures' single source of truth (skills as procedures): the skillRef payload carries
what later passes need (``requiredEvidence`` becomes the GATE's checklist; ``forbidden`` and the
procedure guide WORK). Arguments: ``{"query": "..."}`` (an id or any text, e.g. the question) or
``{"id": "..."}``; ``limit`` caps text matches.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from refgate.catalog.skillbook import SkillError, skillbook_for
from refgate.catalog.toolspec import ToolArgs, ToolContext, ToolResult, ToolSpec

#: Skill fields carried in the tool's data (the skillRef payload holds the whole skill).
DATA_FIELDS = (
    "id",
    "title",
    "category",
    "purpose",
    "requiredEvidence",
    "toolRefs",
    "capabilityRefs",
    "knowledgeRefs",
    "linkedSkills",
    "forbidden",
    "failureModes",
    "procedure",
)


class ReadSkillArgs(ToolArgs):
    query: str | None = Field(
        default=None, description="A skill id, or text describing the task (e.g. the question)."
    )
    id: str | None = Field(default=None, description="An exact skill id.")
    limit: int = Field(default=3, ge=1, le=10, description="Most skills returned for a text query.")

    @model_validator(mode="after")
    def _one_of(self) -> ReadSkillArgs:
        if not (self.query or "").strip() and not (self.id or "").strip():
            raise ValueError("give 'query' (an id or text) or 'id'")
        return self


def read_skill(args: ReadSkillArgs, ctx: ToolContext) -> ToolResult:
    try:
        book = skillbook_for(ctx.workspace)
    except SkillError as exc:
        return ToolResult.failure(f"the skills could not be loaded: {exc}")
    if args.id and args.id.strip():
        skill = book.get(args.id)
        if skill is None:
            return ToolResult.failure(f"no skill with id {args.id.strip()!r}", available=book.ids())
        hits = [(skill, "id", 1.0)]
    else:
        hits = [
            (h.skill, h.matched, h.score) for h in book.search(args.query or "", limit=args.limit)
        ]
    if not hits:
        return ToolResult(
            ok=True,
            data={
                "skills": [],
                "message": "no skill matches; search again with other words or "
                "one of the ids listed",
                "available": book.ids(),
            },
        )
    skills = []
    refs = []
    for skill, matched, score in hits:
        payload = skill.payload()
        ref = ctx.issue(
            "skillRef",
            payload,
            title=f"skill {skill.id}: {skill.title}",
            source=f"skill:{skill.origin}:{skill.id}",
            source_type="internal",
        )
        refs.append(ref)
        skills.append(
            {
                "ref": ref.id,
                "matched": matched,
                "score": score,
                **{k: payload[k] for k in DATA_FIELDS},
            }
        )
    return ToolResult(ok=True, data={"skills": skills}, refs=refs)


SPEC = ToolSpec(
    name="ReadSkill",
    description=(
        "Find the skill (procedure) that fits the task, by id or by text such as the question. "
        "Returns each skill's procedure, requiredEvidence (the answer's checklist), tools, "
        "capabilities, forbidden actions and failure modes, and issues one skillRef per skill."
    ),
    args_schema=ReadSkillArgs,
    func=read_skill,
    read_only=True,
    issues=("skillRef",),
)
