"""Where the training loop's time goes, per step (batch 128, 784-128-10 MLP, single-threaded BLAS).

    .venv/bin/python benchmarks/profile_training.py [--rows 60000]

Prints: (1) one epoch of each side split into forward + loss, backward and update, timed inside the
real loop (best of 3 epochs per phase), for the benchmark's model and for a tiny 8-4-10 model whose
matrix products cost almost nothing (so its difference is tapelab's fixed Python cost per step); the
sides are numpy by hand, tapelab, and the same loop on ``minimal_tape.py`` (the floor of any tape);
(2) the whole step at four levels of tapelab's API, for both models (best of 5 epochs): the learner's loop
(layers, the Keras loss, the optimizer); the same primitives run directly with ``tape.gradient`` and the
optimizer; the same with the optimizer's update written by hand into new arrays; and into the gradients' own
arrays. Each level's difference to the one before is what that part of the API costs in the loop;
(3) every recorded op's numpy forward and gradient rule timed alone.
"""

import argparse
import os
import sys
import time
import timeit
from functools import partial

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minimal_tape as mt  # noqa: E402
import reference  # noqa: E402
from bench_training import tapelab_model  # noqa: E402

import tapelab as tl  # noqa: E402
from tapelab.engine.primitives import NUMPY, OPS  # noqa: E402
from tapelab.engine.tape import run  # noqa: E402

PHASES = ("forward + loss", "backward", "update")


def best(fn, number=200, repeat=7):
    """Best time of one call in microseconds."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def numpy_phases(params, X, Y, batch=128, lr=0.1):
    """Seconds spent in each phase over one epoch of the hand-written step."""
    spent = np.zeros(3)
    for start in range(0, len(X), batch):
        x, y = X[start:start + batch], Y[start:start + batch]
        t0 = time.perf_counter()
        _, saved = reference.numpy_mlp_forward(params, x, y)
        t1 = time.perf_counter()
        grads = reference.numpy_mlp_backward(params, x, y, saved)
        t2 = time.perf_counter()
        reference.numpy_sgd(params, grads, lr)
        spent += (t1 - t0, t2 - t1, time.perf_counter() - t2)
    return spent


def tapelab_phases(model, X, Y, batch=128):
    """Seconds spent in each phase over one epoch of the loop a learner writes."""
    optimizer = tl.optimizers.SGD(learning_rate=0.1)
    loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True)
    variables = model.trainable_variables
    spent = np.zeros(3)
    for start in range(0, len(X), batch):
        x, y = X[start:start + batch], Y[start:start + batch]
        t0 = time.perf_counter()
        with tl.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        t1 = time.perf_counter()
        grads = tape.gradient(loss, variables)
        t2 = time.perf_counter()
        optimizer.apply_gradients(zip(grads, variables))
        spent += (t1 - t0, t2 - t1, time.perf_counter() - t2)
    return spent


def minimal_phases(params, X, Y, batch=128, lr=0.1):
    """Seconds spent in each phase over one epoch of the same loop on the minimal tape (the floor of any tape)."""
    model = mt.MLP(params)
    spent = np.zeros(3)
    for start in range(0, len(X), batch):
        x, y = X[start:start + batch], Y[start:start + batch]
        t0 = time.perf_counter()
        tape, loss = model.loss(x, y)
        t1 = time.perf_counter()
        grads = tape.gradient(loss, model.variables)
        t2 = time.perf_counter()
        model.update(grads, lr)
        spent += (t1 - t0, t2 - t1, time.perf_counter() - t2)
    return spent


def phase_table(sizes, rows, epochs=3):
    """Per-step microseconds of each phase: numpy, tapelab and the minimal tape, best of ``epochs`` interleaved
    epochs."""
    rng = np.random.default_rng(0)
    X = rng.random((rows, sizes[0]), dtype=np.float32)
    Y = rng.integers(0, sizes[-1], rows).astype(np.int32)
    steps = -(-rows // 128)
    sides = {"numpy by hand": lambda: numpy_phases(reference.init_mlp(sizes=sizes), X, Y),
             "tapelab": lambda: tapelab_phases(tapelab_model(reference.init_mlp(sizes=sizes), sizes), X, Y),
             "minimal tape": lambda: minimal_phases(reference.init_mlp(sizes=sizes), X, Y)}
    best_of = {}
    for _ in range(epochs):
        for side, phases in sides.items():
            spent = phases()
            best_of[side] = np.minimum(best_of[side], spent) if side in best_of else spent
    return {side: spent / steps * 1e6 for side, spent in best_of.items()}


def print_phases(title, us):
    print(f"{title} (us per step, timed inside the loop):")
    print(f"  {'':22s}" + "".join(f"{p:>16s}" for p in PHASES) + f"{'step':>10s}")
    rows = {**us, "tapelab - numpy": us["tapelab"] - us["numpy by hand"],
            "minimal tape - numpy": us["minimal tape"] - us["numpy by hand"],
            "tapelab - minimal tape": us["tapelab"] - us["minimal tape"]}
    for name, per_phase in rows.items():
        print(f"  {name:22s}" + "".join(f"{u:16.1f}" for u in per_phase) + f"{per_phase.sum():10.1f}")


def rule_table():
    """Every recorded op of one training step: its numpy forward and each gradient rule, timed alone."""
    rng = np.random.default_rng(0)
    x = rng.random((128, 784), dtype=np.float32)
    y = rng.integers(0, 10, 128).astype(np.int32)
    model = tapelab_model(reference.init_mlp(), (784, 128, 10))
    variables = list(model.trainable_variables)
    loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True)
    with tl.GradientTape(persistent=True) as tape:
        loss = loss_fn(y, model(x))
    seeds = {loss._key: (loss, np.ones_like(loss._value))}
    grads = tape._backprop(seeds, variables, on_step=lambda *_: None).grads  # (keeps every gradient)
    print("\nrecorded ops, timed alone (us):")
    for e in tape.entries:
        values = e.values  # (recomputed once, if the tape let some go)
        fwd = best(lambda e=e, values=values: e.op.forward(*values, **e.params))
        rules = []
        for i, rule in enumerate(e.op.vjps):
            if rule is None or not tape.tracks(e.inputs[i]):  # e.g. the input data: no gradient computed
                continue
            g = grads[e.key]
            us = best(lambda r=rule, g=g, e=e: r(NUMPY, g, e.out, *e.kept, **e.rule_params))
            rules.append(f"vjp[{i}] {us:7.1f}")
        print(f"  {e.scope + e.op.name:50s} forward {fwd:7.1f}   " + "   ".join(rules))
    us = best(lambda: tape._backprop(seeds, variables))
    print(f"  {'tape._backprop (all rules + bookkeeping)':50s} {us:7.1f}")


def api_levels(model):
    """The training step at four levels of tapelab's API, each ``step(x, y)``: what each level costs in the loop."""
    variables = list(model.trainable_variables)
    W1, b1, W2, b2 = variables
    optimizer = tl.optimizers.SGD(learning_rate=0.1)
    loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True)
    lr = np.float32(0.1)
    matmul, add, relu, xent, mean = (OPS[name] for name in (
        "matmul", "add", "relu", "sparse_softmax_cross_entropy_with_logits", "reduce_mean"))

    def keras(x, y):  # the loop a learner writes: layers, the loss object, the optimizer
        with tl.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))

    def ops_loss(x, y):  # the same primitives run directly: no layers, no loss object, no checks before run()
        with tl.GradientTape() as tape:
            h = run(relu, (run(add, (run(matmul, (tl.convert_to_tensor(x), W1)), b1)),))
            logits = run(add, (run(matmul, (h, W2)), b2))
            loss = run(mean, (run(xent, (tl.convert_to_tensor(y), logits)),), axis=None, keepdims=False)
        return tape.gradient(loss, variables)

    def ops(x, y):
        optimizer.apply_gradients(zip(ops_loss(x, y), variables))

    def new_arrays(x, y):  # the optimizer's update by hand: w - lr * g into a new array (the tape keeps the old w)
        for var, g in zip(variables, ops_loss(x, y)):
            step = g._value * lr
            var._value = np.subtract(var._value, step, out=step)

    def in_place(x, y):  # and into the gradient's own array, which a learner's code would not see again
        for var, g in zip(variables, ops_loss(x, y)):
            step = np.multiply(g._value, lr, out=g._value)
            var._value = np.subtract(var._value, step, out=step)

    return {"layers, loss, optimizer": keras, "ops, gradient, optimizer": ops,
            "ops, gradient, new arrays": new_arrays, "ops, gradient, in place": in_place}


def level_table(sizes, rows, epochs=5):
    """Per-step microseconds of the whole step at each of ``api_levels``, beside numpy by hand and the minimal tape;
    best of ``epochs`` interleaved epochs."""
    rng = np.random.default_rng(0)
    X = rng.random((rows, sizes[0]), dtype=np.float32)
    Y = rng.integers(0, sizes[-1], rows).astype(np.int32)
    steps = -(-rows // 128)
    levels = api_levels(tapelab_model(reference.init_mlp(sizes=sizes), sizes))
    sides = {"numpy by hand": lambda: numpy_phases(reference.init_mlp(sizes=sizes), X, Y).sum(),
             "minimal tape": lambda: minimal_phases(reference.init_mlp(sizes=sizes), X, Y).sum()}
    for name, step in levels.items():
        sides[f"tapelab: {name}"] = partial(epoch_seconds, step, X, Y)
    best_of = {}
    for _ in range(epochs):
        for side, seconds in sides.items():
            best_of[side] = min(best_of.get(side, np.inf), seconds())
    return {side: s / steps * 1e6 for side, s in best_of.items()}


def epoch_seconds(step, X, Y, batch=128):
    t0 = time.perf_counter()
    for start in range(0, len(X), batch):
        step(X[start:start + batch], Y[start:start + batch])
    return time.perf_counter() - t0


def print_levels(title, us):
    print(f"{title}: the whole step at each level of the API (us per step, in the loop; ratio to numpy):")
    for side, u in us.items():
        print(f"  {side:40s}{u:10.1f}{u / us['numpy by hand']:8.2f}x")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=60_000)
    args = parser.parse_args(argv)
    print_phases("784-128-10 MLP, the benchmark's model", phase_table((784, 128, 10), args.rows))
    print_phases("8-4-10 MLP: the fixed cost per step", phase_table((8, 4, 10), args.rows))
    print()
    print_levels("784-128-10 MLP", level_table((784, 128, 10), args.rows))
    print_levels("8-4-10 MLP", level_table((8, 4, 10), args.rows))
    rule_table()


if __name__ == "__main__":
    main()
