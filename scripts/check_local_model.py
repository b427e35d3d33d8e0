"""One real chat completion through the embedded smoke model (``scripts/setup.sh`` runs it last).

Starts ``llama_cpp.server`` as ``refgate ask`` does, sends one chat completion through the same
OpenAI client refgate uses, and prints the reply and the time. A build this CPU cannot run (SIGILL)
or any other failure prints how the server ended, its log's last lines and the fix, and exits 1.

    .venv/bin/python scripts/check_local_model.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from refgate.api import local_llm


def main() -> int:
    if not local_llm.available():
        print("the embedded model is not installed (refgate[local]); nothing to check")
        return 1
    log = Path(tempfile.gettempdir()) / "refgate-setup-local-llm.log"
    started = time.perf_counter()
    try:
        with local_llm.LocalModelServer(log_path=log) as server:
            # the OpenAI client refgate's models use (langchain-openai depends on it)
            from openai import OpenAI

            client = OpenAI(base_url=server.base_url, api_key="local", max_retries=0, timeout=120)
            asked = time.perf_counter()
            try:
                reply = client.chat.completions.create(
                    model=server.model_name,
                    messages=[{"role": "user", "content": "Say hi in one word."}],
                    max_tokens=8,
                )
            except Exception as exc:  # the server died or dropped the request: say how
                raise local_llm.LocalModelError(
                    f"{type(exc).__name__}: {exc}\n{server.failure_report()}"
                ) from exc
            text = (reply.choices[0].message.content or "").strip()
            took = time.perf_counter() - asked
    except local_llm.LocalModelError as exc:
        print(f"the embedded model failed:\n{exc}", file=sys.stderr)
        return 1
    print(
        f"embedded model OK: replied {text!r} in {took:.2f} s "
        f"({time.perf_counter() - started:.1f} s with start-up)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
