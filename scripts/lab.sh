#!/usr/bin/env bash
# Start JupyterLab on the lessons, installing everything first if needed.
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
exec jupyter lab --notebook-dir=notebooks "$@"
