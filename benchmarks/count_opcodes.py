"""The Python work of one training step, counted in bytecodes: the same count on every CPU and under any load.

    .venv/bin/python benchmarks/count_opcodes.py [--steps 20] [--top 25] [--tapelab DIR] [--lines walk _record]

Timings on a shared 2-core machine move by several percent from run to run, and the eager step's goals (issue 26)
are about tapelab's Python work per step. This counts the bytecodes the interpreter runs per step (``sys.settrace``
with ``f_trace_opcodes``), per function, for the MNIST-MLP step of ``bench_training.py`` on an 8-4-10 model (the
arrays barely matter: the count is the fixed cost of a step) at three levels:

- numpy by hand (``reference.numpy_mlp_step``);
- the minimal tape (``minimal_tape.py``: a list of bare closures, the floor of any tape in Python);
- tapelab, the loop a learner writes (Dense layers, the Keras loss, ``tape.gradient``, SGD's ``apply_gradients``),
  eager and as a ``tl.function`` (traced before the count: what each call of the traced step runs).

A bytecode is not a fixed cost (a call or an attribute lookup costs more than a jump), so this says where the work
is and whether a change removed some, not how many microseconds it was. ``--lines`` lists the named functions of the
eager step line by line.
"""

import os
import sys

if __name__ == "__main__" and "--tapelab" in sys.argv:  # another checkout's tapelab, counted the same way (A/B)
    sys.path.insert(0, os.path.abspath(sys.argv[sys.argv.index("--tapelab") + 1]))

import argparse  # noqa: E402
import collections  # noqa: E402
import linecache  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_training  # noqa: E402
import minimal_tape  # noqa: E402
import reference  # noqa: E402

import tapelab as tl  # noqa: E402

SIZES, BATCH = (8, 4, 10), 128


def steps():
    """{level: step(i)}, each training its own copy of the same weights on the same batches."""
    rng = np.random.default_rng(0)
    X = rng.random((BATCH * 8, SIZES[0]), dtype=np.float32)
    Y = rng.integers(0, SIZES[2], BATCH * 8).astype(np.int64)
    params = [rng.random((8, 4), dtype=np.float32) - 0.5, np.zeros(4, np.float32),
              rng.random((4, 10), dtype=np.float32) - 0.5, np.zeros(10, np.float32)]

    def batch(i):
        k = (i % 8) * BATCH
        return X[k:k + BATCH], Y[k:k + BATCH]

    by_hand = [p.copy() for p in params]
    minimal = minimal_tape.MLP([p.copy() for p in params])
    model = bench_training.tapelab_model([p.copy() for p in params], SIZES)
    variables = model.trainable_variables
    optimizer = tl.optimizers.SGD(learning_rate=0.1)
    loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True)

    def numpy_step(i):
        reference.numpy_mlp_step(by_hand, *batch(i), 0.1)

    def minimal_step(i):
        tape, loss = minimal.loss(*batch(i))
        minimal.update(tape.gradient(loss, minimal.variables), 0.1)

    def train_step(x, y):
        with tl.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))

    traced = tl.function(train_step)
    return {"numpy by hand": numpy_step, "minimal tape": minimal_step,
            "tapelab (learner's loop)": lambda i: train_step(*batch(i)),
            "tapelab traced": lambda i: traced(*batch(i))}


def count(step, n, lines=()):
    """Bytecodes per step, by (file, function), over ``n`` steps after three to warm up; for a function named in
    ``lines``, by (file, function, line number) instead."""
    counts = collections.Counter()

    def tracer(frame, event, arg):
        frame.f_trace_opcodes = True
        if event == "opcode":
            code = frame.f_code
            where = (code.co_filename, code.co_name)
            counts[where + (frame.f_lineno or code.co_firstlineno,) if code.co_name in lines else where] += 1
        return tracer

    for i in range(3):
        step(i)
    sys.settrace(tracer)
    try:
        for i in range(n):
            step(i)
    finally:
        sys.settrace(None)
    return {where: c / n for where, c in counts.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--top", type=int, default=25, help="tapelab's functions to list")
    parser.add_argument("--tapelab", help="count the tapelab of this checkout instead (read before the import)")
    parser.add_argument("--lines", nargs="+", default=(), metavar="FUNCTION",
                        help="list these functions of the eager step line by line")
    args = parser.parse_args(argv)
    print(f"tapelab from {Path(tl.__file__).parent.parent}, python {sys.version.split()[0]}, numpy {np.__version__}; "
          f"{'-'.join(map(str, SIZES))} MLP, batch {BATCH}: bytecodes per step (mean of {args.steps})")
    eager = "tapelab (learner's loop)"
    counted = {level: count(step, args.steps, args.lines if level == eager else ()) for level, step in steps().items()}
    for level, per in counted.items():
        print(f"  {level:28s} {sum(per.values()):8.0f}")
    for level in (eager, "tapelab traced"):
        functions = collections.Counter()
        for (file, name, *_), c in counted[level].items():
            functions[(Path(file).name, name)] += c
        print(f"{level}: the {args.top} busiest functions (bytecodes per step)")
        for (file, name), c in functions.most_common(args.top):
            print(f"  {c:8.0f}  {file}:{name}")
    if args.lines:
        print(f"{eager}, line by line (bytecodes per step)")
        for (file, name, line), c in sorted((k, c) for k, c in counted[eager].items() if len(k) == 3):
            print(f"  {c:8.1f}  {name}:{line}  {linecache.getline(file, line).strip()[:90]}")


if __name__ == "__main__":
    main()
