"""The four regimes of the engine, each against hand-written numpy in the same run (peers where installed).

    .venv/bin/python benchmarks/bench_regimes.py               # all four; --quick for a smoke run
    .venv/bin/python benchmarks/bench_regimes.py --only memory # one regime: mlp, tiny, blas or memory

1. mlp:    one epoch of a 784-128-10 ReLU MLP (batch 128, SGD, mean softmax cross-entropy) over 60,000
           MNIST-shaped rows: the loop a learner writes (Dense layers, GradientTape, loss object, optimizer).
2. tiny:   a chain of 10,000 tiny (2x2) ops, alternately * and +, recorded and differentiated: us per op.
3. blas:   20 layers of (256 x 512) @ (512 x 512) and tanh, the gradients of all 20 weights: BLAS-bound work.
4. memory: one full-batch step of the MLP on all 60,000 rows (forward, backward, SGD), each side in its own
           process: how much the step adds to the process's peak memory (resident set), over the data.

Ratios are tapelab / numpy (best of ``--repeats``, interleaved). Peers are optional columns, measured only
when their package is installed (none is a tapelab dependency): PyTorch CPU (``torch``), ``mygrad`` and HIPS
``autograd``. BLAS (and torch) run on one thread by default (``--threads``), as in the other benchmarks. The MLP
and tiny regimes also time ``minimal_tape.py``, the least a Python tape can do (no checks, no keys, nothing kept for
a picture): the floor under any tape in Python, not a peer.
"""

import os
import sys

if __name__ == "__main__":
    _threads = sys.argv[sys.argv.index("--threads") + 1] if "--threads" in sys.argv else "1"
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = _threads

import argparse  # noqa: E402
import gc  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_engine  # noqa: E402
import bench_training  # noqa: E402
import minimal_tape  # noqa: E402
import reference  # noqa: E402

import tapelab as tl  # noqa: E402

PEERS = [name for name in ("torch", "mygrad", "autograd") if importlib.util.find_spec(name)]


def best_time(fn, repeats):
    times = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


# --- 1. the MLP epoch -----------------------------------------------------------------------------------------
def mlp(rows, repeats):
    X, Y = reference.mnist_like_data(rows)
    out = {"numpy": [], "tapelab": [], "minimal tape": []}
    loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True)
    if "torch" in PEERS:  # (the one peer fast enough to run a whole epoch beside them)
        out["torch"] = []
    for _ in range(repeats):  # interleaved, fresh weights each time
        params, model = reference.init_mlp(), bench_training.tapelab_model(reference.init_mlp())
        optimizer = tl.optimizers.SGD(learning_rate=0.1)
        out["numpy"].append(best_time(partial(reference.numpy_mlp_epoch, params, X, Y, batch_size=128, lr=0.1), 1))
        out["tapelab"].append(best_time(partial(bench_training.tapelab_epoch, model, optimizer, loss_fn, X, Y), 1))
        floor = reference.init_mlp()  # (trained in place)
        out["minimal tape"].append(best_time(minimal_tape.mlp_epoch(floor, X, Y), 1))
        if not all(np.allclose(a, b, rtol=0, atol=1e-5) for a, b in zip(params, floor)):  # (NaN fails too)
            raise AssertionError("the minimal tape's epoch must end with the hand-written one's weights")
        if "torch" in out:
            out["torch"].append(best_time(_torch_mlp_epoch(X, Y), 1))
    return {side: min(times) for side, times in out.items()}, "s per epoch"


def _torch_mlp_epoch(X, Y, batch_size=128):
    """The same epoch in PyTorch (a function to time)."""
    step = _torch_mlp_step()
    import torch

    xt, yt = torch.from_numpy(X), torch.from_numpy(Y.astype(np.int64))

    def epoch():
        for start in range(0, len(X), batch_size):
            step(xt[start:start + batch_size], yt[start:start + batch_size])

    return epoch


def _torch_mlp_step():
    """``step(x, y)``: one SGD step of the MLP in PyTorch, from the reference's weights, as its tutorials write it."""
    import torch

    torch.set_num_threads(int(os.environ.get("OPENBLAS_NUM_THREADS", "1")))
    w1, b1, w2, b2 = [torch.tensor(p, requires_grad=True) for p in reference.init_mlp()]
    optimizer = torch.optim.SGD([w1, b1, w2, b2], lr=0.1)

    def step(x, y):
        optimizer.zero_grad()
        logits = torch.relu(x @ w1 + b1) @ w2 + b2
        torch.nn.functional.cross_entropy(logits, y).backward()
        optimizer.step()

    return step


# --- 2. tiny ops ---------------------------------------------------------------------------------------------
def tiny(ops, repeats):
    out = {"numpy": min(bench_engine.numpy_tiny_chain(ops) for _ in range(repeats)),
           "tapelab": sum(min((bench_engine.tiny_chain(ops) for _ in range(repeats)), key=sum)),
           "minimal tape": min(minimal_tape.tiny_chain(ops) for _ in range(repeats))}
    for peer in PEERS:
        out[peer] = min(_tiny_peer(peer, ops) for _ in range(repeats))
    return out, "us per op, forward + backward"


def _tiny_peer(peer, n):
    a0, b0 = np.full((2, 2), 1.0001, np.float32), np.full((2, 2), 0.001, np.float32)
    start = time.perf_counter()
    if peer == "torch":
        import torch

        x = torch.ones((2, 2), requires_grad=True)
        a, b = torch.from_numpy(a0), torch.from_numpy(b0)
        y = x
        for _ in range(n // 2):
            y = y * a + b
        y.sum().backward()
    elif peer == "mygrad":
        import mygrad

        x = mygrad.tensor(np.ones((2, 2), np.float32))
        y = x
        for _ in range(n // 2):
            y = y * a0 + b0
        y.sum().backward()
    else:
        from autograd import grad

        def chain(x):
            y = x
            for _ in range(n // 2):
                y = y * a0 + b0
            return y.sum()

        grad(chain)(np.ones((2, 2), np.float32))
    return (time.perf_counter() - start) / n * 1e6


# --- 3. the BLAS-bound chain -----------------------------------------------------------------------------------
def blas(layers, repeats, batch=256, width=512):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, width)).astype(np.float32)
    weights = [(rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32) for _ in range(layers)]
    variables = [tl.Variable(w) for w in weights]

    def by_hand():
        acts = [x]
        for w in weights:
            acts.append(np.tanh(acts[-1] @ w))
        g = np.ones_like(acts[-1])  # d sum / d out
        grads = [None] * layers
        for k in reversed(range(layers)):
            dz = g * (1 - acts[k + 1] * acts[k + 1])  # tanh' = 1 - tanh^2
            grads[k] = acts[k].T @ dz
            g = dz @ weights[k].T
        return grads

    def with_tape():
        with tl.GradientTape() as tape:
            a = x
            for v in variables:
                a = tl.tanh(tl.matmul(a, v))
            loss = tl.reduce_sum(a)
        return tape.gradient(loss, variables)

    sides = {"numpy": by_hand, "tapelab": with_tape}
    for peer in PEERS:
        sides[peer] = _blas_peer(peer, x, weights)
    out = {name: [] for name in sides}
    for _ in range(repeats):
        for name, fn in sides.items():
            out[name].append(best_time(fn, 1))
    return {name: min(times) for name, times in out.items()}, "s per forward + backward"


def _blas_peer(peer, x, weights):
    if peer == "torch":
        import torch

        xt, ws = torch.from_numpy(x), [torch.tensor(w, requires_grad=True) for w in weights]

        def run():
            a = xt
            for w in ws:
                a = torch.tanh(a @ w)
            return torch.autograd.grad(a.sum(), ws)
    elif peer == "mygrad":
        import mygrad

        def run():
            ws = [mygrad.tensor(w) for w in weights]
            a = x
            for w in ws:
                a = mygrad.tanh(mygrad.matmul(a, w))
            a.sum().backward()
            return [w.grad for w in ws]
    else:
        import autograd.numpy as anp
        from autograd import grad

        def loss(ws):
            a = x
            for w in ws:
                a = anp.tanh(anp.dot(a, w))
            return anp.sum(a)

        def run():
            return grad(loss)(weights)
    return run


# --- 4. memory of one full-batch step, each side in its own process ---------------------------------------------
def memory(rows, repeats):
    out = {}
    for side in ["numpy", "tapelab"] + [p for p in PEERS if p == "torch"]:
        runs = [json.loads(subprocess.run([sys.executable, __file__, "--memory-side", side, "--rows", str(rows)],
                                          capture_output=True, text=True, check=True, env=os.environ).stdout)
                for _ in range(max(1, repeats // 2))]
        out[side] = min(r["mib"] for r in runs)
    return out, "MiB added by the step over the data"


def _rss_kib(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


def memory_side(side, rows):
    X, Y = reference.mnist_like_data(rows)
    params = reference.init_mlp()
    if side == "numpy":
        def step():
            reference.numpy_mlp_step(params, X, Y, lr=0.1)
    elif side == "tapelab":
        model = bench_training.tapelab_model(params)
        optimizer = tl.optimizers.SGD(learning_rate=0.1)
        loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True)

        def step():
            with tl.GradientTape() as tape:
                loss = loss_fn(Y, model(X))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return tape  # what a learner's cell keeps alive afterwards
    else:
        import torch

        step = partial(_torch_mlp_step(), torch.from_numpy(X), torch.from_numpy(Y.astype(np.int64)))
    gc.collect()
    before = _rss_kib("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak (VmHWM) to the current resident set
    kept = step()
    peak = _rss_kib("VmHWM")
    del kept
    print(json.dumps({"side": side, "mib": (peak - before) / 1024}))


REGIMES = {"mlp": mlp, "tiny": tiny, "blas": blas, "memory": memory}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", default="1", help="BLAS threads (set before numpy loads; default 1)")
    parser.add_argument("--only", choices=sorted(REGIMES), action="append")
    parser.add_argument("--memory-side", help=argparse.SUPPRESS)
    parser.add_argument("--rows", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    rows = args.rows or (6_000 if args.quick else 60_000)
    if args.memory_side:
        return memory_side(args.memory_side, rows)
    repeats = 2 if args.quick else args.repeats
    sizes = {"mlp": rows, "tiny": 2_000 if args.quick else 10_000, "blas": 4 if args.quick else 20, "memory": rows}
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} cpus, BLAS threads "
          f"{os.environ.get('OPENBLAS_NUM_THREADS')}, OPENBLAS_CORETYPE {os.environ.get('OPENBLAS_CORETYPE', '-')}, "
          f"peers: {', '.join(PEERS) or 'none installed'}; best of {repeats}")
    for name in args.only or list(REGIMES):
        figures, unit = REGIMES[name](sizes[name], repeats)
        cells = ", ".join(f"{side} {value:.4g}" + ("" if side == "numpy" else f" ({value / figures['numpy']:.2f}x)")
                          for side, value in figures.items())
        print(f"{name:7s} {cells} ({unit}; ratios to numpy)")


if __name__ == "__main__":
    main()
