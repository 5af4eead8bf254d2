"""The public ops, with TensorFlow's names and signatures. Each converts its arguments and runs a
primitive from :mod:`tapelab.primitives` (where the math lives)."""

import builtins
from types import SimpleNamespace

import numpy as np

from tapelab import dtypes
from tapelab.errors import InvalidArgumentError
from tapelab.primitives import OPS
from tapelab.tape import run
from tapelab.tensor import Tensor, convert_to_tensor


def _pair(x, y, name="op"):
    """Two operands as tensors: a Python number or array next to a tensor takes that tensor's dtype."""
    try:
        if isinstance(x, Tensor):
            return x, (y if isinstance(y, Tensor) else convert_to_tensor(y, dtype=x.dtype))
        if isinstance(y, Tensor):
            return convert_to_tensor(x, dtype=y.dtype), y
        x = convert_to_tensor(x)  # neither is a tensor: as in TF, the first operand decides the dtype
        return x, convert_to_tensor(y, dtype=x.dtype)
    except (TypeError, ValueError) as e:
        kinds = " and ".join(f"{t.dtype.name} tensor {tuple(t.shape)}" if isinstance(t, Tensor) else type(t).__name__
                             for t in (x, y))
        raise TypeError(f"{name}: cannot use these operands ({kinds}): {e}") from None


def _binary(name, doc):
    op = OPS[name]

    def fn(x, y, name=None):
        if not (isinstance(x, Tensor) and isinstance(y, Tensor)):
            x, y = _pair(x, y, op.name)
        try:
            return run(op, (x, y))
        except InvalidArgumentError:
            _explain_broadcast(op.name, x, y)
            raise

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _explain_broadcast(name, x, y):
    try:
        np.broadcast_shapes(x._value.shape, y._value.shape)
    except ValueError:
        raise InvalidArgumentError(
            f"{name}: shapes {tuple(x.shape)} and {tuple(y.shape)} cannot be broadcast together. Broadcasting "
            "lines the shapes up from the right; each pair of dimensions must be equal, or one of them 1. "
            "Reshape one input (tl.reshape) or reduce it (tl.reduce_sum) so the shapes line up."
        ) from None


def _unary(name, doc):
    op = OPS[name]

    def fn(x, name=None):
        return run(op, (convert_to_tensor(x),))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


add = _binary("add", "x + y, elementwise with broadcasting. ``tl.add(1, 2)`` gives 3.")
subtract = _binary("subtract", "x - y, elementwise with broadcasting.")
multiply = _binary("multiply", "x * y, elementwise with broadcasting.")
divide = _binary("divide", "x / y, elementwise (integers give float64, as in TF).")
truediv = divide
pow = _binary("pow", "x ** y, elementwise.")  # noqa: A001
maximum = _binary("maximum", "The larger of x and y, elementwise.")
minimum = _binary("minimum", "The smaller of x and y, elementwise.")
floormod = _binary("floormod", "x % y (the remainder of floor division), elementwise.")
mod = floormod
floordiv = _binary("floordiv", "x // y, elementwise (no gradient).")
equal = _binary("equal", "x == y, elementwise (a bool tensor).")
not_equal = _binary("not_equal", "x != y, elementwise.")
less = _binary("less", "x < y, elementwise.")
less_equal = _binary("less_equal", "x <= y, elementwise.")
greater = _binary("greater", "x > y, elementwise.")
greater_equal = _binary("greater_equal", "x >= y, elementwise.")
logical_and = _binary("logical_and", "x and y, elementwise on bool tensors.")
logical_or = _binary("logical_or", "x or y, elementwise on bool tensors.")

negative = _unary("negative", "-x.")
square = _unary("square", "x * x. ``tl.square(8)`` gives 64.")
sqrt = _unary("sqrt", "The square root of a float tensor.")
exp = _unary("exp", "e ** x.")
log = _unary("log", "The natural logarithm.")
abs = _unary("abs", "|x|.")  # noqa: A001
sign = _unary("sign", "-1, 0 or 1 by the sign of x (gradient 0).")
floor = _unary("floor", "The largest integer <= x (gradient 0).")
tanh = _unary("tanh", "The hyperbolic tangent.")
sigmoid = _unary("sigmoid", "1 / (1 + exp(-x)), computed without overflow.")
relu = _unary("relu", "max(x, 0).")
logical_not = _unary("logical_not", "not x, elementwise.")
stop_gradient = _unary("stop_gradient", "x itself, but no gradient flows back through it.")


def identity(input, name=None):
    """The same values as a new tensor (a Variable gives its current value); gradients pass straight through."""
    return run(OPS["identity"], (convert_to_tensor(input),))


def add_n(inputs, name=None):
    """The elementwise sum of a list of tensors."""
    inputs = [convert_to_tensor(x) for x in inputs]
    if not inputs:
        raise ValueError("add_n: needs at least one tensor")
    total = inputs[0]
    for x in inputs[1:]:
        total = add(total, x)
    return total


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    """The matrix product ``a @ b`` (batched over leading dimensions).

    >>> tl.matmul([[2.0]], [[2.0]])
    <tapelab.Tensor: shape=(1, 1), dtype=float32, numpy=array([[4.]], dtype=float32)>
    """
    a, b = _pair(a, b, "matmul")
    a_shape, b_shape = a._value.shape, b._value.shape
    if len(a_shape) < 2 or len(b_shape) < 2:
        raise InvalidArgumentError(
            f"matmul: both inputs must be at least 2-D (matrices), got shapes {tuple(a.shape)} and "
            f"{tuple(b.shape)}. Make a vector a matrix with tl.reshape(v, (1, -1)) (a row) or (-1, 1) (a column)."
        )
    if transpose_a:
        a = matrix_transpose(a)
    if transpose_b:
        b = matrix_transpose(b)
    if a._value.shape[-1] != b._value.shape[-2]:
        raise InvalidArgumentError(
            f"matmul: inner dimensions must match, but a has shape {tuple(a.shape)} and b has shape "
            f"{tuple(b.shape)}: a's last dimension {a.shape[-1]} != b's second-to-last {b.shape[-2]}. "
            "In a @ b each row of a meets each column of b; maybe one of them needs tl.transpose()."
        )
    try:
        return run(OPS["matmul"], (a, b))
    except InvalidArgumentError:
        _explain_broadcast("matmul (batch dimensions)", Tensor(a._value[..., 0, 0]), Tensor(b._value[..., 0, 0]))
        raise


def transpose(a, perm=None, conjugate=False, name=None):
    """Permute the axes (default: reverse them)."""
    a = convert_to_tensor(a)
    given = tuple(reversed(builtins.range(a.ndim))) if perm is None else tuple(int(p) for p in perm)
    perm = tuple(p % max(a.ndim, 1) if -a.ndim <= p < a.ndim else p for p in given)  # -1 means the last axis
    if sorted(perm) != list(builtins.range(a.ndim)):
        raise InvalidArgumentError(
            f"transpose: perm {given} is not a permutation of the {a.ndim} axes of a tensor of shape "
            f"{tuple(a.shape)}; give each axis 0..{a.ndim - 1} exactly once."
        )
    return run(OPS["transpose"], (a,), perm=perm)


def matrix_transpose(a, name=None):
    """Swap the last two axes."""
    a = convert_to_tensor(a)
    return transpose(a, tuple(builtins.range(a.ndim - 2)) + (a.ndim - 1, a.ndim - 2))


def reshape(tensor, shape, name=None):
    """The same values in a new shape (one dimension may be -1: worked out from the rest)."""
    tensor = convert_to_tensor(tensor)
    shape = tuple(int(n) for n in (shape.numpy() if isinstance(shape, Tensor) else np.atleast_1d(shape)))
    try:
        return run(OPS["reshape"], (tensor,), shape=shape)
    except InvalidArgumentError:
        raise InvalidArgumentError(
            f"reshape: cannot reshape a tensor with {tensor._value.size} elements (shape {tuple(tensor.shape)}) "
            f"into shape {shape}. The number of elements must stay the same; use -1 for one dimension to let "
            "tapelab work it out."
        ) from None


def expand_dims(input, axis, name=None):
    """Insert a dimension of size 1 at ``axis``."""
    x = convert_to_tensor(input)
    shape = list(x.shape)
    axis = int(axis)
    if not -len(shape) - 1 <= axis <= len(shape):
        raise InvalidArgumentError(
            f"expand_dims: axis {axis} is out of range for a tensor of shape {tuple(shape)}: a new axis can go at "
            f"positions {-len(shape) - 1}..{len(shape)}."
        )
    shape.insert(axis if axis >= 0 else len(shape) + 1 + axis, 1)
    return reshape(x, shape)


def broadcast_to(input, shape, name=None):
    """Repeat ``input`` along size-1 (or missing leading) axes to reach ``shape``."""
    x = convert_to_tensor(input)
    shape = tuple(int(n) for n in shape)
    try:
        return run(OPS["broadcast_to"], (x,), shape=shape)
    except InvalidArgumentError:
        raise InvalidArgumentError(
            f"broadcast_to: cannot broadcast shape {tuple(x.shape)} to {shape}; each dimension must match or be 1."
        ) from None


def concat(values, axis, name=None):
    """Join tensors along an existing axis."""
    values = [convert_to_tensor(v) for v in values]
    if not values:
        raise ValueError("concat: needs at least one tensor")
    if any(v.ndim == 0 for v in values):
        raise InvalidArgumentError(
            f"concat: cannot join 0-d (scalar) tensors, shapes {', '.join(str(tuple(v.shape)) for v in values)}: "
            "they have no axis to join along. Use tl.stack(values) to make a new axis."
        )
    try:
        return run(OPS["concat"], tuple(values), axis=int(axis))
    except InvalidArgumentError as e:
        shapes = ", ".join(str(tuple(v.shape)) for v in values)
        raise InvalidArgumentError(
            f"concat: cannot join shapes {shapes} along axis {axis}: all dimensions except axis {axis} must "
            f"match, and all dtypes too. ({e})"
        ) from None


def stack(values, axis=0, name=None):
    """Join tensors of equal shape along a new axis."""
    values = [convert_to_tensor(v) for v in values]
    return concat([expand_dims(v, axis) for v in values], axis)


def _axes(x, axis, name):
    """Normalise a reduction's ``axis`` to a sorted tuple of non-negative ints (or None: all)."""
    if axis is None:
        return None
    axis = axis.numpy() if isinstance(axis, Tensor) else axis
    out = []
    for a in np.atleast_1d(axis):
        a = int(a)
        if not -x.ndim <= a < max(x.ndim, 1):
            raise InvalidArgumentError(
                f"{name}: axis {a} is out of range for a tensor of shape {tuple(x.shape)} (rank {x.ndim}); "
                f"valid axes are {-x.ndim}..{x.ndim - 1}."
            )
        out.append(a % max(x.ndim, 1))
    return tuple(sorted(set(out)))


def _reduction(name, doc):
    op = OPS[name]

    def fn(input_tensor, axis=None, keepdims=False, name=None):
        x = convert_to_tensor(input_tensor)
        if x._value.dtype.kind == "b" and op.name != "reduce_max":
            raise InvalidArgumentError(
                f"{op.name}: got a bool tensor; TF does not add up booleans. Count them as numbers: "
                f"{op.name}(tl.cast(x, tl.int32)) (or tl.float32 for a fraction)."
            )
        return run(op, (x,), axis=_axes(x, axis, op.name), keepdims=bool(keepdims))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


reduce_sum = _reduction("reduce_sum", "Sum over ``axis`` (all axes by default). ``tl.reduce_sum([1, 2, 3])`` is 6.")
reduce_mean = _reduction("reduce_mean", "Mean over ``axis`` (all axes by default).")
reduce_max = _reduction("reduce_max", "Maximum over ``axis`` (all axes by default).")


def cast(x, dtype, name=None):
    """Convert to another dtype (float -> int truncates toward zero)."""
    x = convert_to_tensor(x)
    dtype = dtypes.as_dtype(dtype)
    return x if x.dtype == dtype else run(OPS["cast"], (x,), dtype=dtype)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """A vector of length ``depth`` per index: ``on_value`` at the index, ``off_value`` elsewhere."""
    if axis not in (None, -1):
        raise NotImplementedError("one_hot: only axis=-1 (the default) is supported")
    indices = convert_to_tensor(indices)
    if not indices.dtype.is_integer:
        raise InvalidArgumentError(
            f"one_hot: indices must be integer class ids, got {indices.dtype.name} {tuple(indices.shape)}. "
            "Use tl.cast(indices, tl.int32)."
        )
    return run(OPS["one_hot"], (indices,), depth=int(depth),
               on_value=1 if on_value is None else on_value, off_value=0 if off_value is None else off_value,
               dtype=dtypes.as_dtype(dtype or dtypes.float32))


def _arg_axis(x, axis, name):
    axis = _axes(x, 0 if axis is None else axis, name)[0]
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


def where(condition, x=None, y=None, name=None):
    """Pick from ``x`` where ``condition`` is true, else from ``y`` (broadcasting)."""
    if x is None or y is None:
        raise NotImplementedError("where: give both x and y (the index-returning form is not supported)")
    condition = convert_to_tensor(condition)
    if not condition.dtype.is_bool:
        raise InvalidArgumentError(f"where: condition must be a bool tensor, got {condition.dtype.name}")
    x, y = _pair(x, y, "where")
    if x.dtype != y.dtype:
        raise InvalidArgumentError(_dtype_text("where", x, y))
    try:
        np.broadcast_shapes(condition._value.shape, x._value.shape, y._value.shape)
    except ValueError:
        raise InvalidArgumentError(
            f"where: condition, x and y have shapes {tuple(condition.shape)}, {tuple(x.shape)} and {tuple(y.shape)}, "
            "which cannot be broadcast together (lined up from the right, each dimension must be equal or 1). "
            "Reshape the condition or the values (tl.reshape, tl.broadcast_to) so they line up."
        ) from None
    return run(OPS["where"], (condition, x, y))


def _dtype_text(name, x, y):
    return f"{name}: x and y must have the same dtype, got {x.dtype.name} and {y.dtype.name}; use tl.cast."


def getitem(tensor, key):
    """``tensor[key]``: numpy-style indexing and slicing (recorded; the gradient scatters back)."""
    if isinstance(key, tuple):
        key = tuple(k._value if isinstance(k, Tensor) else k for k in key)
    elif isinstance(key, Tensor):
        key = key._value
    try:
        return run(OPS["getitem"], (tensor,), key=key)
    except InvalidArgumentError as e:
        raise InvalidArgumentError(
            f"{e}. Index a tensor of shape {tuple(tensor.shape)} with at most {tensor.ndim} indices, each in "
            "0..size-1 (or -size..-1) of its axis."
        ) from None


def _scatter(g, key, shape):
    return run(OPS["scatter"], (g,), key=key, shape=shape)


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


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Per-example cross-entropy of integer ``labels`` against unnormalised ``logits``.

    ``logits`` has shape (batch, classes), ``labels`` shape (batch,) with values in [0, classes).
    """
    if labels is None or logits is None:
        raise ValueError("sparse_softmax_cross_entropy_with_logits: pass labels= and logits= by name")
    return _checked_sparse_xent(convert_to_tensor(labels), convert_to_tensor(logits))


def _checked_sparse_xent(labels, logits):
    # (tensors: what the public function and the Keras loss, which converted them already, share)
    name = "sparse_softmax_cross_entropy_with_logits"
    if labels._value.dtype.kind not in "iu":
        raise InvalidArgumentError(
            f"{name}: labels must be integer class ids, got {labels.dtype.name}. Use tl.cast(labels, tl.int32); "
            "for one-hot or probability labels use softmax_cross_entropy_with_logits."
        )
    if logits.ndim < 1 or labels._value.shape != logits._value.shape[:-1]:
        raise InvalidArgumentError(
            f"{name}: logits should have shape labels.shape + (classes,), got labels {tuple(labels.shape)} and "
            f"logits {tuple(logits.shape)}. Typically labels is (batch,) and logits (batch, classes)."
        )
    classes = logits._value.shape[-1]
    if classes == 0 and labels._value.size:
        raise InvalidArgumentError(f"{name}: logits of shape {tuple(logits.shape)} have 0 classes (last axis).")
    return run(OPS[name], (labels, logits))  # (the op itself checks that every label is in range)


def zeros(shape, dtype=dtypes.float32, name=None):
    """A tensor of zeros (float32 unless ``dtype`` says otherwise)."""
    return Tensor(np.zeros(_shape(shape), dtypes.as_dtype(dtype).as_numpy_dtype))


def ones(shape, dtype=dtypes.float32, name=None):
    """A tensor of ones (float32 unless ``dtype`` says otherwise)."""
    return Tensor(np.ones(_shape(shape), dtypes.as_dtype(dtype).as_numpy_dtype))


def zeros_like(input, dtype=None, name=None):
    """Zeros with the shape (and dtype, unless given) of ``input``."""
    x = convert_to_tensor(input)
    return zeros(x.shape, dtype or x.dtype)


def ones_like(input, dtype=None, name=None):
    """Ones with the shape (and dtype, unless given) of ``input``."""
    x = convert_to_tensor(input)
    return ones(x.shape, dtype or x.dtype)


def fill(dims, value, name=None):
    """A tensor of shape ``dims`` filled with ``value``."""
    v = convert_to_tensor(value)
    return Tensor(np.full(_shape(dims), v._value))


def range(start, limit=None, delta=1, dtype=None, name=None):  # noqa: A001
    """Like Python's range, as a tensor: ``tl.range(5)`` is [0 1 2 3 4]."""
    if limit is None:
        start, limit = 0, start
    kind = dtypes.infer_numpy_dtype([start, limit, delta]) if dtype is None else dtypes.as_dtype(dtype).as_numpy_dtype
    return Tensor(np.arange(start, limit, delta, dtype=kind))


def _shape(shape):
    return tuple(int(n) for n in np.atleast_1d(shape.numpy() if isinstance(shape, Tensor) else shape))


# VJP rules call these when the backward pass itself must be recorded (higher-order gradients).
BACKEND = SimpleNamespace(
    reshape=reshape, reduce_sum=reduce_sum, broadcast_to=broadcast_to, transpose=transpose, cast=cast,
    sign=sign, floor=floor, where=where, exp=exp, log=log, softmax=softmax, one_hot=one_hot,
    getitem=getitem, scatter=_scatter, zeros_like=zeros_like, ones_like=ones_like,
)
