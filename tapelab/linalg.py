"""``tl.linalg``: matrix ops, as in ``tf.linalg`` (on the last two axes; leading axes are a batch)."""

import builtins
import math

import numpy as np

from tapelab import op_wrappers
from tapelab.array_ops import einsum, expand_dims, eye, reshape, transpose  # noqa: F401  (einsum, eye: tf.linalg's too)
from tapelab.engine import tape
from tapelab.engine.errors import InvalidArgumentError
from tapelab.engine.primitives import OPS
from tapelab.engine.tape import run
from tapelab.engine.tensor import convert_to_tensor
from tapelab.math import abs, global_norm, reduce_max, reduce_sum, sqrt  # noqa: F401  (global_norm: tf.linalg's)
from tapelab.op_wrappers import explain_broadcast, names_defined, pair, shape_deciding

_IMPORTED = set(globals())  # (a public name defined below joins __all__, at the end)


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    """The matrix product ``a @ b`` (batched over leading dimensions).

    >>> tl.matmul([[2.0]], [[2.0]])
    <tapelab.Tensor: shape=(1, 1), dtype=float32, numpy=array([[4.]], dtype=float32)>
    """
    a, b = pair(a, b, "matmul")
    problem = _operands_problem(a, b)  # (each check says what is wrong; the raise stays here, in the learner's call)
    if problem:
        raise InvalidArgumentError(problem)
    a_shape, b_shape = a._value.shape, b._value.shape
    if transpose_a:
        a = matrix_transpose(a)
    if transpose_b:
        b = matrix_transpose(b)
    problem = _inner_problem(a, b, a_shape, b_shape, transpose_a, transpose_b)
    if problem:
        raise InvalidArgumentError(problem)
    try:
        return run(OPS["matmul"], (a, b))
    except InvalidArgumentError:
        explain_broadcast("matmul (batch dimensions)", a._value.shape[:-2], b._value.shape[:-2])
        raise


def _operands_problem(a, b):
    if a.dtype != b.dtype:
        return tape.dtype_mismatch(OPS["matmul"], (a, b))
    if a.ndim < 2 or b.ndim < 2:
        return (f"matmul: both inputs must be at least 2-D (matrices), got shapes {tuple(a.shape)} and "
                f"{tuple(b.shape)}. Make a vector a matrix with tl.reshape(v, (1, -1)) (a row) or (-1, 1) (a column).")
    return None


def _inner_problem(a, b, a_shape, b_shape, transpose_a, transpose_b):
    # (a and b as multiplied, after any transpose; a_shape and b_shape as given)
    if a._value.shape[-1] == b._value.shape[-2]:
        return None

    def operand(name, shape, flipped, t):
        return f"{name} has shape {tuple(shape)}" + (f" (transposed: {tuple(t.shape)})" if flipped else "")

    return (f"matmul: inner dimensions must match, but {operand('a', a_shape, transpose_a, a)} and "
            f"{operand('b', b_shape, transpose_b, b)}: a's last dimension {a.shape[-1]} != b's second-to-last "
            f"{b.shape[-2]}. In a @ b each row of a meets each column of b; maybe one of them needs "
            + ("transposing differently (transpose_a / transpose_b)." if transpose_a or transpose_b else
               "tl.transpose()."))


def tensordot(a, b, axes, name=None):
    """Sum of products over the axes ``axes`` pairs up: an int ``n`` pairs the last ``n`` axes of ``a`` with the
    first ``n`` of ``b`` (``n = 1``: a matrix product, ``0``: the outer product); ``[a_axes, b_axes]`` names them.
    The result has ``a``'s other axes, then ``b``'s. Built as TF builds it: a transpose and a reshape of each side
    into a matrix, one :func:`matmul`, a reshape back; the tape records those ops."""
    a, b = pair(a, b, "tensordot")
    a_axes, b_axes = _contracted(a, b, axes)
    for i, j in zip(a_axes, b_axes):
        if a._value.shape[i] != b._value.shape[j]:
            raise InvalidArgumentError(
                f"tensordot: axis {i} of a (shape {tuple(a.shape)}) has size {a._value.shape[i]} but the axis it is "
                f"summed with, axis {j} of b (shape {tuple(b.shape)}), has size {b._value.shape[j]}; the paired axes "
                "must have the same size.")
    free_a = [i for i in builtins.range(a.ndim) if i not in a_axes]
    free_b = [j for j in builtins.range(b.ndim) if j not in b_axes]
    summed = math.prod(a._value.shape[i] for i in a_axes)
    left = _as_matrix(a, free_a + a_axes, (math.prod(a._value.shape[i] for i in free_a), summed))
    right = _as_matrix(b, b_axes + free_b, (summed, math.prod(b._value.shape[j] for j in free_b)))
    shape = [a._value.shape[i] for i in free_a] + [b._value.shape[j] for j in free_b]
    return reshape(matmul(left, right), shape)


def _contracted(a, b, axes):
    """``(a_axes, b_axes)``: the paired axes of a tensordot, as lists of non-negative ints (TF's errors)."""
    if isinstance(axes, (int, np.integer)) or (hasattr(axes, "ndim") and axes.ndim == 0):  # (an int tensor too)
        n = int(axes)
        if n < 0:
            raise ValueError(f"tensordot: `axes` must be at least 0. Received: {n}.")
        if n > a.ndim or n > b.ndim:
            raise ValueError(f"tensordot: `axes` must not be larger than the number of dimensions of tensor: "
                             f"received {n}, vs tensor dimensions {a.ndim} and {b.ndim}.")
        return list(builtins.range(a.ndim - n, a.ndim)), list(builtins.range(n))
    if len(axes) != 2:
        raise ValueError(f"tensordot: `axes` must be an int or a pair [a_axes, b_axes], got {axes!r}.")
    a_axes, b_axes = (_axes_of(t, side, ax) for t, side, ax in zip((a, b), "ab", axes))
    if len(a_axes) != len(b_axes):
        raise ValueError(f"tensordot: Different number of contraction axes `a` and `b`, {len(a_axes)} != "
                         f"{len(b_axes)}. Pair each summed axis of a with one of b.")
    return a_axes, b_axes


def _axes_of(t, side, given):
    """One side's summed axes as non-negative ints; one out of range is refused (TF: an IndexError), not wrapped."""
    out = []
    for i in np.atleast_1d(shape_deciding(given, "tensordot's axes")):
        if not -t.ndim <= int(i) < t.ndim:
            raise IndexError(f"tensordot: axis {int(i)} of {side} is out of range: {side} has shape {tuple(t.shape)}, "
                             f"so its axes are {-t.ndim}..{t.ndim - 1}.")
        out.append(int(i) % t.ndim)
    return out


def _as_matrix(x, perm, shape):
    """``x`` with its axes in the order ``perm``, reshaped to the 2-D ``shape`` (no op where none is needed)."""
    if perm != list(builtins.range(x.ndim)):
        x = transpose(x, perm)
    return x if tuple(x._value.shape) == shape else reshape(x, shape)


def matrix_transpose(a, name=None):
    """Swap the last two axes."""
    a = convert_to_tensor(a)
    if a.ndim < 2:
        raise InvalidArgumentError(f"matrix_transpose: needs a matrix (at least 2 axes), got shape {tuple(a.shape)}. "
                                   "A vector has no second axis to swap with: reshape it first, e.g. (1, -1).")
    return transpose(a, tuple(builtins.range(a.ndim - 2)) + (a.ndim - 1, a.ndim - 2))


def _matrices(name, *xs, square=True):
    xs = [convert_to_tensor(x) for x in xs]
    x = xs[0]  # the matrix (solve checks its right-hand side itself)
    if x.ndim < 2 or (square and x.shape[-1] != x.shape[-2]):
        kind = "square matrices" if square else "matrices"
        raise InvalidArgumentError(f"{name}: expects {kind} in the last two axes, got shape {tuple(x.shape)}."
                                   + (" Make a vector a matrix first: tl.reshape(v, (1, -1))." if x.ndim == 1 else ""))
    return xs


def inv(input, adjoint=False, name=None):
    """The inverse matrix: ``inv(a) @ a`` is the identity (an error if ``a`` is singular)."""
    (a,) = _matrices("inv", input)
    out = run(OPS["inv"], (a,))
    return matrix_transpose(out) if adjoint else out


def det(input, name=None):
    """The determinant of each square matrix."""
    (a,) = _matrices("det", input)
    return run(OPS["det"], (a,))


def solve(matrix, rhs, adjoint=False, name=None):
    """The ``x`` with ``matrix @ x == rhs`` (``rhs`` has shape (..., n, k): one column per right-hand side)."""
    a, b = _matrices("solve", matrix, rhs)
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        raise InvalidArgumentError(f"solve: rhs must have shape (..., {a.shape[-1]}, k) for a matrix of shape "
                                   f"{tuple(a.shape)}, got {tuple(b.shape)}. Make a vector a column: "
                                   "tl.reshape(b, (-1, 1)).")
    return run(OPS["solve"], (a, b), adjoint=bool(adjoint))


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """The singular value decomposition ``tensor = u @ diag(s) @ transpose(v)`` of each matrix (leading axes are a
    batch), as TF returns it: ``(s, u, v)``, in that order, with ``v`` itself (numpy gives its transpose ``vh``).
    ``s`` holds the min(m, n) singular values, largest first; ``u`` and ``v`` have that many columns
    (``full_matrices=True``: m and n). ``compute_uv=False``: ``s`` alone. Each column of ``u`` and ``v`` is fixed
    only up to its sign, so compare them up to sign (or ``u * s @ v.T``, which does not depend on it).

    Each part is one op of the table (``svd``); its gradient is TF's, which is defined where the singular values
    are distinct (F[i, j] = 1 / (s_j^2 - s_i^2) grows without bound as two meet)."""
    (a,) = _matrices("svd", tensor, square=False)
    if not compute_uv:
        return run(OPS["svd"], (a,), full_matrices=False, part="s")
    return tuple(run(OPS["svd"], (a,), full_matrices=bool(full_matrices), part=part) for part in ("s", "u", "v"))


def diag(diagonal, name=None, **kwargs):
    """A matrix with ``diagonal`` on its diagonal and zeros elsewhere (a batch for a batch of vectors)."""
    _main_diagonal_only("diag", kwargs)
    v = convert_to_tensor(diagonal)
    if v.ndim < 1:
        raise InvalidArgumentError("diag: expects a vector (the diagonal), got a 0-d tensor (shape ()).")
    return run(OPS["diag"], (v,))


def diag_part(input, name=None, **kwargs):
    """The diagonal of each matrix (its first min(rows, columns) entries)."""
    _main_diagonal_only("diag_part", kwargs)
    (a,) = _matrices("diag_part", input, square=False)
    return run(OPS["diag_part"], (a,))


def _main_diagonal_only(name, kwargs):
    # TF's k=, num_rows=, num_cols=, padding_value=, align= choose other diagonals and sizes: not in tapelab
    if any(v is not None and (k, v) not in (("k", 0), ("align", "RIGHT_LEFT")) for k, v in kwargs.items()):
        raise NotImplementedError(f"{name}: only the main diagonal is supported, got {sorted(kwargs)}. For another "
                                  "diagonal, index the matrix (x[i, i + k]) or build it with tl.scatter_nd.")


def trace(x, name=None):
    """The sum of the diagonal (TF's composition: reduce_sum(diag_part(x)))."""
    return reduce_sum(diag_part(x), axis=-1)


def matvec(a, b, transpose_a=False, name=None):
    """The matrix-vector product ``a @ b`` for a vector ``b`` (batched)."""
    b = convert_to_tensor(b)
    product = matmul(a, expand_dims(b, -1), transpose_a=transpose_a)
    return reshape(product, tuple(product.shape[:-1]))


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):  # noqa: A002
    """The norm of a vector (``ord`` 1, 2 / 'euclidean', np.inf) or, with a pair of axes, of a matrix ('fro').

    Like TF, the Euclidean norm is ``sqrt(reduce_sum(x * x))``: its gradient at 0 is NaN.
    """
    x = convert_to_tensor(tensor)
    if not x.dtype.is_floating:
        raise InvalidArgumentError(f"norm: expects a float tensor, got {x.dtype.name}; use tl.cast(x, tl.float32).")
    axes = op_wrappers.axes(x, axis, "norm")
    matrix = axes is not None and len(axes) == 2
    if ord in ("euclidean", "fro", 2) and not (matrix and ord == 2):
        result = sqrt(reduce_sum(x * x, axes, keepdims=True))
    elif ord == 1 and not matrix:
        result = reduce_sum(abs(x), axes, keepdims=True)
    elif ord == float("inf") and not matrix:
        result = reduce_max(abs(x), axes, keepdims=True)
    else:
        raise ValueError(f"norm: ord={ord!r} is not supported here (supported: 'euclidean' / 2 for vectors, "
                         "'fro' for matrices, 1 and inf for vectors).")
    if keepdims:
        return result
    kept = [n for i, n in enumerate(result.shape) if axes is not None and i not in axes]
    return reshape(result, kept)


# tf.linalg's names: every public name defined here, and einsum and eye (top-level ops TF has here too)
__all__ = names_defined(globals(), _IMPORTED, also=["einsum", "eye", "global_norm"])
