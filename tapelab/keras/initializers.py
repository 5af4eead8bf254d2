"""Weight initialisers with Keras 3's names and formulas (``keras.initializers``), drawing from ``tl.random``.

An initialiser is called as ``init(shape, dtype)`` and returns a numpy array; a layer turns it into a
Variable. ``tl.random.set_seed(s)`` makes every draw repeatable.
"""

import math

import numpy as np

from tapelab import random as _random
from tapelab.engine import dtypes
from tapelab.engine.learner import spell


def _fans(shape):
    # Keras: a kernel (..., fan_in, fan_out), every leading axis a receptive field multiplying both
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = math.prod(shape[:-2])
    return shape[-2] * receptive, shape[-1] * receptive


class Initializer:
    """Base class: ``init(shape, dtype=tl.float32)`` gives a numpy array of that shape."""

    def __init__(self, seed=None):
        self.seed = seed

    def __call__(self, shape, dtype=dtypes.float32):
        # a seeded initializer gives the same values on every call, as Keras 3's
        rng = _random.generator() if self.seed is None else np.random.default_rng(self.seed)
        values = self.sample(tuple(int(n) for n in shape), rng)
        dtype = dtypes.float32 if dtype is None else dtype  # Keras: dtype=None is the float32 default
        return np.asarray(values).astype(dtypes.as_dtype(dtype).as_numpy_dtype)

    def sample(self, shape, rng):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}()"


class Zeros(Initializer):
    def sample(self, shape, rng):
        return np.zeros(shape)


class Ones(Initializer):
    def sample(self, shape, rng):
        return np.ones(shape)


class Constant(Initializer):
    def __init__(self, value=0.0):
        super().__init__()
        self.value = value

    def sample(self, shape, rng):
        return np.full(shape, self.value)


class RandomNormal(Initializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def sample(self, shape, rng):
        return rng.normal(self.mean, self.stddev, shape)


class RandomUniform(Initializer):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def sample(self, shape, rng):
        return rng.uniform(self.minval, self.maxval, shape)


class GlorotUniform(Initializer):
    """U(-limit, limit), limit = sqrt(6 / (fan_in + fan_out)): Keras's default kernel initialiser. Its
    variance 2 / (fan_in + fan_out) keeps activations and gradients about the same size from layer to layer."""

    def sample(self, shape, rng):
        fan_in, fan_out = _fans(shape)
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        return rng.uniform(-limit, limit, shape)


class GlorotNormal(Initializer):
    """A normal truncated at 2 standard deviations, stddev = sqrt(2 / (fan_in + fan_out)) / 0.8796."""

    def sample(self, shape, rng):
        fan_in, fan_out = _fans(shape)
        return _truncated(rng, shape, math.sqrt(2.0 / (fan_in + fan_out)) / 0.87962566103423978)


class HeUniform(Initializer):
    """U(-limit, limit), limit = sqrt(6 / fan_in): for relu layers."""

    def sample(self, shape, rng):
        limit = math.sqrt(6.0 / _fans(shape)[0])
        return rng.uniform(-limit, limit, shape)


class HeNormal(Initializer):
    """A truncated normal with stddev sqrt(2 / fan_in) / 0.8796: for relu layers."""

    def sample(self, shape, rng):
        return _truncated(rng, shape, math.sqrt(2.0 / _fans(shape)[0]) / 0.87962566103423978)


class Orthogonal(Initializer):
    """A random orthogonal matrix (times ``gain``): Keras's default for a recurrent kernel. Multiplying by it
    keeps a vector's length, so repeated steps h @ W neither shrink nor grow h by themselves.

    Keras's recipe: Q of the QR decomposition of a normal matrix, each column's sign that of R's diagonal.
    """

    def __init__(self, gain=1.0, seed=None):
        super().__init__(seed)
        self.gain = float(gain)

    def sample(self, shape, rng):
        if len(shape) < 2:
            raise ValueError(f"Orthogonal: needs a shape of at least 2 dimensions (a matrix), got {shape}. "
                             "Use it for a kernel; a bias starts at zeros.")
        rows, cols = math.prod(shape[:-1]), shape[-1]
        q, r = np.linalg.qr(rng.normal(0.0, 1.0, (max(rows, cols), min(rows, cols))))
        q = q * np.sign(np.diag(r))
        return self.gain * (q.T if rows < cols else q).reshape(shape)


def _truncated(rng, shape, stddev):
    values = rng.normal(0.0, 1.0, shape)
    bad = np.abs(values) > 2
    while bad.any():  # redraw what falls outside two standard deviations
        values[bad] = rng.normal(0.0, 1.0, int(bad.sum()))
        bad = np.abs(values) > 2
    return values * stddev


_BY_NAME = {"zeros": Zeros, "ones": Ones, "constant": Constant, "random_normal": RandomNormal,
            "random_uniform": RandomUniform, "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal,
            "he_uniform": HeUniform, "he_normal": HeNormal, "orthogonal": Orthogonal}


def get(identifier):
    """An initialiser from a name (``"glorot_uniform"``, ``"zeros"``, ...), an Initializer, or a function
    ``f(shape, dtype)``."""
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    if callable(identifier):
        return identifier
    raise ValueError(spell(f"unknown initializer {identifier!r}. Use one of {sorted(_BY_NAME)}, an initializer "
                           "such as tl.keras.initializers.GlorotUniform(seed=0), or a function f(shape, dtype)."))


def glorot_uniform(shape, dtype=dtypes.float32):
    """``GlorotUniform()(shape, dtype)``: the layers' default kernel initialiser."""
    return GlorotUniform()(shape, dtype)


__all__ = ["Constant", "GlorotNormal", "GlorotUniform", "HeNormal", "HeUniform", "Initializer", "Ones",
           "Orthogonal", "RandomNormal", "RandomUniform", "Zeros", "get"]
