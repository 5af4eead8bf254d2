# Sourced by scripts/lab.sh and scripts/test.sh: make .venv with tapelab and the extras the caller names
# (EXTRAS=lab for the lessons, EXTRAS=lab,test for the test suite), from nothing.
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi; }
apt_install() {  # apt_install PACKAGE... (only where we may: root or sudo on Debian/Ubuntu)
  command -v apt-get >/dev/null || return 1
  [ -f /tmp/.tapelab-apt-updated ] || { as_root apt-get update -q >/dev/null && touch /tmp/.tapelab-apt-updated; } || return 1
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null
}

if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  echo "== installing python3-venv"; apt_install python3-venv python3-pip
fi

VENV=.venv
EXTRAS=${EXTRAS:-lab}
hash=$(sha1sum < pyproject.toml | cut -c1-12)
stamp="$VENV/.installed-$hash-${EXTRAS//,/-}"
installed() {  # whether a stamp of this pyproject names every extra asked for (the test suite's lab,test has lab)
  local f have extra
  for f in "$VENV/.installed-$hash-"*; do
    [ -f "$f" ] || continue
    have="-${f#"$VENV/.installed-$hash-"}-"
    for extra in ${EXTRAS//,/ }; do [[ "$have" == *"-$extra-"* ]] || continue 2; done
    return 0
  done
  return 1
}
if ! installed; then
  echo "== installing tapelab with its extras [$EXTRAS] into $VENV"
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q -e ".[$EXTRAS]"
  find "$VENV" -maxdepth 1 -name '.installed-*' ! -name ".installed-$hash-*" -delete  # stamps of an older pyproject
  touch "$stamp"
fi
export PATH="$PWD/$VENV/bin:$PATH"

# Graphviz: the system `dot` where we can install it; otherwise the graphviz-pure wheel (already in the venv)
# renders, so every user has a working `dot` without root.
if ! command -v dot >/dev/null; then
  apt_install graphviz || echo "== no system Graphviz (not root): tapelab renders with graphviz-pure"
fi
