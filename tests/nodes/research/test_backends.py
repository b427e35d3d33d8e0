"""CLI agent backends against fake `codex` / `agy` executables on PATH, and the chat backend."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage

from refgate.nodes.parsing import parse_json_object as extract_json_block
from refgate.nodes.research.backends import (
    AntigravityBackend,
    BackendUnavailable,
    ChatModelBackend,
    CodexBackend,
    extract_final_json,
)
from refgate.nodes.research.schemas import Scope, Verdict
from refgate.testing import KeyedChatModel

FAKE = Path(__file__).parent / "data" / "fake_agent.py"
VERDICT = {
    "refuted": True,
    "evidence": "contradicted by X",
    "confidence": "medium",
    "counterSource": None,
}


@pytest.fixture
def fake_bin(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("codex", "agy"):
        exe = bin_dir / name
        exe.write_text(f"#!{sys.executable}\n" + FAKE.read_text(encoding="utf-8"), encoding="utf-8")
        exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_COUNTER", str(tmp_path / "counter"))
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "log.jsonl"))

    def play(*steps):
        path = tmp_path / "script.json"
        path.write_text(json.dumps(list(steps)), encoding="utf-8")
        monkeypatch.setenv("FAKE_SCRIPT", str(path))
        (tmp_path / "counter").unlink(missing_ok=True)
        (tmp_path / "log.jsonl").unlink(missing_ok=True)

    def calls():
        log = tmp_path / "log.jsonl"
        return [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []

    play.calls = calls
    return play


def jsonl(obj, fmt="item"):
    if fmt == "item":
        msg = {"type": "item.completed", "item": {"type": "agent_message", "text": json.dumps(obj)}}
    elif fmt == "msg":
        msg = {"msg": {"type": "agent_message", "message": json.dumps(obj)}}
    else:
        msg = {"type": "agent_message", "text": json.dumps(obj)}
    return "\n".join(
        [json.dumps({"type": "reasoning", "text": "thinking"}), "not json", json.dumps(msg)]
    )


def test_extract_final_json_takes_the_last_agent_message_in_any_event_format():
    for fmt in ("item", "msg", "flat"):
        assert extract_final_json(jsonl({"summary": "s"}, fmt)) == {"summary": "s"}
    two = jsonl({"a": 1}) + "\n" + jsonl({"a": 2})
    assert extract_final_json(two) == {"a": 2}
    assert extract_final_json('{"type":"reasoning","text":"only"}') is None
    assert extract_final_json("") is None


def test_extract_json_block_fenced_bare_and_absent():
    assert extract_json_block('pre\n```json\n{"confidence": "high"}\n```\npost') == {
        "confidence": "high"
    }
    assert extract_json_block('noise {"refuted": true} more {"x": 1}') == {"refuted": True}
    assert extract_json_block('a {broken json} then {"ok": 1}') == {"ok": 1}
    assert extract_json_block("no json here") is None


def test_codex_parses_recorded_output_and_passes_a_strict_schema(fake_bin):
    fake_bin({"stdout": jsonl(VERDICT)})
    out = CodexBackend().run("## Adversarial Claim Verifier prompt", Verdict, label="v0")
    assert out == Verdict(**VERDICT)
    (argv,) = fake_bin.calls()
    assert argv[:2] == ["exec", "--json"] and argv[-1] == "## Adversarial Claim Verifier prompt"
    assert "-s" in argv and argv[argv.index("-s") + 1] == "read-only"
    schema_path = Path(argv[argv.index("--output-schema") + 1])
    assert not schema_path.exists()  # removed after the call


def test_codex_retries_invalid_json_then_succeeds(fake_bin):
    fake_bin(
        {"stdout": "garbage\n{not json"},
        {"stdout": jsonl({"refuted": "maybe"})},
        {"stdout": jsonl(VERDICT)},
    )
    backend = CodexBackend(retries=2)
    assert backend.run("p", Verdict, label="v") == Verdict(**VERDICT)
    assert len(fake_bin.calls()) == 3 and len(backend.failures) == 2


def test_codex_nonzero_exit_gives_none_after_retries(fake_bin):
    fake_bin({"stdout": "", "stderr": "auth expired", "exit": 3})
    backend = CodexBackend(retries=1)
    assert backend.run("p", Verdict, label="v") is None
    assert len(fake_bin.calls()) == 2
    assert "exit 3" in backend.failures[0] and "auth expired" in backend.failures[0]


def test_agy_extracts_fenced_json_and_puts_the_schema_in_the_prompt(fake_bin):
    fake_bin({"stdout": "Sure!\n```json\n" + json.dumps(VERDICT) + "\n```\n"})
    assert AntigravityBackend().run("verify this", Verdict, label="v") == Verdict(**VERDICT)
    (argv,) = fake_bin.calls()
    prompt = argv[argv.index("-p") + 1]
    assert prompt.startswith("verify this") and '"refuted"' in prompt and "JSON Schema" in prompt


def test_agy_reprompts_after_invalid_output(fake_bin):
    fake_bin(
        {"stdout": "I think it is refuted."},
        {"stdout": "exit", "exit": 1},
        {"stdout": json.dumps(VERDICT)},
    )
    assert AntigravityBackend(retries=2).run("p", Verdict, label="v") == Verdict(**VERDICT)
    calls = fake_bin.calls()
    assert len(calls) == 3
    assert "previous output was invalid" in calls[1][calls[1].index("-p") + 1]


def test_agy_gives_none_when_every_attempt_fails(fake_bin):
    fake_bin({"stdout": json.dumps({"angles": []})})
    assert AntigravityBackend(retries=1).run("p", Scope, label="scope") is None
    assert len(fake_bin.calls()) == 2


def test_missing_executable_raises(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BackendUnavailable, match="codex"):
        CodexBackend().run("p", Verdict, label="v")
    with pytest.raises(BackendUnavailable, match="agy"):
        AntigravityBackend().run("p", Verdict, label="v")


def test_chat_backend_reasks_once_then_gives_none():
    from refgate.testing import tool_call

    model = KeyedChatModel(
        rules=[
            (
                "previous answer did not match",
                AIMessage(content="", tool_calls=[tool_call("Verdict", VERDICT)]),
            )
        ],
        default=AIMessage(content="no tool call"),
    )
    assert ChatModelBackend(model).run("p", Verdict, label="v") == Verdict(**VERDICT)
    assert len(model.calls) == 2
    bad = KeyedChatModel(rules=[], default=AIMessage(content="never structured"))
    assert ChatModelBackend(bad).run("p", Verdict, label="v") is None
    assert len(bad.calls) == 2


def test_chat_backend_lets_transport_errors_through():
    model = KeyedChatModel(rules=[], default=ConnectionError("down"))
    with pytest.raises(ConnectionError):
        ChatModelBackend(model).run("p", Verdict, label="v")


def test_degenerate_model_output_is_unparsable_not_a_crash():
    from refgate.nodes.parsing import parse_json_object, parse_string_list

    nested = "[" * 5000 + "]" * 5000  # deeper than the JSON decoder's recursion limit
    assert parse_json_object(nested) is None
    assert parse_string_list(nested) == [nested]
    assert extract_json_block("{" + '"a":' * 3000 + "[" * 5000) is None
    assert extract_final_json(json.dumps({"type": "agent_message", "text": nested})) is None
    # Unclosed fences and braces by the thousand, then the object: found (in linear time).
    assert extract_json_block("```json\n{" * 5000 + '```json\n{"ok": 1}\n```') == {"ok": 1}
    assert extract_json_block("{" * 20000 + '{"ok": 2}') == {"ok": 2}
