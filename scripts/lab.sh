#!/usr/bin/env bash
# Start JupyterLab on the lessons, installing what they need first (tapelab with its lab extra).
EXTRAS=lab
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
root_flag=(); [ "$(id -u)" = 0 ] && root_flag=(--allow-root)  # e.g. in a container
exec jupyter lab --notebook-dir=notebooks "${root_flag[@]}" "$@"
