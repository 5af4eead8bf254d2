"""Every primitive's gradient against finite differences, straight from the op table.

A new op with a gradient rule fails `test_every_op_is_covered` until it gets a case here; an op
without a rule must be declared non-differentiable in the table (``vjps=None``).
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tapelab as tl
from tapelab import ops
from tapelab.engine import tape as tape_module
from tapelab.engine.primitives import OPS, Spec

rng = np.random.default_rng(0)


def uniform(lo, hi):
    return lambda shape: rng.uniform(lo, hi, shape)


ANY, POS, AWAY = uniform(-2, 2), uniform(0.5, 2), None  # AWAY: values kept away from 0 (kinks)


def away_from_zero(shape):
    return rng.uniform(0.3, 2, shape) * rng.choice([-1, 1], shape)


UNARY_SHAPES = [(), (4,), (3, 4)]
BINARY_SHAPES = [((), ()), ((4,), (4,)), ((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((3, 4), ()),
                 ((2, 3, 4), (3, 1))]

# op name -> list of (function of tensors, input makers with shapes)
CASES = {}


def unary(name, f, domain=ANY):
    CASES[name] = [(f, [(domain, s)]) for s in UNARY_SHAPES]


def binary(name, f, dx=ANY, dy=ANY):
    CASES[name] = [(f, [(dx, a), (dy, b)]) for a, b in BINARY_SHAPES]


unary("negative", tl.negative)
unary("identity", tl.identity)
unary("square", tl.square)
unary("sqrt", tl.sqrt, POS)
unary("exp", tl.exp)
unary("log", tl.math.log, POS)
unary("abs", tl.abs, away_from_zero)
unary("tanh", tl.tanh)
unary("sigmoid", tl.sigmoid)
unary("relu", tl.nn.relu, away_from_zero)
unary("sign", lambda x: tl.sign(x) * x, away_from_zero)  # d(sign(x) x) = sign(x): sign itself adds 0
for _name, _fn, _domain in [
    ("sin", tl.sin, ANY), ("cos", tl.cos, ANY), ("tan", tl.tan, uniform(-1.2, 1.2)),
    ("asin", tl.asin, uniform(-0.9, 0.9)), ("acos", tl.acos, uniform(-0.9, 0.9)), ("atan", tl.atan, ANY),
    ("sinh", tl.sinh, ANY), ("cosh", tl.cosh, ANY), ("asinh", tl.asinh, ANY), ("acosh", tl.acosh, uniform(1.2, 3)),
    ("atanh", tl.atanh, uniform(-0.9, 0.9)), ("reciprocal", tl.math.reciprocal, away_from_zero),
    ("rsqrt", tl.math.rsqrt, POS), ("log1p", tl.math.log1p, uniform(-0.5, 2)), ("expm1", tl.math.expm1, ANY),
    ("erf", tl.math.erf, ANY), ("softplus", tl.nn.softplus, ANY), ("log_sigmoid", tl.math.log_sigmoid, ANY),
    ("softsign", tl.nn.softsign, away_from_zero), ("elu", tl.nn.elu, away_from_zero),
    ("selu", tl.nn.selu, away_from_zero), ("relu6", tl.nn.relu6, lambda shape: rng.choice([-1.5, 0.5, 3, 7.5], shape)
                                                                + rng.uniform(-0.3, 0.3, shape)),
    ("leaky_relu", tl.nn.leaky_relu, away_from_zero), ("gelu", tl.nn.gelu, ANY),
    ("silu", tl.nn.silu, ANY),
]:
    unary(_name, _fn, _domain)
CASES["gelu"].append((lambda x: tl.nn.gelu(x, approximate=True), [(ANY, (3, 4))]))
CASES["silu"].append((lambda x: tl.nn.silu(x, beta=1.7), [(ANY, (3, 4))]))
CASES["leaky_relu"].append((lambda x: tl.nn.leaky_relu(x, alpha=0.05), [(away_from_zero, (3, 4))]))
CASES["relu_grad"] = [(lambda u, x: ops.BACKEND.relu_grad(u, x, alpha=0.1, cap=1.5),
                       [(ANY, (3, 4)), (lambda shape: rng.choice([-1, 0.5, 2], shape), (3, 4))])]
binary("add", tl.add)
binary("subtract", tl.subtract)
binary("multiply", tl.multiply)
binary("divide", tl.divide, ANY, away_from_zero)
binary("pow", tl.pow, POS, ANY)
binary("maximum", tl.maximum, uniform(-2, -0.1), uniform(0.1, 2))
CASES["maximum"] += [(tl.maximum, [(uniform(0.1, 2), (3, 4)), (uniform(-2, -0.1), (4,))])]
binary("minimum", tl.minimum, uniform(-2, -0.1), uniform(0.1, 2))
CASES["minimum"] += [(tl.minimum, [(uniform(0.1, 2), (3, 4)), (uniform(-2, -0.1), (4,))])]
binary("floormod", tl.math.floormod, uniform(0.2, 0.8), uniform(1.5, 2))
binary("squared_difference", tl.math.squared_difference)
binary("atan2", tl.atan2, away_from_zero, away_from_zero)
CASES["cast"] = [(lambda x: tl.cast(tl.cast(x, tl.float32), tl.float64) * 3.0, [(ANY, (3, 4))])]
CASES["where"] = [
    (lambda x, y: tl.where(tl.constant([True, False, True, False]), x, y), [(ANY, (3, 4)), (ANY, (4,))]),
    (lambda x, y: tl.where(tl.constant([[True], [False], [True]]), x, y), [(ANY, ()), (ANY, (3, 4))]),
]
CASES["matmul"] = [
    (tl.matmul, [(ANY, (3, 4)), (ANY, (4, 2))]),
    (tl.matmul, [(ANY, (1, 1)), (ANY, (1, 1))]),
    (tl.matmul, [(ANY, (2, 3, 4)), (ANY, (4, 5))]),
    (tl.matmul, [(ANY, (2, 3, 4)), (ANY, (1, 4, 5))]),
    (lambda a, b: tl.matmul(a, b, transpose_b=True), [(ANY, (3, 4)), (ANY, (2, 4))]),
]
CASES["transpose"] = [(tl.transpose, [(ANY, (3, 4))]),
                      (lambda x: tl.transpose(x, [1, 2, 0]), [(ANY, (2, 3, 4))])]
CASES["reshape"] = [(lambda x: tl.reshape(x, (2, 6)), [(ANY, (3, 4))]),
                    (lambda x: tl.reshape(x, (-1,)), [(ANY, (2, 3))]),
                    (lambda x: tl.reshape(x, ()), [(ANY, (1,))])]
CASES["broadcast_to"] = [(lambda x: tl.broadcast_to(x, (3, 4)), [(ANY, (3, 1))]),
                         (lambda x: tl.broadcast_to(x, (2, 4)), [(ANY, (4,))])]
CASES["concat"] = [(lambda a, b: tl.concat([a, b], 0), [(ANY, (2, 3)), (ANY, (4, 3))]),
                   (lambda a, b, c: tl.concat([a, b, c], -1), [(ANY, (2, 3)), (ANY, (2, 1)), (ANY, (2, 2))])]
CASES["getitem"] = [(lambda x: x[1], [(ANY, (3, 4))]),
                    (lambda x: x[:, 1:3], [(ANY, (3, 4))]),
                    (lambda x: x[[0, 0, 2]], [(ANY, (3, 4))]),  # a repeated index: gradients add up
                    (lambda x: x[..., None][::-1], [(ANY, (4,))])]
CASES["scatter"] = [(lambda g: ops._scatter(g, key=(slice(None), 1), shape=(2, 4)), [(ANY, (2,))])]
for _name, _fn in [("reduce_sum", tl.reduce_sum), ("reduce_mean", tl.reduce_mean), ("reduce_max", tl.reduce_max),
                   ("reduce_min", tl.reduce_min), ("reduce_prod", tl.reduce_prod),
                   ("reduce_logsumexp", tl.reduce_logsumexp)]:
    CASES[_name] = [
        (lambda x, f=_fn: f(x), [(ANY, (3, 4))]),
        (lambda x, f=_fn: f(x, axis=0), [(ANY, (3, 4))]),
        (lambda x, f=_fn: f(x, axis=-1, keepdims=True), [(ANY, (3, 4))]),
        (lambda x, f=_fn: f(x, axis=[0, 2]), [(ANY, (2, 3, 4))]),
        (lambda x, f=_fn: f(x), [(ANY, ())]),
    ]
CASES["reduce_prod"].append((lambda x: tl.reduce_prod(x * tl.constant([1.0, 0.0, 1.0], tl.float64), axis=1),
                             [(ANY, (2, 3))]))
CASES["cumsum"] = [(tl.cumsum, [(ANY, (4,))]), (lambda x: tl.cumsum(x, axis=1, exclusive=True), [(ANY, (3, 4))]),
                   (lambda x: tl.cumsum(x, axis=0, reverse=True), [(ANY, (3, 4))]),
                   (lambda x: tl.cumsum(x, axis=-1, exclusive=True, reverse=True), [(ANY, (2, 3, 4))])]
CASES["cumprod"] = [(tl.math.cumprod, [(away_from_zero, (4,))]),
                    (lambda x: tl.math.cumprod(x, axis=1, exclusive=True), [(away_from_zero, (3, 4))]),
                    (lambda x: tl.math.cumprod(x, axis=0, reverse=True), [(away_from_zero, (3, 4))])]
CASES["gather"] = [(lambda x: tl.gather(x, [2, 0, 2]), [(ANY, (3, 4))]),
                   (lambda x: tl.gather(x, [[1, 0], [3, 3]], axis=1), [(ANY, (3, 4))]),
                   (lambda x: tl.gather(x, 1), [(ANY, (4,))])]
CASES["unsorted_segment_sum"] = [
    (lambda x: ops.BACKEND.unsorted_segment_sum(x, tl.constant([0, 2, 0]), num_segments=4, axis=0), [(ANY, (3, 2))]),
    (lambda x: ops.BACKEND.unsorted_segment_sum(x, tl.constant([[1], [1]]), num_segments=2, axis=1),
     [(ANY, (3, 2, 1, 4))])]
CASES["einsum"] = [(lambda a, b: tl.einsum("ij,jk->ik", a, b), [(ANY, (2, 3)), (ANY, (3, 4))]),
                   (lambda a: tl.einsum("ij->j", a), [(ANY, (3, 4))]),
                   (lambda a, b: tl.einsum("bij,bjk->bik", a, b), [(ANY, (2, 3, 4)), (ANY, (2, 4, 2))]),
                   (lambda a, b: tl.einsum("i,j", a, b), [(ANY, (3,)), (ANY, (2,))]),
                   (lambda a, b: tl.einsum("...ij,jk->...ik", a, b), [(ANY, (2, 3, 4)), (ANY, (4, 2))]),
                   (lambda a, b, c: tl.einsum("ij,jk,k->i", a, b, c), [(ANY, (2, 3)), (ANY, (3, 4)), (ANY, (4,))])]
CASES["pad"] = [(lambda x: tl.pad(x, [[1, 0], [2, 1]]), [(ANY, (3, 4))]),
                (lambda x: tl.pad(x, [[1, 2]], constant_values=3.0), [(ANY, (4,))]),
                (lambda x: tl.pad(x, [[2, 1], [1, 1]], mode="REFLECT"), [(ANY, (3, 4))]),
                (lambda x: tl.pad(x, [[2, 3]], mode="SYMMETRIC"), [(ANY, (4,))])]
well_conditioned = lambda shape: rng.uniform(-0.5, 0.5, shape) + 3 * np.eye(shape[-1])  # noqa: E731
CASES["inv"] = [(tl.linalg.inv, [(well_conditioned, (3, 3))]), (tl.linalg.inv, [(well_conditioned, (2, 2, 2))])]
CASES["det"] = [(tl.linalg.det, [(well_conditioned, (3, 3))]), (tl.linalg.det, [(ANY, (2, 2, 2))])]
CASES["solve"] = [(tl.linalg.solve, [(well_conditioned, (3, 3)), (ANY, (3, 2))]),
                  (lambda a, b: tl.linalg.solve(a, b, adjoint=True), [(well_conditioned, (3, 3)), (ANY, (3, 1))])]
CASES["diag"] = [(tl.linalg.diag, [(ANY, (3,))]), (tl.linalg.diag, [(ANY, (2, 3))])]
CASES["diag_part"] = [(tl.linalg.diag_part, [(ANY, (3, 3))]), (tl.linalg.diag_part, [(ANY, (2, 3, 4))]),
                      (tl.linalg.diag_part, [(ANY, (4, 2))])]
# convolution and pooling on NHWC images (batch, height, width, channels); kernels (kh, kw, in, out)
_conv = {"strides": (1, 1), "padding": "VALID"}
CASES["conv2d"] = [(lambda x, k: tl.nn.conv2d(x, k, 1, "VALID"), [(ANY, (2, 5, 5, 2)), (ANY, (3, 3, 2, 3))]),
                   (lambda x, k: tl.nn.conv2d(x, k, 2, "SAME"), [(ANY, (1, 6, 5, 1)), (ANY, (3, 2, 1, 2))]),
                   (lambda x, k: tl.nn.conv2d(x, k, (2, 1), "SAME"), [(ANY, (1, 4, 4, 2)), (ANY, (2, 2, 2, 1))])]
CASES["conv2d_input_grad"] = [
    (lambda g, k: ops.BACKEND.conv2d_input_grad(g, k, input_shape=(2, 5, 5, 2), **_conv),
     [(ANY, (2, 3, 3, 3)), (ANY, (3, 3, 2, 3))]),
    (lambda g, k: ops.BACKEND.conv2d_input_grad(g, k, input_shape=(1, 5, 4, 1), strides=(2, 2), padding="SAME"),
     [(ANY, (1, 3, 2, 2)), (ANY, (3, 2, 1, 2))])]
CASES["conv2d_filter_grad"] = [
    (lambda x, g: ops.BACKEND.conv2d_filter_grad(x, g, kernel_shape=(3, 3, 2, 3), **_conv),
     [(ANY, (2, 5, 5, 2)), (ANY, (2, 3, 3, 3))]),
    (lambda x, g: ops.BACKEND.conv2d_filter_grad(x, g, kernel_shape=(3, 2, 1, 2), strides=(2, 2), padding="SAME"),
     [(ANY, (1, 5, 4, 1)), (ANY, (1, 3, 2, 2))])]
CASES["max_pool2d"] = [(lambda x: tl.nn.max_pool2d(x, 2, 2, "VALID"), [(ANY, (2, 4, 6, 3))]),
                       (lambda x: tl.nn.max_pool2d(x, 3, 2, "SAME"), [(ANY, (1, 5, 5, 2))]),  # windows overlap
                       (lambda x: tl.nn.max_pool2d(x, (2, 1), 1, "VALID"), [(ANY, (1, 3, 2, 1))])]
CASES["avg_pool2d"] = [(lambda x: tl.nn.avg_pool2d(x, 2, 2, "VALID"), [(ANY, (2, 4, 6, 3))]),
                       (lambda x: tl.nn.avg_pool2d(x, 3, 2, "SAME"), [(ANY, (1, 5, 5, 2))])]
CASES["avg_pool2d_grad"] = [
    (lambda g: ops.BACKEND.avg_pool2d_grad(g, input_shape=(1, 5, 5, 2), ksize=(3, 3), strides=(2, 2),
                                           padding="SAME"), [(ANY, (1, 3, 3, 2))])]
CASES["softmax"] = [(tl.nn.softmax, [(ANY, s)]) for s in [(4,), (3, 4)]] + [
    (lambda x: tl.nn.softmax(x, axis=0), [(ANY, (3, 4))])]
CASES["log_softmax"] = [(tl.nn.log_softmax, [(ANY, s)]) for s in [(4,), (3, 4)]] + [
    (lambda x: tl.nn.log_softmax(x, axis=0), [(ANY, (3, 4))])]
CASES["sparse_softmax_cross_entropy_with_logits"] = [
    (lambda z: tl.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 3, 1], logits=z), [(ANY, (3, 4))]),
    (lambda z: tl.nn.sparse_softmax_cross_entropy_with_logits(labels=2, logits=z), [(ANY, (4,))]),
]


def params():
    for name, cases in CASES.items():
        for k, (f, makers) in enumerate(cases):
            yield pytest.param(name, f, makers, id=f"{name}-{k}")


def test_every_op_is_covered():
    """Each op either has a gradient rule and gradient cases here, or is declared non-differentiable."""
    for name, op in OPS.items():
        if op.differentiable:
            assert name in CASES, f"op {name!r} has a gradient rule but no gradient check case in this file"
        else:
            assert name not in CASES, f"op {name!r} is declared non-differentiable but has gradient cases"
    assert set(CASES) <= set(OPS)


@pytest.mark.parametrize("name, f, makers", list(params()))
def test_gradient_matches_finite_differences(name, f, makers):
    points = [make(shape) for make, shape in makers]
    # cast goes through float32, so nudges must be big enough to survive its rounding (the function is linear)
    check = tl.check_gradients(f, *points, **({"eps": 1e-2, "tolerance": 1e-4} if name == "cast" else {}))
    assert check.ok, check


@pytest.mark.parametrize("name, f, makers", [p for p in params() if p.id.endswith("-0") or p.id.endswith("-3")])
def test_second_derivative_through_nested_tapes(name, f, makers):
    """Differentiate the tape's own gradient (computed under an outer tape) and compare again."""
    points = [make(shape) for make, shape in makers]
    weights = np.random.default_rng(1).uniform(0.5, 1.5, np.shape(np.asarray(f(*map(tl.constant, points)))))

    def first_derivative(*xs):
        with tl.GradientTape() as inner:
            inner.watch(list(xs))
            y = f(*xs)
        grads = inner.gradient(y, list(xs), output_gradients=weights)
        return tl.add_n([tl.reduce_sum(g * g) for g in grads if g is not None])

    check = tl.check_gradients(first_derivative, *points, tolerance=1e-4)
    assert check.ok, check


@pytest.mark.parametrize("name, f, makers", [p for p in params() if OPS[p.values[0]].reads is not None])
def test_an_op_that_lets_go_of_arrays_its_rules_do_not_read_gives_the_same_gradients_and_listing(
        monkeypatch, name, f, makers):
    """As a tape does for large arrays: with the op's inputs computed on the tape, every array its rules do not read
    is let go. The rules see only a Spec, a second derivative still goes through, the listing recomputes the rest."""
    points = [make(shape) for make, shape in makers]

    def run():
        xs = [tl.Variable(p) for p in points]
        with tl.GradientTape() as outer:
            with tl.GradientTape(persistent=True) as inner:
                y = f(*[x * 1.0 for x in xs])  # (inputs computed on the tape: those are the ones let go)
            first = [g for g in inner.gradient(y, xs) if g is not None]
            total = tl.add_n([tl.reduce_sum(g * g) for g in first])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # (a linear op's first derivative is constant: no second)
            second = [g.numpy() for g in outer.gradient(total, xs) if g is not None]
        specs = sum(isinstance(v, Spec) for e in inner.entries for v in e.kept)
        return [g.numpy() for g in first], second, str(inner), specs

    first, second, listing, specs = run()
    assert specs == 0  # small arrays are kept
    monkeypatch.setattr(tape_module, "SMALL", 0)
    first_let_go, second_let_go, listing_let_go, specs = run()
    assert specs >= (1 if OPS[name].unread else 0)
    for a, b in zip(first + second, first_let_go + second_let_go, strict=True):
        np.testing.assert_array_equal(a, b)
    assert listing_let_go == listing


def test_every_op_draws_and_steps(tmp_path):
    """Each gradient case also goes through the listing, the DOT export and backward_steps."""
    for name, cases in CASES.items():
        f, makers = cases[0]
        xs = [tl.Variable(make(shape).astype(np.float32)) for make, shape in makers]
        with tl.GradientTape(persistent=True) as tape:
            y = f(*xs)
        assert name in str(tape) or name == "scatter", name
        assert tl.viz.to_dot(tape, y, xs).startswith("digraph"), name
        steps = tape.backward_steps(y, xs)
        assert all(isinstance(formula, str) for s in steps for _, _, formula, _, _ in s.contributions), name


def test_backward_preserves_float32():
    x = tl.Variable(np.ones((3, 4), np.float32))
    for name, cases in CASES.items():
        f, makers = cases[0]
        if len(makers) != 1 or makers[0][1] != (3, 4):
            continue
        with tl.GradientTape() as tape:
            y = f(x)
        g = tape.gradient(y, x)
        assert g is None or g.dtype == tl.float32, name


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    name=st.sampled_from(["add", "subtract", "multiply", "divide", "maximum", "minimum", "pow"]),
)
def test_binary_ops_with_random_broadcast_shapes(data, name):
    a_shape, b_shape = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3)).input_shapes
    elements = st.floats(0.5, 2.0) if name in ("pow", "divide") else st.floats(-2, 2)
    a = data.draw(hnp.arrays(np.float64, a_shape, elements=elements))
    b = data.draw(hnp.arrays(np.float64, b_shape, elements=elements))
    if name in ("maximum", "minimum") and np.any(np.abs(np.subtract(a, b)) < 1e-3):
        return  # at a tie the function has a kink; the gradient there is a convention
    check = tl.check_gradients(getattr(tl, name), a, b, tolerance=1e-4)
    assert check.ok, check


@settings(max_examples=40, deadline=None)
@given(x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4), elements=st.floats(-3, 3)),
       name=st.sampled_from(["square", "exp", "tanh", "sigmoid", "negative", "reduce_sum", "reduce_mean"]))
def test_unary_ops_with_random_shapes(x, name):
    check = tl.check_gradients(getattr(tl, name), x, tolerance=1e-4)
    assert check.ok, check


@settings(max_examples=60, deadline=None)
@given(x=hnp.arrays(st.sampled_from([np.float32, np.float64, np.int32]), hnp.array_shapes(min_dims=2, max_dims=2,
                                                                                          max_side=80),
                    elements=st.integers(-50, 50)),
       axis=st.sampled_from([1, -1, (1,), (-1,), 0, None]), keepdims=st.booleans(), nan=st.booleans())
def test_row_maxima_take_the_fast_path_with_the_same_values_as_numpy(x, axis, keepdims, nan):
    # primitives._max reduces many short rows through a transposed copy (numpy is slow on short rows); same values
    from tapelab.engine.primitives import _max
    if nan and x.dtype.kind == "f" and x.size:
        x.flat[x.size // 2] = np.nan
    got = _max(x, axis, keepdims)
    np.testing.assert_array_equal(got, np.max(x, axis=axis, keepdims=keepdims))
    assert got.dtype == x.dtype


def test_row_maxima_fast_path_on_class_scores_with_the_maximum_in_every_column():
    # the shape the softmax family meets in training (128 x 10): each column holds some row's maximum
    from tapelab.engine.primitives import _max
    x = rng.standard_normal((128, 10)).astype(np.float32)
    x[np.arange(128), np.arange(128) % 10] += 10
    x[5, 3] = np.nan
    x[7] = -np.inf
    for axis in (1, -1, (1,), (-1,)):
        np.testing.assert_array_equal(_max(x, axis), np.max(x, axis=1, keepdims=True))
        np.testing.assert_array_equal(_max(x, axis, keepdims=False), np.max(x, axis=1))


def test_rule_returning_a_wrong_shape_is_reported_with_the_op_name(monkeypatch):
    op = OPS["square"]
    monkeypatch.setattr(op, "vjps", (lambda B, g, out, x: B.reshape(g, shape=(-1,)),))
    x = tl.Variable(np.ones((2, 2), np.float32))
    with tl.GradientTape() as tape:
        y = tl.square(x)
    with pytest.raises(AssertionError, match=r"square: the gradient rule for input 0 returned shape \(4,\)"):
        tape.gradient(y, x)


def test_cross_entropy_saves_its_residual_and_its_rule_uses_it():
    # like TF's fused kernel, the forward returns softmax(logits) - one_hot(labels) for the rule to scale
    logits = tl.Variable([[2.0, 1.0, 0.0], [0.0, 0.0, 3.0]])
    labels = tl.constant([0, 1])
    with tl.GradientTape(persistent=True) as tape:
        loss = tl.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    (entry,) = tape.entries
    z = np.exp(logits.numpy() - logits.numpy().max(axis=1, keepdims=True))
    expected = z / z.sum(axis=1, keepdims=True) - np.eye(3, dtype=np.float32)[[0, 1]]
    np.testing.assert_allclose(entry.residual, expected, rtol=1e-6)
    assert entry.rule_params == {"residual": entry.residual}
    np.testing.assert_allclose(tape.gradient(loss, logits).numpy(), expected, rtol=1e-6)
    entry.residual = entry.residual * 2  # the rule reads the saved residual, it does not recompute it
    np.testing.assert_allclose(tape.gradient(loss, logits).numpy(), 2 * expected, rtol=1e-6)
    assert OPS["add"].saves is False and tape.entries[0].op.saves is True
