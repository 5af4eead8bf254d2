"""Ops that course code reaches for (``repeat``, ``meshgrid``, ``tensordot``, ``boolean_mask``, ``map_fn``,
``is_tensor``): each is built from the table's primitives, so its gradients, first and second order, are the
primitives' and the tape shows those. TF's values, dtypes and errors are in ``tests/fixtures/tf_contract.json``
(``test_tf_contract.py``); here: the gradients, the tape, ``tl.function`` and what a learner's mistake gets."""

import matplotlib
import numpy as np
import pytest

import tapelab as tl

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4))
W = RNG.standard_normal((4, 2))

CASES = {  # name -> (f of tensors -> scalar, points)
    "repeat counts": (lambda a: tl.reduce_sum(tl.repeat(a, [1, 2, 0], axis=0) ** 2), [X]),
    "repeat flattened": (lambda a: tl.reduce_sum(tl.sin(tl.repeat(a, 2))), [X]),
    "meshgrid": (lambda a, b: tl.reduce_sum(tl.stack(tl.meshgrid(a, b)) ** 3), [X[:, 0], W[:, 0]]),
    "meshgrid ij": (lambda a, b: tl.reduce_sum(tl.meshgrid(a, b, indexing="ij")[0] ** 2
                                               * tl.transpose(tl.meshgrid(a, b)[1])), [X[:, 0], W[:, 0]]),
    "tensordot": (lambda a, b: tl.reduce_sum(tl.tanh(tl.tensordot(a, b, 1))), [X, W]),
    "tensordot pairs": (lambda a, b: tl.reduce_sum(tl.tensordot(a, b, [[0, 1], [1, 0]]) ** 2), [X, X.T]),
    "tensordot outer": (lambda a, b: tl.reduce_sum(tl.sin(tl.tensordot(a, b, 0))), [X[0], W[:, 1]]),
    "boolean_mask": (lambda a: tl.reduce_sum(tl.boolean_mask(a, X > 0) ** 3), [X]),
    "boolean_mask axis 1": (lambda a: tl.reduce_sum(tl.exp(tl.boolean_mask(a, [True, False, True, True], axis=1))),
                            [X]),
    "map_fn": (lambda a: tl.reduce_sum(tl.map_fn(lambda r: tl.reduce_sum(r * r) * r, a)), [X]),
    # (u and v up to each column's sign: the functions of them here do not depend on it)
    "svd": (lambda a: (lambda s, u, v: tl.reduce_sum(s * s) + tl.reduce_sum(u * u[:1] * X[:, :3])
                       + tl.reduce_sum(tl.sin(v * v[:1])))(*tl.linalg.svd(a)), [X]),
    "svd tall full": (lambda a: (lambda s, u, v: tl.reduce_sum(tl.sqrt(s)) + tl.reduce_sum(u * u[:1] * X[:, 0])
                                 + tl.reduce_sum(v * v[:1] * W[:2, 0]))(*tl.linalg.svd(a, full_matrices=True)),
                      [X[:, :2]]),
    "svd values only": (lambda a: tl.reduce_sum(tl.linalg.svd(a, compute_uv=False) ** 3), [X]),
}


@pytest.mark.parametrize("name", CASES)
def test_gradient_matches_finite_differences(name):
    f, points = CASES[name]
    check = tl.check_gradients(f, *points)
    assert check.ok, check


@pytest.mark.parametrize("name", CASES)
def test_second_derivative_through_nested_tapes(name):
    f, points = CASES[name]

    def first_derivative(*xs):
        with tl.GradientTape() as inner:
            inner.watch(list(xs))
            y = f(*xs)
        return tl.add_n([tl.reduce_sum(g * g) for g in inner.gradient(y, list(xs)) if g is not None])

    check = tl.check_gradients(first_derivative, *points, tolerance=1e-4)
    assert check.ok, check


def test_each_is_recorded_as_the_primitives_it_is_built_from():
    x = tl.Variable(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    with tl.GradientTape() as tape:
        tl.repeat(x, 2, axis=1)
        tl.boolean_mask(x, [True, False])
        tl.tensordot(x, x, [[0], [0]])
        tl.meshgrid(x[0], x[1])
    ops = [e.op.name for e in tape.entries]
    assert ops.count("gather") == 2 and "matmul" in ops and "broadcast_to" in ops
    assert "repeat" not in ops and "tensordot" not in ops  # (no op of their own: the table stays one table)


def test_svd_gives_s_u_v_and_its_parts_are_ops_of_the_table():
    x = tl.Variable(X.astype(np.float32))
    with tl.GradientTape() as tape:
        s, u, v = tl.linalg.svd(x)
    assert [e.op.name for e in tape.entries] == ["svd"] * 3
    assert (s.shape, u.shape, v.shape) == ((3,), (3, 3), (4, 3)) and s.dtype == tl.float32
    assert np.all(np.diff(s.numpy()) <= 0)  # largest first
    np.testing.assert_allclose((u * s @ tl.transpose(v)).numpy(), X, atol=1e-5)
    s_full, u_full, v_full = tl.linalg.svd(x, full_matrices=True)
    assert (u_full.shape, v_full.shape) == ((3, 3), (4, 4))
    np.testing.assert_allclose(s_full.numpy(), s.numpy())
    assert isinstance(tl.linalg.svd(x, compute_uv=False), tl.Tensor)


def test_svd_gradient_with_full_matrices_of_very_different_sides_is_refused_as_tf_does():
    x = tl.constant(RNG.standard_normal((2, 4)))
    with tl.GradientTape() as tape:
        tape.watch(x)
        s, u, v = tl.linalg.svd(x, full_matrices=True)
        y = tl.reduce_sum(s)
    with pytest.raises(NotImplementedError, match=r"abs\(m - n\) > 1") as error:
        tape.gradient(y, x)
    assert "full_matrices=False" in str(error.value)
    with tl.GradientTape() as tape:  # (the reduced decomposition has a gradient)
        tape.watch(x)
        y = tl.reduce_sum(tl.linalg.svd(x)[0])
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), tl.linalg.svd(x)[1].numpy() @ tl.linalg.svd(x)[2].numpy().T)


def test_traced_results_equal_the_eager_ones():
    def f(x, y):
        return [tl.repeat(x, [2, 1], axis=0), tl.tensordot(x, y, 1), *tl.meshgrid(x[0], y[:, 0]),
                tl.boolean_mask(x, np.array([[True, False, True], [False, True, True]])),
                tl.map_fn(lambda r: tl.reduce_sum(r) * r, x)]

    x, y = tl.constant(X[:2, :3].astype(np.float32)), tl.constant(W[:3].astype(np.float32))
    traced = tl.function(f)
    for _ in range(2):  # (the second call runs the traced graph)
        for got, want in zip(traced(x, y), f(x, y), strict=True):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("call", [lambda x: tl.boolean_mask(x, x > 0),
                                  lambda x: tl.repeat(x, tl.cast(x > 0, tl.int32))])
def test_a_length_computed_inside_a_traced_function_is_refused_not_frozen(call):
    """The traced graph's shapes are fixed: a mask or counts known only when the function runs cannot decide the
    result's length (TF's dynamic shapes are left to TF), and using the tracing call's values would be silently
    wrong on the next call."""
    with pytest.raises(tl.TracingError, match="inside tl.function") as error:
        tl.function(call)(tl.constant([1.0, -2.0, 3.0]))
    assert "result's length" in str(error.value)


@pytest.mark.parametrize("call, words", [
    (lambda: tl.repeat([1, 2, 3], [1, 2]), ["one count per slice", "3 of them"]),
    (lambda: tl.repeat([1, 2, 3], 2, axis=1), ["axis=1 out of bounds", "-1<=axis<1"]),
    (lambda: tl.repeat([1.0, 2.0], [1.5, 2]), ["whole numbers"]),
    (lambda: tl.meshgrid([1.0, 2.0], [4, 5]), ["one dtype", "tl.cast"]),
    (lambda: tl.tensordot(tl.ones((2, 3)), tl.ones((4, 4)), 1), ["size 3", "size 4", "same size"]),
    (lambda: tl.tensordot(tl.ones((2, 3)), tl.ones((3, 4)), [[1], [0, 1]]), ["1 != 2"]),
    (lambda: tl.boolean_mask([1, 2, 3], [True, False]), ["(3,) and (2,)", "tensor.shape[0:1]"]),
    (lambda: tl.map_fn(lambda x: (x, x), tl.constant([1.0])), ["(_, _)", "fn_output_signature"]),
    (lambda: tl.map_fn(lambda x: tl.cast(x, tl.int32), tl.constant([1.0])), ["int32", "fn_output_signature"]),
    (lambda: tl.map_fn(lambda x: x, [1.0, 2.0]), ["1+ dimensional", "tl.constant"]),
    (lambda: tl.linalg.svd([1.0, 2.0]), ["svd", "(2,)", "tl.reshape(v, (1, -1))"]),
    (lambda: tl.linalg.svd([[1, 2], [3, 4]]), ["int32", "tl.cast(x, tl.float32)"]),
])
def test_a_mistake_gets_an_error_that_says_what_to_do(call, words):
    with pytest.raises((ValueError, tl.InvalidArgumentError)) as error:
        call()
    for word in words:
        assert word in str(error.value)


def test_matplotlib_unpacks_tensors_when_tapelab_is_tensorflow(monkeypatch, tmp_path):
    """matplotlib asks ``sys.modules["tensorflow"].is_tensor`` which of the things it plots are TF's arrays, and
    unpacks those to numpy first (``cbook._unpack_to_numpy``): with tapelab bound there, its tensors are."""
    import sys

    import matplotlib.pyplot as plt
    from matplotlib import cbook

    matplotlib.use("Agg")
    monkeypatch.setitem(sys.modules, "tensorflow", tl)
    assert isinstance(cbook._unpack_to_numpy(tl.Variable([1.0, 2.0])), np.ndarray)
    figure, ax = plt.subplots()
    try:
        (line,) = ax.plot(tl.range(3.0), tl.constant([1.0, 4.0, 9.0]))
        figure.savefig(tmp_path / "plot.png")
        np.testing.assert_array_equal(line.get_ydata(), [1.0, 4.0, 9.0])
    finally:
        plt.close(figure)


def test_random_draws_inside_a_traced_function_are_drawn_on_every_call():
    """A random op is a node of the traced graph that draws again on each call, from the bounds the call gives
    (TF's fixtures: function_random_*); before, the draw of the tracing call was a constant of the graph."""
    draw = tl.function(lambda lo, hi: tl.random.uniform([50], lo, hi))
    first, second = draw(tl.constant(10.0), tl.constant(11.0)), draw(tl.constant(-3.0), tl.constant(-2.0))
    assert first.dtype == tl.float32 and 10 <= first.numpy().min() and first.numpy().max() < 11
    assert -3 <= second.numpy().min() and second.numpy().max() < -2 and draw.trace_count == 1
    ints = tl.function(lambda: tl.random.uniform([100], 0, 10, dtype=tl.int32))
    assert ints().dtype == tl.int32 and not np.array_equal(ints().numpy(), ints().numpy())
    noise = tl.function(lambda: tl.random.normal([8], mean=5.0, stddev=0.1))
    tl.random.set_seed(3)
    traced = [noise().numpy() for _ in range(3)]
    tl.random.set_seed(3)
    again = [noise().numpy() for _ in range(3)]
    np.testing.assert_array_equal(traced, again)  # (a seeded run repeats: the node's kernel starts again)
    assert not np.array_equal(traced[0], traced[1])  # (and goes on drawing, as TF's kernel does)
