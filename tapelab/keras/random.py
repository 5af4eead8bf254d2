"""``keras.random``: random tensors as Keras 3 draws them, on tapelab's seedable generator (``tl.random``).

    x = tl.keras.random.normal((2, 3), seed=1)            # the same numbers for the same seed
    gen = tl.keras.random.SeedGenerator(42)               # a stream: each draw with seed=gen is a new one
    noise = tl.keras.random.uniform((4,), seed=gen)

A ``seed`` is an int (the same draw every time), a :class:`SeedGenerator` (the next draw of its stream) or None
(the global generator, which ``tl.keras.utils.set_random_seed`` seeds).
"""

import numpy as np

from tapelab import array_ops
from tapelab import math as tmath
from tapelab import random as _random
from tapelab.engine import dtypes
from tapelab.engine.tensor import Tensor, convert_to_tensor
from tapelab.keras import initializers
from tapelab.op_wrappers import shape_tuple


class SeedGenerator:
    """A stream of random draws: ``seed=generator`` in ``keras.random`` functions takes its next one."""

    def __init__(self, seed=None, name=None, **kwargs):
        self.seed, self.name = seed, name or "seed_generator"
        self._rng = np.random.default_rng(seed)

    def __repr__(self):
        return f"<tapelab.keras.random.SeedGenerator seed={self.seed}>"


def _rng(seed):
    if isinstance(seed, SeedGenerator):
        return seed._rng
    if seed is None:
        return _random.generator()
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return np.random.default_rng(int(seed))  # (an int seed: the same draw every time, as Keras 3's)
    raise ValueError(f"keras.random: seed must be an int, a tl.keras.random.SeedGenerator or None, got {seed!r}")


def _float(dtype):
    dtype = dtypes.as_dtype(dtype or "float32")
    if not dtype.is_floating:
        raise ValueError(f"keras.random: dtype must be a float type for this draw, got {dtype.name}; for integers "
                         "use tl.keras.random.randint(shape, minval, maxval).")
    return dtype.as_numpy_dtype


def _is_int(seed):
    return isinstance(seed, (int, np.integer)) and not isinstance(seed, bool)


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Samples from N(mean, stddev^2) (an int seed: Keras's, TF's stateless stream for ``[seed, 0]``)."""
    if _is_int(seed):
        return _random.stateless_normal(shape, [int(seed), 0], mean, stddev, _float(dtype))
    return Tensor(_rng(seed).normal(mean, stddev, shape_tuple(shape)).astype(_float(dtype)))


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Samples uniformly from [minval, maxval) (an int seed: Keras's, TF's stateless stream)."""
    if _is_int(seed):
        t = _float(dtype).type  # (Keras casts the bounds to the dtype: TF then scales by them)
        return _random.stateless_uniform(shape, [int(seed), 0], t(minval), t(maxval), _float(dtype))
    return Tensor(_rng(seed).uniform(minval, maxval, shape_tuple(shape)).astype(_float(dtype)))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Samples from N(mean, stddev^2), drawn again wherever they fall more than two standard deviations out (an
    int seed: Keras's, TF's stateless stream)."""
    if _is_int(seed):
        return _random.stateless_truncated_normal(shape, [int(seed), 0], mean, stddev, _float(dtype))
    return Tensor((mean + initializers._truncated(_rng(seed), shape_tuple(shape), stddev)).astype(_float(dtype)))


def randint(shape, minval, maxval, dtype="int32", seed=None):
    """Integers drawn uniformly from [minval, maxval) (an int seed: Keras's, TF's stateless stream)."""
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_integer:
        raise ValueError(f"keras.random.randint: dtype must be an integer type, got {dtype.name}")
    if _is_int(seed):
        return _random.stateless_uniform(shape, [int(seed), 0], minval, maxval, dtype)
    return Tensor(_rng(seed).integers(minval, maxval, shape_tuple(shape)).astype(dtype.as_numpy_dtype))


def shuffle(x, axis=0, seed=None):
    """``x`` with its entries along ``axis`` in a random order."""
    x = convert_to_tensor(x)
    order = _rng(seed).permutation(x.shape[axis])
    return array_ops.gather(x, order, axis=axis)


def dropout(inputs, rate, noise_shape=None, seed=None):
    """Each entry set to 0 with probability ``rate``, the rest scaled by ``1 / (1 - rate)`` (recorded on a tape)."""
    inputs = convert_to_tensor(inputs)
    if not 0 <= rate < 1:
        raise ValueError(f"keras.random.dropout: rate must be in [0, 1), got {rate!r}")
    shape = tuple(inputs.shape) if noise_shape is None else shape_tuple(noise_shape)
    keep = (_rng(seed).random(shape) >= rate).astype(inputs.dtype.as_numpy_dtype) / (1 - rate)
    return tmath.multiply(inputs, keep)


__all__ = ["SeedGenerator", "dropout", "normal", "randint", "shuffle", "truncated_normal", "uniform"]
