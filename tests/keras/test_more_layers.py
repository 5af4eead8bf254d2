"""Embedding, LSTM, UpSampling2D, the 1-D global poolings and Conv1D (issue 29) against real Keras 3: each program
of ``fixtures/make_keras_more_layers.py`` runs here with tapelab and must give what Keras gave (outputs, weight
shapes, the gradients of a loss with respect to the inputs and every weight; the same exception type), except where
tapelab deliberately refuses (``REFUSED``, each with its reason). Then what the fixture cannot show: gradients
against finite differences, the name scopes on the tape, training, and the errors' words."""


import numpy as np
import pytest

import tapelab as tl
from tests.fixtures import make_keras_more_layers as programs
from tests.keras import keras_fixture

keras = tl.keras
CASES = keras_fixture.cases("keras_more_layers")

# Where Keras computes something and tapelab raises instead, on purpose: the error type tapelab raises, and why.
REFUSED = {
    "embedding_negative_id": ("InvalidArgumentError", "Keras's ops.take counts -1 from the end of the table; an id "
                              "is never negative, so tapelab says so (as tf.gather does on CPU)"),
    "embedding_fractional_float_ids": ("TypeError", "Keras casts 1.5 to the id 1 without a word; tapelab accepts "
                                       "float ids only when they are whole numbers"),
    "embedding_mask_zero_with_padding_into_gru": ("UnsupportedError", "Keras's GRU skips the masked (padded) steps; "
                                                  "tapelab leaves masking out and says so"),
    "upsampling2d_bilinear": ("UnsupportedError", "tapelab's UpSampling2D repeats pixels (nearest) only"),
    "conv1d_dilated": ("UnsupportedError", "tapelab's conv2d op has no dilation"),
}


@pytest.mark.parametrize("case_id", list(CASES))
def test_matches_keras(case_id):
    refused = REFUSED[case_id][0] if case_id in REFUSED else None
    keras_fixture.check(CASES[case_id], programs, refused, abs=2e-5)


def test_fixture_is_current_with_generator():
    keras_fixture.assert_current(CASES, programs)
    assert set(REFUSED) <= set(CASES)


def _scopes(tape):
    return [(e.op.name, e.scope) for e in tape.entries]


# --- Embedding ----------------------------------------------------------------------------------------------------
def test_embedding_is_one_gather_and_its_gradient_adds_into_the_picked_rows():
    tl.random.set_seed(0)
    layer = keras.layers.Embedding(6, 3)
    ids = tl.constant([[1, 4, 4], [0, 4, 2]])
    with tl.GradientTape() as tape:
        out = layer(ids)
        loss = tl.reduce_sum(out * tl.constant([1.0, 2.0, 3.0]))
    assert _scopes(tape)[0] == ("gather", "embedding/")
    grad = tape.gradient(loss, layer.embeddings)
    expected = np.zeros((6, 3), np.float32)
    for i in ids.numpy().ravel():
        expected[i] += [1.0, 2.0, 3.0]  # id 4, picked three times, gets three times the gradient
    np.testing.assert_array_equal(tl.convert_to_tensor(grad).numpy(), expected)
    np.testing.assert_array_equal(out.numpy(), layer.embeddings.numpy()[ids.numpy()])


def test_embedding_gradient_matches_finite_differences():
    ids = np.array([[1, 4, 4], [0, 4, 2]])
    table = np.random.default_rng(0).standard_normal((6, 3))

    def f(table):
        return tl.sin(tl.gather(table, ids)) * 2.0

    check = tl.check_gradients(f, table)
    assert check.ok, check

    layer = keras.layers.Embedding(6, 3, dtype="float64")
    layer.build(None)
    layer.embeddings.assign(table)
    with tl.GradientTape() as tape:
        loss = tl.reduce_sum(f(layer.embeddings))
    by_layer = tl.GradientTape()
    with by_layer:
        loss_layer = tl.reduce_sum(tl.sin(layer(ids)) * 2.0)
    np.testing.assert_allclose(tl.convert_to_tensor(tape.gradient(loss, layer.embeddings)).numpy(),
                               tl.convert_to_tensor(by_layer.gradient(loss_layer, layer.embeddings)).numpy())


def test_a_small_text_model_with_an_embedding_trains():
    tl.random.set_seed(0)
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 10, (64, 5))
    y = (ids == 3).any(axis=1).astype(np.float32)[:, None]  # does the sequence hold the id 3?
    model = keras.Sequential([keras.Input((5,), dtype="int32"), keras.layers.Embedding(10, 4),
                              keras.layers.Flatten(), keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="binary_crossentropy")
    history = model.fit(ids, y, epochs=20, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]


@pytest.mark.parametrize("call, error, words", [
    (lambda: keras.layers.Embedding(5, 2)(np.array([[1, 5]])), tl.errors.InvalidArgumentError,
     ["id 5", "not in [0, 5)", "input_dim=5", "largest id + 1"]),
    (lambda: keras.layers.Embedding(5, 2)(np.array([[0.5, 1.0]])), TypeError,
     ["integer ids", "0.5", "not a whole number", "astype('int32')", "Dense"]),
    (lambda: keras.layers.Embedding(5, 2)(np.array([[True]])), TypeError, ["integer ids", "tl.cast"]),
    (lambda: keras.layers.Embedding(5, 2, mask_zero=True)(np.array([[0, 3]])), tl.errors.UnsupportedError,
     ["mask_zero=True", "contain 0", "skip the padded steps", "mask_zero=False"]),
    (lambda: keras.layers.Embedding(0, 2), ValueError, ["input_dim must be a positive integer"]),
])
def test_embedding_mistakes_are_explained(call, error, words):
    with pytest.raises(error) as raised:
        call()
    for word in words:
        assert word in str(raised.value), (word, str(raised.value))


def test_embedding_mask_zero_gives_keras_s_mask_and_builds_in_a_model():
    layer = keras.layers.Embedding(5, 2, mask_zero=True)
    np.testing.assert_array_equal(layer.compute_mask(np.array([[0, 3, 1]])).numpy(), [[False, True, True]])
    assert keras.layers.Embedding(5, 2).compute_mask(np.array([[0, 3]])) is None
    model = keras.Sequential([keras.Input((3,), dtype="int32"), layer])  # (built on an example of zeros)
    assert model(np.array([[1, 2, 3]])).shape == (1, 3, 2)


# --- LSTM ---------------------------------------------------------------------------------------------------------
def test_lstm_is_the_loop_a_learner_writes_by_hand_one_name_scope_per_step():
    tl.random.set_seed(0)
    x = tl.constant(np.random.default_rng(0).standard_normal((3, 6, 2)).astype(np.float32))
    lstm = keras.layers.LSTM(4, return_sequences=True)
    with tl.GradientTape(persistent=True) as tape:
        out = lstm(x)
        loss = tl.reduce_sum(out[:, -1] ** 2)
    grads = tape.gradient(loss, lstm.trainable_variables)
    steps = sorted({e.scope for e in tape.entries if e.scope.startswith(f"{lstm.name}/t")})
    assert steps == [f"{lstm.name}/t{t:02d}/" for t in range(6)]

    W, U, b = lstm.trainable_variables
    with tl.GradientTape() as tape:
        h, c, hs = tl.zeros((3, 4)), tl.zeros((3, 4)), []
        for t in range(6):
            z = x[:, t] @ W + h @ U + b
            i, f, g, o = z[:, :4], z[:, 4:8], z[:, 8:12], z[:, 12:]
            c = tl.sigmoid(f) * c + tl.sigmoid(i) * tl.tanh(g)
            h = tl.sigmoid(o) * tl.tanh(c)
            hs.append(h)
        hand_loss = tl.reduce_sum(h ** 2)
    np.testing.assert_allclose(out.numpy(), tl.stack(hs, axis=1).numpy(), rtol=1e-5, atol=1e-6)
    for a, e in zip(grads, tape.gradient(hand_loss, [W, U, b])):
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(b.numpy(), np.r_[np.zeros(4), np.ones(4), np.zeros(8)])  # unit_forget_bias


@pytest.mark.parametrize("settings", [{}, {"go_backwards": True, "use_bias": False}])
def test_lstm_gradients_match_finite_differences(settings):
    rng = np.random.default_rng(1)
    layer = keras.layers.LSTM(2, return_sequences=True, dtype="float64", **settings)
    x = rng.standard_normal((2, 3, 2))
    layer(x)
    weights = [rng.standard_normal(w.shape) * 0.5 for w in layer.weights]

    def f(x, *weights):
        layer.kernel, layer.recurrent_kernel = weights[:2]
        if settings.get("use_bias", True):
            layer.bias = weights[2]
        return layer(x)

    check = tl.check_gradients(f, x, *weights)
    assert check.ok, check


def test_a_traced_lstm_step_equals_the_eager_one():
    tl.random.set_seed(2)
    lstm = keras.layers.LSTM(3, return_state=True)
    x = tl.constant(np.random.default_rng(0).standard_normal((3, 5, 2)).astype(np.float32))

    def step(x):
        with tl.GradientTape() as tape:
            out, h, c = lstm(x)
            loss = tl.reduce_sum(out * h + c)
        return loss, tape.gradient(loss, lstm.trainable_variables)

    (eager_loss, eager_grads), (traced_loss, traced_grads) = step(x), tl.function(step)(x)
    np.testing.assert_allclose(eager_loss.numpy(), traced_loss.numpy(), rtol=1e-6)
    for e, t in zip(eager_grads, traced_grads):
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-7)


def test_a_small_lstm_model_trains():
    tl.random.set_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 6, 1)).astype(np.float32)
    y = x.sum(axis=1)  # the running sum of a sequence
    model = keras.Sequential([keras.Input((6, 1)), keras.layers.LSTM(8), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(0.02), loss="mse")
    history = model.fit(x, y, epochs=25, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < 0.3 * history.history["loss"][0]


def test_lstm_initial_state_mistakes_are_explained():
    lstm = keras.layers.LSTM(3)
    x = tl.ones((2, 4, 5))
    with pytest.raises(ValueError, match=r"an LSTM has 2 states \(h, c\); initial_state holds 1 tensor\(s\). Pass a "
                                         r"list \[h, c\]"):
        lstm(x, initial_state=[tl.zeros((2, 3))])
    with pytest.raises(ValueError, match=r"initial_state's c has shape \(2, 4\).*\(2, 3\) \(batch, units\)"):
        lstm(x, initial_state=[tl.zeros((2, 3)), tl.zeros((2, 4))])
    with pytest.raises(ValueError, match=r"expects sequences of shape \(batch, time steps, features\)"):
        keras.layers.LSTM(3)(tl.ones((4, 6)))


# --- UpSampling2D, the 1-D global poolings, Conv1D -------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: keras.layers.UpSampling2D((2, 3), dtype="float64"),
    lambda: keras.layers.GlobalAveragePooling1D(dtype="float64"),
    lambda: keras.layers.GlobalMaxPooling1D(keepdims=True, dtype="float64"),
], ids=["upsampling2d", "global_average_pooling1d", "global_max_pooling1d"])
def test_layers_without_weights_have_gradients_that_match_finite_differences(make):
    shape = (2, 3, 2, 2) if "UpSampling" in type(make()).__name__ else (2, 4, 3)
    check = tl.check_gradients(make(), np.random.default_rng(2).standard_normal(shape))
    assert check.ok, check


@pytest.mark.parametrize("kernel_size, strides, padding", [(3, 1, "valid"), (3, 2, "same"), (2, 1, "causal"),
                                                           (4, 2, "causal"), (1, 3, "valid")])
def test_conv1d_gradients_match_finite_differences(kernel_size, strides, padding):
    rng = np.random.default_rng(3)
    layer = keras.layers.Conv1D(2, kernel_size, strides=strides, padding=padding, dtype="float64")
    x = rng.standard_normal((2, 7, 3))
    layer(x)
    kernel, bias = rng.standard_normal(layer.kernel.shape), rng.standard_normal(layer.bias.shape)

    def f(x, kernel, bias):
        layer.kernel, layer.bias = kernel, bias
        return tl.sin(layer(x))

    check = tl.check_gradients(f, x, kernel, bias)
    assert check.ok, check


def test_causal_conv1d_never_sees_a_later_step():
    tl.random.set_seed(0)
    layer = keras.layers.Conv1D(2, 3, padding="causal")
    x = tl.Variable(np.random.default_rng(0).standard_normal((1, 6, 2)).astype(np.float32))
    with tl.GradientTape() as tape:
        y = layer(x)[0, 3]  # step 3 of the output
    grad = tape.gradient(y, x).numpy()[0]
    assert np.all(grad[4:] == 0) and np.any(grad[1:4] != 0) and np.all(grad[0] == 0)  # steps 1, 2, 3 only


def test_the_tape_records_each_layer_under_its_name():
    keras.layers.clear_session()
    tl.random.set_seed(0)
    up, conv, pool = keras.layers.UpSampling2D(), keras.layers.Conv1D(2, 3, padding="causal"), \
        keras.layers.GlobalAveragePooling1D()
    x = tl.Variable(np.ones((1, 2, 2, 3), np.float32))
    with tl.GradientTape() as tape:
        seq = tl.reshape(up(x), (1, 16, 3))
        loss = tl.reduce_sum(pool(conv(seq)))
    ops = _scopes(tape)
    assert ops[:3] == [("reshape", "up_sampling2d/"), ("broadcast_to", "up_sampling2d/"),
                       ("reshape", "up_sampling2d/")]
    assert [op for op, scope in ops if scope == "conv1d/"] == ["pad", "reshape", "reshape", "conv2d", "reshape",
                                                               "add"]
    assert ("reduce_mean", "global_average_pooling1d/") in ops
    assert tape.gradient(loss, x).shape == (1, 2, 2, 3)


def test_a_small_conv1d_model_and_an_upsampling_decoder_train():
    tl.random.set_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 12, 2)).astype(np.float32)
    y = np.abs(np.diff(x[..., 0], axis=1)).max(axis=1, keepdims=True)  # the largest jump between two steps
    model = keras.Sequential([keras.Input((12, 2)), keras.layers.Conv1D(8, 2, activation="relu", padding="causal"),
                              keras.layers.GlobalMaxPooling1D(), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(0.02), loss="mse")
    history = model.fit(x, y, epochs=25, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < 0.3 * history.history["loss"][0]

    images = rng.standard_normal((32, 3, 3, 1)).astype(np.float32)
    target = np.repeat(np.repeat(images, 2, axis=1), 2, axis=2) * 0.5
    decoder = keras.Sequential([keras.Input((3, 3, 1)), keras.layers.UpSampling2D(),
                                keras.layers.Conv2D(1, 3, padding="same")])
    decoder.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    history = decoder.fit(images, target, epochs=20, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < 0.3 * history.history["loss"][0]


@pytest.mark.parametrize("call, error, words", [
    (lambda: keras.layers.UpSampling2D(interpolation="bilinear"), tl.errors.UnsupportedError,
     ["interpolation='bilinear'", "interpolation='nearest'", "Conv2DTranspose"]),
    (lambda: keras.layers.UpSampling2D(interpolation="cubic"), ValueError, ["must be 'nearest'"]),
    (lambda: keras.layers.UpSampling2D()(tl.zeros((2, 4, 4))), ValueError, ["(batch, height, width, channels)"]),
    (lambda: keras.layers.GlobalMaxPooling1D()(tl.zeros((2, 4))), ValueError,
     ["(batch, steps, features)", "x[..., tl.newaxis]"]),
    (lambda: keras.layers.Conv1D(2, 3)(tl.zeros((4, 6))), ValueError, ["(batch, steps, features)", "2-D"]),
    (lambda: keras.layers.Conv1D(2, 5)(tl.zeros((1, 3, 2))), ValueError,
     ["3 steps", "shorter than the kernel (5 steps)", "padding='same' or 'causal'"]),
    (lambda: keras.layers.Conv1D(2, 3, padding="full"), ValueError, ["'valid'", "'same'", "'causal'"]),
    (lambda: keras.layers.Conv1D(2, 3, dilation_rate=2), tl.errors.UnsupportedError, ["dilation_rate=2"]),
    (lambda: keras.layers.Conv1D(0, 3), ValueError, ["filters=0", "strictly positive"]),
    (lambda: keras.layers.Conv1D(2, (3, 3)), ValueError, ["kernel_size must be a positive int"]),
])
def test_a_mistake_with_these_layers_is_explained(call, error, words):
    with pytest.raises(error) as raised:
        call()
    for word in words:
        assert word in str(raised.value), (word, str(raised.value))


def test_conv1d_refuses_another_feature_size_than_it_was_built_for():
    layer = keras.layers.Conv1D(2, 3)
    layer(tl.zeros((1, 5, 4)))
    assert tuple(layer.kernel.shape) == (3, 4, 2)
    with pytest.raises(ValueError, match=r"built for sequences with 4 feature\(s\) per step"):
        layer(tl.zeros((1, 5, 3)))
