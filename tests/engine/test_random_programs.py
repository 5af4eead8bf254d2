"""Random programs from the op table: gradient() == finite differences == the stepper's final sums.

A hypothesis strategy builds a straight-line program: a few float64 source tensors, then a chain of
ops drawn from ``tl.OPS``. Each op's generator (its spec's ``program`` in tests/op_specs.py) picks operands
whose shapes fit and whose values lie in the op's safe domain (away from the kinks of abs / relu / maximum /
floormod / reduce_max, positive for log / sqrt / pow's base, bounded for exp); when no tensor in the program
fits, it adds a new source that does. The program is then differentiated with one-shot, persistent
and nested tapes.
"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tapelab as tl
from tests.op_specs import SPECS, missing

OPS = tl.OPS
SHAPES = [(), (3,), (2, 3), (2, 1), (1, 3)]
GENERATORS = {s.name: s.program for s in SPECS if s.program}  # op name -> builder -> (fn, argument indices)
EXCLUDED = {s.name: s.no_program for s in SPECS if s.no_program}  # op name -> why it has no generator


class Builder:
    """The program under construction: numpy values of every tensor so far, and the steps."""

    def __init__(self, draw, rng):
        self.draw, self.rng = draw, rng
        self.sources, self.values, self.steps = [], [], []  # steps: (name, fn, argument indices)
        self.made_by = []  # per value: ("source", n) or ("step", k)

    def leaf(self, shape, lo=-2.0, hi=2.0, away_from=None):
        v = self.rng.uniform(lo, hi, shape)
        if away_from is not None:  # keep |v - away_from| >= 0.2
            v = away_from + np.sign(v - away_from + 1e-12) * (0.2 + np.abs(v - away_from))
        self.made_by.append(("source", len(self.sources)))
        self.sources.append(np.asarray(v, dtype=np.float64))
        self.values.append(self.sources[-1])
        return len(self.values) - 1

    def drop_leaf(self):
        self.values.pop(), self.sources.pop(), self.made_by.pop()

    def pick(self, ok=lambda v: True, shape=None):
        """A tensor of the program that satisfies ``ok`` (and fits ``shape`` by broadcasting), or None."""
        fits = [i for i, v in enumerate(self.values) if (shape is None or _broadcasts(v.shape, shape)) and ok(v)]
        return self.draw(st.sampled_from(fits)) if fits else None

    def any_shape(self, like=None):
        shapes = [s for s in SHAPES if like is None or _broadcasts(s, like)]
        return self.draw(st.sampled_from(shapes))


def _broadcasts(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def test_every_differentiable_op_has_a_generator():
    assert not missing(OPS), missing(OPS)
    differentiable = {name for name, op in OPS.items() if op.differentiable}
    drawn, excluded = set(GENERATORS), set(EXCLUDED)
    assert drawn | excluded == differentiable and not drawn & excluded, (
        f"give these ops' specs in tests/op_specs.py a program (or no_program='why'): "
        f"{sorted(differentiable - drawn - excluded)}; not differentiable, so neither: "
        f"{sorted((drawn | excluded) - differentiable)}; both: {sorted(drawn & excluded)}")


@st.composite
def programs(draw, max_ops=5):
    b = Builder(draw, np.random.default_rng(draw(st.integers(0, 2**32 - 1))))
    for _ in range(draw(st.integers(1, 2))):
        b.leaf(draw(st.sampled_from(SHAPES)))
    for _ in range(draw(st.integers(1, max_ops))):
        for _ in range(10):
            name = draw(st.sampled_from(sorted(GENERATORS)))
            made = GENERATORS[name](b)
            if made is None:
                continue
            fn, args = made
            with np.errstate(all="ignore"):
                value = np.asarray(fn(*[tl.constant(b.values[k]) for k in args]))
            if value.dtype == np.float64 and np.all(np.isfinite(value)) and np.abs(value).max(initial=0) < 50:
                b.made_by.append(("step", len(b.steps)))
                b.steps.append((name, fn, args))
                b.values.append(value)
                break
    made_by, steps = list(b.made_by), list(b.steps)

    def program(*sources):
        vals = []
        for kind, k in made_by:
            if kind == "source":
                vals.append(sources[k])
            else:
                _, fn, args = steps[k]
                vals.append(fn(*[vals[a] for a in args]))
        return vals[-1]

    program.ops = [name for name, _, _ in steps]
    return program, [s.copy() for s in b.sources]


def weights(out):
    return np.random.default_rng(0).uniform(0.5, 1.5, np.shape(out))  # as tl.check_gradients weighs the output


def tape_gradient(f, points, persistent=False):
    xs = [tl.constant(p) for p in points]
    with tl.GradientTape(persistent=persistent) as tape:
        tape.watch(xs)
        y = f(*xs)
    w = weights(y)
    return tape, xs, y, w


def as_arrays(grads, points):
    return [np.zeros_like(p) if g is None else g.numpy() for g, p in zip(grads, points)]


def step_totals(steps, xs, points):
    final = steps[-1].totals if steps else {}
    return [np.asarray(final.get(x._key, np.zeros_like(p))) for x, p in zip(xs, points)]


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(autouse=True)
def quiet_nones():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a program may not reach a source: TF's None (+ a warning)
        yield


@SETTINGS
@given(programs())
def test_one_shot_gradient_equals_finite_differences_and_the_stepper(program):
    f, points = program
    check = tl.check_gradients(f, *points)
    assert check.ok, (f.ops, check)
    tape, xs, y, w = tape_gradient(f, points)
    steps = tape.backward_steps(y, xs, output_gradients=w)  # the one-shot tape, stepped instead of gradient()
    for a, s in zip(check.analytic, step_totals(steps, xs, points)):
        np.testing.assert_array_equal(a, s)


@SETTINGS
@given(programs())
def test_persistent_tape_gives_the_same_gradient_every_time(program):
    f, points = program
    tape, xs, y, w = tape_gradient(f, points, persistent=True)
    first = as_arrays(tape.gradient(y, xs, output_gradients=w), points)
    steps = tape.backward_steps(y, xs, output_gradients=w)
    second = as_arrays(tape.gradient(y, xs, output_gradients=w), points)
    check = tl.check_gradients(f, *points)
    for a, s, b, n in zip(first, step_totals(steps, xs, points), second, check.numeric):
        np.testing.assert_array_equal(a, s)
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, n, rtol=1e-5, atol=1e-5)


def first_derivative(f, points, v):
    """s(x) = sum_i <d f / d x_i, v_i>, computed with a one-shot tape (numbers only)."""
    tape, xs, y, w = tape_gradient(f, points)
    grads = as_arrays(tape.gradient(y, xs, output_gradients=w), points)
    return sum(float(np.sum(g * vi)) for g, vi in zip(grads, v))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(max_ops=4))
def test_nested_tapes_give_second_derivatives_equal_to_finite_differences_of_the_first(program):
    f, points = program
    v = [np.random.default_rng(1).uniform(0.5, 1.5, p.shape) for p in points]

    def second_order(stepped):
        xs = [tl.constant(p) for p in points]
        with tl.GradientTape(persistent=stepped) as outer:
            outer.watch(xs)
            with tl.GradientTape() as inner:
                inner.watch(xs)
                y = f(*xs)
            grads = inner.gradient(y, xs, output_gradients=weights(y), unconnected_gradients="zero")
            s = tl.add_n([tl.reduce_sum(g * vi) for g, vi in zip(grads, v)])
        h = as_arrays(outer.gradient(s, xs), points)
        return h, (step_totals(outer.backward_steps(s, xs), xs, points) if stepped else None)

    h, _ = second_order(False)
    h2, totals = second_order(True)
    eps = 1e-6
    for k, p in enumerate(points):
        numeric = np.zeros_like(p)
        for idx in np.ndindex(p.shape):
            up, down = [q.copy() for q in points], [q.copy() for q in points]
            up[k][idx] += eps
            down[k][idx] -= eps
            numeric[idx] = (first_derivative(f, up, v) - first_derivative(f, down, v)) / (2 * eps)
        np.testing.assert_allclose(h[k], numeric, rtol=1e-4, atol=1e-4, err_msg=str(f.ops))
        np.testing.assert_array_equal(h[k], h2[k])
        np.testing.assert_array_equal(h[k], totals[k])
