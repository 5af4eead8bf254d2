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
"""

import functools
import math
from types import SimpleNamespace

import numpy as np

from tapelab import dtypes


class Op:
    """One primitive. ``vjps[i]`` is the rule for input ``i`` (``None``: no gradient flows there)."""

    __slots__ = ("name", "forward", "vjps", "formulas", "same_dtype", "float_only", "saves", "broadcasts")

    def __init__(self, name, forward, vjps=None, formulas=(), same_dtype=False, float_only=False, saves=False,
                 broadcasts=False):
        self.name = name
        self.forward = forward
        self.vjps = vjps  # None: the whole op is not differentiable (never recorded)
        self.formulas = formulas
        self.same_dtype = same_dtype
        self.float_only = float_only
        self.saves = saves  # the forward returns (output, residual); the rules get residual=
        self.broadcasts = broadcasts  # elementwise with broadcasting: a rule's result is summed to its input's shape

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


def defop(name, forward, vjps=None, formulas=(), **flags):
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


def _logsumexp(x, axis):
    m = _max(x, axis)
    if not x.size:
        return m  # an empty sum's log: -inf
    return m + np.log(np.add.reduce(np.exp(x - m), axis=axis, keepdims=True))


def _softmax(x, axis=-1):
    e = np.exp(x - _max(x, axis))
    return e / np.add.reduce(e, axis=axis, keepdims=True)


def _log_softmax(x, axis=-1):
    return x - _logsumexp(x, axis)


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
        # many short rows (class scores): numpy reduces one row at a time (~45 ns a row), the columns of the
        # transposed copy in a few vectorised passes (128 x 10: 6.2 -> 1.9 us; 60000 x 10: 9x). The same maxima
        # (a row of +0.0 and -0.0 ties may give the other zero)
        m = np.maximum.reduce(np.ascontiguousarray(x.T), axis=0)
        return m[:, None] if keepdims else m
    return np.maximum.reduce(x, axis=axis, keepdims=keepdims, **_lowest(x))


def _broadcast_to(x, shape):
    # a new array (as TF makes one): cheaper to build than numpy's read-only broadcast view
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


def _reduce_mean(x, axis=None, keepdims=False):
    kind = x.dtype.kind
    total = np.add.reduce(x, axis=axis, keepdims=keepdims, dtype=np.float64 if kind in "iub" else x.dtype)
    if kind == "f":  # sum / count, in the float dtype itself; the mean of nothing is nan (TF)
        return total / _n_reduced(x.shape, axis) if x.size else total * np.nan
    mean = total / _n_reduced(x.shape, axis)
    return np.trunc(mean).astype(x.dtype) if kind in "iu" else mean.astype(x.dtype, copy=False)  # TF: ints stay ints


def _lowest(x):
    # the maximum of nothing is the lowest value (TF: -inf for floats); numpy needs it spelled out
    return {} if x.size else {"initial": -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min}


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


def _where_vjps():
    def dx(B, g, out, cond, x, y):
        return unbroadcast(B, B.where(cond, g, B.zeros_like(g)), x.shape)

    def dy(B, g, out, cond, x, y):
        return unbroadcast(B, B.where(cond, B.zeros_like(g), g), y.shape)

    return (None, dx, dy)


# --- the table -----------------------------------------------------------------------------
# elementwise, one input
defop("negative", np.negative, (lambda B, g, out, x: -g,), ("dx = -g",))
defop("square", np.square, (lambda B, g, out, x: g * 2 * x,), ("dx = g * 2 * x",))
defop("sqrt", np.sqrt, (lambda B, g, out, x: g * 0.5 / out,), ("dx = g / (2 * sqrt(x))",), float_only=True)
defop("exp", np.exp, (lambda B, g, out, x: g * out,), ("dx = g * exp(x)",), float_only=True)
defop("log", np.log, (lambda B, g, out, x: g / x,), ("dx = g / x",), float_only=True)
defop("abs", np.abs, (lambda B, g, out, x: g * B.sign(x),), ("dx = g * sign(x)",))
defop("tanh", np.tanh, (lambda B, g, out, x: g * (1 - out * out),), ("dx = g * (1 - tanh(x)^2)",), float_only=True)
defop("sigmoid", _sigmoid, (lambda B, g, out, x: g * out * (1 - out),), ("dx = g * out * (1 - out)",), float_only=True)
defop("relu", lambda x: np.maximum(x, 0), (lambda B, g, out, x: g * _mask(B, x > 0, g),), ("dx = g * [x > 0]",))
defop("sign", np.sign, (_no_grad,), ("dx = 0",))
defop("floor", np.floor, (_no_grad,), ("dx = 0",), float_only=True)
defop("identity", lambda x: x, (lambda B, g, out, x: g,), ("dx = g",))
defop("cast", lambda x, dtype: x.astype(dtypes.as_dtype(dtype).as_numpy_dtype),
      (lambda B, g, out, x, dtype: B.cast(g, dtype=x.dtype),), ("dx = cast(g, x.dtype)",))

# elementwise, two inputs, broadcasting (each VJP undoes the broadcast with `unbroadcast`)
defop("add", np.add,
      (lambda B, g, out, x, y: unbroadcast(B, g, x.shape),
       lambda B, g, out, x, y: unbroadcast(B, g, y.shape)),
      ("dx = g", "dy = g"), same_dtype=True, broadcasts=True)
defop("subtract", np.subtract,
      (lambda B, g, out, x, y: unbroadcast(B, g, x.shape),
       lambda B, g, out, x, y: unbroadcast(B, -g, y.shape)),
      ("dx = g", "dy = -g"), same_dtype=True, broadcasts=True)
defop("multiply", np.multiply,
      (lambda B, g, out, x, y: unbroadcast(B, g * y, x.shape),
       lambda B, g, out, x, y: unbroadcast(B, g * x, y.shape)),
      ("dx = g * y", "dy = g * x"), same_dtype=True, broadcasts=True)
defop("divide", lambda x, y: np.true_divide(x, y, dtype=_truediv_dtype(x)),
      (lambda B, g, out, x, y: unbroadcast(B, g / y, x.shape),
       lambda B, g, out, x, y: unbroadcast(B, -g * out / y, y.shape)),
      ("dx = g / y", "dy = -g * x / y^2"), same_dtype=True, broadcasts=True)
defop("pow", np.power,
      (lambda B, g, out, x, y: unbroadcast(B, g * y * x ** (y - 1), x.shape),
       lambda B, g, out, x, y: unbroadcast(B, g * out * B.log(B.where(x > 0, x, B.ones_like(x))), y.shape)),
      ("dx = g * y * x^(y-1)", "dy = g * x^y * log(x)   (0 where x <= 0)"), same_dtype=True, broadcasts=True)
defop("maximum", np.maximum,
      (lambda B, g, out, x, y: unbroadcast(B, g * _mask(B, x >= y, g), x.shape),
       lambda B, g, out, x, y: unbroadcast(B, g * _mask(B, x < y, g), y.shape)),
      ("dx = g * [x >= y]", "dy = g * [x < y]"), same_dtype=True, broadcasts=True)
defop("minimum", np.minimum,
      (lambda B, g, out, x, y: unbroadcast(B, g * _mask(B, x <= y, g), x.shape),
       lambda B, g, out, x, y: unbroadcast(B, g * _mask(B, x > y, g), y.shape)),
      ("dx = g * [x <= y]", "dy = g * [x > y]"), same_dtype=True, broadcasts=True)
defop("floormod", np.mod,
      (lambda B, g, out, x, y: unbroadcast(B, g, x.shape),
       lambda B, g, out, x, y: unbroadcast(B, -g * B.floor(x / y), y.shape)),
      ("dx = g", "dy = -g * floor(x / y)"), same_dtype=True, broadcasts=True)
defop("where", lambda cond, x, y: np.where(cond, x, y), _where_vjps(),
      ("dcond = None (a bool mask has no gradient)", "dx = g where cond else 0", "dy = g where not cond else 0"),
      broadcasts=True)

# linear algebra and shapes
defop("matmul", np.matmul,
      (lambda B, g, out, x, y: unbroadcast(B, g @ _swap_last(B, y), x.shape),
       lambda B, g, out, x, y: unbroadcast(B, _swap_last(B, x) @ g, y.shape)),
      ("dx = g @ y.T", "dy = x.T @ g"), same_dtype=True)
defop("transpose", lambda x, perm: x.transpose(perm),
      (lambda B, g, out, x, perm: B.transpose(g, perm=tuple(np.argsort(perm))),), ("dx = transpose(g, inverse perm)",))
defop("reshape", lambda x, shape: x.reshape(shape),
      (lambda B, g, out, x, shape: B.reshape(g, shape=tuple(x.shape)),), ("dx = reshape(g, x.shape)",))
defop("broadcast_to", _broadcast_to,
      (lambda B, g, out, x, shape: unbroadcast(B, g, x.shape),), ("dx = sum of g over the broadcast axes",))
defop("concat", _concat, _Each(_concat_vjp), _EachFormula("dx{i} = g[the slice that x{i} filled]"),
      same_dtype=True)
defop("getitem", lambda x, key: x[key],
      (lambda B, g, out, x, key: B.scatter(g, key=key, shape=tuple(x.shape)),), ("dx = zeros, with g added at [key]",))
defop("scatter", _scatter, (lambda B, g, out, x, key, shape: B.getitem(g, key=key),), ("dx = g[key]",))

# reductions
defop("reduce_sum", lambda x, axis=None, keepdims=False: np.add.reduce(x, axis=axis, keepdims=keepdims, dtype=x.dtype),
      (lambda B, g, out, x, axis, keepdims: _to_full(B, g, x, axis),), ("dx = broadcast(g)",))
defop("reduce_mean", _reduce_mean,
      (lambda B, g, out, x, axis, keepdims: _to_full(B, g / _n_reduced(x.shape, axis), x, axis),),
      ("dx = broadcast(g) / n",))
defop("reduce_max", lambda x, axis=None, keepdims=False: _max(x, axis, keepdims),
      (lambda B, g, out, x, axis, keepdims: _max_vjp(B, g, out, x, axis),),
      ("dx = g shared among the maxima",))


def _max_vjp(B, g, out, x, axis):
    # the gradient goes to the element(s) that were the maximum, split evenly among ties
    hit = _mask(B, x == _to_full(B, out, x, axis), x)
    count = _to_full(B, B.reduce_sum(hit, axis=axis, keepdims=False), x, axis)
    return _to_full(B, g, x, axis) * hit / count


# neural-network ops (numerically stable forms)
defop("softmax", _softmax,
      (lambda B, g, out, x, axis: out * (g - B.reduce_sum(g * out, axis=(axis,), keepdims=True)),),
      ("dx = out * (g - sum(g * out))",), float_only=True)
defop("log_softmax", _log_softmax,
      (lambda B, g, out, x, axis: g - B.exp(out) * B.reduce_sum(g, axis=(axis,), keepdims=True),),
      ("dx = g - softmax(x) * sum(g)",), float_only=True)
defop("sparse_softmax_cross_entropy_with_logits", _sparse_xent,
      (None, _sparse_xent_vjp),
      ("dlabels = None (class ids have no gradient)", "dlogits = g * (softmax(logits) - one_hot(labels))"),
      saves=True)

# not differentiable: no VJP, never recorded; their outputs carry no gradient
defop("stop_gradient", lambda x: x)
defop("floordiv", np.floor_divide, same_dtype=True)
defop("one_hot", _one_hot)
defop("argmax", lambda x, axis, output_type: np.argmax(x, axis=axis).astype(output_type))
defop("argmin", lambda x, axis, output_type: np.argmin(x, axis=axis).astype(output_type))
for _name, _fn in [("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
                   ("less_equal", np.less_equal), ("greater", np.greater), ("greater_equal", np.greater_equal),
                   ("logical_and", np.logical_and), ("logical_or", np.logical_or)]:
    defop(_name, _fn, same_dtype=True)
defop("logical_not", np.logical_not)


# The numpy backend of the VJP rules: each op's own forward, plus two helpers.
NUMPY = SimpleNamespace(
    **{name: op.forward for name, op in OPS.items()},
    zeros_like=np.zeros_like,
    ones_like=np.ones_like,
)
