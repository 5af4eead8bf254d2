"""Where the training loop's time goes, per step (batch 128, 784-128-10 MLP, single-threaded BLAS).

    .venv/bin/python benchmarks/profile_training.py

Prints: the phases of one tapelab step (forward inside the tape, gradient(), apply_gradients) next
to the hand-written numpy step; every recorded op's numpy forward and VJP rule timed alone; and the
fixed per-step cost measured on a tiny model (where the matrix products cost almost nothing).
"""

import os
import sys
import timeit

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402

import tapelab as tl  # noqa: E402
from tapelab.primitives import NUMPY  # noqa: E402


def best(fn, number=200, repeat=7):
    """Best time of one call in microseconds."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def setup(sizes=(784, 128, 10), rows=128):
    rng = np.random.default_rng(0)
    x = rng.random((rows, sizes[0]), dtype=np.float32)
    y = rng.integers(0, sizes[-1], rows).astype(np.int32)
    params = reference.init_mlp(sizes=sizes)
    tl.layers.clear_session()
    model = tl.layers.Sequential([tl.layers.Dense(sizes[1], activation="relu"), tl.layers.Dense(sizes[2])])
    model(x)
    for var, value in zip(model.trainable_variables, reference.init_mlp(sizes=sizes)):
        var.assign(value)
    return x, y, params, model


def main():
    x, y, params, model = setup()
    variables = model.trainable_variables
    optimizer = tl.optimizers.SGD(0.1)
    loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True)

    def forward():
        with tl.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        return tape, loss

    def forward_gradient():
        tape, loss = forward()
        return tape.gradient(loss, variables)

    def step():
        optimizer.apply_gradients(zip(forward_gradient(), variables))

    grads = forward_gradient()
    W1, b1, W2, b2 = params

    def numpy_forward():
        pre = x @ W1 + b1
        logits = np.maximum(pre, 0) @ W2 + b2
        shifted = logits - logits.max(axis=1, keepdims=True)
        return np.mean(np.log(np.exp(shifted).sum(axis=1)) - shifted[np.arange(len(y)), y])

    t = {
        "numpy step": best(lambda: reference.numpy_mlp_step(params, x, y, 0.1)),
        "numpy forward + loss": best(numpy_forward),
        "tapelab step": best(step),
        "tapelab forward + loss (recording)": best(forward),
        "tapelab forward + gradient()": best(forward_gradient),
        "tapelab apply_gradients (SGD)": best(lambda: optimizer.apply_gradients(zip(grads, variables))),
    }
    print("phases of one step (us):")
    for name, us in t.items():
        print(f"  {name:38s} {us:8.1f}")
    print(f"  {'=> tapelab overhead per step':38s} {t['tapelab step'] - t['numpy step']:8.1f}")

    with tl.GradientTape(persistent=True) as tape:
        loss = loss_fn(y, model(x))
    seeds = {id(loss): (loss, np.ones_like(loss._value))}
    grads_by_id = tape._backprop(seeds, list(variables))
    print("\nrecorded ops, timed alone (us):")
    for e in tape.entries:
        fwd = best(lambda e=e: e.op.forward(*e.values, **e.params))
        rules = []
        for i, rule in enumerate(e.op.vjps):
            if rule is None or not tape.tracks(e.inputs[i]):  # e.g. the input data: no gradient computed
                continue
            g = grads_by_id[id(e.output)]
            us = best(lambda r=rule, g=g, e=e: r(NUMPY, g, e.output._value, *e.values, **e.rule_params))
            rules.append(f"vjp[{i}] {us:7.1f}")
        print(f"  {e.scope + e.op.name:50s} forward {fwd:7.1f}   " + "   ".join(rules))
    us = best(lambda: tape._backprop(seeds, list(variables)))
    print(f"  {'tape._backprop (all rules + bookkeeping)':50s} {us:7.1f}")

    tx, ty, tparams, tmodel = setup(sizes=(8, 4, 10))
    tvars = tmodel.trainable_variables

    def tiny_step():
        with tl.GradientTape() as tape:
            loss = loss_fn(ty, tmodel(tx))
        optimizer.apply_gradients(zip(tape.gradient(loss, tvars), tvars))

    tn, tt = best(lambda: reference.numpy_mlp_step(tparams, tx, ty, 0.1), 2000), best(tiny_step, 2000)
    print(f"\nfixed cost on a tiny 8-4-10 model: numpy {tn:.1f} us, tapelab {tt:.1f} us per step "
          f"(=> ~{tt - tn:.0f} us of Python bookkeeping per step)")


if __name__ == "__main__":
    main()
