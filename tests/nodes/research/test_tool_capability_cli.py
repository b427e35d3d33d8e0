"""The WebSearch tool, the engine.deep_research capability and `refgate research`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from typer.testing import CliRunner

from refgate.catalog.capabilities import get_capability
from refgate.catalog.toolspec import ToolContext
from refgate.cli import app
from refgate.config import Settings
from refgate.graph.capabilities import register_default_capabilities
from refgate.refs import RefLedger
from refgate.tools.registry import get_spec
from refgate.workspace import load_workspace

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "us-macro"
FAKE = Path(__file__).parent / "data" / "fake_agent.py"


def test_websearch_results_are_external_webrefs_with_untrusted_fields_declared():
    spec = get_spec("WebSearch")
    assert spec.read_only and spec.issues == ("webRef",)
    assert set(spec.untrusted_fields) == {"results[].title", "results[].snippet"}
    ctx = ToolContext(
        pass_name="work", ledger=RefLedger(), settings=Settings(), workspace=load_workspace(SAMPLE)
    )
    result = spec.func(
        spec.args_schema(query="federal funds rate 0 to 1/4 percent", max_results=3), ctx
    )
    assert result.ok and len(result.refs) == 3 and result.untrusted_content
    assert result.untrusted_fields == ["results[].title", "results[].snippet"]
    for row, ref in zip(result.data["results"], result.refs, strict=True):
        assert ref.kind == "webRef" and ref.source_type == "external" and ref.is_external
        assert row["ref"] == ref.id and ref.payload["url"] == row["url"] == ref.source
        assert row["title"] not in ref.title  # web titles never become ref titles
    failing = ToolContext(
        pass_name="work", ledger=RefLedger(), settings=Settings(), extra={"web_search": _Broken()}
    )
    bad = spec.func(spec.args_schema(query="x"), failing)
    assert not bad.ok and "ConnectionError" in bad.error


class _Broken:
    name = "broken"

    def search(self, query, *, max_results=8):
        raise ConnectionError("no route")


def test_deep_research_capability_returns_confirmed_claims_as_external_webrefs(script, tiny_web):
    from refgate.catalog.capabilities import EngineEnv

    register_default_capabilities()
    cap = get_capability("deep_research")
    assert "question" in cap.signature and "env" not in cap.signature
    env = EngineEnv(
        extra={"research_model": script().model(), "web_search": tiny_web, "web_fetch": tiny_web}
    )
    ev = cap.func("What is known about the Aurora rail tunnel?", env=env)
    assert ev.data["status"] == "complete" and ev.refs
    assert len(ev.refs) == len(ev.data["confirmed"])
    for row in ev.data["confirmed"]:
        ref = ev.refs[row["ref"]]
        assert ref.kind == "webRef" and ref.source_type == "external"
        assert ref.payload["url"] == row["source"] and ref.payload["quote"] == row["quote"]
        assert ref.payload["votes"] == {"support": 3, "refute": 0, "uncertain": 0, "abstain": 0}
        assert ref.payload["quote"] in tiny_web.fetch(ref.payload["url"]).text
    assert ev.data["findings"][0]["refs"] == list(range(len(ev.refs)))
    assert "findings[].claim" in ev.untrusted_fields


def _tiny_workspace(tmp_path, h):
    ws = tmp_path / "ws"
    h.write_snapshot(ws / "web")
    (ws / "refgate.toml").write_text(
        'name = "tiny"\n[web_snapshot]\npath = "web"\n', encoding="utf-8"
    )
    return ws


def _fake_codex(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "codex"
    exe.write_text(f"#!{sys.executable}\n" + FAKE.read_text(encoding="utf-8"), encoding="utf-8")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_MODE", "smart")


def test_cli_research_with_the_codex_backend_end_to_end(tmp_path, monkeypatch, h):
    ws = _tiny_workspace(tmp_path, h)
    _fake_codex(tmp_path, monkeypatch)
    result = CliRunner().invoke(
        app, ["research", h.QUESTION, "--workspace", str(ws), "--json", "--backend", "codex"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["status"] == "complete" and report["summary"] == "Smart summary."
    assert report["findings"][0]["sources"]
    assert "scope: 3 angles" in result.stderr and "report: complete" in result.stderr
    assert (ws / ".refgate" / "research.sqlite").is_file()
    # the run is audited like an ask: question, report, status, models and token usage
    (record,) = [
        json.loads(line) for line in (ws / ".refgate" / "audit.jsonl").read_text().splitlines()
    ]
    assert record["kind"] == "research" and record["status"] == "complete"
    assert record["question"] == h.QUESTION and record["answer"].startswith("# Deep Research")
    assert set(record["usage"]) >= {"total", "per_pass", "cost_usd"}
    listed = CliRunner().invoke(app, ["audit", "-w", str(ws), "--json"])
    assert json.loads(listed.stdout)[0]["kind"] == "research"
    md = CliRunner().invoke(
        app, ["research", h.QUESTION, "-w", str(ws), "--backend", "codex", "-q"]
    )
    assert md.exit_code == 0 and md.stdout.startswith("# Deep Research") and md.stderr == ""


def test_cli_degenerate_and_config_errors(tmp_path, monkeypatch, h):
    ws = _tiny_workspace(tmp_path, h)
    _fake_codex(tmp_path, monkeypatch)
    empty = CliRunner().invoke(
        app, ["research", "  ", "-w", str(ws), "--backend", "codex", "--json"]
    )
    # a blank question is a usage error (exit 2), as for `refgate ask`
    assert empty.exit_code == 2 and "no question" in empty.stderr and not empty.stdout
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("REFGATE_LOCAL_LLM", "0")  # else the embedded smoke model is the default
    no_model = CliRunner().invoke(app, ["research", "q", "-w", str(ws)])
    assert no_model.exit_code == 2 and "no model is configured" in no_model.stderr
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    missing = CliRunner().invoke(app, ["research", "q", "-w", str(ws), "--backend", "agy"])
    assert missing.exit_code == 2 and "not on PATH" in missing.stderr


def test_cli_research_output_files_and_report_again(tmp_path, monkeypatch, h):
    ws = _tiny_workspace(tmp_path, h)
    _fake_codex(tmp_path, monkeypatch)
    html = tmp_path / "r.html"
    result = CliRunner().invoke(
        app, ["research", h.QUESTION, "-w", str(ws), "--backend", "codex", "-q", "-o", str(html)]
    )
    assert result.exit_code == 0, result.output
    page = html.read_text(encoding="utf-8")
    assert "Verified claims (" in page and "untrusted, secondary" in page
    assert 'href="https://' in page and "support," in page
    md = tmp_path / "r.md"
    again = CliRunner().invoke(
        app, ["research", h.QUESTION, "-w", str(ws), "--backend", "codex", "-o", str(md)]
    )
    assert again.exit_code == 0 and md.read_text(encoding="utf-8").startswith("# Deep Research")
    tid = again.stderr.split("--thread ", 1)[1].split(")", 1)[0].strip()
    stored = tmp_path / "stored.json"
    rerun = CliRunner().invoke(app, ["report", tid, "-w", str(ws), "-o", str(stored)])
    assert rerun.exit_code == 0, rerun.output
    assert json.loads(stored.read_text(encoding="utf-8"))["status"] == "complete"
    bad = CliRunner().invoke(app, ["research", "q", "-w", str(ws), "-o", str(tmp_path / "r.xlsx")])
    assert bad.exit_code == 2 and ".pdf, .docx or .json" in " ".join(bad.output.split())


def test_cli_accepts_the_design_names_antigravity_and_concurrency(tmp_path, monkeypatch, h):
    ws = _tiny_workspace(tmp_path, h)
    _fake_codex(tmp_path, monkeypatch)
    agy = tmp_path / "bin" / "agy"
    agy.write_text((tmp_path / "bin" / "codex").read_text(encoding="utf-8"), encoding="utf-8")
    agy.chmod(0o755)
    args = ["research", h.QUESTION, "-w", str(ws), "--json", "--concurrency", "2"]
    result = CliRunner().invoke(app, [*args, "--backend", "antigravity"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["status"] == "complete"
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    missing = CliRunner().invoke(app, ["research", "q", "-w", str(ws), "--backend", "antigravity"])
    assert missing.exit_code == 2 and "`agy` is not on PATH" in missing.stderr


def test_cli_research_thread_resume_alias_and_another_question(tmp_path, monkeypatch, h):
    ws = _tiny_workspace(tmp_path, h)
    _fake_codex(tmp_path, monkeypatch)
    base = ["-w", str(ws), "--backend", "codex", "--json"]
    first = CliRunner().invoke(app, ["research", h.QUESTION, *base, "--thread", "rt-1"])
    assert first.exit_code == 0, first.output
    # --resume is an alias of --thread: the finished thread returns its stored report
    again = CliRunner().invoke(app, ["research", *base, "--resume", "rt-1"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout) == json.loads(first.stdout)
    other = CliRunner().invoke(app, ["research", "Another question?", *base, "--thread", "rt-1"])
    assert other.exit_code == 2 and "different question" in " ".join(other.stderr.split())


def test_the_report_renders_in_a_terminal_as_ask_renders_an_answer(monkeypatch):
    """In a terminal the report is rendered markdown (headings, no '#'), with links only to
    the run's own sources; piped, it stays markdown (the tests above)."""
    from rich.console import Console

    from refgate.cli import research as research_cli

    report = {
        "question": "q",
        "sources": [{"url": "https://example.org/source", "title": "s"}],
        "findings": [],
    }
    markdown = (
        "# Deep Research\n\nA finding [source](https://example.org/source) and "
        "[bait](https://attacker.example/x) ![img](https://attacker.example/p.png)\n"
    )
    term = Console(force_terminal=True, width=100, color_system=None)
    monkeypatch.setattr(research_cli, "console", term)
    with term.capture() as cap:
        research_cli.render_report(markdown, report)
    text = cap.get()
    assert "Deep Research" in text and "# Deep Research" not in text
    # the model-chosen link and the image are shown as text, not rendered
    assert "[bait]" in text and "![img]" in text
    assert "A finding source and" in " ".join(text.split())
