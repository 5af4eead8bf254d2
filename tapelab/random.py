"""Random tensors from one seedable generator, like ``tf.random``."""

import numpy as np

from tapelab.engine import dtypes
from tapelab.engine.function import _python_node_or_none
from tapelab.engine.learner import spell
from tapelab.engine.tensor import Tensor
from tapelab.op_wrappers import shape_tuple

_generator = np.random.default_rng()
_seeded = {}  # op-level seed -> its generator


def set_seed(seed):
    """Make every later random draw (``normal``, ``uniform``, layer initialisers) repeatable."""
    global _generator
    _generator = np.random.default_rng(seed)
    _seeded.clear()


def generator(seed=None):
    """The global generator; for an op-level ``seed``, that seed's own generator: as in TF, calls with the same
    seed give a repeatable series of different draws (``set_seed`` starts every series again)."""
    if seed is None:
        return _generator
    if seed not in _seeded:
        _seeded[seed] = np.random.default_rng(seed)
    return _seeded[seed]


def normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Samples from N(mean, stddev^2).

    >>> tl.random.set_seed(0); tl.random.normal([1000]).shape
    TensorShape([1000])
    """
    np_dtype = _float("normal", dtype)
    shape = shape_tuple(shape)
    return _drawn("random.normal", lambda m, s: generator(seed).normal(m, s, shape), (mean, stddev), shape, np_dtype)


def uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Samples uniformly from [minval, maxval) (maxval defaults to 1 for floats)."""
    dt = dtypes.as_dtype(dtype)
    shape = shape_tuple(shape)
    if dt.is_integer:
        if maxval is None:
            raise ValueError(f"uniform: an integer dtype needs maxval, the end of the range (left out), e.g. "
                             f"tl.random.uniform(shape, minval=0, maxval=10, dtype=tl.{dt.name}).")
        if not isinstance(minval, Tensor) and not isinstance(maxval, Tensor) and not minval < maxval:
            raise ValueError(f"uniform: needs minval < maxval (integers are drawn from [minval, maxval)), got "
                             f"minval={minval} and maxval={maxval}.")
        return _drawn("random.uniform", lambda lo, hi: generator(seed).integers(lo, hi, shape), (minval, maxval),
                      shape, dt.as_numpy_dtype)
    np_dtype = _float("uniform", dtype)
    return _drawn("random.uniform", lambda lo, hi: generator(seed).uniform(lo, hi, shape),
                  (minval, 1 if maxval is None else maxval), shape, np_dtype)


def _drawn(name, draw, bounds, shape, np_dtype):
    """A tensor of ``draw(*bounds)`` (the bounds as numbers, tensors or not); inside ``tl.function``, a node of the
    graph that draws again on every call, from the bounds that call gives, as TF's random ops do (not a constant
    drawn once while tracing)."""
    def tensor(*given):
        return Tensor(np.asarray(draw(*[b.numpy() if isinstance(b, Tensor) else b for b in given])).astype(np_dtype))

    node = _python_node_or_none(name, tensor, bounds, example=np.zeros(shape, np_dtype))
    return tensor(*bounds) if node is None else node


def _float(name, dtype):
    dt = dtypes.as_dtype(dtype)
    if not dt.is_floating:
        raise ValueError(
            spell(f"{name}: dtype must be a float type, got {dt.name}. Use tl.float32 (the default); for random "
                  "integers use tl.random.uniform(shape, minval, maxval, dtype=tl.int32).")
        )
    return dt.as_numpy_dtype

__all__ = ["normal", "set_seed", "uniform"]
