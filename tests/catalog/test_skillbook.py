"""The skill files: the shipped ones are valid; malformed ones fail naming file and field."""

from pathlib import Path

import pytest

from refgate.catalog.skillbook import (
    FIELDS,
    SkillError,
    builtin_skills_dir,
    check_capability_refs,
    load_skillbook,
    merge_required_evidence,
    parse_skill,
    validate_folders,
)
from refgate.graph.capabilities import register_default_capabilities
from refgate.refs import REF_KINDS

GOOD = """---
id: my-skill
title: My skill
category: lookup
purpose: Look one value up.
whenToUse: [one value]
requiredEvidence: [valueRef, primarySource]
toolRefs: [RunPython]
knowledgeRefs: []
capabilityRefs: [search_documents]
linkedSkills: []
forbidden: [guessing]
failureModes: [wrong period]
status: active
---
1. Do it.
"""


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_skills_load_and_cover_the_sample_workspace_lenses():
    book = load_skillbook()
    assert builtin_skills_dir() == Path(__file__).resolve().parents[2] / "skills"
    assert set(book.ids()) >= {
        "single-value-lookup",
        "period-change",
        "ranking-top-n",
        "document-crosscheck",
        "explain-capability",
        "deep-research",
    }
    assert validate_folders([builtin_skills_dir()]) == []
    for skill in book.skills.values():
        assert skill.procedure and skill.status == "active"
        for item in skill.required_evidence:
            assert item in REF_KINDS or item == "primarySource"
    assert book.get("ranking-top-n").required_evidence == ("tableRef", "primarySource")
    explain = book.get("explain-capability")
    assert set(explain.required_evidence) == {"skillRef", "apiRef"}
    assert "RunPython" in explain.forbidden
    # Every capability a skill names is in the engine catalog (the API's source of truth).
    register_default_capabilities()
    assert check_capability_refs(book) == []


def test_an_unknown_capability_is_reported_with_file_and_field(tmp_path):
    write(tmp_path, "my-skill.md", GOOD.replace("[search_documents]", "[value_at, no_such_api]"))
    (err,) = check_capability_refs(load_skillbook([tmp_path]), known=["value_at"])
    assert (err.file, err.field) == (str(tmp_path / "my-skill.md"), "capabilityRefs[1]")


def test_search_by_id_and_by_text():
    book = load_skillbook()
    assert [h.skill.id for h in book.search("period-change")] == ["period-change"]
    assert book.search("period-change")[0].matched == "id"
    top = book.search("Which five S&P 500 companies have the largest market cap?")
    assert top[0].skill.id == "ranking-top-n" and top[0].matched == "text"
    assert book.search("How do I call the search_documents capability?")[0].skill.id == (
        "explain-capability"
    )
    assert book.search("시가총액 상위 5개 기업")[0].skill.id == "ranking-top-n"
    assert book.search("zzzz qqqq") == []


def test_a_good_file_parses_and_merges(tmp_path):
    path = write(tmp_path, "my-skill.md", GOOD)
    skill = parse_skill(path.read_text(), path)
    assert skill.required_evidence == ("valueRef", "primarySource")
    assert skill.procedure == "1. Do it."
    assert merge_required_evidence([skill, {"requiredEvidence": ["tableRef", "valueRef"]}]) == [
        "valueRef",
        "primarySource",
        "tableRef",
    ]


@pytest.mark.parametrize(
    ("old", "new", "field", "words"),
    [
        ("title: My skill\n", "", "title", "missing"),
        ("status: active\n", "status: live\n", "status", "not one of"),
        ("[valueRef, primarySource]", "[valueRef, numberRef]", "requiredEvidence[1]", "numberRef"),
        ("toolRefs: [RunPython]", "toolRefs: [RunPythn]", "toolRefs[0]", "not a catalog tool"),
        ("whenToUse: [one value]", "whenToUse: one value", "whenToUse", "must be a list"),
        ("forbidden: [guessing]", "forbidden: [guessing, 3]", "forbidden[1]", "non-empty string"),
        ("status: active\n", "status: active\nowner: me\n", "owner", "unknown field"),
        ("id: my-skill", "id: My Skill", "id", "lowercase"),
        ("id: my-skill", "id: other-skill", "id", "file name"),
        ("knowledgeRefs: []", "knowledgeRefs: [../secret.txt]", "knowledgeRefs[0]", "inside"),
        (
            "capabilityRefs: [search_documents]",
            "capabilityRefs: [search documents]",
            "capabilityRefs[0]",
            "identifier",
        ),
        ("1. Do it.\n", "", "procedure", "empty"),
    ],
)
def test_malformed_fields_name_the_file_and_the_field(tmp_path, old, new, field, words):
    assert old in GOOD
    path = write(tmp_path, "my-skill.md", GOOD.replace(old, new))
    with pytest.raises(SkillError) as err:
        load_skillbook([tmp_path])
    assert err.value.file == str(path)
    assert err.value.field == field
    assert str(err.value).startswith(f"{path}: {field}: ")
    assert words in str(err.value)


def test_file_level_errors_name_the_file(tmp_path):
    path = write(tmp_path, "my-skill.md", "# no front matter\n")
    with pytest.raises(SkillError, match="no YAML front matter") as err:
        load_skillbook([tmp_path])
    assert err.value.file == str(path) and err.value.field is None
    write(tmp_path, "my-skill.md", GOOD.replace("title: My skill", "title: [unclosed"))
    with pytest.raises(SkillError, match="not valid YAML"):
        load_skillbook([tmp_path])


def test_unknown_linked_skill_is_reported_on_the_linking_file(tmp_path):
    path = write(
        tmp_path, "my-skill.md", GOOD.replace("linkedSkills: []", "linkedSkills: [nowhere]")
    )
    with pytest.raises(SkillError) as err:
        load_skillbook([tmp_path])
    assert (err.value.file, err.value.field) == (str(path), "linkedSkills[0]")
    errors = validate_folders([tmp_path])
    assert [(e.file, e.field) for e in errors] == [(str(path), "linkedSkills[0]")]


def test_every_field_is_required(tmp_path):
    for name in FIELDS:
        lines = [ln for ln in GOOD.splitlines(keepends=True) if not ln.startswith(f"{name}:")]
        write(tmp_path, "my-skill.md", "".join(lines))
        with pytest.raises(SkillError) as err:
            load_skillbook([tmp_path])
        assert err.value.field == name


def test_a_workspace_skill_replaces_a_builtin_one(tmp_path):
    text = (builtin_skills_dir() / "ranking-top-n.md").read_text()
    write(tmp_path, "ranking-top-n.md", text.replace("  - primarySource\n", ""))
    book = load_skillbook(workspace_dir=tmp_path)
    skill = book.get("ranking-top-n")
    assert skill.origin == "workspace" and skill.required_evidence == ("tableRef",)


def test_front_matter_nested_too_deeply_is_a_skill_error():
    text = "---\nid: x\nrequiredEvidence: " + "[" * 3000 + "]" * 3000 + "\n---\nbody\n"
    with pytest.raises(SkillError, match="nested too deeply"):
        parse_skill(text)


def test_a_skill_ref_payload_carries_every_field_under_its_front_matter_name():
    skill = parse_skill(GOOD, "my-skill.md", origin="workspace")
    assert skill.payload() == {
        "id": "my-skill",
        "title": "My skill",
        "category": "lookup",
        "purpose": "Look one value up.",
        "whenToUse": ["one value"],
        "requiredEvidence": ["valueRef", "primarySource"],
        "toolRefs": ["RunPython"],
        "knowledgeRefs": [],
        "capabilityRefs": ["search_documents"],
        "linkedSkills": [],
        "forbidden": ["guessing"],
        "failureModes": ["wrong period"],
        "status": "active",
        "procedure": "1. Do it.",
        "origin": "workspace",
        "path": "my-skill.md",
    }
    assert list(skill.payload()) == [*FIELDS, "procedure", "origin", "path"]
