"""The training loop: one epoch of the real training loop against the hand-written numpy epoch.

    .venv/bin/python benchmarks/bench_training.py [--rows 60000] [--repeats 3] [--threads 1]

Both sides train the same 784-128-10 ReLU MLP from the same Glorot weights on the same 60,000
synthetic MNIST-shaped float32 rows, batch 128, plain SGD (lr 0.1), mean softmax cross-entropy.
tapelab's side is the loop a learner writes: Dense layers, GradientTape, the loss object and the
optimizer. Each side runs ``repeats`` times (interleaved); the best time counts.

BLAS runs single-threaded by default (``--threads``): on a small shared machine multi-threaded
OpenBLAS timings swing by several times from run to run, which hides the thing measured here
(what the tape, layers and optimizer add around the same matrix products).
"""

import argparse
import os
import platform
import sys
import time


def _threads_from_argv(argv):
    # BLAS reads its thread count when numpy is first imported, so this runs before the import
    for k, a in enumerate(argv):
        if a.startswith("--threads"):
            return a.split("=", 1)[1] if "=" in a else argv[k + 1]
    return "1"


if __name__ == "__main__":
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = _threads_from_argv(sys.argv[1:])

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402

import tapelab as tl  # noqa: E402


def tapelab_model(params, sizes=(784, 128, 10)):
    """A Sequential ReLU MLP (784-128-10 by default) whose weights are set to ``params`` ([W1, b1, W2, b2])."""
    tl.layers.clear_session()
    model = tl.layers.Sequential([tl.layers.Dense(sizes[1], activation="relu"), tl.layers.Dense(sizes[2])])
    model(np.zeros((1, sizes[0]), np.float32))  # build
    for var, value in zip(model.trainable_variables, params):
        var.assign(value)
    return model


def tapelab_epoch(model, optimizer, loss_fn, X, Y, batch_size=128):
    """One epoch in order, as a learner writes it; returns the last batch's loss."""
    variables = model.trainable_variables
    loss = None
    for start in range(0, len(X), batch_size):
        x, y = X[start:start + batch_size], Y[start:start + batch_size]
        with tl.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
    return float(loss)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=60_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", default="1", help="BLAS threads (set before numpy loads; default 1)")
    args = parser.parse_args(argv)

    X, Y = reference.mnist_like_data(args.rows)
    times = {"numpy": [], "tapelab": []}
    losses = {}
    for _ in range(args.repeats):
        params = reference.init_mlp()
        t0 = time.perf_counter()
        losses["numpy"] = reference.numpy_mlp_epoch(params, X, Y, batch_size=128, lr=0.1)
        times["numpy"].append(time.perf_counter() - t0)

        model = tapelab_model(reference.init_mlp())
        optimizer = tl.optimizers.SGD(learning_rate=0.1)
        loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True)
        t0 = time.perf_counter()
        losses["tapelab"] = tapelab_epoch(model, optimizer, loss_fn, X, Y)
        times["tapelab"].append(time.perf_counter() - t0)
        final = [v.numpy() for v in model.trainable_variables]

    # same math, same start: the trained weights must agree (float32 round-off only)
    drift = max(float(np.max(np.abs(a - b))) for a, b in zip(final, params))
    best = {k: min(v) for k, v in times.items()}
    ratio = best["tapelab"] / best["numpy"]
    print(f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} cpus, "
          f"BLAS threads {os.environ.get('OPENBLAS_NUM_THREADS', 'default')}, {args.rows} rows, batch 128, "
          f"best of {args.repeats}")
    for k in ("numpy", "tapelab"):
        runs = ", ".join(f"{t:.3f}" for t in times[k])
        print(f"  {k:8s} best {best[k]:.3f} s  (runs: {runs})  last-batch loss {losses[k]:.6f}")
    print(f"  max |weight difference| after the epoch: {drift:.2e}")
    print(f"ratio tapelab / numpy: {ratio:.3f}x (target <= 1.10x)")
    return ratio


if __name__ == "__main__":
    main()
