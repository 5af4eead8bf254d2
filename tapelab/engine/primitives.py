"""The one table of primitives: for every op, its numpy forward, one VJP per input and the formulas.

A VJP ("vector-Jacobian product") turns the gradient ``g`` that reaches an op's output into the
contribution for one input. Its formula is written in the rule's own names: ``dx`` for the input it
serves, ``x``, ``y``, ... for the inputs, ``g`` for the upstream gradient and ``out`` for the op's
output; pictures rewrite them in the learner's names (``∂loss/∂x = ∂loss/∂z @ y.T``).

Each rule is written once, against a small backend ``B`` and plain operators, so the same rule runs
on numpy arrays (ordinary ``gradient()``: fast) or on tensors (when an outer tape is recording: the
backward pass is itself recorded, giving higher-order derivatives). Signature: ``vjp(B, g, out, *inputs, **params)``.

An op may also save a *residual* from its forward pass for its rules (``saves=True``: the forward
returns ``(output, residual)`` and the rules get ``residual=``), as TF's fused cross-entropy kernel
and PyTorch's ``save_for_backward`` do: work the forward pass already did is not done again.

An op may say which arrays its rules read (``reads=(0, 1)``: both inputs, not ``out``; ``reads=()``: only
shapes and dtypes). A tape then keeps just those, as a hand-written backward pass keeps just what it
needs; the rules get a :class:`Spec` (shape and dtype) for the others, and pictures recompute them.
"""

import functools
import math
import sys
from types import SimpleNamespace

import numpy as np

from tapelab.engine import dtypes


class Spec:
    """What a rule sees of an array the tape did not keep (see ``reads``): its shape and dtype."""

    __slots__ = ("shape", "dtype")

    def __init__(self, array):
        self.shape, self.dtype = array.shape, array.dtype

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"<Spec {self.shape} {self.dtype}>"


class Op:
    """One primitive. ``vjps[i]`` is the rule for input ``i`` (``None``: no gradient flows there)."""

    __slots__ = ("name", "forward", "vjps", "formulas", "same_dtype", "float_only", "saves", "broadcasts", "reads",
                 "unread", "reads_out")

    def __init__(self, name, forward, vjps=None, formulas=(), same_dtype=False, float_only=False, saves=False,
                 broadcasts=False, reads=None):
        self.name = name
        self.forward = forward
        self.vjps = vjps  # None: the whole op is not differentiable (never recorded)
        self.formulas = formulas
        self.same_dtype = same_dtype
        self.float_only = float_only
        self.saves = saves  # the forward returns (output, residual); the rules get residual=
        self.broadcasts = broadcasts  # elementwise with broadcasting: a rule's result is summed to its input's shape
        # which arrays the rules read: input positions and "out" (None: all of them). A tape keeps only those (and
        # the inputs it did not compute); of the rest the rules see shape and dtype, and pictures recompute them
        self.reads = reads
        self.unread = () if reads is None else tuple(i for i in range(len(vjps)) if i not in reads)  # (positions)
        self.reads_out = reads is None or "out" in reads

    @property
    def differentiable(self):
        return self.vjps is not None

    def __repr__(self):
        return f"<op {self.name}>"


class _Each:
    """The same rule for every input of a variadic op (concat): ``rules[i]`` binds ``i``."""

    def __init__(self, rule):
        self.rule = rule

    def __getitem__(self, i):
        return functools.partial(self.rule, i)


class _EachFormula:
    """The same formula for every input of a variadic op: ``formulas[i]`` fills in ``i``."""

    def __init__(self, text):
        self.text = text

    def __getitem__(self, i):
        return self.text.format(i=i)


OPS = {}
# numpy warns where TF computes quietly (log(0) is -inf, 0/0 is NaN, exp(100.) overflows to inf)
QUIET = np.errstate(divide="ignore", invalid="ignore", over="ignore")


def defop(name, forward, vjps=None, formulas=(), quiet=False, **flags):
    """Add an op to the table. ``quiet``: its numpy forward may warn on inf, NaN or 0 (silenced, as in TF);
    ops of floats (``float_only``) are quiet anyway."""
    if quiet or flags.get("float_only"):
        forward = QUIET(forward)
    OPS[name] = Op(name, forward, vjps, formulas, **flags)


def unbroadcast(B, g, shape):
    """Sum ``g`` over the axes that broadcasting added or stretched, so it has ``shape`` again."""
    if g.shape == shape:
        return g
    lead = len(g.shape) - len(shape)
    if g.shape[lead:] == shape:  # only leading axes were added (a bias over a batch): one sum, no reshape
        return B.reduce_sum(g, axis=tuple(range(lead)), keepdims=False)
    stretched = tuple(lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    return B.reshape(B.reduce_sum(g, axis=tuple(range(lead)) + stretched, keepdims=True), shape=tuple(shape))


def _kept_shape(shape, axis):
    # the shape a reduction over `axis` leaves with keepdims=True
    axes = range(len(shape)) if axis is None else [a % len(shape) for a in axis]
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _to_full(B, g, x, axis):
    # undo a reduction: put the reduced axes back (size 1), then broadcast to the input's shape
    if axis is not None and len(g.shape) != len(x.shape):  # (a reduction over every axis broadcasts as it is)
        g = B.reshape(g, shape=_kept_shape(x.shape, axis))
    return B.broadcast_to(g, shape=tuple(x.shape))


def _mask(B, cond, like):
    # True/False -> 1/0 in the gradient's dtype (on arrays directly: the cast op would look the dtype up first)
    return cond.astype(like.dtype) if B is NUMPY else B.cast(cond, dtype=like.dtype)


def _select(B, cond, g):
    # g where cond holds, an exact 0 elsewhere (a NaN or inf in g does not leak through as 0 * NaN would);
    # cond may be broadcast against g
    return B.where(cond, g, B.zeros_like(g))


def _unless_zero(B, g, grad):
    # TF's sqrt, rsqrt and reciprocal rules give exactly 0 where the upstream gradient is 0 (0 * inf is NaN)
    return B.where(g == 0, B.zeros_like(grad), grad)


def _swap_last(B, x):
    if B is NUMPY:
        return x.swapaxes(-1, -2)  # the same view the transpose op gives, without the op's call
    rank = len(x.shape)
    perm = (1, 0) if rank == 2 else tuple(range(rank - 2)) + (rank - 1, rank - 2)
    return B.transpose(x, perm=perm)


def _no_grad(B, g, out, x, **_):
    return B.zeros_like(x)  # piecewise constant: the derivative is 0 wherever it exists


# --- numpy forwards that need more than one numpy call --------------------------------------

def _truediv_dtype(x):
    # TF's truediv: int8/16 and uint8/16 give float32, wider ints float64, floats keep their dtype
    if x.dtype.kind in "iu":
        return np.float32 if x.dtype.itemsize <= 2 else np.float64
    return None


def _sigmoid(x):
    return np.exp(-np.logaddexp(0, -x))  # = 1 / (1 + e^-x) = exp(-log(1 + e^-x)): no overflow, full precision


def _softmax(x, axis=-1):
    e = np.exp(x - _max(x, axis))
    return e / np.add.reduce(e, axis=axis, keepdims=True)


def _log_softmax(x, axis=-1):
    shifted = x - _max(x, axis)  # as TF: the max out first, so log(2) is not lost next to a huge max
    return shifted - np.log(np.add.reduce(np.exp(shifted), axis=axis, keepdims=True))


def _is_hot(indices, depth):
    # True where the last axis equals the index; an index outside [0, depth) matches nothing (all off, as TF)
    return indices[..., None] == np.arange(depth)


def _one_hot(indices, depth, on_value=1, off_value=0, dtype="float32"):
    hot = _is_hot(indices, depth)
    np_dtype = dtypes.as_dtype(dtype).as_numpy_dtype
    if (on_value, off_value) != (1, 0):
        return np.where(hot, on_value, off_value).astype(np_dtype)
    return hot.astype(np_dtype)


def _max(x, axis, keepdims=True):
    # np.maximum.reduce is np.max without its Python wrapper; the max of nothing is the lowest value
    if x.ndim == 2 and axis in (1, -1, (1,), (-1,)) and x.shape[0] >= 16 and 1 < x.shape[1] <= 64:
        # many short rows (class scores): numpy reduces one row at a time, the columns of the transposed copy in
        # a few vectorised passes (measured in benchmarks/README.md on 128 x 10 and 60,000 x 10; the bounds keep
        # it to such shapes: rows enough to pay for the copy, rows short enough to be slow one at a time). The
        # same maxima (a row of +0.0 and -0.0 ties may give the other zero)
        m = np.maximum.reduce(np.ascontiguousarray(x.T), axis=0)
        return m[:, None] if keepdims else m
    return np.maximum.reduce(x, axis=axis, keepdims=keepdims, **_lowest(x))


def _broadcast_to(x, shape):
    # a new, writeable array, as TF makes one (numpy's broadcast view is read-only)
    if x.ndim > len(shape):
        raise ValueError(f"cannot broadcast a rank-{x.ndim} array to the rank-{len(shape)} shape {tuple(shape)}")
    out = np.empty(shape, x.dtype)
    out[...] = x  # a ValueError if x does not broadcast to `shape`
    return out


def _sparse_xent(labels, logits):
    # loss = -log softmax(logits)[label] = logsumexp(logits) - logits[label], with the max taken out first.
    # Like TF's fused kernel it also returns the gradient per unit of loss, softmax(logits) - one_hot(labels),
    # from the same exponentials: the rule then only scales it.
    classes = logits.shape[-1]
    hot = _is_hot(labels, classes)  # one_hot(labels) as booleans: one True per row for a label in range
    picked = logits[hot]  # logits[..., label]: the one True of each row, in row order
    if picked.size != labels.size:  # a label outside [0, classes) matched no column (checked before any arithmetic)
        bad = labels[~hot.any(axis=-1)].flat[0]
        raise ValueError(f"received a label value of {bad} which is outside the valid range of [0, {classes}). "
                         f"Labels are class ids 0..{classes - 1}, one per row of logits.")
    top = _max(logits, -1)
    e = np.exp(logits - top)
    total = np.add.reduce(e, axis=-1, keepdims=True)
    loss = np.log(total[..., 0]) - (picked.reshape(labels.shape) - top[..., 0])
    return loss, e / total - hot  # the loss; softmax(logits) - one_hot(labels)


def _sparse_xent_vjp(B, g, out, labels, logits, residual):
    # dlogits = g * (softmax(logits) - one_hot(labels)); the forward saved the bracket as `residual`.
    # A recorded backward pass (higher order) must see how the bracket depends on logits: recompute it as ops.
    if B is NUMPY:
        return g[..., None] * residual
    residual = B.softmax(logits, axis=-1) - B.one_hot(labels, depth=logits.shape[-1], dtype=logits.dtype)
    return B.reshape(g, shape=tuple(g.shape) + (1,)) * residual


def _n_reduced(shape, axis):
    # how many elements each output of a reduction over `axis` summarises
    return max(math.prod(shape) if axis is None else math.prod([shape[a] for a in axis]), 1)


def _sum_dtype(x):
    # float16 adds up in float32 (its largest value is 65504; TF 2.21 sums in float16 and gets a mean of 0.0 past
    # 65504 elements: a deliberate difference); everything else in its own dtype
    return np.float32 if x.dtype == np.float16 else x.dtype


def _reduce_sum(x, axis=None, keepdims=False):
    out = np.add.reduce(x, axis=axis, keepdims=keepdims, dtype=_sum_dtype(x))
    return out if out.dtype == x.dtype else out.astype(x.dtype)


def _reduce_mean(x, axis=None, keepdims=False):
    kind = x.dtype.kind
    total = np.add.reduce(x, axis=axis, keepdims=keepdims, dtype=np.float64 if kind in "iub" else _sum_dtype(x))
    if kind == "f":  # sum / count, in the float dtype itself; the mean of nothing is nan (TF)
        mean = total / _n_reduced(x.shape, axis) if x.size else total * np.nan
        return mean if mean.dtype == x.dtype else mean.astype(x.dtype)
    mean = total / _n_reduced(x.shape, axis)
    return np.trunc(mean).astype(x.dtype) if kind in "iu" else mean.astype(x.dtype, copy=False)  # TF: ints stay ints


def _lowest(x):
    # the maximum of nothing is the lowest value (TF: -inf for floats); numpy needs it spelled out
    return {} if x.size else {"initial": -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min}


def _highest(x):
    # the minimum of nothing is the highest value (TF: inf for floats)
    return {} if x.size else {"initial": np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).max}


def _scatter(g, key, shape):
    z = np.zeros(shape, dtype=g.dtype)
    np.add.at(z, key, g)  # += so repeated indices accumulate
    return z


def _concat(*xs, axis):
    return np.concatenate(xs, axis=axis)


def _concat_vjp(i, B, g, out, *xs, axis):
    start = sum(x.shape[axis] for x in xs[:i])
    index = [slice(None)] * len(g.shape)
    index[axis] = slice(start, start + xs[i].shape[axis])
    return B.getitem(g, key=tuple(index))


def _no_grad_at(i):
    """``_no_grad`` for input ``i`` of a multi-input op."""
    return lambda B, g, out, *xs, **_: B.zeros_like(xs[i])


def _int_division_check(x, y):
    if x.dtype.kind in "iu" and not np.all(y):
        raise ValueError("Integer division by zero. An integer has no value for x // 0 or x % 0; check the divisor "
                         "(tl.where(y == 0, ...)) or divide floats, which give inf or nan.")


def _floordiv(x, y):
    _int_division_check(x, y)
    if x.dtype.kind == "f":  # TF's floor(x / y): 1.0 // -inf is -0.0 and inf // 2.0 is inf (numpy: -1 and nan)
        return np.floor(np.true_divide(x, y))
    return np.floor_divide(x, y)


def _floormod(x, y):
    _int_division_check(x, y)
    return np.mod(x, y)


def _cumulative(ufunc, x, axis, exclusive, reverse):
    # cumsum / cumprod along `axis`; exclusive: each entry leaves itself out (shift in the identity);
    # reverse: accumulate from the end
    if reverse:
        x = np.flip(x, axis)
    out = ufunc.accumulate(x, axis=axis, dtype=x.dtype)
    if exclusive and x.shape[axis]:
        start = np.full_like(np.take(out, [0], axis=axis), ufunc.identity)
        out = np.concatenate([start, np.take(out, np.arange(x.shape[axis] - 1), axis=axis)], axis=axis)
    return np.flip(out, axis) if reverse else np.ascontiguousarray(out)


def _cumprod_vjp(B, g, out, x, axis, exclusive, reverse):
    # TF's rule: each product's share goes back divided by x (div_no_nan: 0 where x is 0)
    total = B.cumsum(out * g, axis=axis, exclusive=exclusive, reverse=not reverse)
    zero = x == 0
    return B.where(zero, B.zeros_like(total), total / B.where(zero, B.ones_like(x), x))


def _erf(x):
    # numpy has no erf; math.erf is exact to double precision (one Python call per element: fine for a course)
    return np.asarray(_ERF(x.astype(np.float64)), dtype=x.dtype) if x.size else x.copy()


_ERF = np.frompyfunc(math.erf, 1, 1)
_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
_GELU_C = 0.7978845608028654  # sqrt(2 / pi), in the tanh approximation


def _gelu(x, approximate=False):
    if approximate:  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        return 0.5 * x * (1 + np.tanh(_GELU_C * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf(x / np.asarray(math.sqrt(2), x.dtype)))  # x * Phi(x), Phi the normal CDF


def _gelu_vjp(B, g, out, x, approximate):
    if approximate:  # d/dx of the tanh form
        t = B.tanh(_GELU_C * (x + 0.044715 * x * x * x))
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _GELU_C * (1 + 3 * 0.044715 * x * x))
    return g * (0.5 * (1 + B.erf(x / math.sqrt(2))) + x * B.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))


def _relu_grad(u, x, alpha=0.0, cap=None):
    # u * (the slope of relu / leaky_relu / relu6 at x): 1 above 0 (below `cap`), `alpha` below, 0 past the cap.
    # A NaN x takes the slope below 0, as TF's kernels do
    if cap is not None:  # relu6: a product, as TF's kernel (a NaN upstream stays NaN)
        return u * ((x > 0) & (x < cap))
    if alpha == 0:
        return u * (x > 0)
    return np.where(x > 0, u, alpha * u)


def _min(x, axis, keepdims=True):
    return np.minimum.reduce(x, axis=axis, keepdims=keepdims, **_highest(x))


def _extreme_vjp(B, g, out, x, axis):
    # the gradient goes to the element(s) that were the maximum (or minimum), split evenly among ties
    hit = _mask(B, x == _to_full(B, out, x, axis), x)
    count = _to_full(B, B.reduce_sum(hit, axis=axis, keepdims=False), x, axis)
    return _to_full(B, g, x, axis) * hit / count


def _reduce_logsumexp(x, axis=None, keepdims=False):
    # TF's form: the max taken out first (0 if it is not finite), log(sum(exp(x - max))) + max
    top = _max(x, axis)
    top = np.where(np.isfinite(top), top, 0).astype(x.dtype)
    out = np.log(np.add.reduce(np.exp(x - top), axis=axis, keepdims=True)) + top
    return out if keepdims else (out.reshape(()) if axis is None else np.squeeze(out, axis=axis))


def _prod_vjp(B, g, out, x, axis, keepdims):
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
    return _to_full(B, g, x, axis) * others


def _gather(params, indices, axis=0):
    n = params.shape[axis]
    bad = (indices < 0) | (indices >= n)
    if bad.any():
        where = np.argwhere(bad)[0]
        raise ValueError(f"indices[{', '.join(map(str, where))}] = {indices[tuple(where)]} is not in [0, {n}): "
                         f"each index picks a slice along axis {axis}, which has {n}")
    return np.take(params, indices, axis=axis)


def _segment_sum(data, ids, num_segments, axis=0):
    # the sum of the slices of `data` that `ids` sends to each of `num_segments` places (gather's transpose)
    shape = data.shape[:axis] + (num_segments,) + data.shape[axis + ids.ndim:]
    out = np.zeros(shape, data.dtype)
    np.add.at(out, (slice(None),) * axis + (ids,), data)  # += so repeated ids accumulate
    return out


def _einsum_subscripts(equation, shapes):
    """``(inputs, output)``: each operand's subscripts and the output's, explicit, ``...`` spelled as letters."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    inputs = lhs.split(",")
    if not arrow:  # numpy's implicit output: the ellipsis, then the letters used once, in order
        letters = "".join(inputs).replace(".", "")
        rhs = ("..." if "..." in lhs else "") + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in equation]
    widest = max((len(shape) - len(s.replace("...", "")) for s, shape in zip(inputs, shapes) if "..." in s),
                 default=0)
    dots = "".join(free[:widest])

    def spell(s, rank):
        return s.replace("...", dots[widest - (rank - len(s.replace("...", ""))):] if rank is not None else dots)

    return [spell(s, len(shape)) for s, shape in zip(inputs, shapes)], spell(rhs, None)


def _einsum(*xs, equation):
    return np.einsum(equation, *xs)


def _einsum_vjp(i, B, g, out, *xs, equation):
    # d x_i = einsum of g with the other operands, into x_i's subscripts; letters only x_i has are broadcast back
    inputs, output = _einsum_subscripts(equation, [x.shape for x in xs])
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


def _pad(x, paddings, mode="constant", constant_values=0):
    if not paddings:  # a 0-d tensor: nothing to pad
        return x.copy()
    if mode == "constant":
        return np.pad(x, paddings, mode="constant", constant_values=constant_values)
    return np.pad(x, paddings, mode=mode)


def _pad_vjp(B, g, out, x, paddings, mode, constant_values):
    if mode == "constant":  # the middle of g: what x filled
        return B.getitem(g, key=_pad_key(paddings, x.shape))
    # reflect / symmetric: every padded entry is a copy of one of x's: add each back where it came from
    where = np.ix_(*[np.pad(np.arange(n), pad, mode=mode) for pad, n in zip(paddings, x.shape)])
    return B.scatter(g, key=where, shape=tuple(x.shape))


def _inv(x):
    try:
        return np.linalg.inv(x)
    except np.linalg.LinAlgError:
        raise ValueError("Input is not invertible: the matrix is singular (its determinant is 0), so no matrix "
                         "undoes it. Check for repeated or all-zero rows; tl.linalg.det(x) shows it.") from None


def _solve(a, b, adjoint=False):
    try:
        return np.linalg.solve(np.swapaxes(a, -1, -2) if adjoint else a, b)
    except np.linalg.LinAlgError:
        raise ValueError("Input matrix is not invertible: the system has no single solution (the matrix is "
                         "singular, its determinant is 0).") from None


def _diag(v):
    n = v.shape[-1]
    out = np.zeros(v.shape + (n,), v.dtype)
    out[..., np.arange(n), np.arange(n)] = v
    return out


def _diag_part_vjp(B, g, out, x):
    d = B.diag(g)  # a square matrix the size of the diagonal; a rectangular x is padded with zeros
    rows, cols = x.shape[-2], x.shape[-1]
    if rows == cols:
        return d
    k = min(rows, cols)
    return B.pad(d, paddings=((0, 0),) * (len(x.shape) - 2) + ((0, rows - k), (0, cols - k)), mode="constant",
                 constant_values=0)


def _sort_indices(x, axis=-1, descending=False):
    # a stable order: ties keep their order (TF's top_k and sort: the lower index first)
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    return n - 1 - np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)


def _print(*xs, layout, sep, end, stream, summarize):
    # tf.print: text as it is; tensors as TF prints them (float32 to 9 digits, True as 1), the first and last
    # `summarize` entries of each axis of a big one; Python structures with the tensors inside them printed so
    pieces = [_print_text(piece, xs, summarize) for piece in layout]
    print(*pieces, sep=sep, end=end, file=sys.stdout if stream is None else stream)
    return np.zeros((0,), np.bool_)


class PrintSlot:
    """Where tensor ``index`` of a ``print`` op's inputs goes in the structure it prints."""

    def __init__(self, index):
        self.index = index


def _print_text(piece, xs, summarize):
    if isinstance(piece, str):
        return piece
    if isinstance(piece, PrintSlot):
        return _tensor_text(xs[piece.index], summarize)
    if isinstance(piece, (list, tuple)):
        inner = ", ".join(_print_text(p, xs, summarize) for p in piece)
        return f"[{inner}]" if isinstance(piece, list) else f"({inner}{',' if len(piece) == 1 else ''})"
    if isinstance(piece, dict):
        return "{" + ", ".join(f"{k!r}: {_print_text(v, xs, summarize)}" for k, v in piece.items()) + "}"
    return repr(piece)


_DIGITS = {"float16": 4, "float32": 9, "float64": 17}


def _tensor_text(x, summarize):
    kind = x.dtype.kind
    if kind == "f":
        digits = _DIGITS[x.dtype.name]
        formatter = {"float_kind": lambda v: f"{v:.{digits}g}"}
    elif kind == "b":
        formatter = {"bool": lambda v: "1" if v else "0"}
    else:
        formatter = {"int": str}
    if x.ndim == 0:
        return next(iter(formatter.values()))(x.item())
    edges = x.size if summarize is None or summarize < 0 else summarize
    return np.array2string(x, separator=" ", formatter=formatter, max_line_width=10**9,
                           threshold=2 * edges, edgeitems=max(edges, 1))


# --- convolution and pooling (NHWC: batch, height, width, channels), as tf.nn.conv2d / max_pool2d -------------
def conv_padding(size, window, stride, padding):
    """(pad before, pad after, output size) along one axis: TF's VALID (no padding) or SAME (ceil(size / stride)
    outputs, the padding split evenly, the extra one after)."""
    if padding == "VALID":
        return 0, 0, (size - window) // stride + 1 if size >= window else 0
    out = -(-size // stride)
    total = max((out - 1) * stride + window - size, 0)
    return total // 2, total - total // 2, out


def _padded(x, window, strides, padding, value=0.0):
    (t, b, oh), (left, right, ow) = (conv_padding(x.shape[1 + a], window[a], strides[a], padding) for a in (0, 1))
    if t or b or left or right:
        x = np.pad(x, ((0, 0), (t, b), (left, right), (0, 0)), constant_values=value)
    return x, (t, left), (oh, ow)


def _windows(xp, window, strides, out):
    # every window as a view: (batch, out_h, out_w, channels, kh, kw), no copy
    views = np.lib.stride_tricks.sliding_window_view(xp, window, axis=(1, 2))
    return views[:, :out[0] * strides[0]:strides[0], :out[1] * strides[1]:strides[1]]


def _conv2d(x, kernel, strides, padding):
    # out[b, i, j, o] = sum over p, q, c of xpad[b, i*s + p, j*s + q, c] * kernel[p, q, c, o]
    xp, _, out = _padded(x, kernel.shape[:2], strides, padding)
    cols = _windows(xp, kernel.shape[:2], strides, out)
    return np.tensordot(cols, kernel, axes=([3, 4, 5], [2, 0, 1])).astype(x.dtype, copy=False)


def _conv2d_input_grad(g, kernel, input_shape, strides, padding):
    # the transpose of conv2d in x: each output position sends g @ kernel.T back to the window it read
    kh, kw = kernel.shape[:2]
    (t, _, oh), (left, _, ow) = (conv_padding(input_shape[1 + a], (kh, kw)[a], strides[a], padding) for a in (0, 1))
    sh, sw = strides
    full = np.zeros((input_shape[0], input_shape[1] + kh + sh * oh, input_shape[2] + kw + sw * ow, input_shape[3]),
                    g.dtype)
    for p in range(kh):
        for q in range(kw):
            full[:, p:p + sh * oh:sh, q:q + sw * ow:sw] += g @ kernel[p, q].T
    return full[:, t:t + input_shape[1], left:left + input_shape[2]]


def _conv2d_filter_grad(x, g, kernel_shape, strides, padding):
    # dkernel[p, q, c, o] = sum over b, i, j of xpad[b, i*s + p, j*s + q, c] * g[b, i, j, o]
    xp, _, out = _padded(x, kernel_shape[:2], strides, padding)
    cols = _windows(xp, kernel_shape[:2], strides, out)
    return np.tensordot(cols, g, axes=([0, 1, 2], [0, 1, 2])).transpose(1, 2, 0, 3).astype(x.dtype, copy=False)


def _max_pool2d(x, ksize, strides, padding):
    # the largest value of each window; the residual is where it was (a flat index into x), for the rule
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    xp, (top, left), out = _padded(x, ksize, strides, padding, fill)
    cols = _windows(xp, ksize, strides, out)
    b, oh, ow, c, kh, kw = cols.shape
    flat = cols.reshape(b, oh, ow, c, kh * kw)
    pick = np.argmax(flat, axis=-1)  # the first maximum of a window, as TF's kernel
    value = np.take_along_axis(flat, pick[..., None], axis=-1)[..., 0]
    row = (np.arange(oh) * strides[0] - top)[None, :, None, None] + pick // kw  # where it sits in x
    col = (np.arange(ow) * strides[1] - left)[None, None, :, None] + pick % kw
    batch, channel = np.arange(b)[:, None, None, None], np.arange(c)[None, None, None, :]
    return value, ((batch * x.shape[1] + row) * x.shape[2] + col) * x.shape[3] + channel


def _max_pool2d_vjp(B, g, out, x, ksize, strides, padding, residual):
    # each window's maximum gets the window's gradient (added up where windows overlap)
    n = math.prod(x.shape)
    flat = B.scatter(B.reshape(g, shape=(-1,)), key=(residual.reshape(-1),), shape=(n,))
    return B.reshape(flat, shape=tuple(x.shape))


def _pool_counts(shape, ksize, strides, padding):
    # how many real (not padding) entries each average-pooling window holds (TF divides by that)
    ones = np.ones((1,) + tuple(shape[1:3]) + (1,), np.float64)
    xp, _, out = _padded(ones, ksize, strides, padding)
    return _windows(xp, ksize, strides, out).sum(axis=(-1, -2))  # (1, oh, ow, 1)


def _avg_pool2d(x, ksize, strides, padding):
    xp, _, out = _padded(x, ksize, strides, padding)
    total = _windows(xp, ksize, strides, out).sum(axis=(-1, -2))
    return (total / _pool_counts(x.shape, ksize, strides, padding)).astype(x.dtype)


def _avg_pool2d_grad(g, input_shape, ksize, strides, padding):
    # the transpose of avg_pool2d: each window's g / count goes back to every entry of the window
    share = (g / _pool_counts(input_shape, ksize, strides, padding)).astype(g.dtype)
    kernel = np.ones(tuple(ksize) + (1, 1), g.dtype)
    channels = [_conv2d_input_grad(share[..., k:k + 1], kernel, tuple(input_shape[:3]) + (1,), strides, padding)
                for k in range(input_shape[3])]
    return np.concatenate(channels, axis=-1) if channels else np.zeros(input_shape, g.dtype)


def _where_vjps():
    def dx(B, g, out, cond, x, y):
        return unbroadcast(B, B.where(cond, g, B.zeros_like(g)), x.shape)

    def dy(B, g, out, cond, x, y):
        return unbroadcast(B, B.where(cond, B.zeros_like(g), g), y.shape)

    return (None, dx, dy)


# --- the table -----------------------------------------------------------------------------
# elementwise, one input
defop("negative", np.negative, (lambda B, g, out, x: -g,), ("dx = -g",), reads=())
defop("square", np.square, (lambda B, g, out, x: g * 2 * x,), ("dx = g * 2 * x",))
defop("sqrt", np.sqrt, (lambda B, g, out, x: _unless_zero(B, g, g * 0.5 / out),), ("dx = g / (2 * sqrt(x))",),
      float_only=True, reads=("out",))
defop("exp", np.exp, (lambda B, g, out, x: g * out,), ("dx = g * exp(x)",), float_only=True, reads=("out",))
defop("log", np.log, (lambda B, g, out, x: g / x,), ("dx = g / x",), float_only=True)
defop("abs", np.abs, (lambda B, g, out, x: g * B.sign(x),), ("dx = g * sign(x)",))
defop("tanh", np.tanh, (lambda B, g, out, x: g * (1 - out * out),), ("dx = g * (1 - tanh(x)^2)",), float_only=True,
      reads=("out",))
defop("sigmoid", _sigmoid, (lambda B, g, out, x: g * out * (1 - out),), ("dx = g * out * (1 - out)",), float_only=True,
      reads=("out",))
defop("sign", np.sign, (_no_grad,), ("dx = 0",))
defop("identity", lambda x: x, (lambda B, g, out, x: g,), ("dx = g",), reads=())
defop("cast", lambda x, dtype: x.astype(dtypes.as_dtype(dtype).as_numpy_dtype),
      (lambda B, g, out, x, dtype: B.cast(g, dtype=dtypes.as_dtype(x.dtype)),), ("dx = cast(g, x.dtype)",), reads=())

# elementwise, two inputs, broadcasting (each VJP undoes the broadcast with `unbroadcast`)
defop("add", np.add,
      (lambda B, g, out, x, y: unbroadcast(B, g, x.shape),
       lambda B, g, out, x, y: unbroadcast(B, g, y.shape)),
      ("dx = g", "dy = g"), same_dtype=True, broadcasts=True, reads=())
defop("subtract", np.subtract,
      (lambda B, g, out, x, y: unbroadcast(B, g, x.shape),
       lambda B, g, out, x, y: unbroadcast(B, -g, y.shape)),
      ("dx = g", "dy = -g"), same_dtype=True, broadcasts=True, reads=())
defop("multiply", np.multiply,
      (lambda B, g, out, x, y: unbroadcast(B, g * y, x.shape),
       lambda B, g, out, x, y: unbroadcast(B, g * x, y.shape)),
      ("dx = g * y", "dy = g * x"), same_dtype=True, broadcasts=True, reads=(0, 1))
defop("divide", lambda x, y: np.true_divide(x, y, dtype=_truediv_dtype(x)),
      (lambda B, g, out, x, y: unbroadcast(B, g / y, x.shape),
       lambda B, g, out, x, y: unbroadcast(B, -g * out / y, y.shape)),
      ("dx = g / y", "dy = -g * x / y^2"), same_dtype=True, broadcasts=True, quiet=True)
defop("pow", np.power,
      (lambda B, g, out, x, y: unbroadcast(B, g * y * x ** (y - 1), x.shape),
       lambda B, g, out, x, y: unbroadcast(B, g * out * B.log(B.where(x > 0, x, B.ones_like(x))), y.shape)),
      ("dx = g * y * x^(y-1)", "dy = g * x^y * log(x)   (0 where x <= 0)"), same_dtype=True, broadcasts=True,
      quiet=True)
# maximum/minimum: x gets g where it wins or ties, y everywhere else (also where a NaN makes the test false); the
# other side gets an exact 0, even where g is NaN or inf (a select, as TF's rule)
defop("maximum", np.maximum,
      (lambda B, g, out, x, y: unbroadcast(B, _select(B, x >= y, g), x.shape),
       lambda B, g, out, x, y: unbroadcast(B, _select(B, ~(x >= y), g), y.shape)),
      ("dx = g * [x >= y]", "dy = g * [not x >= y]"), same_dtype=True, broadcasts=True)
defop("minimum", np.minimum,
      (lambda B, g, out, x, y: unbroadcast(B, _select(B, x <= y, g), x.shape),
       lambda B, g, out, x, y: unbroadcast(B, _select(B, ~(x <= y), g), y.shape)),
      ("dx = g * [x <= y]", "dy = g * [not x <= y]"), same_dtype=True, broadcasts=True)
defop("floormod", _floormod,
      (lambda B, g, out, x, y: unbroadcast(B, g, x.shape),
       lambda B, g, out, x, y: unbroadcast(B, -g * B.floordiv(x, y), y.shape)),
      ("dx = g", "dy = -g * floor(x / y)"), same_dtype=True, broadcasts=True, quiet=True)
defop("where", lambda cond, x, y: np.where(cond, x, y), _where_vjps(),
      ("dcond = None (a bool mask has no gradient)", "dx = g where cond else 0", "dy = g where not cond else 0"),
      broadcasts=True)

# linear algebra and shapes
defop("matmul", np.matmul,
      (lambda B, g, out, x, y: unbroadcast(B, g @ _swap_last(B, y), x.shape),
       lambda B, g, out, x, y: unbroadcast(B, _swap_last(B, x) @ g, y.shape)),
      ("dx = g @ y.T", "dy = x.T @ g"), same_dtype=True, reads=(0, 1))
defop("transpose", lambda x, perm: x.transpose(perm),
      (lambda B, g, out, x, perm: B.transpose(g, perm=tuple(np.argsort(perm))),), ("dx = transpose(g, inverse perm)",),
      reads=())
defop("reshape", lambda x, shape: x.reshape(shape),
      (lambda B, g, out, x, shape: B.reshape(g, shape=tuple(x.shape)),), ("dx = reshape(g, x.shape)",), reads=())
defop("broadcast_to", _broadcast_to,
      (lambda B, g, out, x, shape: unbroadcast(B, g, x.shape),), ("dx = sum of g over the broadcast axes",), reads=())
defop("concat", _concat, _Each(_concat_vjp), _EachFormula("dx{i} = g[the slice that x{i} filled]"),
      same_dtype=True)
defop("getitem", lambda x, key: x[key],
      (lambda B, g, out, x, key: B.scatter(g, key=key, shape=tuple(x.shape)),), ("dx = zeros, with g added at [key]",),
      reads=())
defop("scatter", _scatter, (lambda B, g, out, x, key, shape: B.getitem(g, key=key),), ("dx = g[key]",))

# reductions
defop("reduce_sum", _reduce_sum,
      (lambda B, g, out, x, axis, keepdims: _to_full(B, g, x, axis),), ("dx = broadcast(g)",), reads=())
defop("reduce_mean", _reduce_mean,
      (lambda B, g, out, x, axis, keepdims: _to_full(B, g / _n_reduced(x.shape, axis), x, axis),),
      ("dx = broadcast(g) / n",), reads=())
defop("reduce_max", lambda x, axis=None, keepdims=False: _max(x, axis, keepdims),
      (lambda B, g, out, x, axis, keepdims: _extreme_vjp(B, g, out, x, axis),),
      ("dx = g shared among the maxima",))


# neural-network ops (numerically stable forms)
defop("softmax", _softmax,
      (lambda B, g, out, x, axis: out * (g - B.reduce_sum(g * out, axis=(axis,), keepdims=True)),),
      ("dx = out * (g - sum(g * out))",), float_only=True, reads=("out",))
defop("log_softmax", _log_softmax,
      (lambda B, g, out, x, axis: g - B.exp(out) * B.reduce_sum(g, axis=(axis,), keepdims=True),),
      ("dx = g - softmax(x) * sum(g)",), float_only=True, reads=("out",))
defop("sparse_softmax_cross_entropy_with_logits", _sparse_xent,
      (None, _sparse_xent_vjp),
      ("dlabels = None (class ids have no gradient)", "dlogits = g * (softmax(logits) - one_hot(labels))"),
      saves=True)


# --- the rest of tf.math and tf.nn ---------------------------------------------------------
# elementwise, one input (float tensors); the rule's formula is in the input's own terms
for _name, _fn, _rule, _formula in [
    ("sin", np.sin, lambda B, g, out, x: g * B.cos(x), "dx = g * cos(x)"),
    ("cos", np.cos, lambda B, g, out, x: -g * B.sin(x), "dx = -g * sin(x)"),
    ("tan", np.tan, lambda B, g, out, x: g / B.square(B.cos(x)), "dx = g / cos(x)^2"),
    ("asin", np.arcsin, lambda B, g, out, x: g / B.sqrt(1 - x * x), "dx = g / sqrt(1 - x^2)"),
    ("acos", np.arccos, lambda B, g, out, x: -g / B.sqrt(1 - x * x), "dx = -g / sqrt(1 - x^2)"),
    ("atan", np.arctan, lambda B, g, out, x: g / (1 + x * x), "dx = g / (1 + x^2)"),
    ("sinh", np.sinh, lambda B, g, out, x: g * B.cosh(x), "dx = g * cosh(x)"),
    ("cosh", np.cosh, lambda B, g, out, x: g * B.sinh(x), "dx = g * sinh(x)"),
    ("asinh", np.arcsinh, lambda B, g, out, x: g / B.cosh(out), "dx = g / sqrt(x^2 + 1)"),
    ("acosh", np.arccosh, lambda B, g, out, x: g / B.sinh(out), "dx = g / sqrt(x^2 - 1)"),
    ("atanh", np.arctanh, lambda B, g, out, x: g / (1 - x * x), "dx = g / (1 - x^2)"),
    ("log1p", np.log1p, lambda B, g, out, x: g / (1 + x), "dx = g / (1 + x)"),
    ("expm1", np.expm1, lambda B, g, out, x: g * B.exp(x), "dx = g * exp(x)"),
    ("erf", _erf, lambda B, g, out, x: g * (2 / math.sqrt(math.pi)) * B.exp(-x * x),
     "dx = g * 2 / sqrt(pi) * exp(-x^2)"),
    ("softplus", lambda x: np.logaddexp(x, 0).astype(x.dtype),
     lambda B, g, out, x: g * B.sigmoid(x), "dx = g * sigmoid(x)"),
    ("log_sigmoid", lambda x: -np.logaddexp(-x, 0).astype(x.dtype),
     lambda B, g, out, x: g * B.sigmoid(-x), "dx = g * sigmoid(-x)"),
    ("softsign", lambda x: x / (1 + np.abs(x)), lambda B, g, out, x: g / B.square(1 + B.abs(x)),
     "dx = g / (1 + |x|)^2"),
    ("elu", lambda x: np.where(x < 0, np.exp(np.minimum(x, 0)) - 1, x),  # TF: exp(x) - 1 below 0
     lambda B, g, out, x: B.where(out < 0, g * (out + 1), g), "dx = g * exp(x) where x < 0, else g"),
    ("selu", lambda x: np.where(x < 0, _SELU_SCALE * _SELU_ALPHA * (np.exp(np.minimum(x, 0)) - 1),
                                _SELU_SCALE * x).astype(x.dtype),
     lambda B, g, out, x: B.where(out < 0, g * (out + _SELU_SCALE * _SELU_ALPHA), g * _SELU_SCALE),
     "dx = g * 1.7581 * exp(x) where x < 0, else g * 1.0507"),
]:
    defop(_name, _fn, (_rule,), (_formula,), float_only=True)
# (these two rules read only the output)
defop("reciprocal", np.reciprocal, (lambda B, g, out, x: _unless_zero(B, g, -g * out * out),), ("dx = -g / x^2",),
      float_only=True, reads=("out",))
defop("rsqrt", lambda x: 1 / np.sqrt(x), (lambda B, g, out, x: _unless_zero(B, g, -0.5 * g * out * out * out),),
      ("dx = -g / (2 * x^(3/2))",), float_only=True, reads=("out",))

# the relu family: the slope is 1 above 0, alpha (0 for relu) below, 0 past relu6's cap. The rules use relu_grad,
# as TF's do, so a second derivative is 0 (connected), not None
# (relu's rule reads out: [out > 0] is [x > 0], and a tape then need not keep x)
defop("relu", lambda x: np.maximum(x, 0), (lambda B, g, out, x: B.relu_grad(g, out),), ("dx = g * [x > 0]",),
      reads=("out",))
defop("relu6", lambda x: np.minimum(np.maximum(x, 0), 6), (lambda B, g, out, x: B.relu_grad(g, x, cap=6),),
      ("dx = g * [0 < x < 6]",))
defop("leaky_relu", lambda x, alpha: np.where(x > 0, x, alpha * x).astype(x.dtype),
      (lambda B, g, out, x, alpha: B.relu_grad(g, x, alpha=alpha),), ("dx = g where x > 0, else alpha * g",),
      float_only=True)
defop("relu_grad", _relu_grad,
      (lambda B, g, out, u, x, alpha=0.0, cap=None: unbroadcast(B, B.relu_grad(g, x, alpha=alpha, cap=cap), u.shape),
       _no_grad_at(1)),
      ("du = g * slope(x)   (the relu's slope at x)", "dx = 0"), same_dtype=True, broadcasts=True)
defop("gelu", _gelu, (_gelu_vjp,), ("dx = g * (Phi(x) + x * phi(x))   (Phi, phi: the normal CDF and density)",),
      float_only=True)
defop("silu", lambda x, beta: x * _sigmoid(beta * x),
      (lambda B, g, out, x, beta: (lambda s: g * s * (1 + beta * x * (1 - s)))(B.sigmoid(beta * x)),),
      ("dx = g * s * (1 + beta * x * (1 - s)),  s = sigmoid(beta * x)",), float_only=True)

# elementwise, two inputs
defop("squared_difference", lambda x, y: np.square(x - y),
      (lambda B, g, out, x, y: unbroadcast(B, g * 2 * (x - y), x.shape),
       lambda B, g, out, x, y: unbroadcast(B, -g * 2 * (x - y), y.shape)),
      ("dx = g * 2 * (x - y)", "dy = -g * 2 * (x - y)"), same_dtype=True, broadcasts=True, quiet=True)
defop("atan2", np.arctan2,  # atan2(y, x): the angle of the point (x, y)
      (lambda B, g, out, y, x: unbroadcast(B, g * x / (x * x + y * y), y.shape),
       lambda B, g, out, y, x: unbroadcast(B, -g * y / (x * x + y * y), x.shape)),
      ("dy = g * x / (x^2 + y^2)", "dx = -g * y / (x^2 + y^2)"), same_dtype=True, float_only=True, broadcasts=True)

# reductions and scans
defop("reduce_min", lambda x, axis=None, keepdims=False: _min(x, axis, keepdims),
      (lambda B, g, out, x, axis, keepdims: _extreme_vjp(B, g, out, x, axis),),
      ("dx = g shared among the minima",))
defop("reduce_prod", lambda x, axis=None, keepdims=False: np.multiply.reduce(x, axis=axis, keepdims=keepdims,
                                                                              dtype=x.dtype),
      (_prod_vjp,), ("dx = broadcast(g) * (the product of the other elements)",), quiet=True)
defop("reduce_logsumexp", _reduce_logsumexp,
      (lambda B, g, out, x, axis, keepdims: _to_full(B, g, x, axis) * B.exp(x - _to_full(B, out, x, axis)),),
      ("dx = broadcast(g) * exp(x - out)   (softmax(x))",), float_only=True)
defop("cumsum", lambda x, axis, exclusive, reverse: _cumulative(np.add, x, axis, exclusive, reverse),
      (lambda B, g, out, x, axis, exclusive, reverse:
       B.cumsum(g, axis=axis, exclusive=exclusive, reverse=not reverse),),
      ("dx = cumsum(g) in the other direction",), quiet=True)
defop("cumprod", lambda x, axis, exclusive, reverse: _cumulative(np.multiply, x, axis, exclusive, reverse),
      (_cumprod_vjp,), ("dx = cumsum(g * out) in the other direction / x   (0 where x = 0, as TF)",), quiet=True)

# picking, joining and padding
defop("gather", _gather,
      (lambda B, g, out, params, indices, axis: B.unsorted_segment_sum(g, indices, num_segments=params.shape[axis],
                                                                       axis=axis), None),
      ("dparams = zeros, with g added at the picked indices", "dindices = None (indices have no gradient)"))
defop("unsorted_segment_sum", _segment_sum,
      (lambda B, g, out, data, ids, num_segments, axis: B.gather(g, ids, axis=axis), None),
      ("ddata = g at each slice's segment (gather)", "dids = None (ids have no gradient)"))
defop("einsum", _einsum, _Each(_einsum_vjp), _EachFormula("dx{i} = einsum(g, the other inputs) into x{i}'s subscripts"),
      same_dtype=True)
defop("pad", _pad, (_pad_vjp,), ("dx = g without the padding (mirrored copies added back)",))

# linear algebra (tf.linalg)
defop("inv", _inv, (lambda B, g, out, x: -(_swap_last(B, out) @ g @ _swap_last(B, out)),),
      ("dx = -inv(x).T @ g @ inv(x).T",), float_only=True)
defop("det", np.linalg.det,
      (lambda B, g, out, x: B.reshape(g * out, shape=tuple(g.shape) + (1, 1)) * _swap_last(B, B.inv(x)),),
      ("dx = g * det(x) * inv(x).T",), float_only=True)
defop("solve", _solve,
      (lambda B, g, out, a, b, adjoint: -(B.solve(a, g, adjoint=not adjoint) @ _swap_last(B, out)) if not adjoint
       else -(out @ _swap_last(B, B.solve(a, g, adjoint=not adjoint))),
       lambda B, g, out, a, b, adjoint: B.solve(a, g, adjoint=not adjoint)),
      ("da = -solve(a.T, g) @ out.T", "db = solve(a.T, g)"), same_dtype=True, float_only=True)
defop("diag", _diag, (lambda B, g, out, v: B.diag_part(g),), ("dv = diag_part(g)",))
defop("diag_part", lambda x: np.diagonal(x, axis1=-2, axis2=-1).copy(), (_diag_part_vjp,),
      ("dx = zeros, with g on the diagonal",))

# convolution and pooling: the rules are each other's transposes, so second derivatives stay in the table
defop("conv2d", _conv2d,
      (lambda B, g, out, x, kernel, strides, padding:
       B.conv2d_input_grad(g, kernel, input_shape=tuple(x.shape), strides=strides, padding=padding),
       lambda B, g, out, x, kernel, strides, padding:
       B.conv2d_filter_grad(x, g, kernel_shape=tuple(kernel.shape), strides=strides, padding=padding)),
      ("dx = g @ kernel.T, sent back to the window of x each output pixel read (overlaps add up)",
       "dkernel = sum over output positions of (the window of x there) * g"), same_dtype=True)
defop("conv2d_input_grad", _conv2d_input_grad,
      (lambda B, g, out, gy, kernel, input_shape, strides, padding:
       B.conv2d(g, kernel, strides=strides, padding=padding),
       lambda B, g, out, gy, kernel, input_shape, strides, padding:
       B.conv2d_filter_grad(g, gy, kernel_shape=tuple(kernel.shape), strides=strides, padding=padding)),
      ("dgy = conv2d(g, kernel)", "dkernel = sum over positions of (window of g) * gy"), same_dtype=True)
defop("conv2d_filter_grad", _conv2d_filter_grad,
      (lambda B, g, out, x, gy, kernel_shape, strides, padding:
       B.conv2d_input_grad(gy, g, input_shape=tuple(x.shape), strides=strides, padding=padding),
       lambda B, g, out, x, gy, kernel_shape, strides, padding: B.conv2d(x, g, strides=strides, padding=padding)),
      ("dx = gy @ g.T sent back to each window", "dgy = conv2d(x, g)"), same_dtype=True)
defop("max_pool2d", _max_pool2d, (_max_pool2d_vjp,), ("dx = g at each window's maximum, 0 elsewhere",), saves=True)
defop("avg_pool2d", _avg_pool2d,
      (lambda B, g, out, x, ksize, strides, padding:
       B.avg_pool2d_grad(g, input_shape=tuple(x.shape), ksize=ksize, strides=strides, padding=padding),),
      ("dx = g / (the entries the window averaged), shared by each of them",), float_only=True)
defop("avg_pool2d_grad", _avg_pool2d_grad,
      (lambda B, g, out, gy, input_shape, ksize, strides, padding:
       B.avg_pool2d(g, ksize=ksize, strides=strides, padding=padding),),
      ("dgy = avg_pool2d(g)",), float_only=True)

# not differentiable: no VJP, never recorded; their outputs carry no gradient
defop("stop_gradient", lambda x: x)
defop("floordiv", _floordiv, same_dtype=True, quiet=True)
defop("one_hot", _one_hot)
# argmax / argmin skip NaN (TF compares, and a comparison with NaN is false); numpy would point at the NaN
defop("argmax", lambda x, axis, output_type: np.argmax(
    np.where(np.isnan(x), -np.inf, x) if x.dtype.kind == "f" else x, axis=axis).astype(output_type))
defop("argmin", lambda x, axis, output_type: np.argmin(
    np.where(np.isnan(x), np.inf, x) if x.dtype.kind == "f" else x, axis=axis).astype(output_type))
defop("argsort", lambda x, axis, descending: _sort_indices(x, axis, descending).astype(np.int32))
for _name, _fn in [("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
                   ("less_equal", np.less_equal), ("greater", np.greater), ("greater_equal", np.greater_equal),
                   ("logical_and", np.logical_and), ("logical_or", np.logical_or),
                   ("logical_xor", np.logical_xor)]:
    defop(_name, _fn, same_dtype=True)
for _name, _fn in [("logical_not", np.logical_not), ("is_finite", np.isfinite), ("is_nan", np.isnan),
                   ("is_inf", np.isinf)]:
    defop(_name, _fn)
# piecewise constant: TF defines no gradient for them (None), unlike sign's zeros
for _name, _fn in [("floor", np.floor), ("ceil", np.ceil), ("round", np.round)]:  # round: half to even, as TF
    defop(_name, _fn)
defop("reduce_any", lambda x, axis=None, keepdims=False: np.logical_or.reduce(x, axis=axis, keepdims=keepdims))
defop("reduce_all", lambda x, axis=None, keepdims=False: np.logical_and.reduce(x, axis=axis, keepdims=keepdims))
defop("print", _print)  # tf.print: an op, so a traced function prints on every call


# The numpy backend of the VJP rules: each op's own forward, plus two helpers.
NUMPY = SimpleNamespace(
    **{name: op.forward for name, op in OPS.items()},
    zeros_like=np.zeros_like,
    ones_like=np.ones_like,
)
