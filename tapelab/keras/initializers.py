"""Weight initialisers with Keras 3's names and formulas (``keras.initializers``), drawing Keras 3's numbers.

An initialiser is called as ``init(shape, dtype)`` and returns a numpy array; a layer turns it into a
Variable. A random one draws TF's stateless streams (``tl.random.stateless_*``) for the seed pair ``[seed, 0]``, as
Keras 3's TensorFlow backend does; without ``seed=`` it takes one when it is made, from a generator that
``keras.utils.set_random_seed(s)`` seeds as Keras's does (Python's ``random``), and ``tl.random.set_seed(s)`` too:
so a program seeded either way starts from TF's own weights.
"""

import math

import numpy as np

from tapelab import random as _random
from tapelab import random_streams
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
        dtype = dtypes.as_dtype(dtypes.float32 if dtype is None else dtype)  # Keras: None is the float32 default
        values = self.sample(tuple(int(n) for n in shape), _Draws(self.seed, dtype.as_numpy_dtype))
        return np.asarray(values).astype(dtype.as_numpy_dtype)

    def sample(self, shape, draws):
        raise NotImplementedError


class _Random(Initializer):
    """A random initialiser: its seed is taken when it is made (Keras's ``make_default_seed``), so every call gives
    the same values, as Keras 3's."""

    def __init__(self, seed=None):
        super().__init__(_random.keras_seed() if seed is None else seed)


class _Draws:
    """One call's draws, as Keras 3's TensorFlow backend makes them: TF's stateless streams for ``[seed, 0]``, the
    bounds and scales in the weights' dtype."""

    def __init__(self, seed, dtype):
        self.key = None if seed is None else random_streams.stateless_seeds([seed, 0])
        self.dtype = np.dtype(dtype) if np.dtype(dtype).kind == "f" else np.dtype(np.float32)

    def uniform(self, low, high, shape):
        t = self.dtype.type
        return self._draw(random_streams.uniform, shape) * (t(high) - t(low)) + t(low)

    def normal(self, mean, stddev, shape):
        t = self.dtype.type
        return self._draw(random_streams.normal, shape) * t(stddev) + t(mean)

    def truncated_normal(self, mean, stddev, shape):
        t = self.dtype.type
        return self._draw(random_streams.truncated_normal, shape) * t(stddev) + t(mean)

    def _draw(self, distribution, shape):
        size = math.prod(shape)
        return distribution(*self.key, 0, size, self.dtype).reshape(shape)

    def __repr__(self):
        return f"{type(self).__name__}()"


class Zeros(Initializer):
    def sample(self, shape, draws):
        return np.zeros(shape)


class Ones(Initializer):
    def sample(self, shape, draws):
        return np.ones(shape)


class Constant(Initializer):
    def __init__(self, value=0.0):
        super().__init__()
        self.value = value

    def sample(self, shape, draws):
        return np.full(shape, self.value)


class RandomNormal(_Random):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def sample(self, shape, draws):
        return draws.normal(self.mean, self.stddev, shape)


class RandomUniform(_Random):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def sample(self, shape, draws):
        return draws.uniform(self.minval, self.maxval, shape)


class TruncatedNormal(_Random):
    """A normal truncated at 2 standard deviations (drawn again outside them)."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def sample(self, shape, draws):
        return draws.truncated_normal(self.mean, self.stddev, shape)


class _VarianceScaling(_Random):
    """Keras's VarianceScaling: ``scale`` divided by the fan ``mode`` says; then U(-limit, limit) with limit =
    sqrt(3 * scale) (``uniform``), or a normal of stddev sqrt(scale) truncated at 2 standard deviations (divided by
    0.8796, the standard deviation a truncation leaves)."""

    scale, mode, distribution = 1.0, "fan_avg", "uniform"

    def sample(self, shape, draws):
        fan_in, fan_out = _fans(shape)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, fan)
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * scale)
            return draws.uniform(-limit, limit, shape)
        return draws.truncated_normal(0.0, math.sqrt(scale) / 0.87962566103423978, shape)


class GlorotUniform(_VarianceScaling):
    """U(-limit, limit), limit = sqrt(6 / (fan_in + fan_out)): Keras's default kernel initialiser. Its
    variance 2 / (fan_in + fan_out) keeps activations and gradients about the same size from layer to layer."""


class GlorotNormal(_VarianceScaling):
    """A normal truncated at 2 standard deviations, stddev = sqrt(2 / (fan_in + fan_out)) / 0.8796."""

    distribution = "truncated_normal"


class HeUniform(_VarianceScaling):
    """U(-limit, limit), limit = sqrt(6 / fan_in): for relu layers."""

    scale, mode = 2.0, "fan_in"


class HeNormal(_VarianceScaling):
    """A truncated normal with stddev sqrt(2 / fan_in) / 0.8796: for relu layers."""

    scale, mode, distribution = 2.0, "fan_in", "truncated_normal"


class Orthogonal(_Random):
    """A random orthogonal matrix (times ``gain``): Keras's default for a recurrent kernel. Multiplying by it
    keeps a vector's length, so repeated steps h @ W neither shrink nor grow h by themselves.

    Keras's recipe: Q of the QR decomposition of a normal matrix, each column's sign that of R's diagonal.
    """

    def __init__(self, gain=1.0, seed=None):
        super().__init__(seed)
        self.gain = float(gain)

    def sample(self, shape, draws):
        if len(shape) < 2:
            raise ValueError(f"Orthogonal: needs a shape of at least 2 dimensions (a matrix), got {shape}. "
                             "Use it for a kernel; a bias starts at zeros.")
        rows, cols = math.prod(shape[:-1]), shape[-1]
        q, r = np.linalg.qr(draws.normal(0.0, 1.0, (max(rows, cols), min(rows, cols))))
        q = q * np.sign(np.diag(r))
        return self.gain * (q.T if rows < cols else q).reshape(shape)


def _truncated(rng, shape, stddev):
    """A normal truncated at 2 standard deviations from a numpy generator (keras.random's own draws)."""
    values = rng.normal(0.0, 1.0, shape)
    bad = np.abs(values) > 2
    while bad.any():  # redraw what falls outside two standard deviations
        values[bad] = rng.normal(0.0, 1.0, int(bad.sum()))
        bad = np.abs(values) > 2
    return values * stddev


_BY_NAME = {"zeros": Zeros, "ones": Ones, "constant": Constant, "random_normal": RandomNormal,
            "truncated_normal": TruncatedNormal,
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
