"""Random tensors, like ``tf.random``: the same numbers as TF's for the same seeds.

``normal``, ``uniform`` and ``truncated_normal`` draw TF's own streams (:mod:`tapelab.random_streams`): after
``tl.random.set_seed(22)`` a program draws what TF draws after ``tf.random.set_seed(22)``, call by call (an op
``seed=`` too). tapelab's other randomness (layers' initial weights, dropout, shuffling) comes from one numpy
generator that ``set_seed`` seeds as well: seeded runs repeat, with numbers of their own.
"""

import random as _pyrandom

import numpy as np

from tapelab import random_streams
from tapelab.engine import dtypes
from tapelab.engine.function import _python_node_or_none
from tapelab.engine.learner import spell
from tapelab.engine.tensor import Tensor
from tapelab.op_wrappers import shape_tuple

_generator = np.random.default_rng()
_seeded = {}  # op-level seed -> its generator
_streams = random_streams.Streams()  # TF's global seed, op seeds and kernels' places
_keras_seeds = _pyrandom.Random()  # what Keras's make_default_seed draws from (Keras: Python's random module)


def set_seed(seed):
    """Make every later random draw (``normal``, ``uniform``, layer initialisers) repeatable; ``normal``,
    ``uniform`` and ``truncated_normal`` then draw TF's numbers for that seed."""
    global _generator
    _generator = np.random.default_rng(seed)
    _seeded.clear()
    _streams.set_global_seed(seed)
    _keras_seeds.seed(seed)


def keras_seed():
    """The seed a Keras initializer made without one takes (Keras 3's ``make_default_seed``)."""
    return _keras_seeds.randint(1, int(1e9))


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
    draw = _stream("normal", random_streams.normal, seed, shape, np_dtype)
    return _drawn("random.normal", lambda m, s: draw() * np_dtype.type(s) + np_dtype.type(m), (mean, stddev), shape,
                  np_dtype)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Samples from N(mean, stddev^2), each drawn again while it is more than two standard deviations out."""
    np_dtype = _float("truncated_normal", dtype)
    shape = shape_tuple(shape)
    draw = _stream("truncated_normal", random_streams.truncated_normal, seed, shape, np_dtype)
    return _drawn("random.truncated_normal", lambda m, s: draw() * np_dtype.type(s) + np_dtype.type(m),
                  (mean, stddev), shape, np_dtype)


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
        seeds = _streams.seeds(seed)
        size = int(np.prod(shape, dtype=np.int64))
        return _drawn("random.uniform", lambda lo, hi: random_streams.integers(
            *seeds, _streams.skip("uniform_int", dt.as_numpy_dtype, seeds, size), size, lo, hi,
            dt.as_numpy_dtype).reshape(shape), (minval, maxval), shape, dt.as_numpy_dtype)
    np_dtype = _float("uniform", dtype)
    draw = _stream("uniform", random_streams.uniform, seed, shape, np_dtype)
    maxval = 1 if maxval is None else maxval
    if _is_int(minval, 0) and _is_int(maxval, 1):  # TF's order of operations, for the same rounding
        return _drawn("random.uniform", lambda lo, hi: draw(), (minval, maxval), shape, np_dtype)
    if _is_int(minval, 0):
        return _drawn("random.uniform", lambda lo, hi: draw() * np_dtype.type(hi), (minval, maxval), shape, np_dtype)
    return _drawn("random.uniform", lambda lo, hi: draw() * (np_dtype.type(hi) - np_dtype.type(lo)) + np_dtype.type(lo),
                  (minval, maxval), shape, np_dtype)


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=dtypes.float32, name=None, alg="auto_select"):
    """Samples uniformly from [minval, maxval), fixed by ``seed`` (a pair of ints): the same seed, the same numbers,
    TF's own (no state: ``set_seed`` plays no part). Keras 3's initializers draw this way."""
    dt, shape, key = dtypes.as_dtype(dtype), shape_tuple(shape), _stateless_key("stateless_uniform", seed, alg)
    size = int(np.prod(shape, dtype=np.int64))
    if dt.is_integer:
        if maxval is None:
            raise ValueError("stateless_uniform: an integer dtype needs minval and maxval, e.g. "
                             f"tl.random.stateless_uniform(shape, seed, minval=0, maxval=10, dtype=tl.{dt.name}).")
        return Tensor(random_streams.integers(*key, 0, size, minval, maxval, dt.as_numpy_dtype).reshape(shape))
    np_dtype = _float("stateless_uniform", dtype)
    value = random_streams.uniform(*key, 0, size, np_dtype).reshape(shape)
    maxval = 1 if maxval is None else maxval
    if not (_is_int(minval, 0) and _is_int(maxval, 1)):
        value = value * (np_dtype.type(maxval) - np_dtype.type(minval)) + np_dtype.type(minval)
    return Tensor(np.asarray(value, np_dtype))


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None, alg="auto_select"):
    """Samples from N(mean, stddev^2), fixed by ``seed`` (a pair of ints), TF's own numbers."""
    np_dtype, shape = _float("stateless_normal", dtype), shape_tuple(shape)
    size = int(np.prod(shape, dtype=np.int64))
    value = random_streams.normal(*_stateless_key("stateless_normal", seed, alg), 0, size, np_dtype).reshape(shape)
    return Tensor(np.asarray(value * np_dtype.type(stddev) + np_dtype.type(mean), np_dtype))


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
    """Samples from N(mean, stddev^2) within two standard deviations, fixed by ``seed``, TF's own numbers."""
    np_dtype, shape = _float("stateless_truncated_normal", dtype), shape_tuple(shape)
    size = int(np.prod(shape, dtype=np.int64))
    key = _stateless_key("stateless_truncated_normal", seed, "auto_select")
    value = random_streams.truncated_normal(*key, 0, size, np_dtype).reshape(shape)
    return Tensor(np.asarray(value * np_dtype.type(stddev) + np_dtype.type(mean), np_dtype))


def _stateless_key(name, seed, alg):
    values = np.asarray(seed.numpy() if isinstance(seed, Tensor) else seed)
    if values.shape != (2,) or values.dtype.kind not in "iu":
        raise ValueError(f"{name}: seed must be a pair of integers, e.g. seed=[1, 2], got {seed!r}")
    if str(alg).lower() not in ("auto_select", "philox", "1", "3"):
        raise ValueError(f"{name}: alg={alg!r}: tapelab draws TF's Philox streams only (alg='philox' or "
                         "'auto_select', TF's choice on a CPU)")
    return random_streams.stateless_seeds(values.tolist())


def _is_int(value, number):
    return isinstance(value, int) and not isinstance(value, bool) and value == number


def _stream(op, distribution, seed, shape, np_dtype):
    """A function drawing ``shape`` values of ``distribution`` (:mod:`tapelab.random_streams`) as TF's op ``op``
    with ``seed`` does: its seeds fixed now, each call going on where the last one stopped (as TF's kernel)."""
    seeds = _streams.seeds(seed)
    size = int(np.prod(shape, dtype=np.int64))
    return lambda: distribution(*seeds, _streams.skip(op, np_dtype, seeds, size), size, np_dtype).reshape(shape)


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

__all__ = ["normal", "set_seed", "stateless_normal", "stateless_truncated_normal", "stateless_uniform",
           "truncated_normal", "uniform"]
