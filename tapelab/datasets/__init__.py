"""Data for the lessons: a seeded linear-regression set, MNIST (:mod:`tapelab.datasets.mnist`) and batching.

    X, Y = tl.datasets.linear_regression()            # 1000 points on y = 5x + 2
    (x_train, y_train), (x_test, y_test) = tl.datasets.mnist.load_data()
    for x, y in tl.datasets.batches(x_train, y_train, batch_size=128, seed=0):
        ...
"""

import importlib
import math

import numpy as np

from tapelab import random_streams


def __getattr__(name):
    # `tl.datasets.mnist` is imported on first use (keeps `import tapelab` fast, and lets
    # `python -m tapelab.datasets.mnist` run the module without importing it twice)
    if name == "mnist":
        return importlib.import_module("tapelab.datasets.mnist")
    raise AttributeError(f"module 'tapelab.datasets' has no attribute {name!r}")


def linear_regression(n=1000, weight=5.0, bias=2.0, noise=0.0, seed=0):
    """The seed-001 regression data: ``X ~ N(0, 1)`` and ``Y = weight * X + bias`` (+ optional noise).

    Returns two float32 arrays of shape (n,). The same seed always gives the same data, and the same
    X as seed 001's own code, ``tl.random.set_seed(seed); train_X = tl.random.normal([n])``
    (without touching tl.random's global generator).

    >>> X, Y = tl.datasets.linear_regression(n=3)
    >>> bool(np.allclose(Y, 5 * X + 2))
    True
    """
    if int(n) != n or n < 1:
        raise ValueError(f"linear_regression: n must be a positive integer, got {n!r}")
    streams = random_streams.Streams()  # (TF's draws after set_seed(seed), without touching tl.random's state)
    streams.set_global_seed(seed)
    X = random_streams.normal(*streams.seeds(), 0, int(n), np.float32)
    Y = np.float32(weight) * X + np.float32(bias)
    if noise:
        Y = Y + (noise * random_streams.normal(*streams.seeds(), 0, int(n), np.float32)).astype(np.float32)
    return X, Y.astype(np.float32)


class batches:
    """Iterate over ``(x, y)`` in mini-batches of ``batch_size`` rows (the last one may be smaller).

    With ``shuffle=True`` each pass visits the rows in a new random order, drawn from a generator
    seeded with ``seed`` (or from ``tl.random``'s generator if ``seed`` is None), so runs repeat.
    ``len()`` is the number of batches per pass, so progress bars know their total.

    >>> [len(xb) for xb, yb in tl.datasets.batches(np.arange(10), np.arange(10), batch_size=4)]
    [4, 4, 2]
    """

    def __init__(self, x, y=None, batch_size=32, shuffle=True, seed=None, drop_remainder=False):
        if int(batch_size) != batch_size or batch_size < 1:
            raise ValueError(f"batches: batch_size must be a positive integer, got {batch_size!r}")
        self.x = np.asarray(x) if isinstance(x, (list, tuple)) else x  # (a list cannot take an array of rows)
        self.y = np.asarray(y) if isinstance(y, (list, tuple)) else y
        n = len(x)
        if y is not None and len(y) != n:
            raise ValueError(f"batches: x has {n} rows but y has {len(y)}; they must pair up row by row")
        self.n = n
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.drop_remainder = bool(drop_remainder)
        if not self.shuffle:
            self._rng = None  # (no draw from tl.random's generator: later seeded draws stay as they were)
        elif seed is None:
            from tapelab import random as _random

            self._rng = np.random.default_rng(_random.generator().integers(2**63))
        else:
            self._rng = np.random.default_rng(seed)

    def __len__(self):
        if self.drop_remainder:
            return self.n // self.batch_size
        return math.ceil(self.n / self.batch_size)

    def __iter__(self):
        order = self._rng.permutation(self.n) if self.shuffle else None
        for k in range(len(self)):
            rows = slice(k * self.batch_size, (k + 1) * self.batch_size)
            index = rows if order is None else order[rows]
            xb = self.x[index]
            yield xb if self.y is None else (xb, self.y[index])
