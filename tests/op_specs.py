"""One spec per op of the table (``tl.OPS``): the gradient, zero-size / bad-input and random-program tests expand it.

tests/engine/test_ops_gradients.py checks each spec's ``grads`` against finite differences (and second derivatives,
the listing, float32); tests/engine/test_bad_input.py runs its ``zero_size`` call on 0-d and empty tensors and, for a
two-input elementwise op, mismatched shapes; tests/engine/test_random_programs.py draws its ``program`` into random
programs. Each file fails, naming this file, while an op of ``tl.OPS`` has no spec here.

To add an op (after its ``defop`` and its wrapper), add one line to its group below, e.g.::

    binary("xlogy", tl.math.xlogy, (POSITIVE, ANY)),

``unary`` / ``binary`` (elementwise, one / two broadcasting inputs) and ``reduction`` specs get every case from the call
and the input domains (``Domain``: gradient-check values, random-program draws). Other ops give their cases:
``grads=[(f, [(domain, shape), ...]), ...]``, ``zero_size=lambda x: ...`` (x: one float64 tensor), ``program=`` a
generator (see ``unary_program``), ``undefined={shape: message}``; ``grad=False`` for an op without a gradient rule,
``no_program="why"`` for one kept out of random programs.
"""

import io
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

import tapelab as tl
from tapelab.engine.tape import TENSORS

rng = np.random.default_rng(0)  # gradient-check inputs
MARGIN = 0.05  # distance random programs keep from a kink: far more than finite differences (eps 1e-6) move a value
UNARY_SHAPES = [(), (4,), (3, 4)]
BINARY_SHAPES = [((), ()), ((4,), (4,)), ((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((3, 4), ()),
                 ((2, 3, 4), (3, 1))]


def primitive(name):
    """Primitive ``name`` of the table run on tensors, for the ops no public function calls (the rules' own)."""
    def call(*inputs, **params):
        return getattr(TENSORS, name)(*inputs, **params)  # (the runner the gradient rules use)

    call.__name__ = name
    return call


# --- where inputs come from -------------------------------------------------------------------------------------

def uniform(lo, hi):
    return lambda shape: rng.uniform(lo, hi, shape)


def away_from_zero(shape):
    return rng.uniform(0.3, 2, shape) * rng.choice([-1, 1], shape)


def well_conditioned(shape):
    return rng.uniform(-0.5, 0.5, shape) + 3 * np.eye(shape[-1])


def always(v):
    return True


def above(c):
    return lambda v: v.min(initial=c + 1) > c


def below(c):
    return lambda v: v.max(initial=c - 1) < c


def within(c):
    return lambda v: np.abs(v).max(initial=0) < c


def not_near(c):
    return lambda v: np.all(np.abs(v - c) > MARGIN)


def far_apart(x, y):
    return np.all(np.abs(x - y) > MARGIN)


@dataclass(frozen=True)
class Domain:
    """One input's values. Gradient checks call it (shape -> values: ``grad``). A random program takes a tensor it
    already has when ``ok(values)``, else a new source uniform in [lo, hi] (kept 0.2 from ``away_from``)."""
    grad: Callable = uniform(-2, 2)
    lo: float = -2.0
    hi: float = 2.0
    ok: Callable = always
    away_from: float | None = None

    def __call__(self, shape):
        return self.grad(shape)


def interval(lo, hi, ok):
    return Domain(uniform(lo, hi), lo, hi, ok)


ANY = Domain()
POSITIVE = Domain(uniform(0.5, 2), 0.3, 2.0, above(0.3))
NONZERO = Domain(away_from_zero, ok=not_near(0), away_from=0.0)
BOUNDED = Domain(ok=within(2.5))


@dataclass(frozen=True)
class RandomShapes:
    """Also check the gradient on hypothesis-drawn (for two inputs: mutually broadcasting) shapes, values in
    [lo, hi]; draws where two inputs come closer than ``apart`` are skipped (a kink at a tie)."""
    lo: float
    hi: float
    apart: float | None = None


@dataclass
class OpSpec:
    name: str  # the op's name in tl.OPS
    call: Callable | None = None  # its public function (None: the op has none)
    kind: str = "other"  # "unary" / "binary" (elementwise), "reduction" or "other"
    grads: list = field(default_factory=list)  # gradient cases: (f, [(domain or maker, shape), ...]); [] = no rule
    check: dict = field(default_factory=dict)  # keyword arguments for tl.check_gradients
    zero_size: Callable | None = None  # a call on one float64 tensor x of any shape (other inputs made from x)
    undefined: dict = field(default_factory=dict)  # shape -> message regex: zero_size must raise there
    program: Callable | None = None  # random programs: builder -> (f, argument indices), or None if none fits
    no_program: str | None = None  # why a differentiable op has no program generator
    mismatch: object = None  # the dtype of the shape-mismatch row's operands (2, 3) and (4,) (binary ops)
    random_shapes: RandomShapes | None = None


# --- random-program generators: builder b -> (f, argument indices) or None ----------------------------------------
# (b.pick(ok, shape) a tensor of the program, b.leaf(shape, lo, hi, away_from) a new source, b.values their
# numpy values, b.draw a hypothesis draw, b.any_shape(like) a shape, b.rng numpy's generator)

def unary_program(f, domain=ANY):
    def gen(b):
        i = b.pick(domain.ok)
        if i is None:
            i = b.leaf(b.any_shape(), domain.lo, domain.hi, domain.away_from)
        return f, [i]
    return gen


def binary_program(f, x=ANY, y=ANY, ok=None):
    """``ok(x, y)`` on the broadcast operands; a new x is drawn in [0.5, 2], a new y from y's domain."""
    ok = ok or (lambda x, y: True)

    def gen(b):
        i = b.pick(x.ok)
        if i is None:
            i = b.leaf(b.any_shape(), 0.5, 2.0)
        xv = b.values[i]
        j = b.pick(lambda v: y.ok(v) and ok(*np.broadcast_arrays(xv, v)), shape=xv.shape)
        if j is None:
            for _ in range(20):  # a new operand that fits
                j = b.leaf(b.any_shape(like=xv.shape), y.lo, y.hi, y.away_from)
                if ok(*np.broadcast_arrays(xv, b.values[j])):
                    break
                b.drop_leaf()
            else:
                return None
        return f, [i, j]
    return gen


def _frac_ok(v):
    f = v - np.floor(v)
    return np.all((f > MARGIN) & (f < 1 - MARGIN))


def _gap_ok(v, axis):
    if v.size < 2 or (axis is not None and v.shape[axis] < 2):
        return True
    s = np.sort(v.reshape(-1) if axis is None else np.moveaxis(v, axis, -1), axis=-1)
    return np.all(s[..., -1] - s[..., -2] > MARGIN)


def gen_floormod(b):
    i = b.leaf(b.any_shape(), 0.2, 3.0)  # y in (0.5, 2): x / y keeps away from integers
    for _ in range(20):
        j = b.leaf(b.any_shape(like=b.values[i].shape), 0.6, 2.0)
        if _frac_ok(np.divide(*np.broadcast_arrays(b.values[i], b.values[j]))):
            return tl.math.floormod, [i, j]
        b.drop_leaf()
    return None


def gen_where(b):
    i = b.pick()
    j = b.pick(shape=b.values[i].shape)
    shape = np.broadcast_shapes(b.values[i].shape, b.values[j].shape)
    cond = tl.constant(b.rng.uniform(size=shape) > 0.5)
    return (lambda x, y: tl.where(cond, x, y)), [i, j]


def gen_matmul(b):
    i = b.pick(lambda v: v.ndim == 2)
    if i is None:
        i = b.leaf((2, 3))
    k = b.values[i].shape[1]
    j = b.pick(lambda v: v.ndim == 2 and v.shape[0] == k)
    if j is None:
        j = b.leaf((k, b.draw(st.sampled_from([1, 2, 3]))))
    return tl.matmul, [i, j]


def gen_shape_op(name):
    def gen(b):
        i = b.pick()
        v = b.values[i]
        f = {"reshape": lambda x: tl.reshape(x, tuple(reversed(v.shape)) or (1,)), "transpose": tl.transpose,
             "broadcast_to": lambda x: tl.broadcast_to(x, (2,) + v.shape)}[name]
        return f, [i]
    return gen


def gen_concat(b):
    i = b.pick(lambda v: v.ndim >= 1)
    if i is None:
        i = b.leaf((3,))
    shape = b.values[i].shape
    axis = b.draw(st.integers(0, len(shape) - 1))
    other = list(shape)
    other[axis] = b.draw(st.integers(1, 2))
    j = b.leaf(tuple(other))
    return (lambda x, y: tl.concat([x, y], axis)), [i, j]


def gen_getitem(b):
    i = b.pick(lambda v: v.ndim >= 1 and v.shape[0] >= 2)
    if i is None:
        i = b.leaf((3,))
    key = b.draw(st.sampled_from([0, -1, slice(None, None, -1), [0, 0, 1]]))
    return (lambda x: x[key]), [i]


def gen_scatter(b):
    i = b.pick(lambda v: v.ndim >= 1)
    if i is None:
        i = b.leaf((2,))
    shape = b.values[i].shape
    rows = np.array(b.draw(st.lists(st.integers(0, shape[0]), min_size=shape[0], max_size=shape[0])))
    return (lambda g: primitive("scatter")(g, key=(rows,), shape=(shape[0] + 1,) + shape[1:])), [i]  # repeats add up


def reduce_program(f, gap=None):
    """``gap``: +1 (reduce_max) / -1 (reduce_min): the largest (smallest) value must stand MARGIN clear of the next."""
    def gen(b):
        i = b.pick()
        v = b.values[i]
        axis = b.draw(st.sampled_from([None] + list(range(v.ndim))))
        if gap and not _gap_ok(gap * v, axis):
            i = b.leaf(v.shape)
            if not _gap_ok(gap * b.values[i], axis):
                return None
        keepdims = b.draw(st.booleans())
        return (lambda x: f(x, axis=axis, keepdims=keepdims)), [i]
    return gen


def gen_axis_op(f, ok=always):
    def gen(b):
        i = b.pick(lambda v: v.ndim >= 1 and ok(v))
        if i is None:
            i = b.leaf((2, 3))
        axis = b.draw(st.sampled_from([-1, 0]))
        return (lambda x: f(x, axis=axis)), [i]
    return gen


def gen_xent(b):
    i = b.pick(lambda v: v.ndim >= 1)
    if i is None:
        i = b.leaf((2, 3))
    shape = b.values[i].shape
    labels = b.rng.integers(0, shape[-1], shape[:-1]).astype(np.int32)
    return (lambda z: tl.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=z)), [i]


def gen_square(f):
    """An op on a well-conditioned square matrix (a new source: 3 I plus a small random part)."""
    def gen(b):
        i = b.leaf((2, 2), -0.5, 0.5)
        b.values[i] += 3 * np.eye(2)
        return f, [i]
    return gen


def gen_images(f, *shapes):
    """An op on new sources of the given shapes (images (batch, height, width, channels) and kernels)."""
    def gen(b):
        return f, [b.leaf(shape) for shape in shapes]
    return gen


# --- the spec makers ----------------------------------------------------------------------------------------------

def unary(name, call, domain=ANY, *, grad=True, logical=False, f=None, more_grads=(), **fields):
    """An elementwise op of one input. ``f``: what gradients and programs differentiate instead of ``call``;
    ``logical``: the op takes booleans (its zero-size call gets x > 0.5)."""
    f = f or call
    fields.setdefault("zero_size", (lambda x: call(x > 0.5)) if logical else (lambda x: call(x)))
    if grad:
        fields.setdefault("program", unary_program(f, domain))
    grads = [(f, [(domain, s)]) for s in UNARY_SHAPES] + list(more_grads) if grad else []
    return OpSpec(name, call, "unary", grads, **fields)


def binary(name, call, domains=(ANY, ANY), *, grad=True, logical=False, ok=None, more_grads=(), **fields):
    """An elementwise op of two broadcasting inputs. ``ok(x, y)``: operands a random program may pair;
    ``logical``: the op takes booleans (its zero-size call gets x > 0.5 and x < 2)."""
    dx, dy = domains
    fields.setdefault("zero_size", (lambda x: call(x > 0.5, x < 2.0)) if logical else (lambda x: call(x, x + 1.0)))
    fields.setdefault("mismatch", tl.bool if logical else tl.float32)
    if grad:
        fields.setdefault("program", binary_program(call, dx, dy, ok))
    grads = [(call, [(dx, a), (dy, b)]) for a, b in BINARY_SHAPES] + list(more_grads) if grad else []
    return OpSpec(name, call, "binary", grads, **fields)


def _along_last(x):
    return -1 if x.ndim else None


def reduction(name, call, *, grad=True, gap=None, more_grads=(), **fields):
    """A reduction (axis, keepdims); ``gap``: see ``reduce_program``."""
    fields.setdefault("zero_size", lambda x: call(x) + call(x, axis=_along_last(x)))
    if grad:
        fields.setdefault("program", reduce_program(call, gap))
    grads = [(lambda x: call(x), [(ANY, (3, 4))]),
             (lambda x: call(x, axis=0), [(ANY, (3, 4))]),
             (lambda x: call(x, axis=-1, keepdims=True), [(ANY, (3, 4))]),
             (lambda x: call(x, axis=[0, 2]), [(ANY, (2, 3, 4))]),
             (lambda x: call(x), [(ANY, ())])] + list(more_grads) if grad else []
    return OpSpec(name, call, "reduction", grads, **fields)


def _images(x):
    """x as a batch of 1x1 one-channel images (a 0-d x is one image; an empty x no images)."""
    return tl.reshape(x, (-1, 1, 1, 1))


def _matrices(x):
    return tl.reshape(x, tuple(x.shape) + (1, 1))


def _svd_signed(a, full_matrices=False):
    """svd's three parts, each column of u and v times its own first entry (which does not depend on the column's
    sign, a choice the decomposition leaves open), flattened and concatenated."""
    s, u, v = tl.linalg.svd(a, full_matrices=full_matrices)
    return tl.concat([tl.reshape(s, [-1]), tl.reshape(u * u[..., :1, :], [-1]), tl.reshape(v * v[..., :1, :], [-1])],
                     axis=0)


_conv = {"strides": (1, 1), "padding": "VALID"}
_relu6_points = Domain(lambda shape: rng.choice([-1.5, 0.5, 3, 7.5], shape) + rng.uniform(-0.3, 0.3, shape),
                       ok=lambda v: not_near(0)(v) and not_near(6)(v), away_from=0.0)
_nonzero_bounded = Domain(away_from_zero, ok=within(2.5))

# --- the specs, grouped as the op table is --------------------------------------------------------------------------

ONE_INPUT = [
    unary("negative", tl.negative, random_shapes=RandomShapes(-3, 3)),
    unary("identity", tl.identity),
    unary("square", tl.square, random_shapes=RandomShapes(-3, 3)),
    unary("sqrt", tl.sqrt, POSITIVE),
    unary("exp", tl.exp, Domain(ok=below(2)), random_shapes=RandomShapes(-3, 3)),
    unary("log", tl.math.log, POSITIVE),
    unary("abs", tl.abs, NONZERO),
    unary("tanh", tl.tanh, random_shapes=RandomShapes(-3, 3)),
    unary("sigmoid", tl.sigmoid, random_shapes=RandomShapes(-3, 3)),
    unary("sign", tl.sign, NONZERO, f=lambda x: tl.sign(x) * x),  # d(sign(x) x) = sign(x): sign itself adds 0
    *(unary(n, getattr(tl.math, n), BOUNDED) for n in ["sin", "cos", "atan", "sinh", "cosh", "asinh", "erf",
                                                        "softplus", "log_sigmoid", "expm1"]),
    unary("tan", tl.tan, interval(-1.2, 1.2, within(1.2))),
    *(unary(n, getattr(tl.math, n), interval(-0.9, 0.9, within(0.9))) for n in ["asin", "acos", "atanh"]),
    unary("acosh", tl.acosh, interval(1.2, 3.0, above(1.2)), zero_size=lambda x: tl.acosh(x + 1.0)),
    unary("log1p", tl.math.log1p, interval(-0.5, 2.0, above(-0.5))),
    unary("softsign", tl.nn.softsign, _nonzero_bounded),
    unary("reciprocal", tl.math.reciprocal, NONZERO),
    unary("rsqrt", tl.math.rsqrt, POSITIVE),
    unary("relu", tl.nn.relu, NONZERO),
    unary("relu6", tl.nn.relu6, _relu6_points),
    unary("leaky_relu", tl.nn.leaky_relu, NONZERO,
          more_grads=[(lambda x: tl.nn.leaky_relu(x, alpha=0.05), [(away_from_zero, (3, 4))])]),
    unary("elu", tl.nn.elu, _nonzero_bounded),
    unary("selu", tl.nn.selu, NONZERO),
    unary("gelu", tl.nn.gelu, BOUNDED, more_grads=[(lambda x: tl.nn.gelu(x, approximate=True), [(ANY, (3, 4))])]),
    unary("silu", tl.nn.silu, BOUNDED, more_grads=[(lambda x: tl.nn.silu(x, beta=1.7), [(ANY, (3, 4))])]),
    # no gradient rule
    *(unary(n, getattr(tl, n), grad=False) for n in ["floor", "stop_gradient"]),
    *(unary(n, getattr(tl.math, n), grad=False) for n in ["ceil", "round", "is_finite", "is_nan", "is_inf"]),
    unary("logical_not", tl.logical_not, grad=False, logical=True),
]

TWO_INPUTS = [
    binary("add", tl.add, random_shapes=RandomShapes(-2, 2)),
    binary("subtract", tl.subtract, random_shapes=RandomShapes(-2, 2)),
    binary("multiply", tl.multiply, random_shapes=RandomShapes(-2, 2)),
    binary("divide", tl.divide, (ANY, NONZERO), random_shapes=RandomShapes(0.5, 2)),
    binary("pow", tl.pow, (POSITIVE, BOUNDED), random_shapes=RandomShapes(0.5, 2)),
    *(binary(n, getattr(tl, n), (Domain(uniform(-2, -0.1)), Domain(uniform(0.1, 2))), ok=far_apart,
             more_grads=[(getattr(tl, n), [(uniform(0.1, 2), (3, 4)), (uniform(-2, -0.1), (4,))])],
             random_shapes=RandomShapes(-2, 2, apart=1e-3)) for n in ["maximum", "minimum"]),
    binary("floormod", tl.math.floormod, (Domain(uniform(0.2, 0.8)), Domain(uniform(1.5, 2))), program=gen_floormod),
    binary("squared_difference", tl.math.squared_difference),
    binary("xlogy", tl.math.xlogy, (ANY, POSITIVE)),
    binary("atan2", tl.atan2, (Domain(away_from_zero), NONZERO)),
    # no gradient rule
    binary("floordiv", tl.math.floordiv, grad=False),
    *(binary(n, getattr(tl, n), grad=False) for n in ["equal", "not_equal", "less", "less_equal", "greater",
                                                       "greater_equal"]),
    *(binary(n, getattr(tl, n, None) or getattr(tl.math, n), grad=False, logical=True)
      for n in ["logical_and", "logical_or", "logical_xor"]),
]

REDUCTIONS = [
    reduction("reduce_sum", tl.reduce_sum, random_shapes=RandomShapes(-3, 3)),
    reduction("reduce_mean", tl.reduce_mean, zero_size=lambda x: tl.reduce_mean(x, axis=_along_last(x)),
              random_shapes=RandomShapes(-3, 3)),
    reduction("reduce_max", tl.reduce_max, gap=1, zero_size=lambda x: tl.reduce_max(x) + tl.reduce_sum(
        tl.reduce_max(x, axis=_along_last(x)))),
    reduction("reduce_min", tl.reduce_min, gap=-1),
    reduction("reduce_prod", tl.reduce_prod, more_grads=[
        (lambda x: tl.reduce_prod(x * tl.constant([1.0, 0.0, 1.0], tl.float64), axis=1), [(ANY, (2, 3))])]),
    reduction("reduce_logsumexp", tl.reduce_logsumexp),
    *(reduction(n, getattr(tl, n), grad=False, zero_size=(lambda f: lambda x: f(x > 0.5, axis=_along_last(x)))(
        getattr(tl, n))) for n in ["reduce_any", "reduce_all"]),
    OpSpec("cumsum", tl.cumsum, grads=[
        (tl.cumsum, [(ANY, (4,))]), (lambda x: tl.cumsum(x, axis=1, exclusive=True), [(ANY, (3, 4))]),
        (lambda x: tl.cumsum(x, axis=0, reverse=True), [(ANY, (3, 4))]),
        (lambda x: tl.cumsum(x, axis=-1, exclusive=True, reverse=True), [(ANY, (2, 3, 4))])],
        zero_size=lambda x: tl.cumsum(x, axis=-1, exclusive=True), undefined={(): "0-d"},
        program=gen_axis_op(lambda x, axis: tl.cumsum(x, axis=axis, exclusive=axis == 0, reverse=axis == -1))),
    OpSpec("cumprod", tl.math.cumprod, grads=[
        (tl.math.cumprod, [(away_from_zero, (4,))]),
        (lambda x: tl.math.cumprod(x, axis=1, exclusive=True), [(away_from_zero, (3, 4))]),
        (lambda x: tl.math.cumprod(x, axis=0, reverse=True), [(away_from_zero, (3, 4))])],
        zero_size=lambda x: tl.math.cumprod(x, axis=-1, reverse=True), undefined={(): "0-d"},
        program=gen_axis_op(lambda x, axis: tl.math.cumprod(x, axis=axis, reverse=axis == 0), not_near(0))),
    OpSpec("einsum", tl.einsum, grads=[
        (lambda a, b: tl.einsum("ij,jk->ik", a, b), [(ANY, (2, 3)), (ANY, (3, 4))]),
        (lambda a: tl.einsum("ij->j", a), [(ANY, (3, 4))]),
        (lambda a, b: tl.einsum("bij,bjk->bik", a, b), [(ANY, (2, 3, 4)), (ANY, (2, 4, 2))]),
        (lambda a, b: tl.einsum("i,j", a, b), [(ANY, (3,)), (ANY, (2,))]),
        (lambda a, b: tl.einsum("...ij,jk->...ik", a, b), [(ANY, (2, 3, 4)), (ANY, (4, 2))]),
        (lambda a, b, c: tl.einsum("ij,jk,k->i", a, b, c), [(ANY, (2, 3)), (ANY, (3, 4)), (ANY, (4,))])],
        zero_size=lambda x: tl.einsum("...i,...i->..." if x.ndim else ",->", x, x),
        program=gen_axis_op(lambda x, axis: tl.einsum("...i,...i->..." if axis == -1 else "i...,i...->...", x, x))),
]

SHAPES_AND_INDEXING = [
    OpSpec("cast", tl.cast, grads=[(lambda x: tl.cast(tl.cast(x, tl.float32), tl.float64) * 3.0, [(ANY, (3, 4))])],
           # cast goes through float32, so nudges must be big enough to survive its rounding (the function is linear)
           check={"eps": 1e-2, "tolerance": 1e-4}, zero_size=lambda x: tl.cast(x, tl.float32),
           no_program="float64 -> float32 rounds to 1e-7, which finite differences (eps 1e-6) cannot see past; "
                      "its rule is checked in test_ops_gradients.py"),
    OpSpec("where", tl.where, grads=[
        (lambda x, y: tl.where(tl.constant([True, False, True, False]), x, y), [(ANY, (3, 4)), (ANY, (4,))]),
        (lambda x, y: tl.where(tl.constant([[True], [False], [True]]), x, y), [(ANY, ()), (ANY, (3, 4))])],
        zero_size=lambda x: tl.where(x > 0.5, x, -x), program=gen_where),
    OpSpec("transpose", tl.transpose, grads=[(tl.transpose, [(ANY, (3, 4))]),
                                             (lambda x: tl.transpose(x, [1, 2, 0]), [(ANY, (2, 3, 4))])],
           zero_size=tl.transpose, program=gen_shape_op("transpose")),
    OpSpec("reshape", tl.reshape, grads=[(lambda x: tl.reshape(x, (2, 6)), [(ANY, (3, 4))]),
                                         (lambda x: tl.reshape(x, (-1,)), [(ANY, (2, 3))]),
                                         (lambda x: tl.reshape(x, ()), [(ANY, (1,))])],
           zero_size=lambda x: tl.reshape(x, (-1,)), program=gen_shape_op("reshape")),
    OpSpec("broadcast_to", tl.broadcast_to, grads=[(lambda x: tl.broadcast_to(x, (3, 4)), [(ANY, (3, 1))]),
                                                   (lambda x: tl.broadcast_to(x, (2, 4)), [(ANY, (4,))])],
           zero_size=lambda x: tl.broadcast_to(x, (2,) + tuple(x.shape)), program=gen_shape_op("broadcast_to")),
    OpSpec("concat", tl.concat, grads=[
        (lambda a, b: tl.concat([a, b], 0), [(ANY, (2, 3)), (ANY, (4, 3))]),
        (lambda a, b, c: tl.concat([a, b, c], -1), [(ANY, (2, 3)), (ANY, (2, 1)), (ANY, (2, 2))])],
        zero_size=lambda x: tl.concat([x, x], 0), undefined={(): "tl.stack"}, program=gen_concat),
    OpSpec("getitem", tl.Tensor.__getitem__, grads=[
        (lambda x: x[1], [(ANY, (3, 4))]),
        (lambda x: x[:, 1:3], [(ANY, (3, 4))]),
        (lambda x: x[[0, 0, 2]], [(ANY, (3, 4))]),  # a repeated index: gradients add up
        (lambda x: x[..., None][::-1], [(ANY, (4,))])],
        zero_size=lambda x: x[...] * x[:1] if x.ndim else x[...], program=gen_getitem),
    OpSpec("gather", tl.gather, grads=[(lambda x: tl.gather(x, [2, 0, 2]), [(ANY, (3, 4))]),
                                       (lambda x: tl.gather(x, [[1, 0], [3, 3]], axis=1), [(ANY, (3, 4))]),
                                       (lambda x: tl.gather(x, 1), [(ANY, (4,))])],
           zero_size=lambda x: tl.gather(x, tl.zeros((2 if x.ndim and x.shape[0] else 0,), tl.int32)),
           undefined={(): "0-d"},
           program=gen_axis_op(lambda x, axis: tl.gather(x, [0, 0, -1 % x.shape[axis]], axis=axis))),
    OpSpec("pad", tl.pad, grads=[(lambda x: tl.pad(x, [[1, 0], [2, 1]]), [(ANY, (3, 4))]),
                                 (lambda x: tl.pad(x, [[1, 2]], constant_values=3.0), [(ANY, (4,))]),
                                 (lambda x: tl.pad(x, [[2, 1], [1, 1]], mode="REFLECT"), [(ANY, (3, 4))]),
                                 (lambda x: tl.pad(x, [[2, 3]], mode="SYMMETRIC"), [(ANY, (4,))])],
           zero_size=lambda x: tl.pad(x, [[1, 2]] * x.ndim),
           program=gen_axis_op(lambda x, axis: tl.pad(x, [[1, 0]] * x.ndim,
                                                      mode="SYMMETRIC" if axis == -1 else "CONSTANT"))),
]

SOFTMAX_FAMILY = [
    *(OpSpec(n, getattr(tl.nn, n), grads=[(getattr(tl.nn, n), [(ANY, s)]) for s in [(4,), (3, 4)]] + [
        ((lambda f: lambda x: f(x, axis=0))(getattr(tl.nn, n)), [(ANY, (3, 4))])],
        zero_size=getattr(tl.nn, n), undefined={(): "at least one axis"}, program=gen_axis_op(getattr(tl.nn, n)))
      for n in ["softmax", "log_softmax"]),
    OpSpec("sparse_softmax_cross_entropy_with_logits", tl.nn.sparse_softmax_cross_entropy_with_logits, grads=[
        (lambda z: tl.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 3, 1], logits=z), [(ANY, (3, 4))]),
        (lambda z: tl.nn.sparse_softmax_cross_entropy_with_logits(labels=2, logits=z), [(ANY, (4,))])],
        zero_size=lambda x: tl.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tl.zeros(tuple(x.shape)[:-1], tl.int32) if x.ndim else 0, logits=x),
        undefined={(): r"logits should have shape labels.shape \+ \(classes,\)", (0,): "0 classes",
                   (2, 0): "0 classes"},
        program=gen_xent),
]

LINEAR_ALGEBRA = [
    OpSpec("matmul", tl.matmul, grads=[
        (tl.matmul, [(ANY, (3, 4)), (ANY, (4, 2))]),
        (tl.matmul, [(ANY, (1, 1)), (ANY, (1, 1))]),
        (tl.matmul, [(ANY, (2, 3, 4)), (ANY, (4, 5))]),
        (tl.matmul, [(ANY, (2, 3, 4)), (ANY, (1, 4, 5))]),
        (lambda a, b: tl.matmul(a, b, transpose_b=True), [(ANY, (3, 4)), (ANY, (2, 4))])],
        zero_size=lambda x: tl.matmul(x, tl.transpose(x)), undefined={(): "at least 2-D", (0,): "at least 2-D"},
        program=gen_matmul),
    OpSpec("inv", tl.linalg.inv, grads=[(tl.linalg.inv, [(well_conditioned, (3, 3))]),
                                        (tl.linalg.inv, [(well_conditioned, (2, 2, 2))])],
           zero_size=lambda x: tl.linalg.inv(_matrices(x) + 1.0), program=gen_square(tl.linalg.inv)),
    OpSpec("det", tl.linalg.det, grads=[(tl.linalg.det, [(well_conditioned, (3, 3))]),
                                        (tl.linalg.det, [(ANY, (2, 2, 2))])],
           zero_size=lambda x: tl.linalg.det(_matrices(x)), program=gen_square(tl.linalg.det)),
    OpSpec("solve", tl.linalg.solve, grads=[
        (tl.linalg.solve, [(well_conditioned, (3, 3)), (ANY, (3, 2))]),
        (lambda a, b: tl.linalg.solve(a, b, adjoint=True), [(well_conditioned, (3, 3)), (ANY, (3, 1))])],
        zero_size=lambda x: tl.linalg.solve(_matrices(x) + 1.0, _matrices(x)),
        program=gen_square(lambda a: tl.linalg.solve(a, a * a))),
    OpSpec("svd", tl.linalg.svd, grads=[
        (lambda a: tl.linalg.svd(a, compute_uv=False), [(ANY, (3, 4))]),
        *((lambda a: _svd_signed(a), [(ANY, shape)]) for shape in [(3, 3), (2, 4), (4, 2), (2, 3, 2)]),
        (lambda a: _svd_signed(a, full_matrices=True), [(ANY, (3, 4))]),
        (lambda a: _svd_signed(a, full_matrices=True), [(ANY, (3, 2))])],
        zero_size=lambda x: tl.linalg.svd(_matrices(x))[1], program=gen_square(
            lambda a: tl.linalg.svd(a, compute_uv=False))),  # (3 I + a little: s, not u and v, near a tie)
    OpSpec("diag", tl.linalg.diag, grads=[(tl.linalg.diag, [(ANY, (3,))]), (tl.linalg.diag, [(ANY, (2, 3))])],
           zero_size=tl.linalg.diag, undefined={(): "0-d"},
           program=gen_axis_op(lambda x, axis: tl.linalg.diag(x))),
    OpSpec("diag_part", tl.linalg.diag_part, grads=[(tl.linalg.diag_part, [(ANY, (3, 3))]),
                                                    (tl.linalg.diag_part, [(ANY, (2, 3, 4))]),
                                                    (tl.linalg.diag_part, [(ANY, (4, 2))])],
           zero_size=tl.linalg.diag_part, undefined={(): "last two axes", (0,): "last two axes"},
           program=gen_square(tl.linalg.diag_part)),
]

# convolution and pooling on NHWC images (batch, height, width, channels); kernels (kh, kw, in, out)
IMAGES = [
    OpSpec("conv2d", tl.nn.conv2d, grads=[
        (lambda x, k: tl.nn.conv2d(x, k, 1, "VALID"), [(ANY, (2, 5, 5, 2)), (ANY, (3, 3, 2, 3))]),
        (lambda x, k: tl.nn.conv2d(x, k, 2, "SAME"), [(ANY, (1, 6, 5, 1)), (ANY, (3, 2, 1, 2))]),
        (lambda x, k: tl.nn.conv2d(x, k, (2, 1), "SAME"), [(ANY, (1, 4, 4, 2)), (ANY, (2, 2, 2, 1))])],
        zero_size=lambda x: tl.nn.conv2d(_images(x), tl.ones((1, 1, 1, 2), x.dtype), 1, "VALID"),
        program=gen_images(lambda x, k: tl.nn.conv2d(x, k, 2, "SAME"), (1, 5, 4, 2), (3, 2, 2, 2))),
    OpSpec("max_pool2d", tl.nn.max_pool2d, grads=[
        (lambda x: tl.nn.max_pool2d(x, 2, 2, "VALID"), [(ANY, (2, 4, 6, 3))]),
        (lambda x: tl.nn.max_pool2d(x, 3, 2, "SAME"), [(ANY, (1, 5, 5, 2))]),  # windows overlap
        (lambda x: tl.nn.max_pool2d(x, (2, 1), 1, "VALID"), [(ANY, (1, 3, 2, 1))])],
        zero_size=lambda x: tl.nn.max_pool2d(_images(x), 1, 1, "SAME"),
        program=gen_images(lambda x: tl.nn.max_pool2d(x, 2, 1, "VALID"), (1, 3, 3, 2))),
    OpSpec("avg_pool2d", tl.nn.avg_pool2d, grads=[
        (lambda x: tl.nn.avg_pool2d(x, 2, 2, "VALID"), [(ANY, (2, 4, 6, 3))]),
        (lambda x: tl.nn.avg_pool2d(x, 3, 2, "SAME"), [(ANY, (1, 5, 5, 2))])],
        zero_size=lambda x: tl.nn.avg_pool2d(_images(x), 1, 1, "VALID"),
        program=gen_images(lambda x: tl.nn.avg_pool2d(x, 2, 2, "SAME"), (1, 3, 3, 2))),
]

# the primitives that gradient rules call (no public function)
relu_grad, scatter, segment_sum = primitive("relu_grad"), primitive("scatter"), primitive("unsorted_segment_sum")
conv2d_input_grad, conv2d_filter_grad = primitive("conv2d_input_grad"), primitive("conv2d_filter_grad")
avg_pool2d_grad, max_pool2d_argmax = primitive("avg_pool2d_grad"), primitive("max_pool2d_argmax")
xent_residual = primitive("sparse_xent_residual")


def gen_xent_residual(b):
    f, indices = gen_xent(b)
    labels = f.__closure__[0].cell_contents  # (gen_xent's labels, drawn for this program)
    return (lambda z: xent_residual(tl.constant(labels), z)), indices


RULES_OWN = [
    OpSpec("sparse_xent_residual", xent_residual, grads=[
        (lambda z: xent_residual(tl.constant([0, 3, 1]), z), [(ANY, (3, 4))]),
        (lambda z: xent_residual(tl.constant(2), z), [(ANY, (4,))])],
        zero_size=lambda x: xent_residual(tl.zeros(tuple(x.shape)[:-1], tl.int32), x) if x.ndim else xent_residual(
            tl.constant(0), tl.reshape(x, (1,))),
        undefined={(0,): "outside the valid range", (2, 0): "outside the valid range"},
        program=gen_xent_residual),
    OpSpec("max_pool2d_argmax", max_pool2d_argmax,  # (integer positions: no gradient, no random programs)
           zero_size=lambda x: max_pool2d_argmax(_images(x), ksize=(1, 1), strides=(1, 1), padding="SAME")),
    OpSpec("relu_grad", relu_grad, grads=[(lambda u, x: relu_grad(u, x, alpha=0.1, cap=1.5),
                                           [(ANY, (3, 4)), (lambda shape: rng.choice([-1, 0.5, 2], shape), (3, 4))])],
           zero_size=lambda x: relu_grad(x, x - 0.5, alpha=0.1, cap=6.0),
           program=binary_program(lambda u, x: relu_grad(u, x, alpha=0.3, cap=1.5),
                                  y=Domain(ok=lambda v: not_near(0)(v) and not_near(1.5)(v), away_from=0.0))),
    OpSpec("scatter", scatter, grads=[(lambda g: scatter(g, key=(slice(None), 1), shape=(2, 4)), [(ANY, (2,))])],
           zero_size=lambda x: scatter(x, key=Ellipsis, shape=tuple(x.shape)), program=gen_scatter),
    OpSpec("unsorted_segment_sum", segment_sum, grads=[
        (lambda x: segment_sum(x, tl.constant([0, 2, 0]), num_segments=4, axis=0), [(ANY, (3, 2))]),
        (lambda x: segment_sum(x, tl.constant([[1], [1]]), num_segments=2, axis=1), [(ANY, (3, 2, 1, 4))])],
        zero_size=lambda x: segment_sum(x, tl.zeros(tuple(x.shape)[:1], tl.int32), num_segments=2, axis=0),
        program=gen_axis_op(lambda x, axis: segment_sum(x, tl.zeros(tuple(x.shape)[:1], tl.int32), num_segments=2,
                                                        axis=0))),
    OpSpec("conv2d_input_grad", conv2d_input_grad, grads=[
        (lambda g, k: conv2d_input_grad(g, k, input_shape=(2, 5, 5, 2), **_conv),
         [(ANY, (2, 3, 3, 3)), (ANY, (3, 3, 2, 3))]),
        (lambda g, k: conv2d_input_grad(g, k, input_shape=(1, 5, 4, 1), strides=(2, 2), padding="SAME"),
         [(ANY, (1, 3, 2, 2)), (ANY, (3, 2, 1, 2))])],
        zero_size=lambda x: conv2d_input_grad(_images(x), tl.ones((1, 1, 1, 1), x.dtype),
                                              input_shape=tuple(_images(x).shape), **_conv),
        program=gen_images(lambda g, k: conv2d_input_grad(g, k, input_shape=(1, 4, 4, 1), **_conv),
                           (1, 3, 2, 2), (2, 3, 1, 2))),
    OpSpec("conv2d_filter_grad", conv2d_filter_grad, grads=[
        (lambda x, g: conv2d_filter_grad(x, g, kernel_shape=(3, 3, 2, 3), **_conv),
         [(ANY, (2, 5, 5, 2)), (ANY, (2, 3, 3, 3))]),
        (lambda x, g: conv2d_filter_grad(x, g, kernel_shape=(3, 2, 1, 2), strides=(2, 2), padding="SAME"),
         [(ANY, (1, 5, 4, 1)), (ANY, (1, 3, 2, 2))])],
        zero_size=lambda x: conv2d_filter_grad(_images(x), _images(x), kernel_shape=(1, 1, 1, 1), strides=(1, 1),
                                               padding="SAME"),
        program=gen_images(lambda x, g: conv2d_filter_grad(x, g, kernel_shape=(2, 2, 1, 2), strides=(2, 2),
                                                           padding="SAME"), (1, 4, 3, 1), (1, 2, 2, 2))),
    OpSpec("avg_pool2d_grad", avg_pool2d_grad, grads=[
        (lambda g: avg_pool2d_grad(g, input_shape=(1, 5, 5, 2), ksize=(3, 3), strides=(2, 2), padding="SAME"),
         [(ANY, (1, 3, 3, 2))])],
        zero_size=lambda x: avg_pool2d_grad(_images(x), input_shape=tuple(_images(x).shape), ksize=(1, 1),
                                            **_conv),
        program=gen_images(lambda g: avg_pool2d_grad(g, input_shape=(1, 3, 3, 2), ksize=(2, 2), strides=(2, 2),
                                                     padding="SAME"), (1, 2, 2, 2))),
]

NO_GRADIENT = [
    OpSpec("one_hot", tl.one_hot, zero_size=lambda x: tl.one_hot(tl.cast(x, tl.int32), 3)),
    *(OpSpec(n, getattr(tl, n), zero_size=(lambda f: lambda x: f(x, axis=_along_last(x)))(getattr(tl, n)),
             undefined={(): "0-d", (0,): "is empty", (2, 0): "is empty"}) for n in ["argmax", "argmin"]),
    OpSpec("argsort", tl.argsort, zero_size=tl.argsort, undefined={(): "out of range"}),
    OpSpec("print", tl.print, zero_size=lambda x: tl.print(x, output_stream=io.StringIO())),
]

SPECS = [*ONE_INPUT, *TWO_INPUTS, *REDUCTIONS, *SHAPES_AND_INDEXING, *SOFTMAX_FAMILY, *LINEAR_ALGEBRA, *IMAGES,
         *RULES_OWN, *NO_GRADIENT]
SPEC = {s.name: s for s in SPECS}
assert len(SPEC) == len(SPECS), "two specs for one op in tests/op_specs.py"


def missing(names):
    """The message for ops of tl.OPS that have no spec (empty when every op has one)."""
    names = sorted(set(names) - set(SPEC))
    if not names:
        return ""
    return f"ops without a spec: {names}; add one line each to tests/op_specs.py (its docstring says how)"
