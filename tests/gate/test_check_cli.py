"""``refgate check``: the GATE alone on an answer file and a JSON ref ledger."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from refgate.cli import app

V = "val_00000000a1"
REF = {
    "id": V,
    "kind": "valueRef",
    "payload": {
        "values": {"gdp": 12990.3},
        "units": {"gdp": "USD"},
        "scale": {"gdp": "billion"},
        "period": "2009Q3",
    },
}
GOOD = f"Real GDP in 2009Q3 was 12,990.3 billion USD [{V}]."
BAD = f"Real GDP in 2009Q3 was 13,500 billion USD [{V}]."

runner = CliRunner()


def run(*args: str, input: str | None = None):
    return runner.invoke(app, ["check", *args], input=input)


def flat(result) -> str:
    """The output with rich's line wrapping undone."""
    return " ".join(result.output.split())


def test_passing_answer_exits_0_and_blocked_exits_3(tmp_path):
    (tmp_path / "refs.json").write_text(json.dumps([REF]))
    (tmp_path / "good.md").write_text(GOOD)
    (tmp_path / "bad.md").write_text(BAD)
    ok = run(str(tmp_path / "good.md"), "--refs", str(tmp_path / "refs.json"))
    assert ok.exit_code == 0, ok.output
    assert "GATE passed: 1 of 1 claims supported" in flat(ok)
    blocked = run(str(tmp_path / "bad.md"), "--refs", str(tmp_path / "refs.json"))
    assert blocked.exit_code == 3
    assert "GATE blocked: 0 of 1 claims supported, 1 blocking issue(s)" in flat(blocked)
    assert "unsupported_numeric_claim" in blocked.output
    assert f"[{V}]" in flat(blocked)  # the claim is printed as written, not read as markup


def test_reads_ask_json_output_with_its_answer_and_stdin(tmp_path):
    # `refgate ask --json` prints {question, answer, refs: {id: ref}, ...}.
    ask_out = {
        "question": "q",
        "answer": BAD,
        "refs": {V: {k: v for k, v in REF.items() if k != "id"}},
    }
    path = tmp_path / "run.json"
    path.write_text(json.dumps(ask_out))
    stored = run("--refs", str(path), "--json")
    assert stored.exit_code == 3
    report = json.loads(stored.output)
    assert report["passed"] is False
    assert [i["code"] for i in report["issues"]] == ["unsupported_numeric_claim"]
    piped = run("-", "--refs", str(path), "--json", input=GOOD)
    assert piped.exit_code == 0 and json.loads(piped.output)["passed"] is True


def test_required_evidence_and_emitted_results(tmp_path):
    refs = tmp_path / "refs.json"
    refs.write_text(json.dumps({"doc_00000000b2": {"kind": "docRef", "payload": {"text": "x"}}}))
    res = run(
        "-",
        "--refs",
        str(refs),
        "--require",
        "tableRef",
        "--require-emitted",
        "--json",
        input="No figures here.",
    )
    assert res.exit_code == 3
    codes = [i["code"] for i in json.loads(res.output)["issues"]]
    assert codes == ["missing_required_evidence", "emit_result_missing"]


def test_bad_input_exits_2_with_the_reason(tmp_path):
    missing = run("-", "--refs", str(tmp_path / "nope.json"), input=GOOD)
    assert missing.exit_code == 2 and "cannot read" in flat(missing)
    (tmp_path / "broken.json").write_text("{not json")
    broken = run("-", "--refs", str(tmp_path / "broken.json"), input=GOOD)
    assert broken.exit_code == 2 and "is not JSON" in flat(broken)
    (tmp_path / "scalar.json").write_text("42")
    scalar = run("-", "--refs", str(tmp_path / "scalar.json"), input=GOOD)
    assert scalar.exit_code == 2 and "expected a list of refs" in flat(scalar)
    (tmp_path / "refs.json").write_text(json.dumps([REF]))
    no_answer = run("--refs", str(tmp_path / "refs.json"))
    assert no_answer.exit_code == 2 and "no answer given" in flat(no_answer)


def test_invalid_refs_are_reported_not_raised(tmp_path):
    (tmp_path / "refs.json").write_text(json.dumps([REF, {"id": "bad", "kind": "nope"}]))
    res = run("-", "--refs", str(tmp_path / "refs.json"), "--json", input=GOOD)
    assert res.exit_code == 3
    assert [i["code"] for i in json.loads(res.output)["issues"]] == ["invalid_ref"]


def test_numbers_backed_only_by_web_pages_block_unless_relaxed(tmp_path):
    web = {
        "id": "web_00000000b2",
        "kind": "webRef",
        "payload": {"url": "https://x.example", "excerpt": "Sales rose 12.5% last year."},
        "source_type": "external",
    }
    (tmp_path / "refs.json").write_text(json.dumps([web]))
    (tmp_path / "a.md").write_text("Sales rose 12.5% last year [web_00000000b2].")
    args = (str(tmp_path / "a.md"), "--refs", str(tmp_path / "refs.json"))
    blocked = run(*args)
    assert blocked.exit_code == 3 and "external_only_numeric" in blocked.output
    assert run(*args, "--require", "secondaryAllowed").exit_code == 0
    relaxed = runner.invoke(app, ["check", *args], env={"REFGATE_SECONDARY_NUMBERS": "warn"})
    assert relaxed.exit_code == 0 and "1 warning(s)" in relaxed.output
    bad = runner.invoke(app, ["check", *args], env={"REFGATE_SECONDARY_NUMBERS": "maybe"})
    assert bad.exit_code == 2 and "REFGATE_SECONDARY_NUMBERS" in bad.output
