"""Build the lessons as a static JupyterLite site: Jupyter in the browser on Pyodide, no server, no install.

    bash scripts/build_lite.sh [OUT]         # default OUT: build/lite; then serve OUT with any web server

What goes in, from the registries only (PyPI and npm), so it builds offline from their caches or mirrors:
- JupyterLab's static build (``jupyterlite-core``) and the Pyodide kernel (``jupyterlite-pyodide-kernel``, which
  runs Pyodide PYODIDE); Pyodide's own files (``pyodide.mjs``, the WebAssembly interpreter, the standard library
  and ``pyodide-lock.json``) from the npm package ``pyodide``;
- the wheels the kernel needs to start (micropip, IPython and what they depend on), from PyPI, put beside Pyodide's
  files with ``pyodide-lock.json`` pointing at them (their sha256 recomputed: PyPI's builds are not Pyodide's);
- tapelab's wheel, built from this checkout (viz.js and the MNIST sample inside), and the pure-Python packages the
  stepper needs that Pyodide does not have (ipywidgets, anywidget, ...), offered to ``%pip install``;
- ``notebooks/``, each with a first cell that installs tapelab.
Every other package in ``pyodide-lock.json`` (numpy, matplotlib, tqdm, ...) is left to Pyodide's CDN (CDN below),
loaded by the learner's browser when a lesson first imports it: the site needs the internet for those, as every
Pyodide site does, and CI (offline) cannot run a lesson in it.
"""

import argparse
import hashlib
import importlib.metadata
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
PYODIDE = "314.0.6"  # the version jupyterlite-pyodide-kernel 0.8 runs (its constants.PYODIDE_VERSION)
PYTHON = "3.14"  # Pyodide PYODIDE's Python
CDN = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE}/full/"
PYODIDE_FILES = ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide.js",
                 "pyodide-lock.json"]
KERNEL_NEEDS = ["micropip", "ipython", "jedi"]  # what the kernel loads from Pyodide's lock to start (+ depends)
NOT_IN_PYODIDE = ["comm", "ipywidgets", "jupyterlab_widgets", "anywidget", "psygnal"]  # pure wheels from PyPI
SETUP_CELL = ("# JupyterLite: tapelab and the widgets come from this site, numpy and matplotlib from Pyodide's CDN\n"
              "%pip install -q tapelab ipywidgets anywidget")


def run(*cmd, **kwargs):
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], check=True, **kwargs)


def pyodide_core(static):
    """Pyodide's own files, from the npm package."""
    with tempfile.TemporaryDirectory() as tmp:
        run("npm", "pack", f"pyodide@{PYODIDE}", "--pack-destination", tmp, "--silent", stdout=subprocess.DEVNULL)
        (tarball,) = Path(tmp).glob("*.tgz")
        with tarfile.open(tarball) as tar:
            for name in PYODIDE_FILES:
                (static / name).write_bytes(tar.extractfile(f"package/{name}").read())


def pypi_wheel(name, version, into):
    """The pure-Python wheel ``name==version`` for Pyodide's Python, from PyPI."""
    with tempfile.TemporaryDirectory() as tmp:
        run(sys.executable, "-m", "pip", "download", f"{name}=={version}", "--no-deps", "--only-binary=:all:",
            "--platform", "any", "--python-version", PYTHON, "--implementation", "py", "-d", tmp, "-q")
        (wheel,) = Path(tmp).glob("*.whl")
        return Path(shutil.copy(wheel, into))


def normal(name):
    return re.sub(r"[-_.]+", "-", name).lower()  # PEP 503: prompt_toolkit is prompt-toolkit


def closure(packages, roots):
    """``roots`` and everything they depend on in ``pyodide-lock.json`` (its keys)."""
    key = {normal(k): k for k in packages}
    seen, todo = set(), list(roots)
    while todo:
        name = key[normal(todo.pop())]
        if name not in seen:
            seen.add(name)
            todo += packages[name]["depends"]
    return sorted(seen)


def lock_for_site(static):
    """Point ``pyodide-lock.json`` at the kernel's wheels beside it, and at Pyodide's CDN for everything else."""
    path = static / "pyodide-lock.json"
    lock = json.loads(path.read_text(encoding="utf-8"))
    packages = lock["packages"]
    shipped = closure(packages, KERNEL_NEEDS)
    for name, package in packages.items():
        if name in shipped:
            if package.get("package_type", "package") != "package" or not package["file_name"].endswith(
                    "-none-any.whl"):
                sys.exit(f"the kernel needs {name}, which is not a pure-Python wheel: it cannot come from PyPI")
            wheel = pypi_wheel(package["name"], package["version"], static)
            package["file_name"] = wheel.name
            package["sha256"] = hashlib.sha256(wheel.read_bytes()).hexdigest()
        else:
            package["file_name"] = CDN + package["file_name"]
    path.write_text(json.dumps(lock), encoding="utf-8")
    return shipped


def site_wheels(into):
    """tapelab's wheel, and the packages Pyodide lacks at the versions installed here: the site's JupyterLab front
    end (its widget extensions) comes from this environment, so the kernel's side must match it."""
    run(sys.executable, "-m", "pip", "wheel", ROOT, "--no-deps", "-q", "-w", into)
    for name in NOT_IN_PYODIDE:
        pypi_wheel(name, importlib.metadata.version(name), into)
    return sorted(into.glob("*.whl"))


def lessons(into):
    for lesson in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(lesson, as_version=4)
        nb.cells.insert(0, nbformat.v4.new_code_cell(SETUP_CELL, metadata={"tags": ["jupyterlite-setup"]}))
        nbformat.write(nb, into / lesson.name)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "build" / "lite")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    with tempfile.TemporaryDirectory(prefix="lite-") as tmp:
        src, wheels, contents = Path(tmp) / "src", Path(tmp) / "wheels", Path(tmp) / "notebooks"
        static = src / "static" / "pyodide"  # jupyterlite-pyodide-kernel takes Pyodide from here
        for d in (static, wheels, contents):
            d.mkdir(parents=True)
        pyodide_core(static)
        shipped = lock_for_site(static)
        offered = site_wheels(wheels)
        lessons(contents)
        if out.exists():
            shutil.rmtree(out)
        run(sys.executable, "-m", "jupyter", "lite", "build", "--lite-dir", src, "--contents", contents,
            "--output-dir", out, *[a for w in offered for a in ("--piplite-wheels", w)], cwd=src)
    print(f"\nJupyterLite site in {out}: Pyodide {PYODIDE}; the kernel's wheels {', '.join(shipped)}; "
          f"for %pip install: {', '.join(w.name for w in offered)}.\n"
          f"Try it: python -m http.server -d {out} 8000, then open http://localhost:8000/lab/index.html")


if __name__ == "__main__":
    main()
