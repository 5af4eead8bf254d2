"""Fetch viz.js (Graphviz compiled to WebAssembly, one ES module with the wasm inside) from the npm registry.

tapelab draws in the browser with it where no ``dot`` program can run (JupyterLab without Graphviz, JupyterLite).
The file is shipped in the wheel as ``tapelab/viz/vizjs/viz.js``, exactly as npm serves it: never edit it by hand.
To move to another release, change VERSION and SHA256 below (``npm view @viz-js/viz``), run this script, and check
that the pictures still match graphviz-pure's (tests/e2e/test_browser_render.py)::

    python scripts/fetch_vizjs.py            # npm pack @viz-js/viz@VERSION, check the sha256, write the file
    python scripts/fetch_vizjs.py --check    # only check the file in the checkout (no network)
"""

import argparse
import hashlib
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VERSION = "3.31.0"  # Graphviz 16.1.0 inside, the version graphviz-pure ports: the same SVG
SHA256 = "b9840ae5b70681356c207510db8820ac3f883607740616455d9c7c47d67ea646"  # of package/dist/viz.js
TARGET = Path(__file__).resolve().parents[1] / "tapelab" / "viz" / "vizjs" / "viz.js"


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def fetch():
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["npm", "pack", f"@viz-js/viz@{VERSION}", "--pack-destination", tmp, "--silent"],
                       check=True, stdout=subprocess.DEVNULL)
        (tarball,) = Path(tmp).glob("*.tgz")
        with tarfile.open(tarball) as tar:
            data = tar.extractfile("package/dist/viz.js").read()
    if sha256(data) != SHA256:
        sys.exit(f"@viz-js/viz@{VERSION} dist/viz.js has sha256 {sha256(data)}, expected {SHA256}: not written")
    TARGET.write_bytes(data)
    print(f"wrote {TARGET} ({len(data):,} bytes, @viz-js/viz@{VERSION}, sha256 {SHA256})")


def check():
    if not TARGET.is_file():
        sys.exit(f"{TARGET} is missing: run python scripts/fetch_vizjs.py")
    found = sha256(TARGET.read_bytes())
    if found != SHA256:
        sys.exit(f"{TARGET} has sha256 {found}, expected {SHA256} (@viz-js/viz@{VERSION}): fetch it again")
    print(f"{TARGET.name}: @viz-js/viz@{VERSION}, sha256 matches")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the file in the checkout")
    args = parser.parse_args(argv)
    check() if args.check else fetch()


if __name__ == "__main__":
    main()
