"""Eager vs traced (``tl.function``), against hand-written numpy in the same run: three regimes.

    .venv/bin/python benchmarks/bench_function.py [--repeats 5] [--no-compile] [--only tiny] [--tapelab DIR]

1. seed 001's linear-regression step (1,000 samples, plain gradient descent), 200 steps: eager and traced;
   both must end with the same W and B.
2. the MNIST-MLP epoch of ``bench_training.py`` (784-128-10 ReLU, batch 128, SGD, 60,000 MNIST-shaped rows; Dense
   layers, the Keras loss and optimizer): numpy by hand, tapelab eager, tapelab with a ``tl.function`` train step
   (its two batch shapes traced before the timing, as TF's guides time a traced step),
   and PyTorch eager and ``torch.compile`` where torch is installed (columns, not dependencies); every tapelab
   epoch must end with the numpy epoch's weights.
3. the tiny-op chain of ``bench_engine.py`` (10,000 2x2 ops, recorded and differentiated): us per op, eager and
   traced (the chain and its gradient as one traced function, timed after its trace).

One BLAS thread (as the other benchmarks). Medians of ``--repeats`` interleaved runs; an epoch's ratio is the median
of each repeat's ratio to the numpy epoch run just before it (a shared machine's speed drifts between repeats).
"""

import os
import sys

if __name__ == "__main__":
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = "1"
    if "--tapelab" in sys.argv:  # another checkout's tapelab, timed the same way (an A/B pair)
        sys.path.insert(0, os.path.abspath(sys.argv[sys.argv.index("--tapelab") + 1]))

import argparse  # noqa: E402
import importlib.util  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402
from statistics import median  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_engine  # noqa: E402
import bench_training  # noqa: E402
import reference  # noqa: E402
from bench_regimes import best_time as best  # noqa: E402

import tapelab as tl  # noqa: E402


# --- 1. seed 001's step --------------------------------------------------------------------------------------
def linear_step(W, B, x, y, lr):
    with tl.GradientTape() as tape:
        loss = tl.reduce_mean(tl.square(x * W + B - y))
    dW, dB = tape.gradient(loss, [W, B])
    W.assign_sub(dW * lr)
    B.assign_sub(dB * lr)
    return loss


def seed_step(repeats, steps=200):
    tl.random.set_seed(0)
    x = tl.random.normal([1000])
    y = x * 5 + 2
    W, B = tl.Variable(5.0), tl.Variable(10.0)
    traced_step = tl.function(linear_step)
    ends = {}

    def train(step, side):
        def go():
            W.assign(5.0)
            B.assign(10.0)
            for _ in range(steps):
                step(W, B, x, y, 0.01)
            ends[side] = (float(W), float(B))
        return go

    traced_step(W, B, x, y, 0.01)  # (traced outside the timing)
    times = {"eager": [], "traced": []}
    for _ in range(repeats):
        times["eager"].append(best(train(linear_step, "eager"), 1))
        times["traced"].append(best(train(traced_step, "traced"), 1))
    assert ends["eager"] == ends["traced"] and traced_step.trace_count == 1, ends
    eager, traced = (median(times[k]) / steps * 1e6 for k in ("eager", "traced"))
    print(f"seed 001 step   eager {eager:.1f} us, traced {traced:.1f} us: traced / eager {traced / eager:.2f} "
          f"(same W, B = {ends['eager'][0]:.4f}, {ends['eager'][1]:.4f})")


# --- 2. the MNIST-MLP epoch ----------------------------------------------------------------------------------
def traced_epoch(model, optimizer, loss_fn):
    variables = model.trainable_variables

    @tl.function
    def train_step(x, y):
        with tl.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
        return loss

    def epoch(X, Y, batch_size=128):
        loss = None
        for start in range(0, len(X), batch_size):
            loss = train_step(X[start:start + batch_size], Y[start:start + batch_size])
        return float(loss)

    def traced(X, Y, batch_size=128):  # each batch shape traced once, then the weights put back: timed traced
        start_weights = [v.numpy() for v in variables]
        for rows in {batch_size, len(X) % batch_size or batch_size}:
            train_step(X[:rows], Y[:rows])
        for v, w in zip(variables, start_weights):
            v.assign(w)
        return epoch
    return traced


def torch_epoch(X, Y, compiled):
    import torch
    torch.set_num_threads(1)
    W1, b1, W2, b2 = (torch.tensor(p, requires_grad=True) for p in reference.init_mlp())
    Xt, Yt = torch.from_numpy(X), torch.from_numpy(Y).long()

    def step(x, y):
        loss = torch.nn.functional.cross_entropy(torch.relu(x @ W1 + b1) @ W2 + b2, y)
        loss.backward()
        with torch.no_grad():
            for p in (W1, b1, W2, b2):
                p -= 0.1 * p.grad
                p.grad = None
        return loss

    step = torch.compile(step) if compiled else step

    def epoch():
        for start in range(0, len(X), 128):
            step(Xt[start:start + 128], Yt[start:start + 128])
    if compiled:
        step(Xt[:128], Yt[:128])  # (compiled outside the timing; the last, smaller batch compiles once more)
        step(Xt[-(len(X) % 128 or 128):], Yt[-(len(X) % 128 or 128):])
    return epoch


def mlp_epoch(repeats, rows, compile_torch):
    X, Y = reference.mnist_like_data(rows)
    loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True)
    times = {"numpy": [], "eager": [], "traced": []}
    peers = {}
    if importlib.util.find_spec("torch"):
        peers["torch eager"] = torch_epoch(X, Y, compiled=False)
        if compile_torch:
            try:
                peers["torch.compile"] = torch_epoch(X, Y, compiled=True)
            except Exception as error:  # (torch.compile needs a working compiler tool chain)
                print(f"torch.compile skipped: {type(error).__name__}: {error}"[:200])
    times.update({name: [] for name in peers})
    for _ in range(repeats):
        params = reference.init_mlp()
        times["numpy"].append(best(partial(reference.numpy_mlp_epoch, params, X, Y, batch_size=128, lr=0.1), 1))
        for side in ("eager", "traced"):
            model = bench_training.tapelab_model(reference.init_mlp())
            optimizer = tl.optimizers.SGD(learning_rate=0.1)
            if side == "eager":
                times[side].append(best(partial(bench_training.tapelab_epoch, model, optimizer, loss_fn, X, Y), 1))
            else:
                times[side].append(best(partial(traced_epoch(model, optimizer, loss_fn)(X, Y), X, Y), 1))
            drift = max(float(np.max(np.abs(v.numpy() - p))) for v, p in zip(model.trainable_variables, params))
            assert drift < 1e-4, (side, drift)
        for name, epoch in peers.items():
            times[name].append(best(epoch, 1))
    # each repeat's sides ran back to back: the median of their ratios to that repeat's numpy epoch
    ratios = {side: median([a / b for a, b in zip(t, times["numpy"])]) for side, t in times.items()}
    print(f"MLP epoch       numpy {median(times['numpy']):.3f} s; " + ", ".join(
        f"{side} {median(t):.3f} s ({ratios[side]:.2f}x)" for side, t in times.items() if side != "numpy"))


# --- 3. the tiny-op chain ------------------------------------------------------------------------------------
def tiny_chain(repeats, n=10_000):
    x = tl.Variable(np.ones((2, 2), np.float32))
    a = tl.constant(np.full((2, 2), 1.0001, np.float32))
    b = tl.constant(np.full((2, 2), 0.001, np.float32))

    @tl.function
    def chain_and_gradient():
        with tl.GradientTape() as tape:
            y = x
            for _ in range(n // 2):
                y = y * a
                y = y + b
        return tape.gradient(y, x)

    chain_and_gradient()  # (traced outside the timing)
    eager = median([sum(bench_engine.tiny_chain(n)) for _ in range(repeats)])
    traced = median([best(chain_and_gradient, 1) for _ in range(repeats)]) / n * 1e6
    numpy = median([bench_engine.numpy_tiny_chain(n) for _ in range(repeats)])
    print(f"tiny-op chain   numpy {numpy:.2f} us/op, eager {eager:.2f} us/op, traced {traced:.2f} us/op "
          "(forward + backward)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rows", type=int, default=60_000)
    parser.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    parser.add_argument("--only", choices=["seed", "mlp", "tiny"], action="append")
    parser.add_argument("--tapelab", help="time the tapelab of this checkout instead (read before the import)")
    args = parser.parse_args(argv)
    only = set(args.only or ["seed", "mlp", "tiny"])
    print(f"tapelab from {Path(tl.__file__).parent.parent}, numpy {np.__version__}, OPENBLAS_CORETYPE "
          f"{os.environ.get('OPENBLAS_CORETYPE', '-')}, medians of {args.repeats}")
    if "seed" in only:
        seed_step(args.repeats)
    if "mlp" in only:
        mlp_epoch(args.repeats, args.rows, not args.no_compile)
    if "tiny" in only:
        tiny_chain(args.repeats)


if __name__ == "__main__":
    main()
