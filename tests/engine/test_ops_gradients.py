"""Every primitive's gradient against finite differences, from each op's spec (tests/op_specs.py: ``grads``).

A new op with a gradient rule fails `test_every_op_is_covered` until its spec has gradient cases; an op
without a rule must be declared non-differentiable in the table (``vjps=None``) and in its spec (``grad=False``).
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tapelab as tl
from tapelab.engine import retention
from tapelab.engine import tape as tape_module
from tapelab.engine.primitives import Spec
from tests.op_specs import SPEC, SPECS, missing, rng

OPS = tl.OPS


def params():
    for spec in SPECS:
        for k, (f, makers) in enumerate(spec.grads):
            yield pytest.param(spec.name, f, makers, id=f"{spec.name}-{k}")


def test_every_op_is_covered():
    """Each op either has a gradient rule and gradient cases in its spec, or is declared non-differentiable."""
    assert not missing(OPS), missing(OPS)
    for name, op in OPS.items():
        if op.differentiable:
            assert SPEC[name].grads, (f"op {name!r} has a gradient rule but no gradient check case: give its spec in "
                                      "tests/op_specs.py some")
        else:
            assert not SPEC[name].grads, (f"op {name!r} is declared non-differentiable but has gradient cases: its "
                                          "spec in tests/op_specs.py takes grad=False")
    assert set(SPEC) <= set(OPS), f"specs of ops not in tl.OPS: {sorted(set(SPEC) - set(OPS))}"


@pytest.mark.parametrize("name, f, makers", list(params()))
def test_gradient_matches_finite_differences(name, f, makers):
    points = [make(shape) for make, shape in makers]
    check = tl.check_gradients(f, *points, **SPEC[name].check)  # (cast: bigger nudges, to survive float32)
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
    monkeypatch.setattr(retention, "SMALL", 0)
    monkeypatch.setattr(tape_module, "SWEEP", 0)  # (a sweep after every op)
    first_let_go, second_let_go, listing_let_go, specs = run()
    assert specs >= (1 if OPS[name].unread else 0)
    for a, b in zip(first + second, first_let_go + second_let_go, strict=True):
        np.testing.assert_array_equal(a, b)
    assert listing_let_go == listing


def test_every_op_draws_and_steps(tmp_path):
    """Each gradient case also goes through the listing, the DOT export and backward_steps."""
    for name, cases in ((s.name, s.grads) for s in SPECS if s.grads):
        f, makers = cases[0]
        xs = [tl.Variable(make(shape).astype(np.float32)) for make, shape in makers]
        with tl.GradientTape(persistent=True) as tape:
            y = f(*xs)
        assert name in str(tape), name
        assert tl.viz.to_dot(tape, y, xs).startswith("digraph"), name
        steps = tape.backward_steps(y, xs)
        assert all(isinstance(formula, str) for s in steps for _, _, formula, _, _ in s.contributions), name


def test_backward_preserves_float32():
    x = tl.Variable(np.ones((3, 4), np.float32))
    for name, cases in ((s.name, s.grads) for s in SPECS if s.grads):
        f, makers = cases[0]
        if len(makers) != 1 or makers[0][1] != (3, 4):
            continue
        with tl.GradientTape() as tape:
            y = f(x)
        g = tape.gradient(y, x)
        assert g is None or g.dtype == tl.float32, name


BINARY_RANDOM_SHAPES = [s.name for s in SPECS if s.random_shapes and s.kind == "binary"]
ONE_INPUT_RANDOM_SHAPES = [s.name for s in SPECS if s.random_shapes and s.kind != "binary"]


@settings(max_examples=60, deadline=None)
@given(data=st.data(), name=st.sampled_from(BINARY_RANDOM_SHAPES))
def test_binary_ops_with_random_broadcast_shapes(data, name):
    spec = SPEC[name]
    a_shape, b_shape = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3)).input_shapes
    elements = st.floats(spec.random_shapes.lo, spec.random_shapes.hi)
    a = data.draw(hnp.arrays(np.float64, a_shape, elements=elements))
    b = data.draw(hnp.arrays(np.float64, b_shape, elements=elements))
    if spec.random_shapes.apart and np.any(np.abs(np.subtract(a, b)) < spec.random_shapes.apart):
        return  # at a tie the function has a kink; the gradient there is a convention
    check = tl.check_gradients(spec.call, a, b, tolerance=1e-4)
    assert check.ok, check


@settings(max_examples=40, deadline=None)
@given(data=st.data(), name=st.sampled_from(ONE_INPUT_RANDOM_SHAPES))
def test_unary_ops_with_random_shapes(data, name):
    spec = SPEC[name]
    x = data.draw(hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
                             elements=st.floats(spec.random_shapes.lo, spec.random_shapes.hi)))
    check = tl.check_gradients(spec.call, x, tolerance=1e-4)
    assert check.ok, check


@settings(max_examples=60, deadline=None)
@given(x=hnp.arrays(st.sampled_from([np.float32, np.float64, np.int32]), hnp.array_shapes(min_dims=2, max_dims=2,
                                                                                          max_side=80),
                    elements=st.integers(-50, 50)),
       axis=st.sampled_from([1, -1, (1,), (-1,), 0, None]), keepdims=st.booleans(), nan=st.booleans())
def test_row_maxima_take_the_fast_path_with_the_same_values_as_numpy(x, axis, keepdims, nan):
    # kernels.max_over reduces many short rows through a transposed copy (numpy is slow on short rows); same values
    from tapelab.engine.primitives.kernels import max_over as _max
    if nan and x.dtype.kind == "f" and x.size:
        x.flat[x.size // 2] = np.nan
    got = _max(x, axis, keepdims)
    np.testing.assert_array_equal(got, np.max(x, axis=axis, keepdims=keepdims))
    assert got.dtype == x.dtype


def test_row_maxima_fast_path_on_class_scores_with_the_maximum_in_every_column():
    # the shape the softmax family meets in training (128 x 10): each column holds some row's maximum
    from tapelab.engine.primitives.kernels import max_over as _max
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
