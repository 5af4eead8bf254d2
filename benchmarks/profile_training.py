"""Where the training loop's time goes, per step (batch 128, 784-128-10 MLP, single-threaded BLAS).

    .venv/bin/python benchmarks/profile_training.py [--rows 60000]

Prints: (1) one epoch of each side split into forward + loss, backward and update, timed inside the
real loop (best of 3 epochs per phase), for the benchmark's model and for a tiny 8-4-10 model whose
matrix products cost almost nothing (so its difference is tapelab's fixed Python cost per step); the
sides are numpy by hand, tapelab, and the same loop on ``minimal_tape.py`` (the floor of any tape);
(2) every recorded op's numpy forward and gradient rule timed alone.
"""

import argparse
import os
import sys
import time
import timeit

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minimal_tape as mt  # noqa: E402
import reference  # noqa: E402
from bench_training import tapelab_model  # noqa: E402

import tapelab as tl  # noqa: E402
from tapelab.engine.primitives import NUMPY  # noqa: E402

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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=60_000)
    args = parser.parse_args(argv)
    print_phases("784-128-10 MLP, the benchmark's model", phase_table((784, 128, 10), args.rows))
    print_phases("8-4-10 MLP: the fixed cost per step", phase_table((8, 4, 10), args.rows))
    rule_table()


if __name__ == "__main__":
    main()
