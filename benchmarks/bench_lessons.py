"""The lessons' stated times: every lesson run top to bottom in a fresh kernel (nbclient), on a quiet machine and
beside other busy processes, as a class meets them.

    .venv/bin/python benchmarks/bench_lessons.py [--busy 1] [--repeats 1] [--lessons 05 07] [--env KEY=VALUE ...]

The kernel gets no BLAS thread variable (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, MKL_NUM_THREADS and tapelab's
TAPELAB_NUM_THREADS are removed), as on Binder, a hub or a laptop, unless ``--env`` sets one (``--env
OPENBLAS_NUM_THREADS=2`` on a 2-core machine: numpy's BLAS as OpenBLAS starts it, one thread per core, which
tapelab then leaves alone: the column without tapelab's limit). ``--busy N``
also runs each lesson beside N CPU-bound processes (``while True: pass``), started before and stopped after.

What each lesson states: a whole lesson runs in under a minute (README and the lessons' own promise), and a cell
whose text just above says it "takes about N seconds" should take about that long (here: at most 1.5 N).
The notebooks run from a temporary copy: nothing is written to the checkout.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
LESSON_BUDGET_S = 60  # "runs top to bottom in under a minute on a 2-core machine"
STATED = re.compile(r"takes about (\d+) seconds")
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "TAPELAB_NUM_THREADS")


def stated_cells(nb):
    """``{cell index: seconds}`` for code cells whose markdown just above says how long they take."""
    stated, last = {}, None
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            last = STATED.search(cell.source)
        elif cell.cell_type == "code":
            if last:
                stated[i] = int(last[1])
            last = None
    return stated


def cell_seconds(cell):
    times = cell.metadata.get("execution", {})
    start, end = times.get("iopub.execute_input"), times.get("shell.execute_reply")
    if not (start and end):
        return 0.0
    return (datetime.fromisoformat(end.replace("Z", "+00:00"))
            - datetime.fromisoformat(start.replace("Z", "+00:00"))).total_seconds()


def run_lesson(path, env):
    """``(seconds top to bottom, {cell index: seconds})`` of one run in a fresh kernel, in a scratch directory."""
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as scratch:
        start = time.perf_counter()
        NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": scratch}}).execute(
            env={**os.environ, **env})  # (the kernel's environment)
        total = time.perf_counter() - start
    return total, {i: cell_seconds(c) for i, c in enumerate(nb.cells) if c.cell_type == "code"}


def busy(n):
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--busy", type=int, default=1, help="CPU-bound processes beside the busy runs (0: none)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per lesson and condition (the best counts)")
    parser.add_argument("--lessons", nargs="*", default=None, help="lesson numbers, e.g. 05 07 (default: all)")
    parser.add_argument("--env", nargs="*", default=[], metavar="KEY=VALUE", help="set for the kernels")
    args = parser.parse_args()
    for var in THREAD_VARIABLES:
        os.environ.pop(var, None)
    env = dict(item.split("=", 1) for item in args.env)
    lessons = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb")
                     if args.lessons is None or p.name[:2] in args.lessons)
    conditions = [("quiet", 0)] + ([(f"{args.busy} busy", args.busy)] if args.busy else [])
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, kernel environment: "
          f"{' '.join(args.env) or 'no thread variable'}; best of {args.repeats}\n")
    print("| lesson | " + " | ".join(f"{name} (s)" for name, _ in conditions)
          + (" | busy / quiet" if args.busy else "") + " | stated | holds |")
    print("|---|" + "---|" * len(conditions) + ("---|" if args.busy else "") + "---|---|")
    for path in lessons:
        nb = nbformat.read(path, as_version=4)
        claims = stated_cells(nb)
        results = {}
        for name, n in conditions:
            others = busy(n)
            try:
                runs = [run_lesson(path, env) for _ in range(args.repeats)]
            finally:
                for p in others:
                    p.kill()
                    p.wait()
            results[name] = min(runs, key=lambda r: r[0])
        stated = [f"lesson < {LESSON_BUDGET_S} s"] + [f"cell {i} ~{s} s" for i, s in claims.items()]
        worst_total = max(total for total, _ in results.values())
        holds = worst_total < LESSON_BUDGET_S and all(
            cells[i] <= 1.5 * s for _, cells in results.values() for i, s in claims.items())
        row = [path.name[:2]]
        for name, _ in conditions:
            total, cells = results[name]
            row.append(f"{total:.1f}" + "".join(f" (cell {i}: {cells[i]:.1f})" for i in claims))
        if args.busy:
            row.append(f"{results[conditions[1][0]][0] / results['quiet'][0]:.2f}x")
        row += ["; ".join(stated), "yes" if holds else "**no**"]
        print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    if shutil.which("jupyter") is None and not (Path(sys.executable).parent / "jupyter").exists():
        sys.exit("bench_lessons: needs jupyter and nbclient (pip install 'tapelab[lab,test]')")
    main()
