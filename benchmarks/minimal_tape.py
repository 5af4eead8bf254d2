"""The least a Python gradient tape can do: a floor to hold tapelab's figures against, not a peer.

Each op appends (output, inputs, backward) to a list, where backward(g) gives one gradient per input (None for an
input that needs none, such as the data); the backward pass walks the list in reverse and adds up gradients per
tensor. There is nothing else: no dtype or shape checks, no error messages, no tensor keys, no scopes, nothing kept
for a picture, and the weights are updated in place. It records the same ops as tapelab's training step (matmul,
add, relu, sparse softmax cross-entropy, mean). What tapelab costs above this line is what its teaching features
cost; what this costs above hand-written numpy is the price of any tape in Python.

    .venv/bin/python benchmarks/bench_regimes.py --only mlp --only tiny   # (the "minimal tape" column)
    .venv/bin/python benchmarks/profile_training.py                      # (its row, per phase)
"""

import time

import numpy as np


class Value:
    """A tensor: an array, and whether a gradient must reach it (data and constants need none)."""

    __slots__ = ("v", "needs_grad")

    def __init__(self, v, needs_grad=True):
        self.v, self.needs_grad = v, needs_grad

    def __mul__(self, other):  # d(x*y) = (g*y, g*x)
        x, y = self.v, other.v
        return _record(Value(x * y), (self, other),
                       lambda g: (g * y if self.needs_grad else None, g * x if other.needs_grad else None))

    def __add__(self, other):  # d(x+y) = (g, g) (same shapes: no broadcasting here)
        return _record(Value(self.v + other.v), (self, other),
                       lambda g: (g if self.needs_grad else None, g if other.needs_grad else None))


class Tape(list):
    """The recorded ops, in order."""

    current = None

    def __enter__(self):
        Tape.current = self
        return self

    def __exit__(self, *exc):
        Tape.current = None

    def gradient(self, target, sources):
        grads = {id(target): np.ones_like(target.v)}
        for out, inputs, backward in reversed(self):
            g = grads.pop(id(out), None)
            if g is None:
                continue
            for t, c in zip(inputs, backward(g)):
                if c is not None:
                    k = id(t)
                    grads[k] = c if k not in grads else grads[k] + c
        return [grads.get(id(s)) for s in sources]


def _record(out, inputs, backward):
    if Tape.current is not None:
        Tape.current.append((out, inputs, backward))
    return out


def matmul(a, b):  # dx = g @ y.T, dy = x.T @ g
    x, y = a.v, b.v
    return _record(Value(x @ y), (a, b),
                   lambda g: (g @ y.T if a.needs_grad else None, x.T @ g if b.needs_grad else None))


def add_bias(a, b):  # db = g summed over the batch
    return _record(Value(a.v + b.v), (a, b), lambda g: (g, g.sum(axis=0)))


def relu(a):  # dx = g * [out > 0]
    out = Value(np.maximum(a.v, 0))
    return _record(out, (a,), lambda g: (g * (out.v > 0),))


def sparse_softmax_cross_entropy(labels, logits):  # loss = log sum exp(z) - z[label]; dz = g * (softmax - one_hot)
    z = logits.v
    shifted = z - z.max(axis=1, keepdims=True)
    log_z = np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    rows = np.arange(len(labels))

    def backward(g):
        d = np.exp(shifted - log_z)
        d[rows, labels] -= 1
        d *= g[:, None]
        return (d,)

    return _record(Value(log_z[:, 0] - shifted[rows, labels]), (logits,), backward)


def mean(a):  # dx = g / n everywhere
    x = a.v
    return _record(Value(np.mean(x)), (a,), lambda g: (np.full(x.shape, g / x.size, x.dtype),))


class MLP:
    """The benchmark's ReLU MLP on this tape, from ``params`` ([W1, b1, W2, b2], updated in place)."""

    def __init__(self, params):
        self.variables = [Value(p) for p in params]

    def loss(self, x, y):
        """The recorded forward pass and mean loss of a batch: (tape, loss)."""
        W1, b1, W2, b2 = self.variables
        with Tape() as tape:
            h = relu(add_bias(matmul(Value(x, needs_grad=False), W1), b1))
            loss = mean(sparse_softmax_cross_entropy(y, add_bias(matmul(h, W2), b2)))
        return tape, loss

    def update(self, grads, lr):  # w -= lr * g, in place
        for v, g in zip(self.variables, grads):
            v.v -= lr * g


def mlp_epoch(params, X, Y, batch_size=128, lr=0.1):
    """A function ``epoch()``: one epoch of SGD on the MLP from ``params``; returns the last batch's loss."""
    model = MLP(params)

    def epoch():
        loss = None
        for start in range(0, len(X), batch_size):
            tape, loss = model.loss(X[start:start + batch_size], Y[start:start + batch_size])
            model.update(tape.gradient(loss, model.variables), lr)
        return float(loss.v)

    return epoch


def tiny_chain(n):
    """The tiny-op regime as ``bench_engine.tiny_chain`` runs it: n ops on 2x2 arrays, alternately ``* a`` and
    ``+ b`` (constants), recorded and differentiated. Returns us per op."""
    x = Value(np.ones((2, 2), np.float32))
    a = Value(np.full((2, 2), 1.0001, np.float32), needs_grad=False)
    b = Value(np.full((2, 2), 0.001, np.float32), needs_grad=False)
    start = time.perf_counter()
    with Tape() as tape:
        y = x
        for _ in range(n // 2):
            y = y * a
            y = y + b
    (dx,) = tape.gradient(y, [x])
    spent = time.perf_counter() - start
    if not np.allclose(dx, np.float32(1.0001) ** (n // 2), rtol=1e-3):  # d/dx of x * a^k + ... is a^k
        raise AssertionError("the minimal tape's chain gave a wrong gradient")
    return spent / n * 1e6
