#!/usr/bin/env bash
# Build the lessons as a static JupyterLite site (see scripts/build_lite.py): bash scripts/build_lite.sh [OUT]
# Needs the lab and test extras (jupyterlite-core, jupyterlite-pyodide-kernel) and npm; default OUT: build/lite.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}"
exec "$PYTHON" scripts/build_lite.py "$@"
