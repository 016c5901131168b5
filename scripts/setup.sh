#!/usr/bin/env bash
# Installs localeval and its models into this checkout: .venv/, models/.
# Safe to re-run: every step skips what is already in place.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    "$PYTHON" -m venv .venv
fi
PIP=(.venv/bin/python -m pip --disable-pip-version-check)

# PyTorch: the CPU build. An unpinned "torch" would pull a multi-GB CUDA build.
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
    echo "setup: installing torch (CPU build)"
    "${PIP[@]}" install --quiet "torch==2.13.0"
fi

# llama-cpp-python compiled for a portable x86-64 feature set. A native build uses AMX on
# CPUs that report it and then crashes in llama_decode; a wheel cached from such a build
# stays bad, so a build that lists AMX is thrown away and rebuilt without the cache.
LLAMA_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF"
llama_ok() {
    .venv/bin/python - <<'PY' 2>/dev/null
import llama_cpp, sys
info = llama_cpp.llama_print_system_info().decode()
sys.exit(1 if ("AMX_INT8 = 1" in info or "AMX = 1" in info) else 0)
PY
}
if ! llama_ok; then
    if [ "$(uname -m)" = "x86_64" ]; then
        export CMAKE_ARGS="${CMAKE_ARGS:-$LLAMA_FLAGS}"
    fi
    echo "setup: building llama-cpp-python (about 5 minutes on 2 cores)"
    "${PIP[@]}" install --quiet "llama-cpp-python==0.3.36" || true
    if ! llama_ok; then
        "${PIP[@]}" install --quiet --force-reinstall --no-deps --no-cache-dir "llama-cpp-python==0.3.36"
        llama_ok || { echo "setup: llama-cpp-python still reports AMX; see README" >&2; exit 1; }
    fi
fi

echo "setup: installing localeval"
"${PIP[@]}" install --quiet -e ".[test]"

# Headless Chromium from Debian's packages: the HTML report's browser test opens the report
# in it (playwright drives this binary; no browser is downloaded from anywhere else).
# LOCALEVAL_SKIP_BROWSER=1 skips it where only evaluation is wanted.
if [ ! -x /usr/bin/chromium ] && [ -z "${LOCALEVAL_SKIP_BROWSER:-}" ]; then
    if command -v apt-get >/dev/null 2>&1; then
        SUDO=()
        [ "$(id -u)" -ne 0 ] && SUDO=(sudo -n)
        echo "setup: installing Chromium (apt) for the HTML report's browser test"
        APT_LOG="$(mktemp)"
        if { "${SUDO[@]}" apt-get update -qq \
             && "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
           } >"$APT_LOG" 2>&1; then
            rm -f "$APT_LOG"
        else
            echo "setup: could not install Chromium (log: $APT_LOG); the browser test will fail" >&2
        fi
    else
        echo "setup: no apt-get: install Chromium as /usr/bin/chromium (or set" \
             "LOCALEVAL_CHROMIUM) for the HTML report's browser test" >&2
    fi
fi

echo "setup: provisioning models (sha256-checked)"
.venv/bin/python scripts/provision_models.py
