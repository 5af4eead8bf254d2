"""How a public op wraps a primitive of the table: the factories for elementwise ops (:func:`unary`,
:func:`binary`), the conversion of their operands (:func:`pair`) and the argument checks every namespace shares
(:func:`axes`, :func:`shape_tuple`). ``tl.math``, ``tl.nn``, ``tl.linalg`` and the array ops build on these."""

import numpy as np

from tapelab.engine.errors import InvalidArgumentError
from tapelab.engine.primitives import OPS
from tapelab.engine.tape import run
from tapelab.engine.tensor import Tensor, convert_to_tensor, to_numpy


def pair(x, y, name="op"):
    """Two operands as tensors: a Python number or array next to a tensor takes that tensor's dtype."""
    try:
        if isinstance(x, Tensor):
            return x, (y if isinstance(y, Tensor) else convert_to_tensor(y, dtype=x.dtype))
        if isinstance(y, Tensor):
            return convert_to_tensor(x, dtype=y.dtype), y
        x = convert_to_tensor(x)  # neither is a tensor: as in TF, the first operand decides the dtype
        return x, convert_to_tensor(y, dtype=x.dtype)
    except (TypeError, ValueError) as e:
        if any(getattr(type(t), "_not_a_tensor", None) for t in (x, y)):
            raise  # (its own message says what to do)
        kinds = " and ".join(f"{t.dtype.name} tensor {tuple(t.shape)}" if isinstance(t, Tensor) else type(t).__name__
                             for t in (x, y))
        raise TypeError(f"{name}: cannot use these operands ({kinds}): {e}") from None


def explain_broadcast(name, x_shape, y_shape):
    """Raise the learner's error if the two shapes do not broadcast (else return: the failure was another one)."""
    try:
        np.broadcast_shapes(x_shape, y_shape)
    except ValueError:
        raise InvalidArgumentError(
            f"{name}: shapes {tuple(x_shape)} and {tuple(y_shape)} cannot be broadcast together. Broadcasting "
            "lines the shapes up from the right; each pair of dimensions must be equal, or one of them 1. "
            "Reshape one input (tl.reshape) or reduce it (tl.reduce_sum) so the shapes line up."
        ) from None


def binary(primitive, doc, accepts=None, python_dtype=None):
    """``fn(x, y)`` running ``primitive`` (an op's name in the table); ``accepts(name, x, y)`` may refuse the
    operands' dtypes first. ``python_dtype``: the dtype a Python operand becomes (TF converts those of logical ops
    to bool: 1 is refused, not cast); else it takes the other operand's dtype (:func:`pair`)."""
    op = OPS[primitive]

    def fn(x, y, name=None):  # (name: TF's name for the op in a graph, accepted and unused)
        if python_dtype is not None:
            x, y = (t if isinstance(t, Tensor) else convert_to_tensor(t, dtype=python_dtype) for t in (x, y))
        if not (isinstance(x, Tensor) and isinstance(y, Tensor)):
            x, y = pair(x, y, op.name)
        if accepts is not None:
            accepts(op.name, x, y)
        try:
            return run(op, (x, y))
        except InvalidArgumentError:
            explain_broadcast(op.name, x._value.shape, y._value.shape)
            raise

    fn.__name__ = fn.__qualname__ = primitive
    fn.__doc__ = doc
    return fn


def unary(primitive, doc, accepts=None, argument="x"):
    """``fn(x)`` running ``primitive``; ``accepts(name, x)`` may refuse the operand's dtype first.
    ``argument="features"``: TF's name for the argument of an activation (``tl.nn.relu(features=x)``)."""
    op = OPS[primitive]

    def fn(x, name=None):
        x = convert_to_tensor(x)
        if accepts is not None:
            accepts(op.name, x)
        return run(op, (x,))

    def activation(features, name=None):
        return fn(features)

    chosen = activation if argument == "features" else fn
    chosen.__name__ = chosen.__qualname__ = primitive
    chosen.__doc__ = doc
    return chosen


def axes(x, axis, name):
    """Normalise an ``axis`` argument to a sorted tuple of non-negative ints (or None: all)."""
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


def shape_deciding(value, what):
    """``value`` as a numpy array, for an argument that decides the result's shape (``what`` says which): inside
    ``tl.function`` a tensor computed in the function has no fixed value, so it refuses, saying why (a graph's
    shapes are fixed when it is traced)."""
    if isinstance(value, Tensor) and value._traced:
        value._refuse(what)
    return np.asarray(to_numpy(value))


def shape_tuple(shape):
    """A ``shape`` argument (ints, a list, a TensorShape or an int tensor) as a tuple of ints."""
    return tuple(int(n) for n in np.atleast_1d(shape.numpy() if isinstance(shape, Tensor) else shape))


def names_defined(namespace, imported, *, also=(), leave_out=()):
    """A namespace module's ``__all__``: the public names it defined (those not in ``imported``, the names its
    imports made), with the imported ones TF has in this namespace too (``also``), less ``leave_out`` (names TF has
    only elsewhere). A new op's wrapper joins its module's ``__all__`` by being defined there."""
    return sorted({n for n in namespace if not n.startswith("_") and n not in imported} - set(leave_out) | set(also))
