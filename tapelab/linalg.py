"""``tl.linalg``: matrix ops, as in ``tf.linalg`` (on the last two axes; leading axes are a batch)."""

from tapelab.engine.errors import InvalidArgumentError
from tapelab.engine.primitives import OPS
from tapelab.engine.tape import run
from tapelab.engine.tensor import convert_to_tensor
from tapelab.ops import (  # noqa: F401
    _axes,
    abs,
    einsum,
    expand_dims,
    eye,
    matmul,
    matrix_transpose,
    reduce_max,
    reduce_sum,
    reshape,
    sqrt,
)


def _matrices(name, *xs, square=True):
    xs = [convert_to_tensor(x) for x in xs]
    for x in xs[:1]:
        if x.ndim < 2 or (square and x.shape[-1] != x.shape[-2]):
            kind = "square matrices" if square else "matrices"
            raise InvalidArgumentError(f"{name}: expects {kind} in the last two axes, got shape {tuple(x.shape)}.")
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
    axes = _axes(x, axis, "norm")
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

__all__ = ["det", "diag", "diag_part", "einsum", "eye", "inv", "matmul", "matrix_transpose", "matvec", "norm", "solve",
           "trace"]
