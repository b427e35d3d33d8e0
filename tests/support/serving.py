"""Shared by the serving tests: scripted pass replies keyed on the pass's system prompt.

The replies contain no numbers, so any sane gate passes them; the question's topic word is echoed
into WORK's tool call, its notes and the answer, so a test can tell each run's state apart.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import uuid
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

from langchain_core.messages import AIMessage

from refgate.testing import KeyedChatModel, tool_call
from refgate.testing_openai import Reply, StubRequest, tool, tool_reply

PASS_MARKERS = {
    "brief": "You are BRIEF",
    "work": "You are WORK",
    "critique": "You are CRITIQUE",
    "compose": "You are COMPOSE",
    "harvest": "You are HARVEST",
}
TOPIC = re.compile(r"topic ([a-z]+)")


def pass_of(text: str) -> str:
    for name, marker in PASS_MARKERS.items():
        if marker in text:
            return name
    return "unknown"


def topic_of(text: str) -> str:
    m = TOPIC.search(text)
    return m.group(1) if m else "none"


def empty_workspace(root: Path, name: str | None = None) -> Path:
    """A minimal workspace folder (no datasets) with a unique name."""
    root.mkdir(parents=True, exist_ok=True)
    name = name or f"serving-{uuid.uuid4().hex[:8]}"
    (root / "refgate.toml").write_text(f'name = "{name}"\n', encoding="utf-8")
    return root


# -- the same script for the in-process scripted model and the HTTP stub ---------------------


def stub_responder(request: StubRequest) -> Reply | str:
    """Answer a served run's passes over HTTP (OpenAIStub ``responder``)."""
    text = request.text
    name = pass_of(request.system or text)
    topic = topic_of(text)
    if name == "brief":
        return '{"lens": "overview", "criteria": ["stay on topic ' + topic + '"]}'
    if name == "work":
        if request.tool_results:
            return f"Notes on topic {topic}: no dataset was needed."
        return tool_reply(tool("InspectDataset", dataset=f"data-{topic}"))
    if name == "critique":
        return f'["say plainly that topic {topic} was answered without data"]'
    if name == "compose":
        return f"The question on topic {topic} is answered without figures."
    if name == "harvest":
        return "Nothing worth remembering from this run."
    return Reply(status=500, error=f"unknown pass for prompt {text[:120]!r}")


def scripted_model(*, fail_compose: Exception | None = None) -> KeyedChatModel:
    """The same script as ``stub_responder``, as an in-process chat model."""

    def work(text: str) -> AIMessage:
        topic = topic_of(text)
        if '"ok":' in text:  # the tool's result envelope is in the conversation
            return AIMessage(content=f"Notes on topic {topic}: no dataset was needed.")
        return AIMessage(
            content="", tool_calls=[tool_call("InspectDataset", {"dataset": f"data-{topic}"})]
        )

    compose = fail_compose or (
        lambda t: f"The question on topic {topic_of(t)} is answered without figures."
    )
    return KeyedChatModel(
        rules=[
            (PASS_MARKERS["brief"], '{"lens": "overview", "criteria": ["on topic"]}'),
            (PASS_MARKERS["work"], work),
            (PASS_MARKERS["critique"], '["say plainly that no data was used"]'),
            (PASS_MARKERS["compose"], compose),
            (PASS_MARKERS["harvest"], "Nothing worth remembering from this run."),
        ]
    )


def started_passes(trace: list[dict]) -> list[str]:
    return [e["pass"] for e in trace if e.get("type") == "pass_start"]


# -- the deep-research graph's steps (one forced tool call named after the step's schema) ------

RESEARCH_MARKER = "evidence-checked research pipeline"
_URL = re.compile(r"https?://[^\s\"'<>)\]]+")


def research_responder(request: StubRequest) -> Reply | None:
    """Answer the research steps: three angles, the first two listed results, no claims."""
    if RESEARCH_MARKER not in request.system:
        return None
    name = request.tools[0] if request.tools else ""
    topic = topic_of(request.text)
    if name == "Scope":
        angles = [
            {"label": f"{label} {topic}", "query": query}
            for label, query in (
                ("policy", "federal funds rate target"),
                ("inflation", "inflation pressures"),
                ("growth", "economic growth outlook"),
            )
        ]
        args = {"question": f"topic {topic}", "summary": "three angles", "angles": angles}
    elif name == "Search":
        urls = list(dict.fromkeys(_URL.findall(request.text)))[:2]
        args = {"results": [{"url": u, "title": "result", "relevance": "high"} for u in urls]}
    elif name == "Extract":
        args = {"sourceQuality": "primary", "claims": []}
    elif name == "Verdict":
        args = {"refuted": False, "evidence": "consistent", "confidence": "medium"}
    elif name == "Report":
        args = {"summary": f"topic {topic}", "findings": []}
    else:
        return Reply(status=500, error=f"unknown research step {name!r}")
    return tool_reply(tool(name, **args))


def served_responder(request: StubRequest) -> Reply | str:
    """Both served graphs: research steps by their tool, workbench passes by their prompt."""
    return conversation_responder(request) or research_responder(request) or stub_responder(request)


class Hook:
    """A loopback webhook that records the bodies posted to it."""

    def __init__(self) -> None:
        received = self.received = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("content-length") or 0)
                received.append(json.loads(self.rfile.read(n)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# -- a two-turn conversation on the sample workspace (examples/us-macro) ----------------------

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "us-macro"
FIRST_QUESTION = "What was the US unemployment rate in 2009Q3?"
FOLLOW_UP = "And how did the US unemployment rate in 2008Q3 compare?"
_QUESTION = re.compile(r"^Question: (.*)$", re.MULTILINE)
_PERIOD = re.compile(r"\b(\d{4}Q[1-4])\b")
#: The sample's unemployment rate (macro.unemp, percent) by quarter.
UNEMP = {"2009Q3": "9.6", "2008Q3": "6.0"}


def copy_sample(target: Path) -> Path:
    """A private copy of the sample workspace (runs write their state under it)."""
    shutil.copytree(SAMPLE, target, ignore=shutil.ignore_patterns(".refgate"))
    return target


def value_refs_by_period(text: str) -> dict[str, str]:
    """``{period: valueRef id}`` from the JSON lines of a prompt's refs block."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not (line.startswith("{") and '"valueRef"' in line):
            continue
        try:
            ref = json.loads(line)
        except ValueError:
            continue
        if ref.get("kind") == "valueRef" and ref.get("period"):
            out.setdefault(str(ref["period"]), str(ref["id"]))
    return out


def conversation_responder(request: StubRequest) -> Reply | str | None:
    """The passes of the unemployment conversation; None for any other run's request.

    WORK reads the question's quarter with ``value_at``; COMPOSE states each quarter whose
    valueRef is in its prompt, so the follow-up cites the first turn's ref beside its own."""
    text = request.text
    found = _QUESTION.search(text)
    question = found.group(1) if found else ""
    if "US unemployment rate" not in question:
        return None
    name = pass_of(request.system or text)
    if name == "brief":
        if request.tool_results:
            return '{"skills": ["single-value-lookup"], "lens": "single value", "criteria": []}'
        return tool_reply(tool("ReadSkill", id="single-value-lookup"))
    if name == "work":
        if request.tool_results:
            return "Read the rate for the quarter asked."
        period = _PERIOD.search(question)
        arguments = {"dataset": "macro", "column": "unemp", "period": period.group(1)}
        return tool_reply(tool("EngineCall", name="value_at", arguments=arguments))
    if name == "critique":
        return "[]"
    if name == "compose":
        ids = value_refs_by_period(text)
        asked = _PERIOD.search(question).group(1)
        parts = [f"The US unemployment rate was {UNEMP[asked]}% in {asked} [{ids[asked]}]"]
        parts += [
            f"against {UNEMP[p]}% in {p} [{i}]" for p, i in ids.items() if p != asked and p in UNEMP
        ]
        return ", ".join(parts) + "."
    if name == "harvest":
        return "Nothing worth remembering from this run."
    return None
