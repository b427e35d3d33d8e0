"""refgate from Python: ask a question about a workspace and look at the evidence behind it.

    python examples/api_quickstart.py                      # the sample question and workspace
    python examples/api_quickstart.py "What was real GDP in 2009Q3?" \\
        --workspace examples/us-macro --model anthropic:claude-sonnet-4-5

The model is a LangChain model string (``anthropic:...``, ``ollama:qwen2.5``, ``openai:...``) or a
bare name for the OpenAI-compatible endpoint at ``OPENAI_BASE_URL``; without one, ``REFGATE_MODEL``
applies, else the embedded smoke-test model (``refgate[local]``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import refgate
from refgate.config import ConfigError


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "question", nargs="?", default="What was the US unemployment rate in 2009Q3?"
    )
    parser.add_argument("--workspace", default=str(Path(__file__).parent / "us-macro"))
    parser.add_argument("--model", default=None)
    args = parser.parse_args()

    def progress(event: dict) -> None:
        if event.get("event") == "pass_started":
            print(f"... {event['pass']}", file=sys.stderr)

    try:
        answer = refgate.ask(
            args.question, workspace=args.workspace, model=args.model, on_event=progress
        )
    except ConfigError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    except refgate.RunFailed as exc:
        print(
            f"run failed: {exc} (resume: refgate.ask(None, thread={exc.thread!r}))", file=sys.stderr
        )
        return 1

    print(answer.answer)
    print()
    print("GATE passed:", answer.passed)
    for claim in answer.unverified:
        print(f"not verified: {claim['claim']!r}: {claim['detail']}")
    for ref_id, ref in answer.refs.items():
        if ref_id in answer.answer:
            print(f"cited {ref_id} ({ref.kind}): {ref.title} {ref.payload.get('values', '')}")
    print(answer.usage.summary())
    print("thread:", answer.thread)
    return 0 if answer.passed else 3


if __name__ == "__main__":
    raise SystemExit(main())
