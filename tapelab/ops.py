"""The public ops, with TensorFlow's names and signatures. Each converts its arguments and runs a
primitive from :mod:`tapelab.engine.primitives` (where the math lives)."""

import builtins
import math
import sys
from types import SimpleNamespace

import numpy as np

from tapelab.engine import dtypes, recording, tape, tensor
from tapelab.engine.errors import InvalidArgumentError
from tapelab.engine.primitives import OPS
from tapelab.engine.tape import run
from tapelab.engine.tensor import Tensor, convert_to_tensor, to_numpy


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


def _binary(name, doc, accepts=None):
    """``fn(x, y)`` running primitive ``name``; ``accepts(x, y)`` may refuse the operands' dtypes first."""
    op = OPS[name]

    def fn(x, y, name=None):
        if accepts is _booleans:  # TF converts Python operands of logical ops to bool (1 is refused, not cast)
            x, y = (t if isinstance(t, Tensor) else convert_to_tensor(t, dtype=dtypes.bool) for t in (x, y))
        if not (isinstance(x, Tensor) and isinstance(y, Tensor)):
            x, y = _pair(x, y, op.name)
        if accepts is not None:
            accepts(op.name, x, y)
        try:
            return run(op, (x, y))
        except InvalidArgumentError:
            _explain_broadcast(op.name, x._value.shape, y._value.shape)
            raise

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _explain_broadcast(name, x_shape, y_shape):
    try:
        np.broadcast_shapes(x_shape, y_shape)
    except ValueError:
        raise InvalidArgumentError(
            f"{name}: shapes {tuple(x_shape)} and {tuple(y_shape)} cannot be broadcast together. Broadcasting "
            "lines the shapes up from the right; each pair of dimensions must be equal, or one of them 1. "
            "Reshape one input (tl.reshape) or reduce it (tl.reduce_sum) so the shapes line up."
        ) from None


def _unary(name, doc, accepts=None):
    op = OPS[name]

    def fn(x, name=None):
        x = convert_to_tensor(x)
        if accepts is not None:
            accepts(op.name, x)
        return run(op, (x,))

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


equal = _binary("equal", "x == y, elementwise (a bool tensor).")
not_equal = _binary("not_equal", "x != y, elementwise.")
less = _binary("less", "x < y, elementwise.", _ordered)
less_equal = _binary("less_equal", "x <= y, elementwise.", _ordered)
greater = _binary("greater", "x > y, elementwise.", _ordered)
greater_equal = _binary("greater_equal", "x >= y, elementwise.", _ordered)
logical_and = _binary("logical_and", "x and y, elementwise on bool tensors.", _booleans)
logical_or = _binary("logical_or", "x or y, elementwise on bool tensors.", _booleans)
logical_xor = _binary("logical_xor", "x or y but not both, elementwise on bool tensors.", _booleans)

negative = _unary("negative", "-x.")
square = _unary("square", "x * x. ``tl.square(8)`` gives 64.")
sqrt = _unary("sqrt", "The square root of a float tensor.")
exp = _unary("exp", "e ** x.")
log = _unary("log", "The natural logarithm.")
abs = _unary("abs", "|x|.")  # noqa: A001
sign = _unary("sign", "-1, 0 or 1 by the sign of x (gradient 0).")
floor = _unary("floor", "The largest integer <= x (no gradient: None, as in TF).")
tanh = _unary("tanh", "The hyperbolic tangent.")
sigmoid = _unary("sigmoid", "1 / (1 + exp(-x)), computed without overflow.")
relu = _unary("relu", "max(x, 0).")
logical_not = _unary("logical_not", "not x, elementwise.", _booleans)


def stop_gradient(input, name=None):
    """``input`` itself, but no gradient flows back through it."""
    return run(OPS["stop_gradient"], (convert_to_tensor(input),))


def identity(input, name=None):
    """The same values as a new tensor (a Variable gives its current value); gradients pass straight through."""
    return run(OPS["identity"], (convert_to_tensor(input),))


def add_n(inputs, name=None):
    """The elementwise sum of a list of tensors."""
    inputs = [convert_to_tensor(x) for x in inputs]
    if not inputs:
        raise ValueError("add_n: needs at least one tensor")
    shapes = {tuple(x.shape) for x in inputs}
    if len(shapes) > 1:
        raise InvalidArgumentError(
            f"add_n: all inputs must have the same shape, got {', '.join(str(tuple(x.shape)) for x in inputs)}. "
            "add_n does not broadcast; use tl.add (or +) to add tensors of different shapes."
        )
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
    if a.dtype != b.dtype:
        raise InvalidArgumentError(tape._dtype_mismatch(OPS["matmul"], (a, b)))
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
        def operand(name, shape, flipped, t):
            return f"{name} has shape {tuple(shape)}" + (f" (transposed: {tuple(t.shape)})" if flipped else "")

        raise InvalidArgumentError(
            f"matmul: inner dimensions must match, but {operand('a', a_shape, transpose_a, a)} and "
            f"{operand('b', b_shape, transpose_b, b)}: a's last dimension {a.shape[-1]} != b's second-to-last "
            f"{b.shape[-2]}. In a @ b each row of a meets each column of b; maybe one of them needs "
            + ("transposing differently (transpose_a / transpose_b)." if transpose_a or transpose_b else
               "tl.transpose().")
        )
    try:
        return run(OPS["matmul"], (a, b))
    except InvalidArgumentError:
        _explain_broadcast("matmul (batch dimensions)", a._value.shape[:-2], b._value.shape[:-2])
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
    if a.ndim < 2:
        raise InvalidArgumentError(f"matrix_transpose: needs a matrix (at least 2 axes), got shape {tuple(a.shape)}. "
                                   "A vector has no second axis to swap with: reshape it first, e.g. (1, -1).")
    return transpose(a, tuple(builtins.range(a.ndim - 2)) + (a.ndim - 1, a.ndim - 2))


def reshape(tensor, shape, name=None):
    """The same values in a new shape (one dimension may be -1: worked out from the rest)."""
    tensor = convert_to_tensor(tensor)
    shape = tuple(int(n) for n in (shape.numpy() if isinstance(shape, Tensor) else np.atleast_1d(shape)))
    if -1 in shape and tensor._value.size == 0 and 0 in shape:  # numpy refuses -1 next to a 0; TF works it out
        # from the non-zero sizes: (0, 28, 28) -> (0, -1) is (0, 784)
        known = math.prod(n for n in shape if n not in (0, -1))
        shape = tuple(max(math.prod(n for n in tensor._value.shape if n) // max(known, 1), 1) if n == -1 else n
                      for n in shape)
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
    if len(values) == 1:  # as TF: one tensor joined with nothing is itself (whatever the axis)
        return identity(values[0])
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
    if not values:
        raise ValueError("stack: needs at least one tensor to stack, got an empty list.")
    shapes = {tuple(v.shape) for v in values}
    if len(shapes) > 1:
        raise InvalidArgumentError(f"stack: every tensor must have the same shape, got {sorted(shapes)}. stack adds "
                                   "a new axis; to join tensors along an existing axis whose sizes differ, use "
                                   "tl.concat.")
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
    if len(set(out)) != len(out):  # (after -1 became the last axis: [0, -2] on a matrix names axis 0 twice)
        raise InvalidArgumentError(
            f"{name}: axis {np.atleast_1d(axis).tolist()} names an axis twice (duplicate dimension) for a tensor of "
            f"shape {tuple(x.shape)}; give each axis once."
        )
    return tuple(sorted(out))


def _reduction(name, doc, kinds="fiu"):
    """``fn(input_tensor, axis=None, keepdims=False)`` for primitive ``name``, on tensors of dtype ``kinds``."""
    op = OPS[name]

    def fn(input_tensor, axis=None, keepdims=False, name=None):
        x = input_tensor if isinstance(input_tensor, Tensor) else convert_to_tensor(
            input_tensor, dtype=dtypes.bool if kinds == "b" else None)
        if x._value.dtype.kind not in kinds:
            raise InvalidArgumentError(_reduction_dtype_text(op.name, x, kinds))
        return run(op, (x,), axis=_axes(x, axis, op.name), keepdims=bool(keepdims))

    fn.__name__ = fn.__qualname__ = name
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


def cast(x, dtype, name=None):
    """Convert to another dtype (float -> int truncates toward zero)."""
    x = convert_to_tensor(x)
    dtype = dtypes.as_dtype(dtype)
    return x if x.dtype == dtype else run(OPS["cast"], (x,), dtype=dtype)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """A vector of length ``depth`` per index: ``on_value`` at the index, ``off_value`` elsewhere.

    The new axis goes last (or at ``axis``); the dtype is ``dtype``, else that of ``on_value`` or
    ``off_value``, else float32.
    """
    indices = convert_to_tensor(indices)
    if not indices.dtype.is_integer:
        raise InvalidArgumentError(
            f"one_hot: indices must be integer class ids, got {indices.dtype.name} {tuple(indices.shape)}. "
            "Use tl.cast(indices, tl.int32)."
        )
    values = {k: convert_to_tensor(v, dtype=dtype) for k, v in (("on_value", on_value), ("off_value", off_value))
              if v is not None}
    kinds = {v.dtype for v in values.values()}
    if len(kinds) > 1:
        raise TypeError(f"one_hot: on_value is {values['on_value'].dtype.name} but off_value is "
                        f"{values['off_value'].dtype.name}; give both the same dtype (e.g. 1.0 and 0.0).")
    dtype = dtypes.as_dtype(dtype) if dtype is not None else (kinds.pop() if kinds else dtypes.float32)
    out = run(OPS["one_hot"], (indices,), depth=int(depth),
              on_value=values["on_value"]._value if "on_value" in values else 1,
              off_value=values["off_value"]._value if "off_value" in values else 0, dtype=dtype)
    if axis is None or axis == -1 or axis == indices.ndim:
        return out
    if not 0 <= axis < indices.ndim:
        raise InvalidArgumentError(f"one_hot: axis {axis} is out of range for indices of rank {indices.ndim}; "
                                   f"use -1 (last) or 0..{indices.ndim}.")
    perm = list(builtins.range(indices.ndim))
    perm.insert(axis, indices.ndim)
    return transpose(out, perm)


def _arg_axis(x, axis, name):
    if x.ndim == 0:
        raise InvalidArgumentError(f"{name}: a 0-d tensor (shape (), a single number) has no axis to search along; "
                                   "give a vector (or higher), e.g. tl.reshape(x, (1,)).")
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
    """``tensor[key]``: numpy-style indexing and slicing (recorded; the gradient scatters back).

    An index that is itself a tensor is read as its value; inside ``tl.function`` (where it has no value
    yet) an integer tensor index becomes a :func:`gather`, so the graph picks anew on every run.
    """
    parts = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, Tensor) for k in parts):
        traced = [i for i, k in enumerate(parts) if isinstance(k, Tensor) and k._traced]
        if traced:
            return _traced_index(tensor, parts, traced[0])
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


def _traced_index(tensor, parts, position):
    # x[..., i, ...] with a traced integer tensor i among full slices: a gather along that axis
    index = parts[position]
    others = [k for i, k in enumerate(parts) if i != position]
    if not index.dtype.is_integer or any(not (isinstance(k, slice) and k == slice(None)) for k in others):
        index.__index__()  # refused, with the tracing error that says what to write instead
    return gather(tensor, index, axis=position)


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
    """A tensor of shape ``dims`` filled with ``value`` (an op: a gradient reaches ``value``, summed)."""
    return broadcast_to(convert_to_tensor(value), _shape(dims))


def range(start, limit=None, delta=1, dtype=None, name=None):  # noqa: A001
    """Like Python's range, as a tensor: ``tl.range(5)`` is [0 1 2 3 4]; floats step too (``tl.range(0, 1, 0.25)``)."""
    if limit is None:
        start, limit = 0, start
    bounds = [v.numpy().item() if isinstance(v, Tensor) else v for v in (start, limit, delta)]  # (traced: refused)
    kind = (dtypes.infer_numpy_dtype(bounds) if dtype is None else dtypes.as_dtype(dtype).as_numpy_dtype)
    for v in bounds:
        convert_to_tensor(v, dtype=kind)  # TF refuses range(0.0, dtype=tl.int32): a float is not truncated
    start, limit, delta = bounds
    if delta == 0:
        raise InvalidArgumentError("range: delta must not be 0 (the range would never reach its limit).")
    if (limit - start) * delta < 0:
        raise InvalidArgumentError(
            f"range: requires start <= limit when delta > 0 (and start >= limit when delta < 0): got start "
            f"{start}, limit {limit}, delta {delta}. Swap start and limit, or change delta's sign."
        )
    if np.dtype(kind).kind == "f":  # TF computes each entry as start + i * delta in the dtype (no accumulated error)
        count = int(np.ceil(abs((limit - start) / delta)))
        return Tensor(np.asarray(start, kind) + np.arange(count).astype(kind) * np.asarray(delta, kind))
    return Tensor(np.arange(start, limit, delta, dtype=kind))


def _shape(shape):
    return tuple(int(n) for n in np.atleast_1d(shape.numpy() if isinstance(shape, Tensor) else shape))


def _primitive(op):
    def call(*inputs, **params):
        return run(op, inputs, **params)

    call.__name__ = op.name
    return call


# VJP rules call these when the backward pass itself must be recorded (higher-order gradients): every primitive
# of the table, run on tensors so the outer tape records it, plus two helpers
BACKEND = SimpleNamespace(**{name: _primitive(op) for name, op in OPS.items()},
                          zeros_like=zeros_like, ones_like=ones_like)
recording.tensor_ops = BACKEND  # (a tape differentiating under an outer tape runs its rules with these)


# --- picking, joining, shapes (the rest of TF's array ops a course meets) -----------------------
newaxis = None  # x[tl.newaxis] adds an axis of size 1, as x[None] does


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """The slices of ``params`` at ``indices`` along ``axis`` (default 0): ``gather([a, b, c], [2, 0])`` is ``[c, a]``.

    The result has shape ``params.shape[:axis] + indices.shape + params.shape[axis + 1:]``. Every index
    must be in ``0..n-1`` (no wrapping from the end, as in TF). The gradient adds ``g`` back at each
    picked index (twice for an index picked twice).
    """
    params, indices = convert_to_tensor(params), convert_to_tensor(indices)
    if batch_dims:
        raise NotImplementedError("gather: batch_dims is not supported; loop over the batch, or use tl.einsum "
                                  "with a one-hot matrix.")
    if not indices.dtype.is_integer:
        raise InvalidArgumentError(f"gather: indices must be integers, got {indices.dtype.name}; use "
                                   "tl.cast(indices, tl.int32).")
    if params.ndim == 0:
        raise InvalidArgumentError("gather: params is a 0-d tensor (shape (), one number): there is nothing to pick "
                                   "from.")
    axis = _axes(params, 0 if axis is None else axis, "gather")[0]
    return run(OPS["gather"], (params, indices), axis=axis)


def einsum(equation, *inputs, **kwargs):
    """Einstein summation: ``tl.einsum('ij,jk->ik', a, b)`` is ``a @ b``; letters in no output are summed."""
    inputs = [convert_to_tensor(x) for x in inputs]
    try:
        return run(OPS["einsum"], tuple(inputs), equation=str(equation))
    except InvalidArgumentError as e:
        shapes = ", ".join(str(tuple(x.shape)) for x in inputs)
        raise InvalidArgumentError(
            f"einsum: '{equation}' does not fit the inputs' shapes {shapes}: each input needs one letter per axis, "
            f"and a letter must have the same size wherever it appears. ({str(e).split(': ', 2)[-1]})"
        ) from None


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """Add ``paddings[i] = [before, after]`` entries around axis ``i``: zeros (or ``constant_values``), or with
    ``mode="REFLECT"`` / ``"SYMMETRIC"`` mirrored copies of the edge."""
    x = convert_to_tensor(tensor)
    given = to_numpy(paddings)
    if given.size == 0:  # (no pairs: a scalar has no axes to pad)
        given = given.reshape(0, 2)
    if given.ndim != 2 or given.shape[1:] != (2,):
        raise InvalidArgumentError(f"pad: paddings must be one [before, after] pair per axis of shape "
                                   f"{tuple(x.shape)}, i.e. of shape ({x.ndim}, 2), got {given.tolist()}. E.g. "
                                   "[[1, 1]] pads a vector by one entry at each end.")
    paddings = tuple(tuple(int(n) for n in p) for p in given.tolist())
    if len(paddings) != x.ndim or any(n < 0 for p in paddings for n in p):
        raise InvalidArgumentError(f"pad: paddings must be one non-negative [before, after] pair per axis of shape "
                                   f"{tuple(x.shape)}, got {[list(p) for p in paddings]}.")
    mode = str(mode).lower()
    if mode not in ("constant", "reflect", "symmetric"):
        raise ValueError(f"pad: mode must be 'CONSTANT', 'REFLECT' or 'SYMMETRIC', got {mode.upper()!r}")
    widest = {"reflect": 1, "symmetric": 0}.get(mode)  # a mirror copies at most the axis (less its edge entry)
    for axis, (p, n) in enumerate(zip(paddings, x.shape)):
        if widest is not None and max(p) > n - widest:
            raise InvalidArgumentError(
                f"pad: {mode.upper()} mode mirrors the tensor's own entries, so each padding of axis {axis} (size {n}) "
                f"must be at most {n - widest}, got {list(p)}. Pad less, or use mode='CONSTANT'.")
    value = convert_to_tensor(constant_values, dtype=x.dtype)._value.item() if mode == "constant" else 0
    return run(OPS["pad"], (x,), paddings=paddings, mode=mode, constant_values=value)


def squeeze(input, axis=None, name=None):
    """Remove axes of size 1 (all of them, or those in ``axis``)."""
    x = convert_to_tensor(input)
    if axis is not None and x.ndim == 0:
        raise InvalidArgumentError(f"squeeze: a scalar has no axes to remove, but axis={axis!r} was given. Leave out "
                                   "axis (or squeeze a tensor with axes of size 1).")
    axes = _axes(x, axis, "squeeze") if axis is not None else tuple(i for i, n in enumerate(x.shape) if n == 1)
    if any(x.shape[a] != 1 for a in axes):
        raise InvalidArgumentError(f"squeeze: can only remove axes of size 1, but shape {tuple(x.shape)} has "
                                   f"{[x.shape[a] for a in axes]} at axes {list(axes)}.")
    return reshape(x, [n for i, n in enumerate(x.shape) if i not in axes])


def shape(input, out_type=dtypes.int32, name=None):
    """The shape as an int32 tensor: ``tl.shape(tl.zeros((2, 3)))`` is [2 3] (``x.shape`` gives a TensorShape)."""
    return Tensor(np.asarray(convert_to_tensor(input)._value.shape, dtypes.as_dtype(out_type).as_numpy_dtype))


def size(input, out_type=dtypes.int32, name=None):
    """The number of elements, as an int32 tensor."""
    return Tensor(np.asarray(convert_to_tensor(input)._value.size, dtypes.as_dtype(out_type).as_numpy_dtype))


def rank(input, name=None):
    """The number of axes, as an int32 tensor."""
    return Tensor(np.asarray(convert_to_tensor(input)._value.ndim, np.int32))


def linspace(start, stop, num, name=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop``, both included (float64 for integer ends).

    As in TF it is made of ops (start + i * step, joined with the ends), so a gradient can reach
    ``start`` and ``stop``.
    """
    start = convert_to_tensor(start)
    if not start.dtype.is_floating:
        start = cast(start, dtypes.float64)
    stop = convert_to_tensor(stop, dtype=start.dtype) if not isinstance(stop, Tensor) else cast(stop, start.dtype)
    num = int(to_numpy(num))
    if num < 0:
        raise InvalidArgumentError(f"linspace: num must be >= 0, got {num}.")
    if axis not in (0, -1) or start.ndim:
        raise NotImplementedError("linspace: only scalar start and stop are supported (axis 0)")
    if num <= 1:
        return reshape(start, (1,))[:num]
    step = (stop - start) / Tensor(np.asarray(num - 1, start._value.dtype))
    middle = start + Tensor(np.arange(1, num - 1).astype(start._value.dtype)) * step
    return concat([reshape(start, (1,)), middle, reshape(stop, (1,))], 0)


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """The identity matrix (``num_rows`` x ``num_columns``, square by default), optionally a batch of them."""
    matrix = np.eye(int(num_rows), int(num_rows if num_columns is None else num_columns),
                    dtype=dtypes.as_dtype(dtype).as_numpy_dtype)
    if batch_shape is not None:
        matrix = np.broadcast_to(matrix, _shape(batch_shape) + matrix.shape).copy()
    return Tensor(matrix)


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
    l2norm = where(positive, sqrt(where(positive, l2sum, ones_like(l2sum))), l2sum)  # sqrt(0)'s gradient is inf
    return identity(t * clip_norm / maximum(l2norm, clip_norm))


def print(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):  # noqa: A001
    """Print text and tensors' values, like ``tf.print``; inside ``tl.function`` it prints on every call.

    Python's ``print`` runs only while a function is traced; this is an op of the graph. Tensors print
    as TF prints them (the first and last ``summarize`` entries of each axis; ``None`` or -1: all).
    TF prints to stderr by default; tapelab prints to stdout, where a notebook shows it plainly.
    """
    from tapelab.engine import nest
    from tapelab.engine.primitives import PrintSlot

    tensors = []

    def slot(x):
        if isinstance(x, Tensor):
            tensors.append(x)
            return PrintSlot(len(tensors) - 1)
        return x

    layout = tuple(slot(x) if isinstance(x, Tensor) else nest.pack_like(x, [slot(v) for v in nest.flatten(x)])
                   for x in inputs)
    stream = output_stream if output_stream is not None and hasattr(output_stream, "write") else None
    params = dict(layout=layout, sep=sep, end=end, stream=stream, summarize=-1 if summarize is None else int(summarize))
    graph = recording.tracing_graph()
    if graph is not None:  # while tl.function traces, the print only joins the graph: it prints on every run
        recording.record(OPS["print"], tuple(tensors), tuple(t._value for t in tensors),
                         Tensor(np.zeros((0,), bool)), params, None)
        return None
    run(OPS["print"], tuple(tensors), **params)


tensor._ops = sys.modules[__name__]  # a tensor's operators (x + y, x[k], ...) call these ops
