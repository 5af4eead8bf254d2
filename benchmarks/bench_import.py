"""How long ``import tapelab`` takes: ``python -X importtime -c "import tapelab"``, each run a fresh process.

    .venv/bin/python benchmarks/bench_import.py                     # this checkout, --repeats 15
    .venv/bin/python benchmarks/bench_import.py --against /tmp/old  # and another checkout, runs interleaved

``--against DIR`` compares with another checkout of tapelab (e.g. ``git worktree add /tmp/old <commit>``): its
``tapelab/`` comes first on ``sys.path``, with the same Python and packages. The figure is ``import tapelab``'s
cumulative time as ``-X importtime`` reports it (numpy and threadpoolctl included), best and median of the runs.
"""

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def import_time_us(tree):
    """One fresh process importing tapelab from checkout ``tree``: the cumulative microseconds of ``tapelab``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    run = subprocess.run([sys.executable, "-X", "importtime", "-c", "import tapelab"], env=env,
                         capture_output=True, text=True, check=True, cwd=tree)
    for line in run.stderr.splitlines():  # "import time: self [us] | cumulative | imported package"
        fields = [f.strip() for f in line.removeprefix("import time:").split("|")]
        if len(fields) == 3 and fields[2] == "tapelab":
            return int(fields[1])
    raise RuntimeError(f"no line for tapelab in -X importtime's output of {tree}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--against", type=Path, help="another tapelab checkout to time in the same run")
    args = parser.parse_args()
    trees = {"this checkout": HERE, **({f"{args.against}": args.against.resolve()} if args.against else {})}
    times = {name: [] for name in trees}
    for _ in range(args.repeats):  # interleaved, so a busy moment costs both sides alike
        for name, tree in trees.items():
            times[name].append(import_time_us(tree) / 1000)
    for name, ms in times.items():
        print(f"{name:>24}: import tapelab best {min(ms):.0f} ms, median {statistics.median(ms):.0f} ms "
              f"({args.repeats} runs)")


if __name__ == "__main__":
    main()
