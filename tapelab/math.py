"""``tl.math``: the math ops under TensorFlow's ``tf.math.*`` names: elementwise functions, reductions, scans.

Arithmetic, comparisons and logic, elementwise functions, reductions and scans, sorting; also the top-level
``tl.clip_by_value`` / ``tl.clip_by_norm`` / ``tl.clip_by_global_norm`` (made of math ops, so they live here).

Each differentiable function runs one primitive of :mod:`tapelab.engine.primitives` (where its gradient rule
lives); ``reduce_variance``, ``reduce_std`` and the clips are made of primitives, as in TF. ``softmax`` and
``log_softmax`` (tf.nn's, also tf.math's) live here too: ``tl.nn`` builds on this module and re-exports them.
"""

import builtins
from typing import NamedTuple

from tapelab import array_ops
from tapelab.engine import dtypes
from tapelab.engine.errors import InvalidArgumentError, Unsupported
from tapelab.engine.primitives import OPS
from tapelab.engine.tape import run
from tapelab.engine.tensor import Tensor, convert_to_tensor
from tapelab.op_wrappers import axes, binary, names_defined, unary

_IMPORTED = set(globals())  # (a public name defined below joins __all__, at the end)

# --- arithmetic, elementwise with broadcasting --------------------------------------------------------------------
add = binary("add", "x + y, elementwise with broadcasting. ``tl.add(1, 2)`` gives 3.")
subtract = binary("subtract", "x - y, elementwise with broadcasting.")
multiply = binary("multiply", "x * y, elementwise with broadcasting.")
divide = binary("divide", "x / y, elementwise (integers give float64, as in TF).")
truediv = divide
pow = binary("pow", "x ** y, elementwise.")  # noqa: A001
maximum = binary("maximum", "The larger of x and y, elementwise.")
minimum = binary("minimum", "The smaller of x and y, elementwise.")
floormod = binary("floormod", "x % y (the remainder of floor division), elementwise.")
mod = floormod
floordiv = binary("floordiv", "x // y, elementwise (no gradient).")


# --- comparisons and logic (bool results) ------------------------------------------------------------------------
def _ordered(name, x, y):
    if x.dtype.is_bool:
        raise InvalidArgumentError(
            f"{name}: booleans have no order (TF does not compare them with <, >). Compare numbers, or cast: "
            f"tl.cast(x, tl.int32)."
        )


def _booleans(name, x, y=None):
    for t in (x, y):
        if t is not None and not t.dtype.is_bool:
            raise InvalidArgumentError(
                f"{name}: expects bool tensors, got {t.dtype.name}. Make one from a comparison (x > 0), or "
                f"tl.cast(x, tl.bool)."
            )


equal = binary("equal", "x == y, elementwise (a bool tensor).")
not_equal = binary("not_equal", "x != y, elementwise.")
less = binary("less", "x < y, elementwise.", _ordered)
less_equal = binary("less_equal", "x <= y, elementwise.", _ordered)
greater = binary("greater", "x > y, elementwise.", _ordered)
greater_equal = binary("greater_equal", "x >= y, elementwise.", _ordered)
# (TF converts Python operands of logical ops to bool: 1 is refused, not cast)
logical_and = binary("logical_and", "x and y, elementwise on bool tensors.", _booleans, dtypes.bool)
logical_or = binary("logical_or", "x or y, elementwise on bool tensors.", _booleans, dtypes.bool)
logical_xor = binary("logical_xor", "x or y but not both, elementwise on bool tensors.", _booleans, dtypes.bool)


# --- elementwise, one input -------------------------------------------------------------------------------------
negative = unary("negative", "-x.")
square = unary("square", "x * x. ``tl.square(8)`` gives 64.")
sqrt = unary("sqrt", "The square root of a float tensor.")
exp = unary("exp", "e ** x.")
log = unary("log", "The natural logarithm.")
abs = unary("abs", "|x|.")  # noqa: A001
sign = unary("sign", "-1, 0 or 1 by the sign of x (gradient 0).")
floor = unary("floor", "The largest integer <= x (no gradient: None, as in TF).")
tanh = unary("tanh", "The hyperbolic tangent.")
sigmoid = unary("sigmoid", "1 / (1 + exp(-x)), computed without overflow.")
logical_not = unary("logical_not", "not x, elementwise.", _booleans)


sin = unary("sin", "The sine of x (radians).")
cos = unary("cos", "The cosine of x (radians).")
tan = unary("tan", "The tangent of x (radians).")
asin = unary("asin", "The inverse sine, in [-pi/2, pi/2] (NaN outside [-1, 1]).")
acos = unary("acos", "The inverse cosine, in [0, pi] (NaN outside [-1, 1]).")
atan = unary("atan", "The inverse tangent, in (-pi/2, pi/2).")
sinh = unary("sinh", "The hyperbolic sine.")
cosh = unary("cosh", "The hyperbolic cosine.")
asinh = unary("asinh", "The inverse hyperbolic sine.")
acosh = unary("acosh", "The inverse hyperbolic cosine (x >= 1).")
atanh = unary("atanh", "The inverse hyperbolic tangent (|x| < 1).")
reciprocal = unary("reciprocal", "1 / x.")
rsqrt = unary("rsqrt", "1 / sqrt(x).")
log1p = unary("log1p", "log(1 + x), accurate for small x.")
expm1 = unary("expm1", "exp(x) - 1, accurate for small x.")
erf = unary("erf", "The error function, 2/sqrt(pi) times the integral of exp(-t^2) from 0 to x.")

log_sigmoid = unary("log_sigmoid", "log(sigmoid(x)) = -softplus(-x), computed without overflow.")

ceil = unary("ceil", "The smallest integer >= x (no gradient: None).")
round = unary("round",  # noqa: A001
              "The nearest integer, halves to even as in TF: round(2.5) is 2 (no gradient: None).")
is_finite = unary("is_finite", "True where x is neither inf nor NaN.")
is_nan = unary("is_nan", "True where x is NaN.")
is_inf = unary("is_inf", "True where x is +inf or -inf.")
squared_difference = binary("squared_difference", "(x - y) ** 2, elementwise with broadcasting.")
xlogy = binary("xlogy", "x * log(y), elementwise with broadcasting; 0 where x is 0, even where y is 0.")
_atan2 = binary("atan2", "")


def atan2(y, x, name=None):  # (a def, not binary's fn(x, y): TF names the arguments y, x)
    """The angle of the point (x, y) from the x axis, in (-pi, pi]: note the order, y first."""
    return _atan2(y, x)


# activations tf.math has too (tl.nn re-exports them); TF calls their argument `features`
softplus = unary("softplus", "log(1 + exp(x)), computed without overflow: a smooth relu.", argument="features")
softsign = unary("softsign", "x / (1 + |x|).", argument="features")


def _logits(logits, name):
    logits = convert_to_tensor(logits)
    if logits.ndim == 0:
        raise InvalidArgumentError(
            f"{name}: logits must have at least one axis (the scores to normalise), got shape (). "
            "Give a vector of scores, e.g. tl.reshape(x, (1,))."
        )
    return logits


def softmax(logits, axis=-1, name=None):
    """exp(x) / sum(exp(x)) along ``axis``: turns scores into probabilities (stable for large |x|)."""
    return run(OPS["softmax"], (_logits(logits, "softmax"),), axis=int(axis))


def log_softmax(logits, axis=-1, name=None):
    """log(softmax(x)), computed without overflow."""
    return run(OPS["log_softmax"], (_logits(logits, "log_softmax"),), axis=int(axis))


# --- reductions and scans ------------------------------------------------------------------------------------------
def add_n(inputs, name=None):
    """The elementwise sum of a list of tensors."""
    inputs = [convert_to_tensor(x) for x in inputs]
    _check_add_n(inputs)
    total = inputs[0]
    for x in inputs[1:]:
        total = add(total, x)
    return total


def _check_add_n(inputs):
    if not inputs:
        raise ValueError("add_n: needs at least one tensor")
    shapes = {tuple(x.shape) for x in inputs}
    if len(shapes) > 1:
        raise InvalidArgumentError(
            f"add_n: all inputs must have the same shape, got {', '.join(str(tuple(x.shape)) for x in inputs)}. "
            "add_n does not broadcast; use tl.add (or +) to add tensors of different shapes."
        )


def _reduction(primitive, doc, kinds="fiu"):
    """``fn(input_tensor, axis=None, keepdims=False)`` running ``primitive``, on tensors of dtype ``kinds``."""
    op = OPS[primitive]

    def fn(input_tensor, axis=None, keepdims=False, name=None):
        x = input_tensor if isinstance(input_tensor, Tensor) else convert_to_tensor(
            input_tensor, dtype=dtypes.bool if kinds == "b" else None)
        if x._value.dtype.kind not in kinds:
            raise InvalidArgumentError(_reduction_dtype_text(op.name, x, kinds))
        return run(op, (x,), axis=axes(x, axis, op.name), keepdims=bool(keepdims))

    fn.__name__ = fn.__qualname__ = primitive
    fn.__doc__ = doc
    return fn


def _reduction_dtype_text(name, x, kinds):
    if kinds == "b":
        return f"{name}: expects a bool tensor, got {x.dtype.name}. Compare first (x > 0), or tl.cast(x, tl.bool)."
    if x.dtype.is_bool:
        return (f"{name}: got a bool tensor; TF does not do arithmetic on booleans. Count them as numbers: "
                f"{name}(tl.cast(x, tl.int32)) (or tl.float32 for a fraction); tl.reduce_any / tl.reduce_all "
                "combine booleans.")
    return f"{name}: expects a float tensor, got {x.dtype.name}. Use tl.cast(x, tl.float32)."


reduce_sum = _reduction("reduce_sum", "Sum over ``axis`` (all axes by default). ``tl.reduce_sum([1, 2, 3])`` is 6.")
reduce_mean = _reduction("reduce_mean", "Mean over ``axis`` (all axes by default).")
reduce_max = _reduction("reduce_max", "Maximum over ``axis`` (all axes by default).")
reduce_min = _reduction("reduce_min", "Minimum over ``axis`` (all axes by default).")
reduce_prod = _reduction("reduce_prod", "Product over ``axis`` (all axes by default).")
reduce_logsumexp = _reduction("reduce_logsumexp", "log(sum(exp(x))) over ``axis``, computed without overflow.", "f")
reduce_any = _reduction("reduce_any", "Whether any element over ``axis`` is True (bool tensors).", "b")
reduce_all = _reduction("reduce_all", "Whether every element over ``axis`` is True (bool tensors).", "b")


def _arg_axis(x, axis, name):
    if x.ndim == 0:
        raise InvalidArgumentError(f"{name}: a 0-d tensor (shape (), a single number) has no axis to search along; "
                                   "give a vector (or higher), e.g. tl.reshape(x, (1,)).")
    axis = axes(x, 0 if axis is None else axis, name)[0]
    if x.ndim and x.shape[axis] == 0:
        raise InvalidArgumentError(
            f"{name}: axis {axis} of a tensor of shape {tuple(x.shape)} is empty, so there is no element to point "
            "to. Check the tensor's shape (an empty batch?) before taking the index."
        )
    return axis


def argmax(input, axis=None, output_type=dtypes.int64, name=None):
    """The index of the largest value along ``axis`` (default 0), as int64."""
    x = convert_to_tensor(input)
    return run(OPS["argmax"], (x,), axis=_arg_axis(x, axis, "argmax"),
               output_type=dtypes.as_dtype(output_type).as_numpy_dtype)


def argmin(input, axis=None, output_type=dtypes.int64, name=None):
    """The index of the smallest value along ``axis`` (default 0), as int64."""
    x = convert_to_tensor(input)
    return run(OPS["argmin"], (x,), axis=_arg_axis(x, axis, "argmin"),
               output_type=dtypes.as_dtype(output_type).as_numpy_dtype)


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
    return run(OPS[name], (x,), axis=axes(x, axis, name)[0], exclusive=bool(exclusive), reverse=bool(reverse))


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running sums along ``axis``: ``cumsum([a, b, c])`` is ``[a, a + b, a + b + c]``.

    ``exclusive=True`` leaves each entry out of its own sum (``[0, a, a + b]``); ``reverse=True`` sums
    from the end.
    """
    return _scan("cumsum", x, axis, exclusive, reverse)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running products along ``axis``: ``cumprod([a, b, c])`` is ``[a, a * b, a * b * c]`` (see :func:`cumsum`)."""
    return _scan("cumprod", x, axis, exclusive, reverse)


# --- sorting ------------------------------------------------------------------------------------------------------
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
    n = x.shape[-1]
    rows = builtins.max(x._value.size // builtins.max(n, 1), 1) if n else 0
    offsets = array_ops.reshape(array_ops.range(0, rows * n, builtins.max(n, 1), dtype=indices.dtype),
                                tuple(x.shape[:-1]) + (1,))
    return array_ops.gather(array_ops.reshape(x, (-1,)), indices + offsets)


def top_k(input, k=1, sorted=True, index_type=dtypes.int32, name=None):  # noqa: A002
    """The ``k`` largest entries of the last axis, largest first (ties: the lower index first), and where they are.

    >>> tl.math.top_k([1.0, 3.0, 2.0], k=2)
    TopKV2(values=<tapelab.Tensor: shape=(2,), dtype=float32, numpy=array([3., 2.], dtype=float32)>, indices=...)
    """
    x = convert_to_tensor(input)
    if int(k) < 0:
        raise InvalidArgumentError(f"top_k: k is how many of the largest entries to take, so it must be >= 0, got {k}.")
    if x.ndim == 0 or int(k) > x.shape[-1]:
        raise InvalidArgumentError(f"top_k: input must have at least k={k} entries in its last axis, got shape "
                                   f"{tuple(x.shape)}.")
    indices = _sort_order(x, -1, "DESCENDING", "top_k")[..., :int(k)]
    return TopKV2(_take_along_last(x, indices), array_ops.cast(indices, index_type))


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """The values sorted along ``axis`` (the gradient flows back to where each value came from)."""
    x = convert_to_tensor(values)
    axis = axes(x, axis, "sort")[0]
    last = x.ndim - 1
    moved = x if axis == last else array_ops.transpose(x, _swap(x.ndim, axis))
    out = _take_along_last(moved, _sort_order(moved, -1, direction, "sort"))
    return out if axis == last else array_ops.transpose(out, _swap(x.ndim, axis))


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The indices that sort ``values`` along ``axis`` (int32; ties keep their order)."""
    x = convert_to_tensor(values)
    return _sort_order(x, axes(x, axis, "argsort")[0], direction, "argsort")


def _swap(rank, axis):
    perm = list(builtins.range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return perm


# --- clipping (TF exports these at the top level only) -------------------------------------------------------------
def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """``t`` with values below ``clip_value_min`` raised to it and above ``clip_value_max`` lowered to it.

    TF's composition: ``maximum(minimum(t, max), min)``; the gradient flows where t is inside the range.
    """
    t = convert_to_tensor(t)
    low, high = (v if isinstance(v, Tensor) else convert_to_tensor(v, dtype=t.dtype)
                 for v in (clip_value_min, clip_value_max))
    out = maximum(minimum(t, high), low)
    if tuple(out.shape) != tuple(t.shape):
        raise InvalidArgumentError(f"clip_by_value: the clip values (shapes {tuple(low.shape)}, {tuple(high.shape)}) "
                                   f"would change t's shape {tuple(t.shape)}; give scalars or t's shape.")
    return out


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """``t`` scaled down so its L2 norm (over ``axes``) is at most ``clip_norm``; unchanged if it already is.

    TF's composition: ``t * clip_norm / maximum(norm, clip_norm)``, with a zero norm handled safely.
    """
    t = convert_to_tensor(t)
    clip_norm = convert_to_tensor(clip_norm, dtype=t.dtype) if not isinstance(clip_norm, Tensor) else clip_norm
    l2sum = reduce_sum(t * t, axes, keepdims=True)
    positive = l2sum > 0
    safe = array_ops.where(positive, l2sum, array_ops.ones_like(l2sum))  # (sqrt(0)'s gradient is inf)
    l2norm = array_ops.where(positive, sqrt(safe), l2sum)
    return array_ops.identity(t * clip_norm / maximum(l2norm, clip_norm))


def global_norm(t_list, name=None):
    """The L2 norm of all the tensors of ``t_list`` together, as if joined into one vector (None entries left out):
    ``sqrt(sum over tensors of sum(t ** 2))``."""
    tensors = [convert_to_tensor(t) for t in _tensor_list(t_list, "global_norm") if t is not None]
    if not tensors:  # (every entry None: as TF, a norm of 0)
        return convert_to_tensor(0.0)
    dtypes_seen = sorted({t.dtype.name for t in tensors})
    if len(dtypes_seen) > 1 or not tensors[0].dtype.is_floating:
        raise InvalidArgumentError(
            f"global_norm: every tensor of t_list must have one float dtype, got {', '.join(dtypes_seen)}. "
            "Gradients are floats; cast the others first, e.g. tl.cast(g, tl.float32).")
    return sqrt(add_n([reduce_sum(t * t) for t in tensors]))


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """``(clipped, norm)``: every tensor of ``t_list`` scaled by one factor, so their :func:`global_norm`
    is at most ``clip_norm``; ``norm`` is the global norm before clipping (or ``use_norm`` if given).

        scale = clip_norm * min(1 / norm, 1 / clip_norm)      # 1 when norm <= clip_norm
        clipped[i] = t_list[i] * scale                         # None stays None

    Unlike clipping each gradient on its own (:func:`clip_by_norm`), the directions of a gradient list are kept.
    A norm of inf or NaN makes every value NaN, as in TF (the update is unusable; the run should show it).

    >>> clipped, norm = tl.clip_by_global_norm([tl.constant([3.0]), tl.constant([4.0])], 1.0)
    >>> float(norm), [c.numpy() for c in clipped]
    (5.0, [array([0.6], dtype=float32), array([0.8], dtype=float32)])
    """
    t_list = _tensor_list(t_list, "clip_by_global_norm")
    norm = global_norm(t_list) if use_norm is None else convert_to_tensor(use_norm)
    clip = clip_norm if isinstance(clip_norm, Tensor) else convert_to_tensor(clip_norm, dtype=norm.dtype)
    one = convert_to_tensor(1.0, dtype=norm.dtype)
    scale = clip * minimum(one / norm, one / clip)
    # NaN where the norm is inf or NaN (TF adds norm - norm): nothing is silently clipped to 0
    scale = array_ops.where(is_finite(norm), scale, convert_to_tensor(float("nan"), dtype=norm.dtype))
    clipped = [None if t is None else array_ops.identity(convert_to_tensor(t) * array_ops.cast(scale, t.dtype))
               for t in t_list]
    return clipped, norm


def _tensor_list(t_list, name):
    """``t_list`` as a list, refusing one tensor (a frequent slip: the list of gradients is what is clipped)."""
    if isinstance(t_list, (Tensor, str)) or not hasattr(t_list, "__iter__"):
        raise TypeError(
            f"{name}: t_list should be a list (or tuple) of tensors, got {type(t_list).__name__}. Pass the whole "
            f"list of gradients, e.g. grads, norm = tl.clip_by_global_norm(grads, 1.0); to clip one tensor by its "
            "own norm use tl.clip_by_norm(t, clip_norm).")
    return list(t_list)


_COMPLEX = "split a complex value into two float tensors (its real and imaginary parts)."
real, imag, conj, angle = (Unsupported(f"tl.math.{name}", "complex numbers", _COMPLEX)
                           for name in ("real", "imag", "conj", "angle"))

# tf.math's names: every public name defined here, but for the few TF has only at the top level (tf.sort, ...)
__all__ = names_defined(globals(), _IMPORTED, leave_out=["TopKV2", "argsort", "clip_by_global_norm", "clip_by_norm",
                                                       "clip_by_value", "global_norm", "sort"])
