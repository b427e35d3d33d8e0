"""``refgate eval`` end to end against the scripted OpenAI server: the four cells, refusals,
the JSON document, compare, and the errors users meet."""

import json

import pytest
from typer.testing import CliRunner

from refgate.cli import app
from refgate.testing_openai import OpenAIStub, tool, tool_reply
from refgate.tools.registry import override_tool
from tests.support.evidence import evidence_spec
from tests.support.stub_answers import GDP_QUESTION, HARVEST, PLAN, bad, good

FAKE = "Real GDP in 2009Q3 was 15,000 billion USD [val_00deadbeef]."
REFUSAL = "The workspace holds no data on Germany, so I cannot answer this question."


def answered(answer):
    return [PLAN, tool_reply(tool("RunPython", code="emit")), "done", "[]", answer, HARVEST]


def blocked(answer):
    return [
        PLAN,
        tool_reply(tool("RunPython", code="emit")),
        "done",
        "[]",
        answer,
        "no more",
        answer,
        HARVEST,
    ]


QUESTIONS = [
    {"id": "right", "question": GDP_QUESTION, "numbers": [12990.3], "refs_required": ["valueRef"]},
    {"id": "fake", "question": GDP_QUESTION, "numbers": [12990.3]},
    {"id": "wrongval", "question": GDP_QUESTION, "numbers": [12990.3]},
    {"id": "germany", "question": "What was Germany's real GDP in 2009?", "expect": "refuse"},
]
SCRIPT = [*answered(good), *blocked(FAKE), *blocked(bad)]
#: Replies by pass (whatever the number of rounds): a run that finds nothing and says so.
REFUSING = [
    ("You are BRIEF", PLAN),
    ("You are WORK", "nothing in the data covers Germany"),
    ("You are CRITIQUE", "[]"),
    ("You are COMPOSE", REFUSAL),
    ("You are HARVEST", HARVEST),
]


@pytest.fixture
def gdp_tool():
    spec = evidence_spec({"realgdp": 12990.341})
    with override_tool(spec):
        yield spec


def use(stub, env):
    env.setenv("OPENAI_BASE_URL", stub.base_url)
    env.setenv("OPENAI_API_KEY", "stub-key")
    env.setenv("REFGATE_MODEL", "gpt-4o-mini")  # the stub answers any name; this one has a price


def write(path, questions):
    path.write_text("\n".join(json.dumps(q) for q in questions) + "\n", encoding="utf-8")
    return path


def run_cli(*args):
    return CliRunner().invoke(app, ["eval", *map(str, args)])


def test_right_fake_citation_and_wrong_value_are_scored_as_expected(
    tmp_path, mini_workspace, env, gdp_tool
):
    qfile = write(tmp_path / "q.jsonl", QUESTIONS[:3])
    with OpenAIStub(script=list(SCRIPT)) as stub:
        use(stub, env)
        result = run_cli(qfile, "--workspace", mini_workspace, "--output", tmp_path / "r.json")
        assert stub.remaining == 0, result.output
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "r.json").read_text())
    by_id = {q["id"]: q for q in doc["questions"]}
    assert by_id["right"]["correct"] and by_id["right"]["passed"] and by_id["right"]["exit"] == 0
    for qid in ("fake", "wrongval"):
        assert not by_id[qid]["correct"] and not by_id[qid]["passed"], by_id[qid]
        assert by_id[qid]["exit"] == 3 and by_id[qid]["cell"] == "wrong_blocked"
        assert by_id[qid]["retries"] == 1
    assert "fake_ref" in " ".join(by_id["fake"]["gate_issues"])
    # each question has its own memory: the same question asked again recalls nothing
    block = "Decisions remembered from earlier runs on this workspace"
    assert not [r for r in stub.chat_requests() if block in r.text]
    threads = mini_workspace / ".refgate" / "eval" / doc["run_id"] / "threads"
    assert sorted(p.name for p in threads.glob("*.sqlite") if ".store." not in p.name) == [
        "fake.sqlite",
        "right.sqlite",
        "wrongval.sqlite",
    ]
    s = doc["summary"]
    assert (
        s["n"],
        s["correct_passed"],
        s["correct_blocked"],
        s["wrong_passed"],
        s["wrong_blocked"],
        s["failed"],
    ) == (3, 1, 0, 0, 2, 0)
    assert s["exact_numeric"] == round(1 / 3, 4)
    assert s["tokens"]["total_tokens"] > 0 and s["seconds"] > 0
    assert s["cost_usd"] > 0 and s["cost_known_for"] == 3 and by_id["right"]["cost_usd"] > 0
    assert by_id["right"]["tool_calls"] == 1 and by_id["right"]["retries"] == 0
    assert all(set(q) >= {"id", "correct", "passed", "exit", "answer"} for q in doc["questions"])
    assert list(s)[1] == "wrong_passed", "false acceptance leads the summary"
    assert "false acceptance" in result.stdout


def test_a_refusal_of_an_unanswerable_question_is_correct(tmp_path, mini_workspace, env):
    qfile = write(
        tmp_path / "q.jsonl",
        [QUESTIONS[3], {**QUESTIONS[3], "id": "answerable", "expect": "answer", "numbers": [1.0]}],
    )
    with OpenAIStub(rules=REFUSING) as stub:
        use(stub, env)
        result = run_cli(qfile, "--workspace", mini_workspace, "--output", tmp_path / "r.json")
        assert not stub.misses
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "r.json").read_text())
    germany, answerable = doc["questions"]
    assert germany["correct"] and germany["refused"] and germany["error"] is None
    assert germany["cell"] == ("correct_passed" if germany["passed"] else "correct_blocked")
    assert not answerable["correct"] and answerable["refused"], "refusing an answerable one"
    assert doc["summary"]["refused_correct"] == 1 and doc["summary"]["refusals_expected"] == 1


def test_a_wrong_answer_that_passes_is_a_false_acceptance(tmp_path, mini_workspace, env, gdp_tool):
    # The GATE passes 12,990.3; the gold says otherwise: the worst cell, counted first.
    qfile = write(tmp_path / "q.jsonl", [{"id": "x", "question": GDP_QUESTION, "numbers": [11000]}])
    with OpenAIStub(script=answered(good)) as stub:
        use(stub, env)
        result = run_cli(qfile, "--workspace", mini_workspace, "--output", tmp_path / "r.md")
    assert result.exit_code == 0, result.output
    md = (tmp_path / "r.md").read_text()
    assert md.index("false acceptance") < md.index("correct and passed")
    assert "| x | wrong_passed | 0 |" in md


def test_compare_lists_the_questions_that_changed(tmp_path, mini_workspace, env, gdp_tool):
    qfile = write(tmp_path / "q.jsonl", QUESTIONS[:2])
    runs = []
    for script in ([*answered(good), *blocked(FAKE)], [*answered(good), *answered(good)]):
        with OpenAIStub(script=script) as stub:
            use(stub, env)
            out = tmp_path / f"r{len(runs)}.json"
            assert run_cli(qfile, "--workspace", mini_workspace, "--output", out).exit_code == 0
        runs.append(json.loads(out.read_text())["run_id"])
    result = run_cli(
        "--compare",
        runs[0],
        runs[1],
        "--workspace",
        mini_workspace,
        "--output",
        tmp_path / "cmp.json",
    )
    assert result.exit_code == 0, result.output
    cmp = json.loads((tmp_path / "cmp.json").read_text())
    assert cmp["changes"] == [
        {"id": "fake", "a": "wrong_blocked", "b": "correct_passed", "change": "better", "why_b": ""}
    ]
    assert cmp["delta"]["correct_passed"] == 1 and "1 question(s) changed" in result.stdout


def test_bad_input_exits_2_with_the_reason(tmp_path, mini_workspace, env):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "question": "x", "numbers": "nine"}\n')
    result = run_cli(bad, "--workspace", mini_workspace)
    # whitespace-free: a long tmp path (xdist's popen-gwN/) wraps mid-name
    assert result.exit_code == 2 and "/bad.jsonl:1:" in "".join(result.output.split())
    assert run_cli(tmp_path / "none.jsonl", "--workspace", mini_workspace).exit_code == 2
    result = run_cli("--resume", "nope", "--workspace", mini_workspace)
    assert result.exit_code == 2 and "no eval run" in result.output
    good_file = write(tmp_path / "q.jsonl", QUESTIONS[:1])
    result = run_cli(good_file, "--workspace", mini_workspace, "--output", tmp_path / "r.pdf")
    assert result.exit_code == 2 and ".json, .md or .html" in result.output
    assert not (mini_workspace / ".refgate" / "eval").exists() or not any(
        (mini_workspace / ".refgate" / "eval").iterdir()
    ), "no run folder for a refused start"


def test_only_and_limit_run_a_subset_and_an_unknown_id_is_refused(tmp_path, mini_workspace, env):
    qfile = write(
        tmp_path / "q.jsonl",
        [{**QUESTIONS[3], "id": f"q{n}"} for n in range(1, 6)],
    )
    with OpenAIStub(rules=REFUSING) as stub:
        use(stub, env)
        only = run_cli(qfile, "-w", mini_workspace, "--only", "q4, q2", "-o", tmp_path / "o.json")
        limited = run_cli(qfile, "-w", mini_workspace, "--limit", "1", "-o", tmp_path / "l.json")
        unknown = run_cli(qfile, "-w", mini_workspace, "--only", "q2,nope")
    assert only.exit_code == 0, only.output
    assert [q["id"] for q in json.loads((tmp_path / "o.json").read_text())["questions"]] == [
        "q2",
        "q4",
    ]
    assert limited.exit_code == 0, limited.output
    assert [q["id"] for q in json.loads((tmp_path / "l.json").read_text())["questions"]] == ["q1"]
    assert unknown.exit_code == 2 and "'nope'" in unknown.output
