"""Fixtures for the deep-research tests: a tiny offline web and a scripted model keyed on the
prompt (safe under fan-out)."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from refgate.testing import KeyedChatModel, tool_call
from refgate.tools.web_providers import SnapshotCorpus

PAGES = {
    "https://example.org/tunnel/history": (
        "Aurora tunnel history",
        "The Aurora rail tunnel opened to passenger traffic in March 1998 after nine years of "
        "construction. The tunnel is 14.2 kilometres long and runs beneath the Keller range. "
        "Its construction cost overran the original budget by 38 percent.",
    ),
    "https://news.example.com/aurora-traffic": (
        "Aurora tunnel traffic doubles",
        "Freight traffic through the Aurora tunnel doubled between 2010 and 2020 according to "
        "the operator's annual report. Passenger numbers fell slightly over the same decade. "
        "The operator attributes the freight growth to the new container terminal.",
    ),
    "https://www.example.net/aurora/safety/": (
        "Aurora tunnel safety review",
        "A 2019 safety review found that the Aurora tunnel's ventilation system met the national "
        "standard. The review recommended a second emergency exit by 2025. No fatal accident "
        "has occurred in the tunnel since it opened.",
    ),
    "https://blog.example.io/aurora-costs": (
        "Why the Aurora tunnel cost so much",
        "Geological surprises in the Keller range forced two redesigns of the Aurora tunnel. "
        "Each redesign added roughly a year to the schedule. The blog author worked on the "
        "project as a junior engineer.",
    ),
    "https://example.org/tunnel/maintenance": (
        "Aurora tunnel maintenance plan",
        "The Aurora tunnel closes for four nights each year for track maintenance. The 2024 "
        "maintenance budget for the tunnel was 12 million euros. Rail grinding is done every "
        "second year.",
    ),
}

QUESTION = "What is known about the Aurora rail tunnel?"

ANGLES = [
    {"label": "history", "query": "Aurora tunnel history construction"},
    {"label": "traffic", "query": "Aurora tunnel freight traffic"},
    {"label": "safety", "query": "Aurora tunnel safety ventilation maintenance"},
]


def write_snapshot(folder: Path, pages: dict[str, tuple[str, str]] | None = None) -> Path:
    pages = PAGES if pages is None else pages
    (folder / "pages").mkdir(parents=True, exist_ok=True)
    index = []
    for i, (url, (title, text)) in enumerate(pages.items()):
        name = f"pages/p{i}.txt"
        (folder / name).write_text(text, encoding="utf-8")
        index.append({"url": url, "file": name, "title": title, "date": f"2021-0{i + 1}-01"})
    (folder / "index.json").write_text(json.dumps({"pages": index}), encoding="utf-8")
    return folder


@pytest.fixture
def tiny_web(tmp_path: Path) -> SnapshotCorpus:
    return SnapshotCorpus(write_snapshot(tmp_path / "web"))


def tc(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage(content="", tool_calls=[tool_call(name, args)])


def fenced_body(text: str) -> str:
    """The text inside the first UNTRUSTED fence of a prompt."""
    m = re.search(r"⟦UNTRUSTED:([0-9a-f]+)[^\n]*\n(.*?)\n⟦/UNTRUSTED:\1⟧", text, re.S)
    assert m, "expected fenced web text in the prompt"
    return m.group(2)


def claim_source(prompt: str) -> str:
    """The claim's own source URL in a voter prompt."""
    return re.search(r"\*\*Source:\*\* (\S+)", prompt).group(1)


def claim_quote(prompt: str) -> str:
    """The claim's supporting quote in a voter prompt."""
    return re.search(r'Supporting quote: "(.*)"\n', prompt).group(1)


class Script:
    """Behaviour of each step, keyed on the prompt; every knob is a callable of the prompt."""

    def __init__(self, corpus: SnapshotCorpus, **knobs: Any) -> None:
        self.corpus = corpus
        self.knobs = knobs
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0

    # default behaviours -------------------------------------------------
    def scope(self, text: str) -> Any:
        return tc("Scope", {"question": QUESTION, "summary": "three angles", "angles": ANGLES})

    def search(self, text: str) -> Any:
        urls = re.findall(r"^\d+\. (\S+)", fenced_body(text), re.M)
        return tc(
            "Search",
            {"results": [{"url": u, "title": "t", "relevance": "high"} for u in urls[:3]]},
        )

    def extract(self, text: str) -> Any:
        url = re.search(r"\*\*URL:\*\* (\S+)", text).group(1)
        body = fenced_body(text).split("\n\n", 1)[1]
        sentences = re.split(r"(?<=\.) ", body)
        claims = [
            {"claim": f"claim {k} of {url}", "quote": sentences[k], "importance": "central"}
            for k in range(2)
        ]
        quality = "blog" if "blog." in url else "primary"
        return tc("Extract", {"sourceQuality": quality, "publishDate": None, "claims": claims})

    def verify(self, text: str) -> Any:
        """Support, resting on the claim's own source and its quote (a usable source)."""
        return tc(
            "Verdict",
            {
                "refuted": False,
                "evidence": "the quote says so",
                "confidence": "high",
                "counterSource": claim_source(text),
                "sourceQuote": claim_quote(text),
            },
        )

    def synth(self, text: str) -> Any:
        n = len(re.findall(r"^### \[(\d+)\]", text, re.M))
        return tc(
            "Report",
            {
                "summary": "The Aurora tunnel is long, busy and safe.",
                "findings": [
                    {
                        "claim": "Merged finding",
                        "confidence": "high",
                        "sources": [],
                        "evidence": "several primary sources",
                        "claims": list(range(n)),
                    }
                ],
                "caveats": "Small corpus.",
                "openQuestions": ["What happens after 2025?"],
            },
        )

    def default(self, step: str, text: str) -> Any:
        return getattr(self, step)(text)

    def _dispatch(self, step: str) -> Any:
        def answer(text: str) -> Any:
            with self.lock:
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                if self.knobs.get("hold"):
                    time.sleep(self.knobs["hold"])
                fn = self.knobs.get(step) or getattr(self, step)
                return fn(text)
            finally:
                with self.lock:
                    self.in_flight -= 1

        return answer

    def model(self, latency: float = 0.0) -> KeyedChatModel:
        return KeyedChatModel(
            rules=[
                ("Decompose this research question", self._dispatch("scope")),
                ("## Web Searcher", self._dispatch("search")),
                ("## Source Extractor", self._dispatch("extract")),
                ("## Adversarial Claim Verifier", self._dispatch("verify")),
                ("## Synthesis: research report", self._dispatch("synth")),
            ],
            latency=latency,
        )


def with_args(msg: AIMessage, **args: Any) -> AIMessage:
    """A scripted structured answer with some arguments replaced."""
    call = msg.tool_calls[0]
    return msg.model_copy(update={"tool_calls": [{**call, "args": {**call["args"], **args}}]})


class Helpers:
    tc = staticmethod(tc)
    with_args = staticmethod(with_args)
    fenced_body = staticmethod(fenced_body)
    claim_source = staticmethod(claim_source)
    claim_quote = staticmethod(claim_quote)
    write_snapshot = staticmethod(write_snapshot)
    PAGES = PAGES
    QUESTION = QUESTION


@pytest.fixture
def h() -> type[Helpers]:
    return Helpers


@pytest.fixture
def script(tiny_web: SnapshotCorpus):
    def make(**knobs: Any) -> Script:
        return Script(tiny_web, **knobs)

    return make
