"""Run TensorFlow's own guides cell by cell with ``import tensorflow as tf`` meaning tapelab (or TF itself).

The guides are not shipped with tapelab (they belong to the TensorFlow and Keras docs). Get them from the
tensorflow/docs repository, ``site/en/guide/``: tensor, variable, autodiff, advanced_autodiff,
basic_training_loops, function and intro_to_graphs (``.ipynb``), or from keras-team/keras-io, ``guides/``
(the ``.py`` sources: functional_api, writing_your_own_callbacks, ...), then::

    python scripts/run_tf_guides.py DIR            # every .ipynb and .py in DIR, run against tapelab
    python scripts/run_tf_guides.py DIR --tf       # the same cells against real TensorFlow (the baseline)
    python scripts/run_tf_guides.py DIR -v         # also print each failing cell's error (-vv: its traceback)
    python scripts/run_tf_guides.py DIR --cell-timeout 120     # stop a cell after 120 s (counted apart)
    python scripts/run_tf_guides.py tests/fixtures/quickstarts     # TF's two quickstarts (kept in the repo)

A ``.py`` guide is either a ``# %% cell K`` script or in keras-io's format: a header docstring, then
markdown as top-level triple-quoted strings between the code; each run of code between two such strings
is a cell, as in the notebooks keras-io makes from them.

Each guide runs in one fresh namespace, cells in order, as a reader pasting them would, in a scratch
working directory (the checkpoints and saved models the guides write land there, not in the checkout). Shell
(``!pip``) and magic (``%``) lines are skipped; matplotlib draws off screen. A cell *runs* when it
raises nothing. A cell that stops with ``tapelab.engine.errors.UnsupportedError`` needs a feature tapelab
leaves to TensorFlow on purpose; any other exception is a gap. A cell that stops on a NameError for a
name an earlier stopped cell should have made counts as that cell's kind of stop (the last column says
how many). A cell stopped by ``--cell-timeout`` counts apart. The table counts each kind.

Against tapelab, ``import tensorflow`` and ``import keras`` (with their submodules: ``tensorflow.keras.layers``,
``keras.layers``, ...) give tapelab and ``tapelab.keras``.
"""

import argparse
import ast
import contextlib
import io
import json
import linecache
import os
import re
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path


def code_cells(path):
    """The code cells of a notebook (or of a ``# %% cell K`` script, or of a keras-io guide), as source strings."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        cells = json.loads(text)["cells"]
        return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                for c in cells if c["cell_type"] == "code"]
    if re.search(r"^# %% cell \d+$", text, flags=re.M):
        return [c for c in re.split(r"^# %% cell \d+\n", text, flags=re.M)[1:]]
    return keras_io_cells(text)


def keras_io_cells(text):
    """The code cells of a keras-io guide (``guides/*.py``): the code between its top-level string statements
    (the header docstring and the markdown blocks), each run of non-blank code one cell."""
    lines = text.splitlines(True)
    markdown = [(node.lineno, node.end_lineno) for node in ast.parse(text).body
                if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)]
    cells, start = [], 1
    for first, last in markdown + [(len(lines) + 1, len(lines) + 1)]:
        code = "".join(lines[start - 1:first - 1]).strip("\n")
        if code.strip():
            cells.append(code + "\n")
        start = last + 1
    return cells


def runnable(source):
    """The cell without shell and magic lines (they need IPython, not TensorFlow)."""
    return "\n".join("" if line.lstrip().startswith(("!", "%")) else line for line in source.splitlines())


def defined_names(source):
    """The names a cell binds at its top level (assignments, def, class, import)."""
    names = set()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return names
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def alias_tensorflow():
    """Make ``import tensorflow as tf`` give tapelab, and ``from tensorflow.keras.layers import Dense`` its
    ``tapelab.keras.layers`` (every loaded tapelab module under the name tensorflow)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import tapelab  # noqa: F401

    for name, module in list(sys.modules.items()):
        if name == "tapelab" or name.startswith("tapelab."):
            sys.modules["tensorflow" + name[len("tapelab"):]] = module


def alias_keras():
    """Make ``import keras`` (Keras 3 as the keras-io guides import it) give ``tapelab.keras``, and
    ``from keras import layers`` or ``import keras.layers`` its submodules (every loaded ``tapelab.keras``
    module under the name keras). A submodule tapelab.keras lacks (``keras.ops``, say) stays missing."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import tapelab.keras  # noqa: F401

    for name, module in list(sys.modules.items()):
        if name == "tapelab.keras" or name.startswith("tapelab.keras."):
            sys.modules["keras" + name[len("tapelab.keras"):]] = module


class CellTimeout(Exception):
    """A cell ran longer than ``--cell-timeout`` seconds."""


def _on_alarm(signum, frame):
    raise CellTimeout("the cell ran past the time limit")


def run_guide(path, verbose=False, timeout=None):
    namespace = {"__name__": "__main__"}
    counts = {"ran": 0, "unsupported": 0, "failed": 0, "timeout": 0, "follow": 0}
    failures = []
    unbound = {}  # name -> the kind of stop of the cell that should have bound it
    for k, source in enumerate(code_cells(path), start=1):
        out = io.StringIO()
        code = runnable(source)
        filename = f"<{path.stem} cell {k}>"
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)  # inspect can read it back
        started = time.perf_counter()
        try:
            if timeout:
                signal.signal(signal.SIGALRM, _on_alarm)
                signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                    exec(compile(code, filename, "exec"), namespace)  # noqa: S102
            finally:
                if timeout:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            counts["ran"] += 1
            for name in defined_names(code):
                unbound.pop(name, None)
        except Exception as exc:  # noqa: BLE001 - counting what stops a cell is the point
            kind = "unsupported" if any(c.__name__ == "UnsupportedError" for c in type(exc).__mro__) else "failed"
            if isinstance(exc, CellTimeout):
                kind = "timeout"
            if isinstance(exc, NameError) and getattr(exc, "name", None) in unbound:
                kind = unbound[exc.name]  # a name an earlier stopped cell should have made: that cell's stop
                counts["follow"] += 1
            counts[kind] += 1
            unbound.update((name, kind) for name in defined_names(code) if name not in namespace)
            failures.append((k, kind, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"))
            if verbose:
                where = _failing_line(exc, filename)
                print(f"--- {path.stem} cell {k} ({kind}, {time.perf_counter() - started:.1f} s)\n{source.strip()}\n"
                      f">>> {where}{failures[-1][2][:300]}", flush=True)
                if verbose > 1:
                    traceback.print_exc()
        finally:
            plt = sys.modules.get("matplotlib.pyplot")  # (only if a cell drew: matplotlib may not be installed)
            if plt is not None:
                plt.close("all")
    return counts, failures


def _failing_line(exc, filename):
    """``line N: <code>`` for the cell's own line the exception passed through last ('' if none)."""
    found = ""
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == filename:
            found = f"line {lineno}: {linecache.getline(filename, lineno).strip()}\n>>> "
    return found


def run_all(paths, verbose=0, timeout=None):
    """Run each guide; a row per guide (name, code cells, counts, seconds) and the totals."""
    rows, totals = [], {"cells": 0, "ran": 0, "unsupported": 0, "failed": 0, "timeout": 0, "follow": 0}
    for path in paths:
        start = time.perf_counter()
        counts, _ = run_guide(path, verbose, timeout)
        cells = counts["ran"] + counts["unsupported"] + counts["failed"] + counts["timeout"]
        rows.append((path.stem, cells, counts, time.perf_counter() - start))
        totals["cells"] += cells
        for key in counts:
            totals[key] += counts[key]
    return rows, totals


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--tf", action="store_true", help="run against real TensorFlow instead")
    parser.add_argument("-v", "--verbose", action="count", default=0)
    parser.add_argument("--cell-timeout", type=float, metavar="SECONDS",
                        help="stop a cell that runs longer (counted in its own column)")
    args = parser.parse_args(argv)
    os.environ.setdefault("MPLBACKEND", "Agg")  # (here, not at import: tests import this module)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if not args.tf:
        alias_tensorflow()
        alias_keras()
    paths = sorted(p.resolve() for p in args.directory.iterdir() if p.suffix in (".ipynb", ".py"))
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="tf-guides-") as scratch:
        os.chdir(scratch)
        try:
            rows, totals = run_all(paths, args.verbose, args.cell_timeout)
        finally:
            os.chdir(here)
    engine = "TensorFlow" if args.tf else "tapelab"
    print(f"| guide ({engine}) | code cells | run | stop: left to TensorFlow | stop: other | stop: time limit "
          "| (stops that follow an earlier stop) | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for name, cells, c, seconds in rows:
        print(f"| {name} | {cells} | {c['ran']} | {c['unsupported']} | {c['failed']} | {c['timeout']} "
              f"| {c['follow']} | {seconds:.1f} |")
    print(f"| all | {totals['cells']} | {totals['ran']} | {totals['unsupported']} | {totals['failed']} "
          f"| {totals['timeout']} | {totals['follow']} | |")


if __name__ == "__main__":
    main()
