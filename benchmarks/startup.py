"""Fixed costs off the path: CLI start-up beside a bare interpreter, and BRIEF on an empty memory.

1. ``refgate --version`` and ``refgate --help`` against ``python -c pass``, run alternately in one
   process tree (so machine load hits all of them alike): the median of each, the difference and
   the ratio (target: ``--version`` within 0.5 s of ``python -c pass``).
2. ``--brief``: one ``refgate.ask`` with a scripted model on a fresh copy of the sample workspace
   (empty memory, the default MiniLM store), MiniLM on ONNX Runtime and on torch in turn, each in
   a child process: every pass's time from its ``pass_finished`` event, and whether MiniLM was
   loaded by its end (BRIEF loads nothing; HARVEST stores the run's decisions with vectors).

    .venv/bin/python benchmarks/startup.py [--runs 10] [--brief]
"""

from __future__ import annotations

import argparse
import json
import os
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


def passes_on_empty_memory(runtime: str) -> dict:
    """One scripted ``refgate.ask`` on a fresh copy of the sample workspace (empty memory, the
    default MiniLM store, MiniLM on ``runtime``): each pass's time and whether MiniLM was loaded
    by its end (BRIEF should not load it; HARVEST stores the run's decisions with their vectors)."""
    # deferred: only this part needs the graph stack
    import refgate
    from refgate.testing import ScriptedChatModel

    if runtime == "torch":
        from embeddings_runtime import TorchMiniLM

        import refgate.memory.embeddings as embeddings
        from refgate.model_files import minilm_path

        # torch runs the float model, also where the int8 encoder is asked for
        embeddings.load_minilm = lambda device="cpu", max_seq_length=None, int8=False: TorchMiniLM(
            minilm_path(), max_seq_length
        )
    loaded_module = "sentence_transformers" if runtime == "torch" else "onnxruntime"
    script = [
        '{"lens": "single value", "criteria": []}',
        "No computation needed for this smoke question.",
        "[]",
        "Nothing here is verified.",
        "nothing worth remembering",
    ]
    passes: dict[str, dict] = {}

    def on_event(event: dict) -> None:
        if event.get("event") == "pass_finished" and event.get("pass") not in passes:
            passes[event["pass"]] = {
                "s": event.get("duration_ms", 0) / 1000,
                "loaded": loaded_module in sys.modules,
            }

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
        except Exception as exc:  # the figures are per pass; a later pass may run out of script
            print(f"  (run ended early: {type(exc).__name__})", file=sys.stderr)
        total = time.perf_counter() - started
    return {"passes": passes, "total": total}


def passes_side_by_side() -> None:
    """BRIEF and HARVEST on an empty memory, MiniLM on ONNX Runtime and on torch, each run in a
    child process of its own, one after the other."""
    for runtime in ("onnx", "torch"):
        code = (
            "import json; "
            f"from startup import passes_on_empty_memory; "
            f"print(json.dumps(passes_on_empty_memory({runtime!r})))"
        )
        proc = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
            # the child imports this script's module from its folder, as a script run would
            env={**os.environ, "PYTHONPATH": str(ROOT / "benchmarks")},
        )
        if proc.returncode != 0 or not proc.stdout.strip():
            print(f"{runtime}: failed\n{proc.stderr[-2000:]}")
            continue
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        row = ", ".join(
            f"{name} {p['s']:.2f} s{' (MiniLM loaded)' if p['loaded'] else ''}"
            for name, p in result["passes"].items()
        )
        print(f"MiniLM on {runtime}, empty memory: {row}; whole run {result['total']:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--brief",
        action="store_true",
        help="also time each pass (BRIEF, HARVEST) on an empty memory, MiniLM on ONNX and on torch",
    )
    args = parser.parse_args()
    startup(args.runs)
    if args.brief:
        passes_side_by_side()


if __name__ == "__main__":
    main()
