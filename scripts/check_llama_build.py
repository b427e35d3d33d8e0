"""Show that the built llama.cpp libraries run no instruction beyond their x86-64 baseline.

Disassembles each shared library of the installed ``llama_cpp`` package (or the ``--lib`` files)
with ``objdump`` and counts the instructions of sets beyond the portable baseline (SSE4.2, AVX,
AVX2, FMA, F16C, BMI2):

- AVX-512 (any EVEX-encoded instruction: zmm registers, mask registers, AVX-512VL forms);
- AMX (tile instructions: ``ldtilecfg``, ``tileloadd``, ``tdpb*``, ...);
- AVX-VNNI (the VEX forms of ``vpdpbusd``/``vpdpwssd``, Alder Lake and later).

A library named ``libggml-cpu-<variant>.so`` is a CPU variant that ggml loads only on a CPU that
has its instructions (runtime dispatch, ``GGML_CPU_ALL_VARIANTS``): it is listed, not failed.
Exit 0 when no other library holds such an instruction, 1 otherwise. Files with the same bytes
(a wheel holds ``libx.so``, ``libx.so.0`` and ``libx.so.0.25.3`` as three copies) are
disassembled once and reported on one line.

    python scripts/check_llama_build.py            # the installed llama_cpp
    python scripts/check_llama_build.py --lib x.so # any library
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

#: Legacy prefixes that may stand before an EVEX or VEX prefix byte.
LEGACY_PREFIXES = {"66", "67", "f2", "f3", "2e", "3e", "26", "64", "65", "36", "f0"}
AMX = re.compile(
    r"^(ldtilecfg|sttilecfg|tileloadd|tileloaddt1|tilestored|tilerelease|tilezero|tdp\w+)$"
)
VNNI = re.compile(r"^vpdp(bu|ws)sds?$")
#: ``  4011f6:\t62 f1 7c 48 58 c1 \tvaddps %zmm1,%zmm0,%zmm0``
LINE = re.compile(r"^\s*[0-9a-f]+:\t((?:[0-9a-f]{2} )+)\s*\t(.*)$")
FUNCTION = re.compile(r"^[0-9a-f]+ <(.+)>:$")
#: CPU variants ggml loads at run time only where the CPU has them.
VARIANT = re.compile(r"libggml-cpu-[\w-]+\.so")


def classify(raw: str, text: str) -> str | None:
    """The instruction set beyond the baseline that one disassembled instruction needs."""
    parts = text.split()
    if not parts:
        return None
    mnemonic = parts[1] if parts[0] == "{vex}" and len(parts) > 1 else parts[0]
    if AMX.match(mnemonic):
        return "AMX"
    opcode = raw.split()
    while opcode and opcode[0] in LEGACY_PREFIXES:
        opcode.pop(0)
    if opcode and opcode[0] == "62":  # EVEX: in 64-bit code, 0x62 is always this prefix
        return "AVX-512"
    if VNNI.match(mnemonic):  # not EVEX, so the VEX form
        return "AVX-VNNI"
    return None


def scan(lib: Path) -> tuple[Counter[str], dict[str, Counter[str]]]:
    """Counts per instruction set, and per set the functions holding them."""
    proc = subprocess.run(
        ["objdump", "-d", "--insn-width=16", str(lib)],
        capture_output=True,
        text=True,
        check=True,
    )
    counts: Counter[str] = Counter()
    where: dict[str, Counter[str]] = defaultdict(Counter)
    function = "?"
    for line in proc.stdout.splitlines():
        head = FUNCTION.match(line)
        if head:
            function = head.group(1)
            continue
        m = LINE.match(line)
        if not m:
            continue
        kind = classify(m.group(1), m.group(2))
        if kind:
            counts[kind] += 1
            where[kind][function] += 1
    return counts, where


def same_bytes(libs: list[Path]) -> list[tuple[Path, list[Path]]]:
    """Each distinct file content once, in order: (first path, the other paths with its bytes)."""
    groups: dict[str, tuple[Path, list[Path]]] = {}
    for lib in libs:
        with lib.open("rb") as fh:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
        groups.setdefault(digest, (lib, []))
        if groups[digest][0] != lib:
            groups[digest][1].append(lib)
    return list(groups.values())


def installed_libraries() -> list[Path]:
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("llama_cpp is not installed (pip install llama-cpp-python, or scripts/setup.sh)")
    folder = Path(next(iter(spec.submodule_search_locations)))
    return sorted(p for p in folder.rglob("*.so*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lib", type=Path, action="append", help="a library to check")
    args = parser.parse_args(argv)
    if shutil.which("objdump") is None:
        sys.exit("objdump is not installed (apt-get install binutils)")
    libs = args.lib or installed_libraries()
    failed = False
    for lib, copies in same_bytes(libs):
        counts, where = scan(lib)
        # a variant only when every name of these bytes says so
        dispatched = all(VARIANT.search(p.name) for p in (lib, *copies))
        also = f" (also {', '.join(p.name for p in copies)}: the same bytes)" if copies else ""
        if not counts:
            print(f"{lib}{also}: baseline only (no AVX-512, AMX or AVX-VNNI instruction)")
            continue
        label = "runtime-dispatched CPU variant" if dispatched else "BEYOND THE BASELINE"
        summary = ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items()))
        print(f"{lib}{also}: {label}: {summary}")
        for kind, functions in sorted(where.items()):
            top = ", ".join(f"{f} ({n})" for f, n in functions.most_common(4))
            print(f"  {kind} in {top}")
        failed = failed or not dispatched
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
