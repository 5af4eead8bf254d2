"""Anomaly detection: check-numerics mode stops at the first op that makes a NaN or Inf,
forward or backward, and says which entry of the tape it is; the nn ops stay finite for huge logits."""

import re

import numpy as np
import pytest

import tapelab as tl
from tapelab.engine.recording import switches


@pytest.fixture(autouse=True)
def numerics_off_afterwards():
    yield
    tl.debugging.disable_check_numerics()


def test_off_by_default_nan_flows_silently_as_in_tf():
    with np.errstate(divide="ignore"):
        y = tl.math.log(tl.constant([1.0, 0.0]))
    assert y.numpy()[1] == -np.inf


def test_the_backward_pass_is_silent_and_leaves_numpys_error_state_alone():
    # sqrt'(0) = inf: the forward pass is fine, the rule divides by zero; TF gives inf without a word
    import threading
    import warnings

    def infinite_gradient():
        x = tl.Variable([0.0, 4.0])
        with tl.GradientTape() as tape:
            y = tl.reduce_sum(tl.sqrt(x))
        return tape.gradient(y, x).numpy()

    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        before = np.geterr()
        np.testing.assert_array_equal(infinite_gradient(), [np.inf, 0.25])
        assert np.geterr() == before  # restored: a learner's own settings win again after gradient()
        results = []
        threads = [threading.Thread(target=lambda: results.append(infinite_gradient())) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(results) == 4 and np.geterr() == before
        with pytest.raises(FloatingPointError):
            np.float32(1) / np.float32(0)  # outside gradient() numpy still raises, as this block asked


def test_forward_error_names_the_op_its_entry_and_the_inputs():
    x = tl.Variable([0.5, 2.0, 0.0], name="x")
    tl.debugging.enable_check_numerics()
    with np.errstate(divide="ignore"), tl.GradientTape() as tape:
        a = x * 2.0  # entry 0
        b = a + 1.0  # entry 1
        with pytest.raises(tl.InvalidArgumentError) as err:
            tl.math.log(a) + b  # entry 2: log(0)
    e = err.value
    assert (e.op, e.entry_index, e.tape, e.phase) == ("log", 2, tape, "forward")
    msg = str(e)
    assert msg.startswith("check_numerics: log produced -Inf in its output (forward pass), entry 2 on the tape")
    assert "input 0: shape (3,) float32, values in [0, 4]" in msg
    assert "output: shape (3,) float32, values in [0, 1.386] and 1 -Inf" in msg
    assert "log needs x > 0" in msg and "log_softmax" in msg
    assert len(tape.entries) == 3  # the bad entry is on the tape, so the graph can show it


def test_the_graph_highlights_the_failing_entry():
    x = tl.Variable([1.0, -1.0], name="x")
    with tl.debugging.enable_check_numerics(), np.errstate(invalid="ignore"):
        with tl.GradientTape() as tape:
            with pytest.raises(tl.InvalidArgumentError) as err:
                tl.sqrt(x * 3.0)
    k = err.value.entry_index
    dot = tl.viz.to_dot(tape, highlight=[k])
    node = re.search(rf'"op_{k}" \[[^\n]*', dot).group(0)
    assert "sqrt" in node and "#dc2626" in node  # the red highlight
    assert "#dc2626" not in re.search(r'"op_0" \[[^\n]*', dot).group(0)
    try:
        svg = tl.viz.draw(err.value.tape, highlight=[k]).svg
    except tl.viz.GraphvizNotFound:
        pytest.skip("no Graphviz here to render the picture")
    assert "#dc2626" in svg and "sqrt" in svg


def test_backward_error_names_the_op_the_input_and_the_rule():
    x = tl.Variable([4.0, 0.0], name="x")
    with tl.debugging.enable_check_numerics():  # sqrt(0) is fine, its gradient 1 / (2 sqrt(0)) is not
        with tl.GradientTape() as tape:
            y = tl.reduce_sum(tl.sqrt(x))
        with pytest.raises(tl.InvalidArgumentError) as err, np.errstate(divide="ignore"):
            tape.gradient(y, x)
    e = err.value
    assert (e.op, e.entry_index, e.phase) == ("sqrt", 0, "backward")
    msg = str(e)
    assert "the gradient of sqrt for its input 0 contains +Inf (backward pass), entry 0 on the tape" in msg
    assert "rule: dx = g / (2 * sqrt(x))" in msg and "upstream gradient g: shape (2,) float32, values in [1, 1]" in msg
    assert "input 0: shape (2,) float32, values in [0, 4]" in msg and "add a small epsilon" in msg


def test_the_first_bad_op_is_reported_not_a_later_one():
    x = tl.Variable([1e30, 1.0], name="x")
    with tl.debugging.enable_check_numerics(), np.errstate(over="ignore", invalid="ignore"):
        with tl.GradientTape():
            with pytest.raises(tl.InvalidArgumentError) as err:
                y = x * x  # 1e60 overflows float32: +Inf
                y - y  # would be NaN, but the check stopped before
    assert err.value.op == "multiply" and "float32 ends near 3.4e38" in str(err.value)


def test_an_input_that_is_already_nan_is_blamed_on_the_data():
    data = tl.constant([np.nan, 1.0])
    with tl.debugging.enable_check_numerics(), pytest.raises(tl.InvalidArgumentError) as err:
        data * 2.0
    assert "not recorded on any tape" in str(err.value) and "already contains NaN" in str(err.value)
    assert err.value.entry_index is None
    with pytest.raises(tl.InvalidArgumentError, match=r"data: the tensor has 1 NaN \(shape \(2,\) float32"):
        tl.debugging.check_numerics(data, "data")
    assert tl.debugging.check_numerics(tl.constant([1.0]), "fine").numpy().tolist() == [1.0]


def test_higher_order_gradient_nan_is_reported_as_the_backward_step_of_the_inner_op():
    x = tl.Variable([0.0, 1.0], name="x")
    with tl.debugging.enable_check_numerics(), np.errstate(divide="ignore", invalid="ignore"):
        with tl.GradientTape():
            with tl.GradientTape() as inner:
                y = tl.reduce_sum(tl.sqrt(x) * 0.0 + x)
            with pytest.raises(tl.InvalidArgumentError) as err:
                inner.gradient(y, x)  # recorded on `outer`: 0.5 / sqrt(0) = Inf inside the VJP
    e = err.value
    assert e.phase == "backward" and e.op == "sqrt" and e.tape is inner
    assert isinstance(e.__cause__, tl.InvalidArgumentError) and e.__cause__.phase == "forward"


def test_context_restores_and_plain_calls_switch():
    assert switches.check_numerics is False
    with tl.debugging.enable_check_numerics() as mode:
        assert switches.check_numerics is True and "check_numerics on" in repr(mode)
    assert switches.check_numerics is False
    tl.debugging.enable_check_numerics()
    with tl.debugging.enable_check_numerics():
        pass
    assert switches.check_numerics is True  # the outer setting survives the inner block
    tl.debugging.disable_check_numerics()
    assert switches.check_numerics is False


def test_check_numerics_in_a_traced_function():
    @tl.function
    def f(x):
        return tl.math.log(x)

    f(tl.constant([1.0, 2.0]))  # traced while off
    with tl.debugging.enable_check_numerics(), np.errstate(divide="ignore"), pytest.raises(tl.InvalidArgumentError,
                                                                                           match="log produced"):
        f(tl.constant([1.0, 0.0]))  # the graph replays through the same ops: checked too


def test_a_whole_training_step_passes_when_everything_is_finite():
    layer = tl.layers.Dense(3)
    x = tl.random.normal((4, 5), seed=1)
    with tl.debugging.enable_check_numerics():
        with tl.GradientTape() as tape:
            loss = tl.reduce_mean(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 1, 2, 0], logits=layer(x)))
        grads = tape.gradient(loss, layer.trainable_variables)
    assert all(np.all(np.isfinite(g.numpy())) for g in grads)


# --- stable nn ops for logits of +-1000 --------------------------------------------------------------------

HUGE = [[1000.0, -1000.0, 0.0], [-1000.0, -1000.0, 1000.0]]


def stable_ops():
    labels = [1, 0]
    return {
        "softmax": lambda z: tl.nn.softmax(z) * tl.constant([[1.0, 2.0, 3.0]], dtype=z.dtype),
        "log_softmax": lambda z: tl.nn.log_softmax(z) * tl.constant([[1.0, 2.0, 3.0]], dtype=z.dtype),
        "sigmoid": lambda z: tl.sigmoid(z) * tl.constant([[1.0, 2.0, 3.0]], dtype=z.dtype),
        "cross_entropy": lambda z: tl.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=z),
        "keras_loss": lambda z: tl.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, z),
    }


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64])
@pytest.mark.parametrize("name", sorted(stable_ops()))
def test_stable_ops_at_plus_minus_1000_give_finite_values_and_first_and_second_derivatives(name, dtype):
    f = stable_ops()[name]
    z = tl.Variable(tl.constant(HUGE, dtype=dtype))
    with tl.debugging.enable_check_numerics():  # any NaN/Inf anywhere, forward or backward, would raise
        with tl.GradientTape() as outer:
            with tl.GradientTape() as inner:
                y = tl.reduce_sum(f(z))
            g = inner.gradient(y, z)
            gg = tl.reduce_sum(g * g)
        h = outer.gradient(gg, z, unconnected_gradients="zero")
    for t in (y, g, h):
        assert np.all(np.isfinite(t.numpy())) and t.dtype == dtype


def test_stable_ops_have_the_exact_limits():
    z = tl.constant(HUGE, dtype=tl.float64)
    np.testing.assert_array_equal(tl.nn.softmax(z).numpy(), [[1, 0, 0], [0, 0, 1]])
    np.testing.assert_allclose(tl.nn.log_softmax(z).numpy(), [[0, -2000, -1000], [-2000, -2000, 0]])
    np.testing.assert_array_equal(tl.sigmoid(z).numpy(), [[1, 0, 0.5], [0, 0, 1]])
    xent = tl.nn.sparse_softmax_cross_entropy_with_logits(labels=[1, 0], logits=z)
    np.testing.assert_allclose(xent.numpy(), [2000, 2000])
    with tl.GradientTape() as tape:
        tape.watch(z)
        loss = tl.reduce_sum(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=[1, 0], logits=z))
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(), [[1, -1, 0], [-1, 0, 1]])  # softmax - one_hot


def test_naive_log_of_softmax_is_caught_and_the_hint_names_the_stable_op():
    z = tl.Variable(HUGE, name="z")
    with tl.debugging.enable_check_numerics(), np.errstate(divide="ignore"):
        with tl.GradientTape():
            with pytest.raises(tl.InvalidArgumentError, match=r"(?s)log produced -Inf.*log_softmax"):
                tl.math.log(tl.nn.softmax(z))
