"""The training stack: Module, layers, optimizers (against real Keras numbers), losses, metrics, MNIST."""

import json
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import tapelab as tl
from tapelab.engine.errors import InvalidArgumentError

KERAS = json.loads((Path(__file__).parents[1] / "fixtures" / "keras_reference.json").read_text())


# --- Module ------------------------------------------------------------------------------------
class Block(tl.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.w = tl.Variable(np.ones((2, 2), np.float32), name="w")
        self.frozen = tl.Variable(0.0, trainable=False, name="frozen")


class Net(tl.Module):
    def __init__(self):
        super().__init__()
        self.shared = tl.Variable(1.0, name="shared")
        self.blocks = [Block("b0"), Block("b1")]
        self.by_name = {"z": Block("bz"), "a": (tl.Variable(2.0, name="in_tuple"),)}
        self.again = self.shared  # the same Variable twice: collected once
        self.alias = self.blocks[0]  # the same Module twice: searched once
        self.not_a_variable = tl.constant(3.0)


def test_module_collects_variables_from_nested_attributes_once_in_tf_module_order():
    net = Net()
    names = [v.name for v in net.variables]
    # tf.Module's order (checked against TF 2.21): own attributes sorted by name, list items in order,
    # dict items by sorted key; then the submodules in the order they were found, depth first
    assert names == ["shared:0", "in_tuple:0", "frozen:0", "w:0", "frozen:0", "w:0", "frozen:0", "w:0"]
    assert len({id(v) for v in net.variables}) == len(net.variables) == 8
    assert [m.name for m in net.submodules] == ["b0", "b1", "bz"]
    assert all(v.trainable for v in net.trainable_variables)
    assert len(net.trainable_variables) == 5 and len(net.non_trainable_variables) == 3
    assert net.variables == Net.variables.fget(net)  # deterministic: the same on every call
    assert net.name == "net" and Block().name == "block"
    assert net.count_params() == 1 + 1 + 3 * (4 + 1)


def test_module_handles_reference_cycles():
    a, b = Block("a"), Block("b")
    a.other, b.other = b, a
    assert [m.name for m in a.submodules] == ["b"]
    assert len(a.variables) == 4


def test_module_name_must_be_an_identifier():
    with pytest.raises(ValueError, match="not a valid name"):
        tl.Module(name="has space")


def test_module_name_scope_groups_ops_on_the_tape():
    m = Block("block")
    with tl.GradientTape() as tape:
        with m.name_scope:
            y = tl.reduce_sum(m.w * 2.0)
    assert {e.scope for e in tape.entries} == {"block/"}
    assert tape.gradient(y, m.w).numpy().tolist() == [[2, 2], [2, 2]]


# --- layers -----------------------------------------------------------------------------------
def test_dense_is_built_lazily_with_keras_shapes_and_names():
    layer = tl.layers.Dense(3)
    assert layer.kernel is None and layer.variables == ()
    y = layer(np.ones((4, 5), np.float32))
    assert y.shape == (4, 3) and y.dtype == tl.float32
    assert layer.kernel.shape == (5, 3) and layer.bias.shape == (3,)
    assert [v.name for v in layer.trainable_variables] == ["dense/kernel:0", "dense/bias:0"]
    assert np.all(layer.bias.numpy() == 0)
    # y = x @ kernel + bias
    np.testing.assert_allclose(y.numpy(), np.ones((4, 5), np.float32) @ layer.kernel.numpy(), rtol=1e-6)
    assert [tl.layers.Dense(1).name, tl.layers.Dense(1).name, tl.layers.Flatten().name] == [
        "dense_1", "dense_2", "flatten"]
    assert tl.layers.Dense(1, name="out").name == "out"


@pytest.mark.parametrize("activation, fn", [
    ("relu", lambda z: np.maximum(z, 0)), ("sigmoid", lambda z: 1 / (1 + np.exp(-z))), ("tanh", np.tanh),
    ("softmax", lambda z: np.exp(z) / np.exp(z).sum(-1, keepdims=True)), (None, lambda z: z),
    (tl.nn.relu, lambda z: np.maximum(z, 0)),
])
def test_dense_activations(activation, fn):
    tl.random.set_seed(1)
    layer = tl.layers.Dense(4, activation=activation)
    x = np.random.default_rng(0).normal(size=(3, 2)).astype(np.float32)
    y = layer(x)
    z = x @ layer.kernel.numpy() + layer.bias.numpy()
    np.testing.assert_allclose(y.numpy(), fn(z), rtol=1e-5, atol=1e-6)


def test_dense_errors_teach():
    with pytest.raises(ValueError, match="unknown activation 'relux'"):
        tl.layers.Dense(2, activation="relux")
    with pytest.raises(ValueError, match="positive integer"):
        tl.layers.Dense(0)
    layer = tl.layers.Dense(2)
    assert layer(np.zeros((1, 4), np.uint8)).dtype == tl.float32  # (cast, as Keras 3 casts its inputs)
    layer(np.zeros((1, 4), np.float32))
    with pytest.raises(InvalidArgumentError, match=r"built for inputs with 4 features.*\(1, 5\)"):
        layer(np.zeros((1, 5), np.float32))
    with pytest.raises(ValueError, match="Flatten"):
        tl.layers.Dense(2)(np.zeros((4,), np.float32))


def test_dense_casts_float64_inputs_like_keras():
    y = tl.layers.Dense(2)(np.ones((1, 3)))  # float64 numpy data
    assert y.dtype == tl.float32


def test_sequential_flatten_and_layer_scopes_on_the_tape():
    tl.random.set_seed(0)
    model = tl.layers.Sequential([tl.layers.Flatten(), tl.layers.Dense(8, activation="relu"), tl.layers.Dense(3)])
    x = np.random.default_rng(0).random((5, 2, 4)).astype(np.float32)
    with tl.GradientTape() as tape:
        loss = tl.reduce_mean(model(x))
    assert [v.name for v in model.trainable_variables] == [
        "dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0"]
    assert [m.name for m in model.submodules] == ["flatten", "dense", "dense_1"]
    ops_by_scope = [(e.scope, e.op.name) for e in tape.entries]
    # (Flatten's reshape of the input data is not recorded: no gradient can flow into the data)
    assert ops_by_scope == [("dense/", "matmul"), ("dense/", "add"), ("dense/", "relu"),
                            ("dense_1/", "matmul"), ("dense_1/", "add"), ("", "reduce_mean")]
    grads = tape.gradient(loss, model.trainable_variables)
    assert [tuple(g.shape) for g in grads] == [(8, 8), (8,), (8, 3), (3,)]
    assert model.count_params() == 8 * 8 + 8 + 8 * 3 + 3


def test_glorot_uniform_statistics_and_seeding():
    fan_in, fan_out = 600, 400
    tl.random.set_seed(7)  # (before the layer is made: its initializer takes its seed then, as Keras 3's)
    layer = tl.layers.Dense(fan_out)
    layer(np.zeros((1, fan_in), np.float32))
    w = layer.kernel.numpy()
    limit = np.sqrt(6 / (fan_in + fan_out))  # 0.0775
    assert w.dtype == np.float32 and w.shape == (fan_in, fan_out)
    assert np.abs(w).max() <= limit and np.abs(w).max() > 0.999 * limit
    assert abs(w.mean()) < 0.002  # 240,000 draws: the mean's standard error is 0.0001
    np.testing.assert_allclose(w.var(), 2 / (fan_in + fan_out), rtol=0.01)  # U(-l, l) has variance l^2/3
    tl.random.set_seed(7)
    again = tl.layers.Dense(fan_out)
    again(np.zeros((1, fan_in), np.float32))
    assert np.array_equal(again.kernel.numpy(), w)
    tl.random.set_seed(8)
    other = tl.layers.Dense(fan_out)
    other(np.zeros((1, fan_in), np.float32))
    assert not np.array_equal(other.kernel.numpy(), w)


# --- optimizers against real Keras 3 -----------------------------------------------------------
def _run_case(case):
    opt = getattr(tl.optimizers, case["cls"])(**case["kwargs"])
    variables = [tl.Variable(np.array(v, np.float32)) for v in KERAS["init"]]
    none_at = {tuple(p) for p in case.get("none_at", [])}
    trajectory = []
    for step, gs in enumerate(KERAS["grads"]):
        pairs = [(None if (step, k) in none_at else tl.constant(np.array(g, np.float32)), v)
                 for k, (g, v) in enumerate(zip(gs, variables))]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt.apply_gradients(pairs)
        trajectory.append([v.numpy().copy() for v in variables])
    return opt, trajectory


@pytest.mark.parametrize("name", sorted(KERAS["optimizers"]))
def test_optimizer_trajectories_equal_keras(name):
    case = KERAS["optimizers"][name]
    opt, trajectory = _run_case(case)
    assert len(trajectory) == 5
    for step, (ours, theirs) in enumerate(zip(trajectory, case["trajectory"])):
        for k, (a, b) in enumerate(zip(ours, theirs)):
            b = np.array(b, np.float32)
            assert a.dtype == np.float32
            ulps = np.abs(a.astype(np.float64) - b) / np.spacing(np.abs(b))
            assert ulps.max() <= 2, f"{name}: step {step} variable {k} differs from Keras by {ulps.max()} ulp"
    assert opt.iterations == case["iterations"] == 5
    # the trajectory really moves (a wrong rule could not pass by standing still)
    assert not np.allclose(trajectory[-1][0], np.array(KERAS["init"][0], np.float32), atol=1e-3)


def test_sgd_rules_by_hand():
    # plain: w -= lr * g
    w = tl.Variable(1.0)
    tl.optimizers.SGD(0.1).apply_gradients([(tl.constant(2.0), w)])
    assert w.numpy() == np.float32(0.8)
    # momentum 0.9, lr 0.1, g = 1: m1 = -0.1, w = 0.9; m2 = 0.9 * -0.1 - 0.1 = -0.19, w = 0.71
    w, opt = tl.Variable(1.0), tl.optimizers.SGD(0.1, momentum=0.9)
    for _ in range(2):
        opt.apply_gradients([(tl.constant(1.0), w)])
    np.testing.assert_allclose(w.numpy(), 0.71, rtol=1e-6)
    np.testing.assert_allclose(opt.get_slot(w, "momentum"), -0.19, rtol=1e-6)
    # nesterov: w1 = 1 + 0.9 * -0.1 - 0.1 = 0.81; w2 = 0.81 + 0.9 * -0.19 - 0.1 = 0.539
    w, opt = tl.Variable(1.0), tl.optimizers.SGD(0.1, momentum=0.9, nesterov=True)
    opt.apply_gradients([(tl.constant(1.0), w)])
    np.testing.assert_allclose(w.numpy(), 0.81, rtol=1e-6)
    opt.apply_gradients([(tl.constant(1.0), w)])
    np.testing.assert_allclose(w.numpy(), 0.539, rtol=1e-6)


def test_adam_first_step_by_hand():
    # t = 1: m = 0.1 g, v = 0.001 g^2, alpha = lr sqrt(0.001) / 0.1, so w moves by ~lr * sign(g)
    w = tl.Variable([1.0, 1.0, 1.0])
    g = np.array([3.0, -0.5, 1e-9], np.float32)
    tl.optimizers.Adam(0.01).apply_gradients([(tl.constant(g), w)])
    m, v = 0.1 * g.astype(np.float64), 0.001 * g.astype(np.float64) ** 2
    expected = 1 - m * (0.01 * np.sqrt(0.001) / 0.1) / (np.sqrt(v) + 1e-7)
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-6)
    assert w.dtype == tl.float32


def test_apply_gradients_warns_about_none_and_names_the_variables():
    a, b = tl.Variable(1.0, name="a"), tl.Variable(2.0, name="unused")
    opt = tl.optimizers.Adam()
    with pytest.warns(UserWarning, match=r"\['unused:0'\]"):
        opt.apply_gradients([(tl.constant(1.0), a), (None, b)])
    assert b.numpy() == 2.0 and a.numpy() != 1.0 and opt.iterations == 1
    with pytest.raises(ValueError, match=r"no gradients provided for any variable.*\['a:0', 'unused:0'\]"):
        opt.apply_gradients([(None, a), (None, b)])
    assert opt.iterations == 1


def test_apply_gradients_errors_teach():
    w = tl.Variable(np.zeros((3, 2), np.float32), name="dense/kernel")
    opt = tl.optimizers.SGD()
    with pytest.raises(ValueError, match=r"'dense/kernel:0' has shape \(2, 3\) but the variable has shape \(3, 2\)"):
        opt.apply_gradients([(tl.zeros((2, 3)), w)])
    with pytest.raises(TypeError, match="not a tl.Variable"):
        opt.apply_gradients([(tl.constant(1.0), tl.constant(2.0))])
    with pytest.raises(TypeError, match=r"\(gradient, variable\) pairs"):
        opt.apply_gradients([w])
    with pytest.raises(ValueError, match="learning_rate must be a positive number"):
        tl.optimizers.Adam(learning_rate=-1)
    with pytest.raises(ValueError, match="momentum"):
        tl.optimizers.SGD(momentum=1.5)


@pytest.mark.parametrize("make", [lambda: tl.optimizers.SGD(0.1),
                                  lambda: tl.optimizers.SGD(0.1, momentum=0.9),
                                  lambda: tl.optimizers.SGD(0.1, momentum=0.9, nesterov=True),
                                  lambda: tl.optimizers.Adam()], ids=["sgd", "momentum", "nesterov", "adam"])
def test_an_update_leaves_the_values_tapes_recorded_alone(make):
    # optimizers write the new weights into their own step array, never into the old value: the tape's record
    # (what print(tape) and the stepper show) and an array a learner kept keep the weights the ops really saw
    w = tl.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    opt = make()
    for _ in range(3):
        before = w.numpy()
        with tl.GradientTape() as tape:
            loss = tl.reduce_sum(w * w)
        seen = tape.entries[0].values[0]
        grad = tape.gradient(loss, w)
        kept = grad.numpy().copy()
        opt.apply_gradients([(grad, w)])
        np.testing.assert_array_equal(seen, before)  # the recorded input is the old value, unchanged
        np.testing.assert_array_equal(tape.last_backward.entries[0].values[0], before)
        np.testing.assert_array_equal(grad.numpy(), kept)  # the gradient handed in is not overwritten either
        assert not np.array_equal(w.numpy(), before) and w.numpy().dtype == np.float32
    with pytest.raises(ValueError, match="shape mismatch"):  # a step of another shape never broadcasts into w
        w._update("assign_sub", np.ones((4, 2, 3), np.float32), given=True)


def test_float32_stays_float32_even_with_float64_gradients():
    w = tl.Variable([1.0, 2.0])
    for opt in (tl.optimizers.SGD(0.1, momentum=0.5), tl.optimizers.Adam()):
        opt.apply_gradients([(np.array([0.5, 0.25]), w)])  # float64 numpy gradient
        assert w.dtype == tl.float32 and w.numpy().dtype == np.float32


def test_minimize_and_the_tf2_recipe_on_linear_regression():
    # seed 001: W = 5, B = 10, 200 steps of gradient descent with lr 0.01 on y = 5x + 2
    X, Y = tl.datasets.linear_regression()
    W, B = tl.Variable(5.0), tl.Variable(10.0)
    opt = tl.optimizers.SGD(learning_rate=0.01)
    first = None
    for _ in range(200):
        with tl.GradientTape() as tape:
            loss = tl.losses.MeanSquaredError()(Y, X * W + B)
        first = float(loss) if first is None else first
        opt.minimize(loss, [W, B], tape)
    assert 55 < first < 75  # (10 - 2)^2 = 64, give or take the sample's statistics
    assert 2.0 < float(B) < 2.3 and abs(float(W) - 5) < 0.1
    assert float(loss) < 0.1


# --- losses --------------------------------------------------------------------------------------
def test_mean_squared_error_by_hand_and_rank_matching():
    y_true, y_pred = [[1.0, 2.0], [3.0, 4.0]], [[1.0, 1.0], [1.0, 1.0]]
    assert float(tl.losses.MeanSquaredError()(y_true, y_pred)) == pytest.approx((0 + 1 + 4 + 9) / 4)
    per_example = tl.losses.mean_squared_error(y_true, y_pred).numpy()
    np.testing.assert_allclose(per_example, [0.5, 6.5])
    assert float(tl.losses.MeanSquaredError(reduction="sum")(y_true, y_pred)) == pytest.approx(7.0)
    # (n,) against (n, 1) lines up as Keras does instead of broadcasting to (n, n)
    assert float(tl.losses.MeanSquaredError()([1.0, 2.0, 3.0], [[1.0], [2.0], [5.0]])) == pytest.approx(4 / 3)
    with pytest.raises(InvalidArgumentError, match=r"y_true has shape \(3,\) but y_pred has shape \(2,\)"):
        tl.losses.MeanSquaredError()([1.0, 2.0, 3.0], [1.0, 2.0])
    with pytest.raises(TypeError, match="swap the arguments"):
        tl.losses.MeanSquaredError()([1.0], tl.constant([1]))


def test_sparse_categorical_crossentropy_by_hand():
    logits = np.array([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3]], np.float32)
    labels = np.array([0, 2])
    z = logits.astype(np.float64)
    expected = np.log(np.exp(z).sum(1)) - z[[0, 1], labels]  # -log softmax[label]
    loss = tl.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, logits)
    assert loss.dtype == tl.float32
    assert float(loss) == pytest.approx(expected.mean(), rel=1e-6)
    probs = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    from_probs = tl.losses.SparseCategoricalCrossentropy()(labels, probs.astype(np.float32))
    assert float(from_probs) == pytest.approx(expected.mean(), rel=1e-5)
    per_example = tl.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")(labels, logits)
    np.testing.assert_allclose(per_example.numpy(), expected, rtol=1e-6)


def test_sparse_categorical_crossentropy_is_stable_and_clips():
    huge = tl.constant([[1000.0, -1000.0, 999.0]])
    with tl.GradientTape() as tape:
        tape.watch(huge)
        loss = tl.losses.SparseCategoricalCrossentropy(from_logits=True)([2], huge)
    assert float(loss) == pytest.approx(1 + np.log1p(np.exp(-1)), rel=1e-6)  # log(e^1000 + e^999) - 999
    assert np.all(np.isfinite(tape.gradient(loss, huge).numpy()))
    # a probability of exactly 0 for the true class: clipped to 1e-7, so the loss is large but finite
    p = tl.losses.SparseCategoricalCrossentropy()([0], [[0.0, 1.0]])
    expected = -np.log(np.float32(1e-7)) + np.log(np.float32(1e-7) + np.float32(1 - 1e-7))
    assert float(p) == pytest.approx(expected, rel=1e-5) and np.isfinite(float(p))


@pytest.mark.parametrize("name", sorted(KERAS["losses"]))
def test_losses_and_their_gradients_equal_keras(name):
    case = KERAS["losses"][name]
    loss_fn = {"mse": tl.losses.MeanSquaredError(), "mse_rank": tl.losses.MeanSquaredError(),
               "scce_logits": tl.losses.SparseCategoricalCrossentropy(from_logits=True),
               "scce_probs": tl.losses.SparseCategoricalCrossentropy()}[name]
    y_pred = tl.constant(np.array(case["y_pred"], np.float32))
    with tl.GradientTape() as tape:
        tape.watch(y_pred)
        loss = loss_fn(np.array(case["y_true"], case["y_true_dtype"]), y_pred)
    assert float(loss) == pytest.approx(case["loss"], rel=2e-7)
    np.testing.assert_allclose(tape.gradient(loss, y_pred).numpy(), np.array(case["grad"]), rtol=1e-5, atol=1e-7)


def test_sparse_categorical_crossentropy_errors_teach():
    loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True)
    logits = np.zeros((3, 10), np.float32)
    with pytest.raises(InvalidArgumentError, match=r"label value of 10 which is outside the valid range of \[0, 10\)"):
        loss_fn([1, 10, 2], logits)
    with pytest.raises(InvalidArgumentError, match="outside the valid range"):
        loss_fn([-1, 0, 2], logits)
    with np.errstate(all="raise"), pytest.raises(InvalidArgumentError, match="label value of 12"):
        loss_fn([0, 12, 1], np.array([[np.inf] * 10] * 3, np.float32))  # labels are checked before any arithmetic
    with pytest.raises(InvalidArgumentError, match="one-hot"):
        loss_fn(np.eye(10, dtype=np.float32)[[1, 2, 3]], logits)
    with pytest.raises(InvalidArgumentError, match=r"expected one integer label per row of y_pred, i.e. shape \(3,\)"):
        loss_fn([1, 2], logits)
    with pytest.raises(InvalidArgumentError, match="the value 1.5"):
        loss_fn([1.5, 2.0, 0.0], logits)
    assert float(loss_fn(np.array([[1.0], [2.0], [0.0]]), logits)) == pytest.approx(np.log(10), rel=1e-6)
    with pytest.raises(ValueError, match="reduction"):
        tl.losses.SparseCategoricalCrossentropy(reduction="mean-ish")


# --- metrics and tl.keras ----------------------------------------------------------------------
def test_accuracy_helpers():
    scores = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]])
    assert tl.metrics.accuracy([0, 1, 1, 1], scores) == 0.75
    assert tl.metrics.accuracy(np.array([[0], [1], [0], [1]]), tl.constant(scores)) == 1.0
    with pytest.raises(ValueError, match="one integer label per row"):
        tl.metrics.accuracy([0, 1], scores)
    acc = tl.metrics.SparseCategoricalAccuracy()
    acc.update_state([0, 1], scores[:2])
    acc.update_state([0, 0], scores[2:])
    assert acc.result() == 0.75
    mean = tl.metrics.Mean()
    mean.update_state(1.0)
    mean.update_state(tl.constant([2.0, 6.0]))
    assert mean.result() == 3.0


def test_keras_namespace_matches_tf_spelling():
    model = tl.keras.Sequential([tl.keras.layers.Dense(4, activation="relu"), tl.keras.layers.Dense(2)])
    assert isinstance(model, tl.layers.Sequential)
    assert isinstance(tl.keras.optimizers.Adam(), tl.optimizers.Adam)
    assert isinstance(tl.keras.losses.SparseCategoricalCrossentropy(from_logits=True), tl.losses.Loss)
    assert tl.keras.datasets.mnist.load_data is tl.datasets.mnist.load_data
    assert tl.keras.backend.epsilon() == 1e-7


# --- the acceptance run ------------------------------------------------------------------------
def test_mlp_with_adam_reaches_92_percent_on_the_shipped_mnist_sample(monkeypatch, tmp_path, record_property):
    monkeypatch.delenv("TAPELAB_MNIST", raising=False)
    monkeypatch.setenv("TAPELAB_DATA_DIR", str(tmp_path))  # no cached full set: the shipped sample is used
    (x_train, y_train), (x_test, y_test) = tl.datasets.mnist.load_data(verbose=False)
    assert x_train.shape == (8000, 28, 28) and x_test.shape == (2000, 28, 28)
    x_train = x_train.reshape(-1, 784).astype(np.float32) / 255
    x_test = x_test.reshape(-1, 784).astype(np.float32) / 255

    start = time.perf_counter()
    tl.random.set_seed(0)
    model = tl.keras.Sequential([tl.keras.layers.Dense(128, activation="relu"), tl.keras.layers.Dense(10)])
    optimizer = tl.keras.optimizers.Adam()
    loss_fn = tl.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    history = []
    for epoch in range(5):
        for x, y in tl.datasets.batches(x_train, y_train, batch_size=32, seed=epoch):
            with tl.GradientTape() as tape:
                loss = loss_fn(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        history.append(tl.metrics.evaluate_accuracy(model, x_test, y_test))
    seconds = time.perf_counter() - start
    record_property("mnist_sample_test_accuracy", history[-1])
    record_property("mnist_sample_seconds", round(seconds, 2))
    print(f"\nMNIST sample, 784-128-10 ReLU MLP, Adam, 5 epochs: test accuracy per epoch {history}, {seconds:.1f} s")
    assert max(history) >= 0.92, history
    assert history[-1] >= 0.92, history
    assert seconds < 60
    assert all(v.dtype == tl.float32 for v in model.trainable_variables)
    assert optimizer.iterations == 5 * 250


@pytest.mark.parametrize("module", ["module", "keras.layers", "keras.models", "keras.optimizers", "keras.losses",
                                    "keras.metrics", "data", "datasets", "datasets.mnist"])
def test_docstring_examples_run(module, monkeypatch, tmp_path):
    import doctest
    import importlib

    monkeypatch.delenv("TAPELAB_MNIST", raising=False)
    monkeypatch.setenv("TAPELAB_DATA_DIR", str(tmp_path))
    mod = importlib.import_module(f"tapelab.{module}")
    result = doctest.testmod(mod, extraglobs={"tl": tl, "np": np}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
