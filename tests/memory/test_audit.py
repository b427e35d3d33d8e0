"""The audit file: run and review lines round-trip; the CLI lists and records reviews."""

import json

import pytest
from typer.testing import CliRunner

from refgate.cli import app
from refgate.memory.audit import (
    AuditError,
    append_review,
    append_run,
    audit_path,
    list_runs,
    read_audit,
)
from refgate.refs import Ref

EVENTS = [
    {"type": "pass_start", "pass": "brief", "run_id": "r1"},
    {
        "type": "model_call",
        "pass": "brief",
        "usage": {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12},
    },
    {"type": "pass_end", "pass": "brief", "duration_ms": 12.5},
    {
        "type": "model_call",
        "pass": "compose",
        "usage": {"input_tokens": 30, "output_tokens": 8, "total_tokens": 38},
    },
    {"type": "pass_end", "pass": "compose", "duration_ms": 40.0},
]


def record(thread, answer="Real GDP was 12,990.3 billion USD [val_0123456789].", passed=True):
    ref = Ref(id="val_0123456789", kind="valueRef", payload={"values": {"realgdp": 12990.341}})
    return {
        "thread_id": thread,
        "question": "What was real GDP?",
        "answer": answer,
        "refs": {ref.id: ref},
        "gate": {"passed": passed, "issues": []},
        "events": EVENTS,
        "models": {"brief": "m1", "compose": "m2"},
        "duration_s": 1.25,
    }


def test_run_and_review_lines_round_trip(workspace):
    raw = "Real GDP was 12,990.3 billion USD [val_0123456789].\n\n  (raw, untouched)  "
    written = append_run(workspace, record("t1", answer=raw))
    append_run(workspace, record("t2", passed=False))
    append_review(workspace, "t1", "fail", "wrong period", reviewer="ana")
    path = audit_path(workspace)
    assert path == workspace.root / ".refgate" / "audit.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [x["type"] for x in lines] == ["run", "run", "review"]
    run = lines[0]
    assert run == json.loads(json.dumps(written))
    assert run["answer"] == raw and run["run_id"] == "r1"
    assert run["refs"]["val_0123456789"]["payload"]["values"]["realgdp"] == 12990.341
    assert run["gate_passed"] is True and run["models"] == {"brief": "m1", "compose": "m2"}
    assert run["timings"] == {
        "passes_ms": {"brief": 12.5, "compose": 40.0},
        "passes_total_ms": 52.5,
        "total_s": 1.25,
    }
    assert run["usage"]["total"] == {"input_tokens": 40, "output_tokens": 10, "total_tokens": 50}
    assert run["usage"]["by_pass"]["compose"]["total_tokens"] == 38
    assert run["events"] == EVENTS
    assert Ref.model_validate(run["refs"]["val_0123456789"]).kind == "valueRef"
    assert lines[2] | {"recorded_at": None} == {
        "type": "review",
        "version": 1,
        "recorded_at": None,
        "thread_id": "t1",
        "verdict": "fail",
        "note": "wrong period",
        "reviewer": "ana",
    }
    rows = list_runs(workspace)
    assert [r["thread_id"] for r in rows] == ["t2", "t1"]  # newest first
    assert rows[1]["review"]["verdict"] == "fail" and rows[0]["review"] is None
    assert rows[0]["gate_passed"] is False


def test_verdicts_are_only_pass_or_fail_and_need_a_thread(workspace):
    with pytest.raises(AuditError):
        append_review(workspace, "t1", "ok")
    with pytest.raises(AuditError):
        append_review(workspace, "", "pass")
    with pytest.raises(AuditError):
        append_run(workspace, {"answer": "x"})


def test_a_corrupt_line_is_counted_not_fatal(workspace):
    append_run(workspace, record("t1"))
    with audit_path(workspace).open("a") as fh:
        fh.write("{not json\n")
    append_run(workspace, record("t2"))
    log = read_audit(workspace)
    assert [r["thread_id"] for r in log.runs] == ["t1", "t2"] and log.unreadable == [2]


def test_cli_review_and_audit(workspace):
    runner = CliRunner()
    append_run(workspace, record("t1"))
    ws = str(workspace.root)
    res = runner.invoke(app, ["review", "nope", "--verdict", "pass", "-w", ws])
    assert res.exit_code == 1 and "no run with thread" in res.output
    res = runner.invoke(app, ["review", "t1", "--verdict", "maybe", "-w", ws])
    assert res.exit_code == 2
    res = runner.invoke(
        app,
        [
            "review",
            "t1",
            "--verdict",
            "pass",
            "--note",
            "checked by hand",
            "-w",
            ws,
            "--reviewer",
            "bo",
        ],
    )
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["audit", "-w", ws, "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert rows[0]["thread_id"] == "t1" and rows[0]["review"]["verdict"] == "pass"
    assert rows[0]["review"]["note"] == "checked by hand" and rows[0]["gate_passed"] is True
    res = runner.invoke(app, ["audit", "-w", ws])
    assert res.exit_code == 0 and "t1" in res.output and "pass" in res.output
