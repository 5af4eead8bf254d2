#!/usr/bin/env bash
# Run the whole test suite (lint, unit tests, lessons, browser test), installing everything first if needed
# (tapelab with its lab and test extras, Graphviz, Chromium, npm).
EXTRAS=lab,test
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
if ! command -v chromium >/dev/null; then
  echo "== installing Debian's chromium for the browser test"
  apt_install chromium || echo "== could not install chromium (needs root): browser tests will be skipped"
fi
if ! command -v npm >/dev/null; then
  echo "== installing Debian's npm for the JupyterLite site test (scripts/build_lite.sh fetches Pyodide from npm)"
  apt_install npm || echo "== could not install npm (needs root): the JupyterLite test will fail"
fi
echo "== ruff"; ruff check .
echo "== pytest"; exec python -m pytest "$@"
