"""The least a Python gradient tape can do: a floor to hold tapelab's figures against, not a peer.

Each op appends (output, inputs, backward closure) to a list; the backward pass walks the list in reverse and adds
up gradients per tensor. There is nothing else: no dtype or shape checks, no error messages, no tensor keys, no
scopes, nothing kept for a picture, and the weights are updated in place. What tapelab costs above this line is
what its teaching features cost; what this costs above hand-written numpy is the price of any tape in Python.

    .venv/bin/python benchmarks/bench_regimes.py --only mlp --only tiny   # (the "minimal tape" column)
"""

import time

import numpy as np


class Value:
    """A tensor: an array, and whether a gradient must reach it (data needs none)."""

    __slots__ = ("v", "needs_grad")

    def __init__(self, v, needs_grad=True):
        self.v, self.needs_grad = v, needs_grad


class Tape(list):
    """The recorded ops: (output, inputs, backward), where backward(g) gives one gradient (or None) per input."""

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


def matmul(a, b):
    x, y = a.v, b.v  # dx = g @ y.T, dy = x.T @ g
    return _record(Value(x @ y), (a, b), lambda g: (g @ y.T if a.needs_grad else None, x.T @ g))


def add_bias(a, b):
    return _record(Value(a.v + b.v), (a, b), lambda g: (g, g.sum(axis=0)))  # db = g summed over the batch


def relu(a):
    out = Value(np.maximum(a.v, 0))
    return _record(out, (a,), lambda g: (g * (out.v > 0),))


def mean_sparse_softmax_cross_entropy(labels, logits):
    z = logits.v
    shifted = z - z.max(axis=1, keepdims=True)
    log_z = np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    rows = np.arange(len(labels))

    def backward(g):  # dlogits = g * (softmax - one_hot) / n
        d = np.exp(shifted - log_z)
        d[rows, labels] -= 1
        d *= g / len(labels)
        return (d,)

    return _record(Value(np.mean(log_z[:, 0] - shifted[rows, labels])), (logits,), backward)


class Dense:
    def __init__(self, kernel, bias, relu=False):
        self.kernel, self.bias, self.relu = Value(kernel), Value(bias), relu

    def __call__(self, x):
        y = add_bias(matmul(x, self.kernel), self.bias)
        return relu(y) if self.relu else y


def mlp_epoch(params, X, Y, batch_size=128, lr=0.1):
    """A function ``epoch()``: one epoch of the benchmark's MLP from ``params`` ([W1, b1, W2, b2]), SGD in place.
    Returns the last batch's loss."""
    W1, b1, W2, b2 = params
    layers = [Dense(W1, b1, relu=True), Dense(W2, b2)]
    variables = [v for layer in layers for v in (layer.kernel, layer.bias)]

    def epoch():
        loss = None
        for start in range(0, len(X), batch_size):
            with Tape() as tape:
                h = Value(X[start:start + batch_size], needs_grad=False)
                for layer in layers:
                    h = layer(h)
                loss = mean_sparse_softmax_cross_entropy(Y[start:start + batch_size], h)
            for v, g in zip(variables, tape.gradient(loss, variables)):
                v.v -= lr * g
        return float(loss.v)

    return epoch


def tiny_chain(n):
    """The tiny-op regime: n ops (alternately * and +) on 2x2 arrays, recorded and differentiated; us per op."""
    x = Value(np.ones((2, 2), np.float32))
    a, b = np.full((2, 2), 1.0001, np.float32), np.full((2, 2), 0.001, np.float32)
    start = time.perf_counter()
    with Tape() as tape:
        y = x
        for _ in range(n // 2):
            y = _record(Value(y.v * a), (y,), lambda g: (g * a,))
            y = _record(Value(y.v + b), (y,), lambda g: (g,))
    tape.gradient(y, [x])
    return (time.perf_counter() - start) / n * 1e6
