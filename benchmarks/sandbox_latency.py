"""Sandbox latency: RunPython round trips, warm and cold, and the worker's memory.

Measures ``run_python`` end to end (AST check, sandbox run, refs issued) for two snippets:

- trivial: ``print(1)``
- groupby: a pandas groupby over the sample workspace's macrodata, emitted as a tableRef

warm = the warm template is already running (a fresh forked child per call);
cold = the pool is shut down first, so the call includes starting bubblewrap, importing
pandas/numpy and preloading the datasets. For scale, the same snippets run as a plain
``python -c`` subprocess (no sandbox, no warm worker) are shown alongside.

Targets (issue 4): warm <= 150 ms, cold <= 1.5 s. Run: ``python benchmarks/sandbox_latency.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from refgate.config import Settings
from refgate.tools.run_python import _mounts, run_python
from refgate.tools.sandbox.host import get_worker, shutdown_pool
from refgate.workspace import load_workspace

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "us-macro"

SNIPPETS = {
    "trivial": "print(1)",
    "groupby": (
        'df = datasets["macro"]\n'
        'g = df.groupby("year")[["realgdp", "unemp"]].mean()\n'
        'emit_result(table=g.tail(5), sources=["macro"])\n'
    ),
}

PLAIN = {
    "trivial": "print(1)",
    "groupby": (
        "import pandas as pd\n"
        f"df = pd.read_csv({str(SAMPLE / 'data' / 'statsmodels_macrodata.csv')!r})\n"
        'g = df.groupby("year")[["realgdp", "unemp"]].mean()\n'
        "print(g.tail(5))\n"
    ),
}


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.1f}"


def _p90(values: list[float]) -> str:
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))] * 1000:.1f}"


def _timed_call(code: str, ws, settings) -> float:
    t0 = time.perf_counter()
    result = run_python(code, workspace=ws, settings=settings)
    elapsed = time.perf_counter() - t0
    if not result.ok:
        raise SystemExit(f"benchmark snippet failed: {result.error}")
    return elapsed


def _wait_warm(mode: str, ws, limit: float = 30.0) -> None:
    """Wait until the template has finished its idle warm-up (steady state)."""
    worker = get_worker(mode, _mounts(ws))
    deadline = time.monotonic() + limit
    while not worker.stats().get("warm") and time.monotonic() < deadline:
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm", type=int, default=30, help="warm calls per snippet")
    parser.add_argument("--cold", type=int, default=5, help="cold calls per snippet")
    parser.add_argument("--mode", choices=("bwrap", "rlimits"), default="bwrap")
    args = parser.parse_args()

    ws = load_workspace(SAMPLE)
    settings = Settings(sandbox=args.mode)
    load = os.getloadavg()[0]
    print(f"# sandbox latency: mode={args.mode}, {os.cpu_count()} cores, load avg {load:.2f}")
    print(f"# python {sys.version.split()[0]}; warm n={args.warm}, cold n={args.cold}")

    rows = []
    for name, code in SNIPPETS.items():
        cold = []
        for _ in range(args.cold):
            shutdown_pool()
            cold.append(_timed_call(code, ws, settings))
        _timed_call(code, ws, settings)  # settle
        _wait_warm(args.mode, ws)
        warm = [_timed_call(code, ws, settings) for _ in range(args.warm)]
        plain = []
        for _ in range(args.cold):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", PLAIN[name]], check=True, capture_output=True)
            plain.append(time.perf_counter() - t0)
        rows.append((name, warm, cold, plain))

    worker = get_worker(args.mode, _mounts(ws))
    stats = worker.stats()
    print()
    print(
        "| snippet | warm median (ms) | warm p90 (ms) | cold median (ms) | plain `python -c` (ms) |"
    )
    print("|---|---|---|---|---|")
    for name, warm, cold, plain in rows:
        print(f"| {name} | {_ms(warm)} | {_p90(warm)} | {_ms(cold)} | {_ms(plain)} |")
    print()
    print(
        f"worker template: RSS {stats['rss_kb'] / 1024:.0f} MiB, peak {stats['hwm_kb'] / 1024:.0f} MiB;"
        f" largest call process peak RSS {stats['children_maxrss_kb'] / 1024:.0f} MiB;"
        f" template ready after {worker.ready.get('init_s', 0):.2f} s"
        f" (pandas/numpy import {worker.ready.get('import_s', 0):.2f} s)"
    )
    warm_ok = all(statistics.median(w) <= 0.150 for _, w, _, _ in rows)
    cold_ok = all(statistics.median(c) <= 1.5 for _, _, c, _ in rows)
    print(
        f"targets: warm <= 150 ms {'met' if warm_ok else 'MISSED'}; "
        f"cold <= 1.5 s {'met' if cold_ok else 'MISSED'}"
    )
    shutdown_pool()


if __name__ == "__main__":
    main()
