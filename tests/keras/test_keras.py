"""Keras models (Sequential and subclassed), compile / fit / evaluate / predict, saved weights, and tf.data.

Numbers against real Keras are in test_tf_contract.py (layers, losses, metrics, fit) and here for weights
saved by Keras (``fixtures/keras_cnn.weights.h5``, made by ``fixtures/make_keras_reference.py``).
"""

import json
from pathlib import Path

import numpy as np
import pytest

import tapelab as tl
from tapelab.engine.errors import InvalidArgumentError

FIXTURES = Path(__file__).parents[1] / "fixtures"
keras = tl.keras


def small_cnn():
    return keras.Sequential([keras.Input((6, 6, 1)), keras.layers.Conv2D(3, 3, activation="relu"),
                             keras.layers.MaxPooling2D(), keras.layers.Flatten(), keras.layers.Dense(4),
                             keras.layers.BatchNormalization(), keras.layers.Dense(2)])


def toy_data(n=10, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    return x, (x.sum(axis=1) > 0).astype(np.int64)


def mlp(seed=0):
    tl.random.set_seed(seed)
    return keras.Sequential([keras.layers.Dense(8, activation="tanh", input_shape=(3,)), keras.layers.Dense(2)])


# --- weights ---------------------------------------------------------------------------------------------
def test_weights_saved_by_keras_load_and_predict_the_same():
    reference = json.loads((FIXTURES / "keras_reference.json").read_text())["saved_weights"]
    model = small_cnn()
    model.load_weights(FIXTURES / reference["file"])
    np.testing.assert_allclose(model.predict(np.asarray(reference["x"], np.float32), verbose=0),
                               reference["predictions"], rtol=1e-5, atol=1e-5)


def test_save_weights_writes_keras_layout_and_round_trips(tmp_path):
    h5py = pytest.importorskip("h5py")
    model = small_cnn()
    model.save_weights(tmp_path / "cnn.weights.h5")
    keys = lambda f: sorted(k for k in _all_keys(f))  # noqa: E731
    with h5py.File(tmp_path / "cnn.weights.h5") as mine, h5py.File(FIXTURES / "keras_cnn.weights.h5") as theirs:
        assert keys(mine) == keys(theirs)  # the same groups and datasets as Keras 3 writes
    for name in ("cnn.weights.h5", "cnn.npz"):
        model.save_weights(tmp_path / name)
        fresh = small_cnn()
        fresh.load_weights(tmp_path / name)
        for a, b in zip(model.get_weights(), fresh.get_weights()):
            np.testing.assert_array_equal(a, b)


def _all_keys(f):
    found = []
    f.visit(found.append)
    return found


def test_load_weights_into_another_architecture_says_so(tmp_path):
    small_cnn().save_weights(tmp_path / "cnn.npz")
    with pytest.raises(ValueError, match="load into a model built like the one that was saved"):
        mlp().load_weights(tmp_path / "cnn.npz")
    unbuilt = keras.Sequential([keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="no weights yet"):
        unbuilt.load_weights(tmp_path / "cnn.npz")
    with pytest.raises(FileNotFoundError):
        small_cnn().load_weights(tmp_path / "missing.weights.h5")


def test_weights_are_ordered_layer_by_layer_as_keras():
    model = keras.Sequential([keras.layers.BatchNormalization(input_shape=(3,)), keras.layers.Dense(2)])
    assert [w.name.split("/")[1] for w in model.weights] == [
        "gamma:0", "beta:0", "moving_mean:0", "moving_variance:0", "kernel:0", "bias:0"]


# --- fit is the tape loop ---------------------------------------------------------------------------------
def test_fit_runs_the_same_steps_as_a_hand_written_tape_loop():
    x, y = toy_data()
    model = mlp()
    model.compile(optimizer=keras.optimizers.SGD(0.1),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    history = model.fit(x, y, batch_size=4, epochs=3, shuffle=False, verbose=0)

    by_hand = mlp()
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = keras.optimizers.SGD(0.1)
    for _ in range(3):
        for start in range(0, len(x), 4):
            with tl.GradientTape() as tape:
                loss = loss_fn(y[start:start + 4], by_hand(x[start:start + 4], training=True))
            grads = tape.gradient(loss, by_hand.trainable_variables)
            optimizer.apply_gradients(zip(grads, by_hand.trainable_variables))
    for a, b in zip(model.get_weights(), by_hand.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert sorted(history.history) == ["accuracy", "loss"] and len(history.history["loss"]) == 3
    assert history.epoch == [0, 1, 2]
    # the last step's tape is kept for drawing, its ops grouped by layer
    scopes = [e.scope for e in model.last_tape.last_backward.entries]
    assert scopes[:3] == ["dense/"] * 3 and scopes[3:5] == ["dense_1/"] * 2  # matmul, add, tanh; matmul, add
    assert 'label="dense_1/"' in tl.viz.to_dot(model.last_tape)


def test_fit_on_a_dataset_with_validation_and_the_progress_line(capsys):
    x, y = toy_data(20)
    model = mlp()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    train = tl.data.Dataset.from_tensor_slices((x, y)).shuffle(20, seed=0).batch(5)
    history = model.fit(train, epochs=2, validation_data=(x[:6], y[:6]), verbose=1)
    assert sorted(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    err = capsys.readouterr().err
    assert "Epoch 2/2" in err and "4/4" in err and "loss=" in err and "accuracy=" in err  # tqdm's Keras-like bar
    loss, accuracy = model.evaluate(x, y, verbose=0)
    assert 0 <= accuracy <= 1 and loss > 0
    assert model.predict(tl.data.Dataset.from_tensor_slices(x).batch(7), verbose=0).shape == (20, 2)


def test_fit_draws_the_live_loss_curve(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x, y = toy_data()
    model = mlp()
    model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, epochs=1, verbose=0, plot=True)
    assert (tmp_path / "loss_curve.png").stat().st_size > 1000  # outside a notebook the curve is saved


def test_fits_curves_are_each_steps_loss_and_the_running_mean_named_as_such(tmp_path, monkeypatch):
    """The plot's main curve is the loss of each step; the bar's figure (Keras's mean since the epoch began, which
    starts again at every epoch) is a second curve that says what it is; the validation loss comes once an epoch."""
    from tapelab.keras.callbacks import RUNNING_MEAN, STEP_LOSS, VAL_LOSS

    monkeypatch.chdir(tmp_path)
    x, y = toy_data(40)
    model = mlp()
    model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    curves = model.fit(x, y, batch_size=10, epochs=2, verbose=0, plot=True, validation_data=(x[:8], y[:8]),
                       shuffle=False).loss_plot.history
    assert set(curves) == {STEP_LOSS, RUNNING_MEAN, VAL_LOSS}
    steps, losses = curves[STEP_LOSS]
    assert steps == [1, 2, 3, 4, 5, 6, 7, 8]
    _, means = curves[RUNNING_MEAN]
    for epoch in (0, 4):  # within an epoch, the mean of its steps so far; a new epoch starts again
        np.testing.assert_allclose(means[epoch:epoch + 4], np.cumsum(losses[epoch:epoch + 4]) / np.arange(1, 5),
                                   rtol=1e-5)
    assert curves[VAL_LOSS][0] == [4, 8]
    assert model.fit(x, y, epochs=1, verbose=0).loss_plot is None


def test_predict_and_evaluate_do_not_train():
    x, y = toy_data()
    model = mlp()
    model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    before = model.get_weights()
    model.evaluate(x, y, verbose=0)
    model.predict(x, verbose=0)
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)


# --- models ---------------------------------------------------------------------------------------------
def test_subclassed_model_tracks_layers_in_assignment_order_and_passes_training():
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(16, activation="relu")
            self.dropout = keras.layers.Dropout(0.5)
            self.out = keras.layers.Dense(2)

        def call(self, x, training=None):
            return self.out(self.dropout(self.dense(x), training=training))

    tl.random.set_seed(0)
    net = Net()
    x = np.ones((4, 3), np.float32)
    np.testing.assert_array_equal(net(x).numpy(), net(x, training=False).numpy())  # no dropout by default
    tl.random.set_seed(1)
    a = net(x, training=True).numpy()
    tl.random.set_seed(1)
    np.testing.assert_array_equal(a, net(x, training=True).numpy())  # seeded through tl.random
    assert not np.array_equal(a, net(x).numpy())
    assert [layer.name.rstrip("_0123456789") for layer in net.layers] == ["dense", "dropout", "dense"]
    assert len(net.trainable_variables) == 4


def test_sequential_with_input_is_built_at_once_and_summarised(capsys):
    keras.backend.clear_session()
    model = keras.Sequential([keras.Input((28, 28, 1)), keras.layers.Conv2D(32, 3, activation="relu"),
                              keras.layers.MaxPooling2D(), keras.layers.Flatten(), keras.layers.Dense(10)])
    model.summary()
    text = capsys.readouterr().out
    assert 'Model: "sequential"' in text and "conv2d (Conv2D)" in text and "(None, 26, 26, 32)" in text
    assert "(None, 13, 13, 32)" in text and "Total params: 54,410" in text
    model.add(keras.layers.Softmax())
    assert model.output_shape == (None, 10)
    with pytest.raises(TypeError, match="expected a layer"):
        model.add("dense")


def test_model_errors_teach():
    x, y = toy_data()
    model = mlp()
    with pytest.raises(RuntimeError, match=r"not compiled.*model.compile"):
        model.fit(x, y)
    model.compile(optimizer="adam")  # (Keras 3 allows it: the model's own losses would be trained on)
    with pytest.raises(ValueError, match=r"No loss to compute. Provide a `loss` argument in `compile\(\)`"):
        model.fit(x, y, verbose=0)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match=r"x has 10 examples \(shape \(10, 3\)\) but y has 9 labels.*one label per"):
        model.fit(x, y[:9])
    with pytest.raises(ValueError, match="give the labels y"):
        model.fit(x)
    data = tl.data.Dataset.from_tensor_slices((x, y)).batch(2)
    with pytest.raises(ValueError, match="drop batch_size"):
        model.fit(data, batch_size=2)
    with pytest.raises(ValueError, match="y must not be given"):
        model.fit(data, y)


def test_conv2d_on_channels_first_images_says_to_move_the_channels():
    layer = keras.layers.Conv2D(8, 3)
    with pytest.raises(ValueError) as err:
        layer(np.zeros((2, 1, 28, 28), np.float32))  # NCHW, as PyTorch keeps images
    message = str(err.value)
    assert layer.name in message and "(2, 1, 28, 28)" in message and "tl.transpose(x, [0, 2, 3, 1])" in message
    with pytest.raises(ValueError, match=r"x\[\.\.\., tl.newaxis\]"):
        keras.layers.Conv2D(8, 3)(np.zeros((2, 28, 28), np.float32))


def test_wrong_input_shape_names_the_layer_and_both_shapes():
    model = keras.Sequential([keras.layers.Flatten(input_shape=(28, 28)), keras.layers.Dense(10)])
    with pytest.raises(ValueError) as err:
        model(np.zeros((2, 32, 32), np.float32))
    message = str(err.value)
    assert "flatten" in message and "input_shape=(28, 28)" in message and "(32, 32)" in message


def test_metric_fed_mismatched_shapes_names_both():
    accuracy = keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
    with pytest.raises(InvalidArgumentError) as err:
        accuracy([0, 1, 2], np.zeros((4, 10), np.float32))
    message = str(err.value)
    assert "train_accuracy" in message and "(3,)" in message and "(4, 10)" in message and "(y_true, y_pred)" in message


def test_metrics_are_float32_tensors_and_reset():
    mean = keras.metrics.Mean(name="train_loss")
    assert mean(2.0).dtype == tl.float32 and float(mean(4.0)) == 3.0
    mean.reset_state()
    assert float(mean.result()) == 0.0


# --- tf.data ---------------------------------------------------------------------------------------------
def test_dataset_batch_zero_teaches():
    with pytest.raises(InvalidArgumentError, match=r"batch_size must be greater than zero, got 0.*\.batch\(32\)"):
        tl.data.Dataset.range(3).batch(0)


def test_dataset_from_slices_of_unequal_lengths_names_the_shapes():
    with pytest.raises(ValueError, match=r"\(5, 2\).*\(4,\).*row by row"):
        tl.data.Dataset.from_tensor_slices((np.zeros((5, 2)), np.zeros(4)))


def test_shuffle_is_seeded_reshuffles_each_pass_and_keeps_pairs():
    x = np.arange(100)
    ds = tl.data.Dataset.from_tensor_slices((x, x * 2)).shuffle(100, seed=3)
    first = [int(a) for a, _ in ds]
    second = [int(a) for a, _ in ds]
    assert sorted(first) == list(range(100)) and first != second  # a new order each pass
    again = tl.data.Dataset.from_tensor_slices((x, x * 2)).shuffle(100, seed=3)
    assert [int(a) for a, _ in again] == first  # the same seed, the same orders
    assert all(int(b) == 2 * int(a) for a, b in ds)
    fixed = tl.data.Dataset.range(10).shuffle(10, seed=1, reshuffle_each_iteration=False)
    assert list(fixed.as_numpy_iterator()) == list(fixed.as_numpy_iterator())


def test_shuffle_with_a_small_buffer_only_mixes_neighbours():
    order = [int(a) for a in tl.data.Dataset.range(1000).shuffle(10, seed=0)]
    assert sorted(order) == list(range(1000))
    assert order[0] < 10  # the first output comes from the first buffer_size elements
    assert all(v - k < 10 for k, v in enumerate(order))  # nothing can jump ahead by more than the buffer


def test_dataset_iterates_tensors_and_keeps_dtypes():
    images = np.zeros((5, 28, 28, 1), np.float32)
    labels = np.arange(5, dtype=np.uint8)
    batches = list(tl.data.Dataset.from_tensor_slices((images, labels)).batch(2))
    assert [tuple(b[0].shape) for b in batches] == [(2, 28, 28, 1), (2, 28, 28, 1), (1, 28, 28, 1)]
    assert batches[0][0].dtype == tl.float32 and batches[0][1].dtype == tl.uint8


# --- found in review: each a case Keras or tf.data handles ---------------------------------------------------------
class Blocks(keras.Model):
    """Layers in attributes and in a list (the list filled after it was assigned, as in a loop)."""

    def __init__(self):
        super().__init__()
        self.conv1 = keras.layers.Conv2D(2, 3)
        self.flat = keras.layers.Flatten()
        self.blocks = []
        for _ in range(2):
            self.blocks.append(keras.layers.Dense(3))
        self.out = keras.layers.Dense(2)

    def call(self, x):
        x = self.flat(self.conv1(x))
        for block in self.blocks:
            x = block(x)
        return self.out(x)


@pytest.mark.parametrize("name", ["subclassed", "nested"])
def test_keras_weight_files_of_subclassed_and_nested_models_load(name, tmp_path):
    h5py = pytest.importorskip("h5py")
    reference = json.loads((FIXTURES / "keras_reference.json").read_text())["saved_weights"]
    x = np.asarray(reference["x"], np.float32)
    if name == "subclassed":
        model = Blocks()
        model(x)
    else:  # a trained model inside a model: Keras's file also holds the optimizer's state, which is skipped
        model = keras.Sequential([keras.Sequential([keras.Input((6, 6, 1)), keras.layers.Flatten(),
                                                    keras.layers.Dense(4)]), keras.layers.Dense(2)])
    assert len(model.layers) == (5 if name == "subclassed" else 2) and len(model.weights) == (8 if name ==
                                                                                                "subclassed" else 4)
    model.load_weights(FIXTURES / reference[name]["file"])
    np.testing.assert_allclose(model.predict(x, verbose=0), reference[name]["predictions"], rtol=1e-5, atol=1e-5)
    model.save_weights(tmp_path / "mine.weights.h5")  # and tapelab writes the groups Keras wrote
    with h5py.File(tmp_path / "mine.weights.h5") as mine, h5py.File(FIXTURES / reference[name]["file"]) as theirs:
        assert sorted(_all_keys(mine)) == sorted(k for k in _all_keys(theirs) if not k.startswith("optimizer"))


def test_a_frozen_layer_is_not_trained():
    x, y = toy_data()
    model = mlp()
    model.layers[0].trainable = False
    assert len(model.trainable_variables) == 2 and len(model.non_trainable_variables) == 2
    frozen = model.layers[0].get_weights()
    model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, epochs=1, verbose=0)
    for a, b in zip(frozen, model.layers[0].get_weights()):
        np.testing.assert_array_equal(a, b)


def test_fit_edge_cases():
    x, y = toy_data(12)
    model = mlp()
    model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy, metrics=["accuracy"])
    with pytest.raises(ValueError, match="no batches to train on"):
        model.fit(x[:0], y[:0], verbose=0)
    val = tl.data.Dataset.from_tensor_slices((x, y)).batch(5)
    history = model.fit(x, y, batch_size=4, validation_data=val, verbose=0)  # batch_size is for x, not val
    assert "val_loss" in history.history
    seen = []
    model.train_step = lambda data: seen.append(int(data[1][0])) or {"loss": 0.0}
    model.fit(tl.data.Dataset.range(6).map(lambda i: (tl.zeros((1, 3)), tl.reshape(i, (1,)))), epochs=3,
              steps_per_epoch=2, verbose=0)
    assert seen == [0, 1, 2, 3, 4, 5]  # each epoch goes on where the last one stopped
    del model.train_step
    with pytest.raises(ValueError, match=r"pair \(x, y\).*from_tensor_slices\(\(x, y\)\)"):
        model.fit(tl.data.Dataset.from_tensor_slices(x).batch(4), verbose=0)


def test_fit_verbose_2_prints_a_line_per_epoch(capsys):
    x, y = toy_data()
    model = mlp()
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["sparse_categorical_crossentropy"])
    model.layers[-1].activation = tl.keras.activations.softmax
    model.fit(x, y, epochs=2, verbose=2)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" - ")[0] for line in lines] == ["Epoch 1/2", "Epoch 2/2"]
    assert "sparse_categorical_crossentropy: " in lines[0]  # a loss by name, as a metric


def test_metrics_inside_a_traced_function_update_reset_and_read_on_every_call():
    mean = keras.metrics.Mean()

    @tl.function
    def add(v):
        mean.update_state(v)
        return mean.result()

    assert [float(add(tl.constant(v))) for v in (1.0, 3.0, 5.0)] == [1.0, 2.0, 3.0]

    @tl.function
    def restart(v):
        mean.reset_state()
        mean.update_state(v)
        return mean.result()

    assert float(restart(tl.constant(2.0))) == 2.0 and float(restart(tl.constant(3.0))) == 3.0


def test_metric_sample_weights_count_per_example():
    mean = keras.metrics.Mean()
    mean.update_state([[1.0, 2.0], [3.0, 4.0]], sample_weight=[1.0, 0.0])
    assert float(mean.result()) == 1.5  # Keras: each row's mean, weighted


def test_binary_labels_of_shape_batch_fit_one_output():
    x, y = toy_data()
    tl.random.set_seed(0)
    model = keras.Sequential([keras.layers.Dense(1, activation="sigmoid", input_shape=(3,))])
    model.compile(optimizer="sgd", loss="binary_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y.astype(np.float32), epochs=1, verbose=0)
    assert 0 <= history.history["accuracy"][0] <= 1


def test_dropout_draws_a_new_mask_each_call_also_seeded_and_traced():
    x = tl.ones((1, 200))
    layer = keras.layers.Dropout(0.5, seed=1)
    a, b = layer(x, training=True).numpy(), layer(x, training=True).numpy()
    assert not np.array_equal(a, b)
    again = keras.layers.Dropout(0.5, seed=1)
    np.testing.assert_array_equal(again(x, training=True).numpy(), a)  # the same seed, the same series
    traced = tl.function(lambda t: tl.nn.dropout(t, 0.5))
    assert not np.array_equal(traced(x).numpy(), traced(x).numpy())
    half = keras.layers.Dropout(0.5, noise_shape=(None, 1))(tl.ones((4, 3)), training=True).numpy()
    assert all(len(set(row)) == 1 for row in half)  # one draw per row, spread along it


def test_layer_call_default_for_training_is_the_signature_s():
    class AlwaysTraining(keras.layers.Layer):
        def call(self, inputs, training=True):
            return inputs * (2.0 if training else 1.0)

    assert float(AlwaysTraining()(tl.ones((1, 1)))[0, 0]) == 2.0


def test_dataset_copies_its_data_and_element_spec_has_no_side_effect():
    x = np.arange(6.0)
    ds = tl.data.Dataset.from_tensor_slices(x)
    x *= 0
    assert [float(v) for v in ds] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert tl.data.Dataset.range(7).batch(3, drop_remainder=True).element_spec.shape == (3,)
    assert tl.data.Dataset.range(7).batch(3).prefetch(1).element_spec.shape == (None,)
    shuffled = tl.data.Dataset.range(10).shuffle(10, seed=4)
    twin = tl.data.Dataset.range(10).shuffle(10, seed=4)
    assert shuffled.element_spec.shape == ()  # (looking at it draws no shuffle)
    assert list(shuffled.as_numpy_iterator()) == list(twin.as_numpy_iterator())
    assert list(tl.data.Dataset.from_tensor_slices(np.zeros((0, 3))).repeat()) == []
    with pytest.raises(ValueError, match="no batch axis"):
        list(tl.data.Dataset.range(3).unbatch())


def test_models_hold_functions_shared_layers_and_built_inner_models():
    shared = keras.layers.Dense(3)
    model = keras.Sequential([keras.Input((3,)), shared, lambda t: t * 2.0, shared])
    assert len(model.weights) == 2  # one layer used twice: its weights once
    model.summary(print_fn=lambda text: None)  # a plain function among the layers
    inner = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4)])
    assert keras.Sequential([inner, keras.layers.Softmax()]).built
    np.testing.assert_allclose(keras.layers.Dense(2)([[1.0, 2.0, 3.0]]).shape, (1, 2))  # a nested list as input


def test_fit_builds_an_unbuilt_model_on_its_first_step():
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(2)

        def call(self, x):
            return self.dense(x)

    x, y = toy_data(4)
    net = Net()
    net.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    net.fit(x, y, batch_size=4, verbose=0)
    assert net.optimizer.iterations == 1 and len(net.trainable_variables) == 2


def test_a_model_s_weights_are_its_variables_also_those_held_in_attributes():
    """weights, get_weights/set_weights and save_weights agree on which Variables a model has (see
    docs/differences.md: Keras 3 tracks only its own variables; tapelab has one kind)."""

    class Scaled(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1)
            self.scale = tl.Variable(2.0)

        def call(self, x):
            return self.dense(x) * self.scale

    model = Scaled()
    model(tl.zeros((1, 2)))
    assert {id(w) for w in model.weights} == {id(v) for v in model.variables} and len(model.weights) == 3
    values = model.get_weights()
    values[[w.name for w in model.weights].index(model.scale.name)] = np.float32(5.0)
    model.set_weights(values)
    assert float(model.scale) == 5.0
