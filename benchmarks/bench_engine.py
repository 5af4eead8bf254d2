"""Engine benchmarks: tapelab side by side with hand-written numpy in the same run.

    .venv/bin/python benchmarks/bench_engine.py            # full size: 60,000 rows, 10,000 tiny ops
    .venv/bin/python benchmarks/bench_engine.py --quick    # a smoke run

(a) One epoch of a 784-128-10 ReLU MLP (softmax cross-entropy, batch 128, plain SGD, float32) on
    synthetic MNIST-shaped rows: the four-step tape recipe written with tapelab ops vs the same
    model differentiated by hand in numpy (benchmarks/reference.py). Best of N, runs interleaved.
(b) A chain of 10,000 tiny (2x2) ops recorded and differentiated: microseconds per op.
BLAS runs on one thread (set OPENBLAS_NUM_THREADS to change it), as in bench_training.py.
"""

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one BLAS thread, fixed before numpy loads: a busy 2-core box can't skew it

import argparse  # noqa: E402
import gc  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import init_mlp, mnist_like_data, numpy_mlp_epoch  # noqa: E402

import tapelab as tl  # noqa: E402


def tapelab_mlp_epoch(variables, X, Y, batch_size=128, lr=0.1):
    """The same epoch as ``numpy_mlp_epoch``, written the TF2 way: tape, loss, gradient, update."""
    W1, b1, W2, b2 = variables
    loss = None
    for start in range(0, len(X), batch_size):
        x = tl.convert_to_tensor(X[start:start + batch_size])  # no copy, like passing numpy to a TF op
        y = tl.convert_to_tensor(Y[start:start + batch_size])
        with tl.GradientTape() as tape:
            h = tl.nn.relu(tl.matmul(x, W1) + b1)
            logits = tl.matmul(h, W2) + b2
            loss = tl.reduce_mean(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grads = tape.gradient(loss, variables)
        for v, g in zip(variables, grads):
            v.assign_sub(lr * g)
    return float(loss)


def time_once(fn):
    gc.collect()
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def bench_mlp(rows, repeats):
    X, Y = mnist_like_data(rows)
    ref_params = init_mlp()
    variables = [tl.Variable(p) for p in init_mlp()]
    numpy_mlp_epoch(ref_params, X[:1280], Y[:1280])  # warm up BLAS and caches
    tapelab_mlp_epoch(variables, X[:1280], Y[:1280])
    t_np, t_tl = [], []
    for _ in range(repeats):  # interleaved, so both see the same machine state
        t, loss_np = time_once(lambda: numpy_mlp_epoch(ref_params, X, Y))
        t_np.append(t)
        t, loss_tl = time_once(lambda: tapelab_mlp_epoch(variables, X, Y))
        t_tl.append(t)
    return min(t_np), min(t_tl), loss_np, loss_tl


def tiny_chain(n):
    x = tl.Variable(np.ones((2, 2), np.float32))
    a = tl.constant(np.full((2, 2), 1.0001, np.float32))
    b = tl.constant(np.full((2, 2), 0.001, np.float32))
    start = time.perf_counter()
    with tl.GradientTape() as tape:
        y = x
        for _ in range(n // 2):
            y = y * a
            y = y + b
    mid = time.perf_counter()
    tape.gradient(y, x)
    end = time.perf_counter()
    return (mid - start) / n * 1e6, (end - mid) / n * 1e6


def numpy_tiny_chain(n):
    """The same chain by hand: forward keeps the intermediates, backward multiplies them back."""
    x = np.ones((2, 2), np.float32)
    a = np.full((2, 2), 1.0001, np.float32)
    b = np.full((2, 2), 0.001, np.float32)
    start = time.perf_counter()
    y = x
    for _ in range(n // 2):
        y = y * a
        y = y + b
    g = np.ones_like(y)
    for _ in range(n // 2):
        g = g * a  # d(y*a)/dy = a; the add passes g through
    return (time.perf_counter() - start) / n * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rows, ops, repeats = (6_400, 2_000, 2) if args.quick else (60_000, 10_000, args.repeats)

    t_np, t_tl, loss_np, loss_tl = bench_mlp(rows, repeats)
    print(f"MLP epoch ({rows} rows, batch 128): numpy {t_np:.3f} s, tapelab {t_tl:.3f} s, "
          f"ratio {t_tl / t_np:.2f}x (target <= 1.10x); last-batch loss numpy {loss_np:.4f} tapelab {loss_tl:.4f}")
    best = min((tiny_chain(ops) for _ in range(repeats)), key=sum)
    ref = min(numpy_tiny_chain(ops) for _ in range(repeats))
    print(f"tiny ops ({ops} x 2x2): forward {best[0]:.2f} us/op + backward {best[1]:.2f} us/op = "
          f"{sum(best):.2f} us/op (target <= 3); bare numpy {ref:.2f} us/op")


if __name__ == "__main__":
    main()
