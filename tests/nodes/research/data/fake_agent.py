"""A fake `codex` / `agy` for the tests: prints recorded output, or answers by the prompt.

FAKE_SCRIPT: a JSON list of {"stdout": ..., "exit": ...} played in order (FAKE_COUNTER counts).
FAKE_MODE=smart: answer each research step from the prompt text (codex JSONL or agy text).
FAKE_LOG: append this call's argv as one JSON line.
"""

import json
import os
import re
import sys
from pathlib import Path

argv = sys.argv[1:]
is_codex = Path(sys.argv[0]).name == "codex"
if os.environ.get("FAKE_LOG"):
    with open(os.environ["FAKE_LOG"], "a", encoding="utf-8") as fh:
        fh.write(json.dumps(argv) + "\n")


def codex_events(obj):
    return "\n".join(
        json.dumps(e)
        for e in (
            {"type": "thread.started", "thread_id": "t"},
            {"type": "item.completed", "item": {"id": "i0", "type": "reasoning", "text": "..."}},
            {
                "type": "item.completed",
                "item": {"id": "i1", "type": "agent_message", "text": json.dumps(obj)},
            },
            {"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 1}},
        )
    )


def smart(prompt):
    if "Decompose this research question" in prompt:
        return {
            "question": "q",
            "summary": "s",
            "angles": [
                {
                    "label": "history",
                    "query": "Aurora tunnel history construction",
                    "rationale": None,
                },
                {"label": "traffic", "query": "Aurora tunnel freight traffic", "rationale": None},
                {"label": "safety", "query": "Aurora tunnel safety ventilation", "rationale": None},
            ],
        }
    body = re.search(r"⟦UNTRUSTED:([0-9a-f]+)[^\n]*\n(.*?)\n⟦/UNTRUSTED:\1⟧", prompt, re.S)
    body = body.group(2) if body else ""
    if "## Web Searcher" in prompt:
        urls = re.findall(r"^\d+\. (\S+)", body, re.M)[:2]
        return {
            "results": [
                {"url": u, "title": "t", "snippet": None, "relevance": "high"} for u in urls
            ]
        }
    if "## Source Extractor" in prompt:
        text = body.split("\n\n", 1)[1]
        sentences = re.split(r"(?<=\.) ", text)
        return {
            "sourceQuality": "primary",
            "publishDate": None,
            "claims": [
                {
                    "claim": f"claim {k}: {sentences[k][:40]}",
                    "quote": sentences[k],
                    "importance": "central",
                }
                for k in range(2)
            ],
        }
    if "## Adversarial Claim Verifier" in prompt:
        # a support resting on the claim's own source and its quote
        return {
            "refuted": False,
            "evidence": "supported",
            "confidence": "high",
            "counterSource": re.search(r"\*\*Source:\*\* (\S+)", prompt).group(1),
            "sourceQuote": re.search(r'Supporting quote: "(.*)"\n', prompt).group(1),
        }
    if "## Synthesis" in prompt:
        n = len(re.findall(r"^### \[(\d+)\]", prompt, re.M))
        return {
            "summary": "Smart summary.",
            "caveats": "none",
            "openQuestions": ["?"],
            "findings": [
                {
                    "claim": "F",
                    "confidence": "medium",
                    "sources": [],
                    "evidence": "e",
                    "claims": list(range(n)),
                    "vote": None,
                }
            ],
        }
    return {}


if os.environ.get("FAKE_MODE") == "smart":
    prompt = argv[-1] if is_codex else argv[argv.index("-p") + 1]
    obj = smart(prompt)
    print(codex_events(obj) if is_codex else "Here you go:\n```json\n" + json.dumps(obj) + "\n```")
    sys.exit(0)

script = json.loads(Path(os.environ["FAKE_SCRIPT"]).read_text(encoding="utf-8"))
counter = Path(os.environ["FAKE_COUNTER"])
n = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(n + 1))
step = script[min(n, len(script) - 1)]
sys.stdout.write(step.get("stdout", ""))
sys.stderr.write(step.get("stderr", ""))
sys.exit(step.get("exit", 0))
