"""``tl.math``: the math ops under TensorFlow's ``tf.math.*`` names: elementwise functions, reductions, scans.

Each differentiable function runs one primitive of :mod:`tapelab.engine.primitives` (where its gradient rule
lives); ``reduce_variance`` and ``reduce_std`` are made of primitives, as in TF.
"""

import builtins
from typing import NamedTuple

from tapelab.engine import dtypes
from tapelab.engine.errors import InvalidArgumentError, Unsupported
from tapelab.engine.primitives import OPS
from tapelab.engine.tape import run
from tapelab.engine.tensor import convert_to_tensor
from tapelab.ops import (  # noqa: F401
    _axes,
    _binary,
    _booleans,
    _reduction,
    _unary,
    abs,
    add,
    add_n,
    argmax,
    argmin,
    divide,
    equal,
    exp,
    floor,
    floordiv,
    floormod,
    gather,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    log_softmax,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    negative,
    not_equal,
    pow,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
    sigmoid,
    sign,
    softmax,
    sqrt,
    square,
    subtract,
    tanh,
    transpose,
    truediv,
)

_COMPLEX = "split a complex value into two float tensors (its real and imaginary parts)."
real, imag, conj, angle = (Unsupported(f"tl.math.{name}", "complex numbers", _COMPLEX)
                           for name in ("real", "imag", "conj", "angle"))

sin = _unary("sin", "The sine of x (radians).")
cos = _unary("cos", "The cosine of x (radians).")
tan = _unary("tan", "The tangent of x (radians).")
asin = _unary("asin", "The inverse sine, in [-pi/2, pi/2] (NaN outside [-1, 1]).")
acos = _unary("acos", "The inverse cosine, in [0, pi] (NaN outside [-1, 1]).")
atan = _unary("atan", "The inverse tangent, in (-pi/2, pi/2).")
sinh = _unary("sinh", "The hyperbolic sine.")
cosh = _unary("cosh", "The hyperbolic cosine.")
asinh = _unary("asinh", "The inverse hyperbolic sine.")
acosh = _unary("acosh", "The inverse hyperbolic cosine (x >= 1).")
atanh = _unary("atanh", "The inverse hyperbolic tangent (|x| < 1).")
reciprocal = _unary("reciprocal", "1 / x.")
rsqrt = _unary("rsqrt", "1 / sqrt(x).")
log1p = _unary("log1p", "log(1 + x), accurate for small x.")
expm1 = _unary("expm1", "exp(x) - 1, accurate for small x.")
erf = _unary("erf", "The error function, 2/sqrt(pi) times the integral of exp(-t^2) from 0 to x.")

log_sigmoid = _unary("log_sigmoid", "log(sigmoid(x)) = -softplus(-x), computed without overflow.")

ceil = _unary("ceil", "The smallest integer >= x (no gradient: None).")
round = _unary("round", "The nearest integer, halves to even as in TF: round(2.5) is 2 (no gradient: None).")  # noqa: A001
is_finite = _unary("is_finite", "True where x is neither inf nor NaN.")
is_nan = _unary("is_nan", "True where x is NaN.")
is_inf = _unary("is_inf", "True where x is +inf or -inf.")
squared_difference = _binary("squared_difference", "(x - y) ** 2, elementwise with broadcasting.")
_atan2 = _binary("atan2", "")


def atan2(y, x, name=None):
    """The angle of the point (x, y) from the x axis, in (-pi, pi]: note the order, y first."""
    return _atan2(y, x)


def _activation(name, doc):
    """An activation of ``tl.nn`` (its argument is TF's ``features``)."""
    op = OPS[name]

    def fn(features, name=None):
        return run(op, (convert_to_tensor(features),))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


softplus = _activation("softplus", "log(1 + exp(x)), computed without overflow: a smooth relu.")
softsign = _activation("softsign", "x / (1 + |x|).")


def _float_moments(name, x):
    x = convert_to_tensor(x)
    if not x.dtype.is_floating:
        kind = "bool" if x.dtype.name == "bool" else "integer"
        raise TypeError(f"{name}: Input must be either real or complex. Received {kind} type {x.dtype!r}: "
                        f"a variance of {kind}s is not {'a bool' if kind == 'bool' else 'an integer'}. Use "
                        "tl.cast(x, tl.float32) first.")
    return x


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """The variance over ``axis``: the mean of (x - mean(x))^2 (TF's composition of mean, subtract, square)."""
    x = _float_moments("reduce_variance", input_tensor)
    means = reduce_mean(x, axis=axis, keepdims=True)
    return reduce_mean(square(x - means), axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """The standard deviation over ``axis``: sqrt(reduce_variance)."""
    return sqrt(reduce_variance(_float_moments("reduce_std", input_tensor), axis=axis, keepdims=keepdims))


def _scan(name, x, axis, exclusive, reverse):
    x = convert_to_tensor(x)
    if x.ndim == 0:
        raise InvalidArgumentError(f"{name}: a 0-d tensor (shape ()) has no axis to accumulate along; give a vector.")
    if x.dtype.is_bool:
        raise InvalidArgumentError(f"{name}: got a bool tensor; use tl.cast(x, tl.int32) to count.")
    return run(OPS[name], (x,), axis=_axes(x, axis, name)[0], exclusive=bool(exclusive), reverse=bool(reverse))


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running sums along ``axis``: ``cumsum([a, b, c])`` is ``[a, a + b, a + b + c]``.

    ``exclusive=True`` leaves each entry out of its own sum (``[0, a, a + b]``); ``reverse=True`` sums
    from the end.
    """
    return _scan("cumsum", x, axis, exclusive, reverse)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running products along ``axis``: ``cumprod([a, b, c])`` is ``[a, a * b, a * b * c]`` (see :func:`cumsum`)."""
    return _scan("cumprod", x, axis, exclusive, reverse)


class TopKV2(NamedTuple):
    """What :func:`top_k` returns: the ``k`` largest ``values`` along the last axis and their ``indices``."""

    values: object
    indices: object


def _sort_order(x, axis, direction, name):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"{name}: direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
    return run(OPS["argsort"], (x,), axis=axis, descending=direction == "DESCENDING")


def _take_along_last(x, indices):
    # x[..., indices[..., j]] for each row, as one gather from the flattened x (so the gradient flows to x)
    from tapelab import ops

    n = x.shape[-1]
    rows = builtins.max(x._value.size // builtins.max(n, 1), 1) if n else 0
    offsets = ops.reshape(ops.range(0, rows * n, builtins.max(n, 1), dtype=indices.dtype),
                          tuple(x.shape[:-1]) + (1,))
    return ops.gather(ops.reshape(x, (-1,)), indices + offsets)


def top_k(input, k=1, sorted=True, index_type=dtypes.int32, name=None):  # noqa: A002
    """The ``k`` largest entries of the last axis, largest first (ties: the lower index first), and where they are.

    >>> tl.math.top_k([1.0, 3.0, 2.0], k=2)
    TopKV2(values=<tapelab.Tensor: shape=(2,), dtype=float32, numpy=array([3., 2.], dtype=float32)>, indices=...)
    """
    from tapelab import ops

    x = convert_to_tensor(input)
    if int(k) < 0:
        raise InvalidArgumentError(f"top_k: k is how many of the largest entries to take, so it must be >= 0, got {k}.")
    if x.ndim == 0 or int(k) > x.shape[-1]:
        raise InvalidArgumentError(f"top_k: input must have at least k={k} entries in its last axis, got shape "
                                   f"{tuple(x.shape)}.")
    indices = _sort_order(x, -1, "DESCENDING", "top_k")[..., :int(k)]
    return TopKV2(_take_along_last(x, indices), ops.cast(indices, index_type))


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """The values sorted along ``axis`` (the gradient flows back to where each value came from)."""
    from tapelab import ops

    x = convert_to_tensor(values)
    axis = _axes(x, axis, "sort")[0]
    last = x.ndim - 1
    moved = x if axis == last else ops.transpose(x, _swap(x.ndim, axis))
    out = _take_along_last(moved, _sort_order(moved, -1, direction, "sort"))
    return out if axis == last else ops.transpose(out, _swap(x.ndim, axis))


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The indices that sort ``values`` along ``axis`` (int32; ties keep their order)."""
    x = convert_to_tensor(values)
    return _sort_order(x, _axes(x, axis, "argsort")[0], direction, "argsort")


def _swap(rank, axis):
    perm = list(builtins.range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return perm

__all__ = [  # tf.math's names that tapelab has (docs/tf_api.md lists them against TF's)
    "abs", "acos", "acosh", "add", "add_n", "angle", "argmax", "argmin", "asin", "asinh", "atan", "atan2",
    "atanh", "ceil", "conj", "cos", "cosh", "cumprod", "cumsum", "divide", "equal", "erf", "exp", "expm1", "floor",
    "floordiv", "floormod", "greater", "greater_equal", "imag", "is_finite", "is_inf", "is_nan", "less", "less_equal",
    "log", "log1p", "log_sigmoid", "log_softmax", "logical_and", "logical_not", "logical_or", "logical_xor", "maximum",
    "minimum", "mod", "multiply", "negative", "not_equal", "pow", "real", "reciprocal", "reduce_all", "reduce_any",
    "reduce_logsumexp", "reduce_max", "reduce_mean", "reduce_min", "reduce_prod", "reduce_std", "reduce_sum",
    "reduce_variance", "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "softmax", "softplus", "softsign", "sqrt",
    "square", "squared_difference", "subtract", "tan", "tanh", "top_k", "truediv",
]
