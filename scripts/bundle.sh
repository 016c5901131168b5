#!/usr/bin/env bash
# Makes the bundle scripts/setup.sh --offline installs from: see scripts/bundle.py.
# Usage: scripts/bundle.sh OUT [--platform linux-x86_64|linux-aarch64|macos-arm64]
#        [--python 3.11|3.12] [--gpu] [--models a,b] [--with-tests]
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
[ -x .venv/bin/python ] && PYTHON=.venv/bin/python
PYTHONPATH=. exec "$PYTHON" scripts/bundle.py "$@"
