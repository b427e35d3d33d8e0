"""scripts/check_llama_build.py finds instructions beyond the x86-64 baseline (AVX-512, AMX,
AVX-VNNI) in a library's disassembly, and the installed llama.cpp build holds none of them."""

from __future__ import annotations

import importlib.util
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "check_llama_build.py"

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64" or not (shutil.which("objdump") and shutil.which("cc")),
    reason="needs an x86-64 machine with objdump and a C compiler",
)

LOOP = "void add(float *a, const float *b, int n) { for (int i = 0; i < n; i++) a[i] += b[i]*2; }"
AMX_VNNI = 'void f(void) { __asm__("tilerelease"); __asm__("{vex} vpdpbusd %ymm1,%ymm2,%ymm3"); }'


def build(tmp_path: Path, name: str, source: str, *flags: str) -> Path:
    src = tmp_path / f"{name}.c"
    src.write_text(source, encoding="utf-8")
    lib = tmp_path / name
    subprocess.run(["cc", "-O3", "-shared", "-fPIC", *flags, "-o", str(lib), str(src)], check=True)
    return lib


def check(*libs: Path) -> subprocess.CompletedProcess[str]:
    args = [a for lib in libs for a in ("--lib", str(lib))]
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120
    )


def test_baseline_code_passes_and_avx512_amx_vnni_fail(tmp_path):
    avx2 = build(tmp_path, "libavx2.so", LOOP, "-mavx2", "-mfma")
    assert check(avx2).returncode == 0
    avx512 = build(tmp_path, "libwide.so", LOOP, "-mavx512f", "-mprefer-vector-width=512")
    out = check(avx2, avx512)
    assert out.returncode == 1 and "libwide.so: BEYOND THE BASELINE: AVX-512" in out.stdout
    # a second name of the same bytes is disassembled once, and fails with the first
    copy = tmp_path / "libwide.so.0"
    copy.write_bytes(avx512.read_bytes())
    out = check(avx512, copy)
    assert out.returncode == 1 and out.stdout.count("BEYOND THE BASELINE") == 1
    assert "libwide.so (also libwide.so.0: the same bytes): BEYOND THE BASELINE" in out.stdout
    amx = build(tmp_path, "libamx.so", AMX_VNNI)
    out = check(amx)
    assert out.returncode == 1 and "AMX 1, AVX-VNNI 1" in out.stdout


def test_a_runtime_dispatched_cpu_variant_is_listed_not_failed(tmp_path):
    variant = build(tmp_path, "libggml-cpu-skylakex.so", LOOP, "-mavx512f")
    out = check(variant)
    assert out.returncode == 0 and "runtime-dispatched CPU variant: AVX-512" in out.stdout


@pytest.mark.local_llm
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama_cpp not installed")
def test_the_installed_llama_cpp_runs_no_instruction_beyond_its_baseline():
    out = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "libggml-cpu" in out.stdout
