"""Lesson 10's reference tape: a gradient tape of one's own, in numpy, in about fifty lines (the lesson's solution,
so try the lesson first), and the checks that hold a learner's tape against tapelab's.

It follows the protocol of :mod:`tapelab.viz.foreign` (entries with ``op``, ``inputs``, ``output``, ``vjps``; values
with ``value`` and ``grad``; ``backward(target, on_step)``), so tapelab's listing, drawing and stepper show it.
"""

import numpy as np


class Var:
    """A value on the tape: its number or array (float64), a name if given, and its gradient once backward() ran."""

    def __init__(self, value, name=None):
        self.value = np.asarray(value, dtype=np.float64)
        self.name = name
        self.grad = None


class Entry:
    """One recorded op: its name, the values it read, the value it made, one VJP per input (g -> that input's part)."""

    def __init__(self, op, inputs, output, vjps):
        self.op, self.inputs, self.output, self.vjps = op, inputs, output, vjps


class Tape:
    """Records ops in the order they run; ``backward`` plays them in reverse, summing each value's parts."""

    def __init__(self):
        self.entries = []

    def record(self, op, inputs, value, vjps):
        out = Var(value)
        self.entries.append(Entry(op, inputs, out, vjps))
        return out

    def backward(self, loss, on_step=None):
        for e in self.entries:  # every value starts from 0, the target from dloss/dloss = 1
            for v in [*e.inputs, e.output]:
                v.grad = np.zeros_like(v.value)
        loss.grad = np.ones_like(loss.value)
        for e in reversed(self.entries):
            for x, vjp in zip(e.inputs, e.vjps):
                x.grad = x.grad + vjp(e.output.grad)  # +=: a value read twice gets both parts
            if on_step is not None:
                on_step(e)


class OverwritingTape(Tape):
    """Lesson 10's planted bug: each part replaces the gradient instead of adding to it (= where += belongs)."""

    def backward(self, loss, on_step=None):
        for e in self.entries:
            for v in [*e.inputs, e.output]:
                v.grad = np.zeros_like(v.value)
        loss.grad = np.ones_like(loss.value)
        for e in reversed(self.entries):
            for x, vjp in zip(e.inputs, e.vjps):
                x.grad = vjp(e.output.grad)  # the bug: a value read twice keeps only its last part
            if on_step is not None:
                on_step(e)


def seed_001_example(tape):
    """Lesson 10's example on ``tape``: the mean squared error of x * W + B against y = 5x + 2 on five points, from
    W = 4 and B = 10: ``(loss, W, B, err)``."""
    x = Var(np.linspace(-1, 1, 5), name="x")
    y = Var(5 * np.linspace(-1, 1, 5) + 2, name="y")
    W, B = Var(4.0, name="W"), Var(10.0, name="B")
    err = subtract(tape, add(tape, multiply(tape, x, W), B), y)
    err.name = "err"
    loss = mean(tape, multiply(tape, err, err))
    loss.name = "loss"
    return loss, W, B, err


def unbroadcast(g, shape):
    """Sum ``g`` over the axes broadcasting added or stretched, so it has ``shape`` again."""
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, n in enumerate(shape):
        if n == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    return g


def add(tape, x, y):
    return tape.record("add", [x, y], x.value + y.value,
                       [lambda g: unbroadcast(g, x.value.shape), lambda g: unbroadcast(g, y.value.shape)])


def subtract(tape, x, y):
    return tape.record("subtract", [x, y], x.value - y.value,
                       [lambda g: unbroadcast(g, x.value.shape), lambda g: unbroadcast(-g, y.value.shape)])


def multiply(tape, x, y):
    return tape.record("multiply", [x, y], x.value * y.value,
                       [lambda g: unbroadcast(g * y.value, x.value.shape),
                        lambda g: unbroadcast(g * x.value, y.value.shape)])


def mean(tape, x):
    return tape.record("mean", [x], x.value.mean(), [lambda g: np.full(x.value.shape, g / x.value.size)])


OPS = {"add": add, "subtract": subtract, "multiply": multiply, "mean": mean}  # what random programs are made of


# --- holding a tape against tapelab's ------------------------------------------------------------------------
def random_program(seed, n_ops=6):
    """A random program of ``n_ops`` ops (add, subtract, multiply on a vector and two scalars, read more than once,
    broadcast), ending in a mean: ``(inputs, steps)``, each step ``(op name, index, index)`` into the values so far."""
    rng = np.random.default_rng(seed)
    inputs = [rng.normal(size=3), rng.normal(), rng.normal()]  # a vector, two scalars (broadcast against it)
    steps, n = [], len(inputs)
    for _ in range(n_ops):
        steps.append((str(rng.choice(["add", "subtract", "multiply"])), int(rng.integers(n)), int(rng.integers(n))))
        n += 1
    return inputs, steps


def own_gradients(ops, tape_class, inputs, steps):
    """Run a program on a tape of one's own (``ops``: name -> function(tape, x, y), with "mean"): the gradient of the
    mean of the last value with respect to each input."""
    tape = tape_class()
    values = [Var(v) for v in inputs]
    for name, i, j in steps:
        values.append(ops[name](tape, values[i], values[j]))
    loss = ops["mean"](tape, values[-1])
    tape.backward(loss)
    return [np.zeros_like(v.value) if v.grad is None else np.asarray(v.grad) for v in values[:len(inputs)]]


def tapelab_gradients(inputs, steps):
    """The same program on a tapelab tape (float64): the gradients the tape of one's own must match."""
    import tapelab as tl

    sources = [tl.Variable(v, dtype=tl.float64) for v in inputs]
    ops = {"add": tl.add, "subtract": tl.subtract, "multiply": tl.multiply}
    with tl.GradientTape() as tape:
        values = list(sources)
        for name, i, j in steps:
            values.append(ops[name](values[i], values[j]))
        loss = tl.reduce_mean(values[-1])
    return [np.zeros_like(v.numpy()) if g is None else g.numpy()
            for v, g in zip(sources, tape.gradient(loss, sources))]


def matches_tapelab(ops, tape_class, seeds=(0, 1, 2, 3, 4)):
    """True if the tape of one's own gives tapelab's gradients on random programs (one per seed), else what differs."""
    for seed in seeds:
        inputs, steps = random_program(seed)
        try:
            own = own_gradients(ops, tape_class, inputs, steps)
        except Exception as e:  # (the learner's code: any error is the answer to report)
            return f"random program {seed} stopped with {type(e).__name__}: {e}"
        for k, (mine, theirs) in enumerate(zip(own, tapelab_gradients(inputs, steps))):
            if np.shape(mine) != np.shape(theirs) or not np.allclose(mine, theirs, atol=1e-8):
                program = "; ".join(f"v{3 + n} = {name}(v{i}, v{j})" for n, (name, i, j) in enumerate(steps))
                return (f"random program {seed} ({program}; loss = mean(v{2 + len(steps)})): the gradient of input "
                        f"v{k} is {(np.round(mine, 4) + 0.0).tolist()} on your tape, "
                        f"{(np.round(theirs, 4) + 0.0).tolist()} on "
                        "tapelab's")
    return True
