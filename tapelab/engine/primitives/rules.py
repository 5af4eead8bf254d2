"""The VJP rules too long for a line of the table, and the helpers rules share.

A rule's signature is ``rule(B, g, out, *inputs, **params)``: ``B`` is the backend it computes with (``NUMPY``, or
the ops run on tensors when an outer tape records the backward pass), ``g`` the gradient at the op's output.
"""

import math

import numpy as np

from tapelab.engine.primitives.kernels import GELU_C, einsum_subscripts
from tapelab.engine.primitives.op import NUMPY, unbroadcast


def _kept_shape(shape, axis):
    # the shape a reduction over `axis` leaves with keepdims=True
    axes = range(len(shape)) if axis is None else [a % len(shape) for a in axis]
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def to_full(B, g, x, axis):
    # undo a reduction: put the reduced axes back (size 1), then broadcast to the input's shape
    if axis is not None and len(g.shape) != len(x.shape):  # (a reduction over every axis broadcasts as it is)
        g = B.reshape(g, shape=_kept_shape(x.shape, axis))
    return B.broadcast_to(g, shape=tuple(x.shape))


def _mask(B, cond, like):
    # True/False -> 1/0 in the gradient's dtype (on arrays directly: the cast op would look the dtype up first)
    return cond.astype(like.dtype) if B is NUMPY else B.cast(cond, dtype=like.dtype)


def select(B, cond, g):
    # g where cond holds, an exact 0 elsewhere (a NaN or inf in g does not leak through as 0 * NaN would);
    # cond may be broadcast against g
    return B.where(cond, g, B.zeros_like(g))


def unless_zero(B, g, grad):
    # TF's sqrt, rsqrt and reciprocal rules give exactly 0 where the upstream gradient is 0 (0 * inf is NaN)
    return B.where(g == 0, B.zeros_like(grad), grad)


def swap_last(B, x):
    if B is NUMPY:
        return x.swapaxes(-1, -2)  # the same view the transpose op gives, without the op's call
    rank = len(x.shape)
    perm = (1, 0) if rank == 2 else tuple(range(rank - 2)) + (rank - 1, rank - 2)
    return B.transpose(x, perm=perm)


def no_grad(B, g, out, x, **_):
    return B.zeros_like(x)  # piecewise constant: the derivative is 0 wherever it exists


def no_grad_at(i):
    """``no_grad`` for input ``i`` of a multi-input op."""
    return lambda B, g, out, *xs, **_: B.zeros_like(xs[i])


def where_dx(B, g, out, cond, x, y):
    return unbroadcast(B, B.where(cond, g, B.zeros_like(g)), x.shape)


def where_dy(B, g, out, cond, x, y):
    return unbroadcast(B, B.where(cond, B.zeros_like(g), g), y.shape)


def concat_vjp(i, B, g, out, *xs, axis):
    start = sum(x.shape[axis] for x in xs[:i])
    index = [slice(None)] * len(g.shape)
    index[axis] = slice(start, start + xs[i].shape[axis])
    return B.getitem(g, key=tuple(index))


def sparse_xent_vjp(B, g, out, labels, logits, residual):
    # dlogits = g * (softmax(logits) - one_hot(labels)); the forward saved the bracket as `residual`.
    # A recorded backward pass (higher order) must see how the bracket depends on logits: recompute it as ops.
    if B is NUMPY:
        return g[..., None] * residual
    return B.reshape(g, shape=tuple(g.shape) + (1,)) * B.sparse_xent_residual(labels, logits)


def sparse_xent_residual_vjp(B, g, out, labels, logits):
    # out = softmax(logits) - one_hot(labels): the one-hot is constant, so this is softmax's rule, p = softmax(logits)
    p = B.softmax(logits, axis=-1)
    return p * (g - B.reduce_sum(g * p, axis=(-1,), keepdims=True))


def cumprod_vjp(B, g, out, x, axis, exclusive, reverse):
    # TF's rule: each product's share goes back divided by x (div_no_nan: 0 where x is 0)
    total = B.cumsum(out * g, axis=axis, exclusive=exclusive, reverse=not reverse)
    zero = x == 0
    return B.where(zero, B.zeros_like(total), total / B.where(zero, B.ones_like(x), x))


def gelu_vjp(B, g, out, x, approximate):
    if approximate:  # d/dx of the tanh form
        t = B.tanh(GELU_C * (x + 0.044715 * x * x * x))
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * GELU_C * (1 + 3 * 0.044715 * x * x))
    return g * (0.5 * (1 + B.erf(x / math.sqrt(2))) + x * B.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))


def extreme_vjp(B, g, out, x, axis):
    # the gradient goes to the element(s) that were the maximum (or minimum), split evenly among ties
    hit = _mask(B, x == to_full(B, out, x, axis), x)
    count = to_full(B, B.reduce_sum(hit, axis=axis, keepdims=False), x, axis)
    return to_full(B, g, x, axis) * hit / count


def prod_vjp(B, g, out, x, axis, keepdims):
    # d prod / d x_i = the product of all the others: exclusive products from the left times those from the
    # right (no division, so zeros are fine), over the reduced axes moved to the front and flattened
    rank = len(x.shape)
    axes = tuple(range(rank)) if axis is None else axis
    kept = tuple(a for a in range(rank) if a not in axes)
    perm = axes + kept
    moved = x if perm == tuple(range(rank)) else B.transpose(x, perm=perm)
    flat = B.reshape(moved, shape=(math.prod(x.shape[a] for a in axes), math.prod(x.shape[a] for a in kept)))
    others = (B.cumprod(flat, axis=0, exclusive=True, reverse=False)
              * B.cumprod(flat, axis=0, exclusive=True, reverse=True))
    others = B.reshape(others, shape=tuple(moved.shape))
    if perm != tuple(range(rank)):
        others = B.transpose(others, perm=tuple(np.argsort(perm)))
    return to_full(B, g, x, axis) * others


def einsum_vjp(i, B, g, out, *xs, equation):
    # d x_i = einsum of g with the other operands, into x_i's subscripts; letters only x_i has are broadcast back
    inputs, output = einsum_subscripts(equation, [x.shape for x in xs])
    mine = inputs[i]
    if len(set(mine)) != len(mine):
        raise LookupError(f"einsum: no gradient for operand {i} of '{equation}': it repeats a subscript (a diagonal). "
                          "Take the diagonal with tl.linalg.diag_part first.")
    others = [s for j, s in enumerate(inputs) if j != i]
    reach = set(output).union(*others)
    kept = "".join(c for c in mine if c in reach)
    grad = B.einsum(g, *(x for j, x in enumerate(xs) if j != i), equation=f"{','.join([output] + others)}->{kept}")
    if kept != mine:  # put back the letters summed away inside x_i alone: size 1, then broadcast
        grad = B.reshape(grad, shape=tuple(grad.shape[kept.index(c)] if c in kept else 1 for c in mine))
    shape = tuple(xs[i].shape)
    full = tuple(max(n, m) for n, m in zip(shape, grad.shape))  # (an ellipsis may have broadcast a 1 in x_i)
    return unbroadcast(B, B.broadcast_to(grad, shape=full), shape)


def _pad_key(paddings, shape):
    return tuple(slice(lo, lo + n) for (lo, _), n in zip(paddings, shape))


def pad_vjp(B, g, out, x, paddings, mode, constant_values):
    if mode == "constant":  # the middle of g: what x filled
        return B.getitem(g, key=_pad_key(paddings, x.shape))
    # reflect / symmetric: every padded entry is a copy of one of x's: add each back where it came from
    where = np.ix_(*[np.pad(np.arange(n), pad, mode=mode) for pad, n in zip(paddings, x.shape)])
    return B.scatter(g, key=where, shape=tuple(x.shape))


def diag_part_vjp(B, g, out, x):
    d = B.diag(g)  # a square matrix the size of the diagonal; a rectangular x is padded with zeros
    rows, cols = x.shape[-2], x.shape[-1]
    if rows == cols:
        return d
    k = min(rows, cols)
    return B.pad(d, paddings=((0, 0),) * (len(x.shape) - 2) + ((0, rows - k), (0, cols - k)), mode="constant",
                 constant_values=0)


def max_pool2d_vjp(B, g, out, x, ksize, strides, padding, residual):
    # each window's maximum gets the window's gradient (added up where windows overlap)
    n = math.prod(x.shape)
    if B is NUMPY:
        flat = B.scatter(B.reshape(g, shape=(-1,)), key=(residual.reshape(-1),), shape=(n,))
    else:  # recorded (a traced graph, or higher order): where the maxima are is computed as an op, on each run
        where = B.max_pool2d_argmax(x, ksize=ksize, strides=strides, padding=padding)
        flat = B.unsorted_segment_sum(B.reshape(g, shape=(-1,)), B.reshape(where, shape=(-1,)), num_segments=n,
                                      axis=0)
    return B.reshape(flat, shape=tuple(x.shape))


def _safe_reciprocal(x):
    # 1 / x, and 0 where x is 0 (TF's _SafeReciprocal: x / (x^2 + 1e-20))
    return x / (x * x + 1e-20)


def svd_vjp(B, g, out, x, full_matrices, part):
    """TF's ``_SvdGrad`` for one part of the decomposition (the others' gradients 0: the op's parts are summed).
    For a wide matrix (m <= n): ``u (diag(gs) + (F * u.T gu + its transpose) S + S (F * v.T gv + its transpose))
    v.T + u S^-1 (gv.T - gv.T v v.T)``, F[i, j] = 1 / (s_j^2 - s_i^2) (0 on the diagonal); a tall one through
    its transpose. Written with the tensor backend's ops, so a second derivative is taken through it too."""
    m, n = x.shape[-2], x.shape[-1]
    if full_matrices and abs(m - n) > 1:
        raise NotImplementedError(
            f"svd gradient is not implemented for abs(m - n) > 1 when full_matrices is True (as in TensorFlow): the "
            f"matrix has shape {tuple(x.shape)}. Take tl.linalg.svd(x, full_matrices=False) (u and v then have "
            "min(m, n) columns), which has a gradient.")
    s = B.svd(x, full_matrices=full_matrices, part="s")
    u = B.svd(x, full_matrices=full_matrices, part="u")
    v = B.svd(x, full_matrices=full_matrices, part="v")
    gu, gv = (g if part == "u" else None), (g if part == "v" else None)
    adjoint = m > n  # (the gradient of x.T = v S u.T, transposed at the end)
    if adjoint:
        m, n, u, v, gu, gv = n, m, v, u, gv, gu
    v1 = v if v.shape[-1] == m else v[..., :m]
    if part == "s":  # u diag(gs) v1.T
        inner = u * g[..., None, :]
    else:
        s2 = s * s
        gaps = s2[..., None, :] - s2[..., :, None]
        # 0 on the diagonal, and no path back through it (TF's matrix_set_diag): the reciprocal's slope at a gap of
        # 0 is 1e20, which would swamp a second derivative
        f = select(B, gaps != 0, _safe_reciprocal(gaps))
        if gu is not None:
            fu = f * (swap_last(B, u) @ gu)
            inner = u @ ((fu + swap_last(B, fu)) * s[..., None, :])
        else:
            gv1 = gv if gv.shape[-1] == m else gv[..., :m]
            fv = f * (swap_last(B, v1) @ gv1)
            inner = u @ (s[..., :, None] * (fv + swap_last(B, fv)))
    grad = inner @ swap_last(B, v1)
    if gv is not None and m < n:
        gv1t = swap_last(B, gv1)
        rest = gv1t - (gv1t @ v1) @ swap_last(B, v1)
        if full_matrices:
            rest = rest - (swap_last(B, v1) @ gv[..., m:]) @ swap_last(B, v[..., m:])
        grad = grad + (u * _safe_reciprocal(s)[..., None, :]) @ rest
    return swap_last(B, grad) if adjoint else grad
