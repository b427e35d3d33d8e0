"""Fixed costs off the path: CLI start-up beside a bare interpreter, and BRIEF on an empty memory.

1. ``refgate --version`` and ``refgate --help`` against ``python -c pass``, run alternately in one
   process tree (so machine load hits all of them alike): the median of each, the difference and
   the ratio (target: ``--version`` within 0.5 s of ``python -c pass``).
2. ``--brief``: one ``refgate.ask`` with a scripted model on a fresh copy of the sample workspace
   (empty memory, the default MiniLM store): BRIEF's time from its ``pass_finished`` event, and
   whether MiniLM was loaded by then. Run it on two checkouts to compare before and after.

    .venv/bin/python benchmarks/startup.py [--runs 10] [--brief]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: What the ``refgate`` console script runs (``from refgate import _console_main``).
CONSOLE = "import refgate; refgate._console_main()"
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "refgate --version": [sys.executable, "-c", CONSOLE, "--version"],
    "refgate --help": [sys.executable, "-c", CONSOLE, "--help"],
}


def startup(runs: int) -> None:
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(runs):
        for name, cmd in COMMANDS.items():
            started = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)
            times[name].append(time.perf_counter() - started)
    base = statistics.median(times["python -c pass"])
    print(f"start-up, median of {runs} alternating runs:")
    for name, values in times.items():
        med = statistics.median(values)
        print(f"  {name:18s} {med:6.3f} s   {med - base:+6.3f} s   x{med / base:4.1f}")


def brief_on_empty_memory() -> None:
    # deferred: only this part needs the graph stack
    import refgate
    from refgate.testing import ScriptedChatModel

    script = [
        '{"lens": "single value", "criteria": []}',
        "No computation needed for this smoke question.",
        "[]",
        "Nothing here is verified.",
        "nothing worth remembering",
    ]
    events: list[dict] = []
    loaded_in_brief: list[bool] = []

    def on_event(event: dict) -> None:
        events.append(event)
        if event.get("event") == "pass_finished" and event.get("pass") == "brief":
            loaded_in_brief.append("onnxruntime" in sys.modules)

    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "us-macro"
        shutil.copytree(
            ROOT / "examples" / "us-macro", ws, ignore=shutil.ignore_patterns(".refgate")
        )
        started = time.perf_counter()
        try:
            refgate.ask(
                "What was the US unemployment rate in 2009Q3?",
                workspace=ws,
                model=ScriptedChatModel(responses=script * 3),
                on_event=on_event,
            )
        except Exception as exc:  # the figure is BRIEF's time; a later pass may run out of script
            print(f"  (run ended early: {type(exc).__name__})")
        total = time.perf_counter() - started
    brief = next(
        (
            e["duration_ms"]
            for e in events
            if e.get("event") == "pass_finished" and e.get("pass") == "brief"
        ),
        None,
    )
    print(
        f"BRIEF on an empty memory: {brief / 1000 if brief else float('nan'):.2f} s "
        f"(MiniLM loaded by then: {loaded_in_brief[0] if loaded_in_brief else '?'}; "
        f"whole run {total:.1f} s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--brief", action="store_true", help="also time BRIEF on an empty memory")
    args = parser.parse_args()
    startup(args.runs)
    if args.brief:
        brief_on_empty_memory()


if __name__ == "__main__":
    main()
