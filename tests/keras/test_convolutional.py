"""Conv2DTranspose and the global poolings (issue 29, item 4). Their values, weight shapes, gradients and errors are
checked against Keras 3.15 in ``tests/fixtures/tf_contract.json`` (``keras_conv2d_transpose_*``,
``keras_global_*``); here: the gradients against finite differences, first and second order, what the tape records,
training, and what a learner's mistake gets."""

import numpy as np
import pytest

import tapelab as tl
from tapelab.keras.convolutional import conv2d_transpose

RNG = np.random.default_rng(0)
SETTINGS = [((3, 3, 2, 2), (1, 1), "VALID"), ((3, 3, 3, 2), (2, 2), "SAME"), ((3, 2, 2, 2), (2, 1), "VALID"),
            ((1, 1, 1, 2), (3, 3), "VALID"), ((4, 4, 2, 2), (3, 3), "SAME")]


@pytest.mark.parametrize("kernel_shape, strides, padding", SETTINGS)
def test_conv2d_transpose_gradients_match_finite_differences_first_and_second_order(kernel_shape, strides, padding):
    x, kernel = RNG.standard_normal((1, 3, 4, 2)), RNG.standard_normal(kernel_shape)

    def f(x, k):
        return conv2d_transpose(x, k, strides, padding)

    check = tl.check_gradients(f, x, kernel)
    assert check.ok, check

    def first(x, k):
        with tl.GradientTape() as tape:
            tape.watch([x, k])
            y = tl.reduce_sum(tl.sin(f(x, k)))
        return tl.add_n([tl.reduce_sum(g * g) for g in tape.gradient(y, [x, k])])

    check = tl.check_gradients(first, x, kernel, tolerance=1e-4)
    assert check.ok, check


def test_global_poolings_gradients_match_finite_differences():
    x = RNG.standard_normal((2, 3, 4, 2))
    for layer in (tl.keras.layers.GlobalMaxPooling2D(), tl.keras.layers.GlobalAveragePooling2D(keepdims=True)):
        check = tl.check_gradients(layer, x)
        assert check.ok, (layer.name, check)


def test_the_tape_records_the_transpose_as_the_convolution_s_input_gradient_op():
    layer = tl.keras.layers.Conv2DTranspose(4, 3, strides=2, padding="same", activation="relu")
    x = tl.ones((2, 7, 7, 3))
    layer(x)  # (built)
    with tl.GradientTape() as tape:
        y = layer(x)
        loss = tl.reduce_sum(y)
    assert y.shape == (2, 14, 14, 4) and layer.kernel.shape == (3, 3, 4, 3) and layer.bias.shape == (4,)
    assert [e.op.name for e in tape.entries][:3] == ["conv2d_input_grad", "add", "relu"]
    grads = tape.gradient(loss, layer.trainable_variables)
    assert [tuple(g.shape) for g in grads] == [(3, 3, 4, 3), (4,)]


def test_a_small_decoder_trains():
    tl.random.set_seed(0)
    model = tl.keras.Sequential([tl.keras.layers.Conv2DTranspose(4, 3, strides=2, padding="same", activation="relu"),
                                 tl.keras.layers.Conv2DTranspose(1, 3, padding="same"),
                                 tl.keras.layers.GlobalAveragePooling2D()])
    x = RNG.standard_normal((16, 4, 4, 2)).astype(np.float32)
    y = x.mean(axis=(1, 2, 3))[:, None]
    model.compile(optimizer=tl.keras.optimizers.Adam(0.01), loss="mse")
    history = model.fit(x, y, epochs=30, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    assert model.predict(x, verbose=0).shape == (16, 1)


@pytest.mark.parametrize("call, words", [
    (lambda: tl.keras.layers.Conv2DTranspose(3, 3)(tl.zeros((2, 5, 5))), ["(batch, height, width, channels)",
                                                                          "x[..., tl.newaxis]"]),
    (lambda: tl.keras.layers.GlobalMaxPooling2D()(tl.zeros((2, 5, 5))), ["(batch, height, width, channels)"]),
    (lambda: tl.keras.layers.Conv2DTranspose(0, 3), ["filters=0", "strictly positive"]),
    (lambda: tl.keras.layers.Conv2DTranspose(3, 3, padding="full"), ["'VALID'", "'SAME'"]),
])
def test_a_mistake_gets_an_error_that_says_what_to_do(call, words):
    with pytest.raises(ValueError) as error:
        call()
    for word in words:
        assert word in str(error.value)


def test_images_with_other_channels_than_it_was_built_for_are_refused():
    layer = tl.keras.layers.Conv2DTranspose(3, 3)
    layer(tl.zeros((1, 4, 4, 2)))
    with pytest.raises(ValueError, match="built for images with 2 channel"):
        layer(tl.zeros((1, 4, 4, 5)))
