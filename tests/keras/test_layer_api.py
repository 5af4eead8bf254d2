"""The layer-writing API as Keras 3 has it (``add_weight``, ``add_loss`` / ``losses``, regularizers, ``get_config`` /
``from_config``, ``keras.random``, ``register_keras_serializable``) against real Keras: each program of
``fixtures/make_keras_layers.py`` runs here with tapelab and must give what Keras gave."""

import numpy as np
import pytest

import tapelab as tl
from tests.fixtures import make_keras_layers as programs
from tests.keras import keras_fixture

keras = tl.keras
CASES = keras_fixture.cases("keras_layers")


@pytest.mark.parametrize("case_id", list(CASES))
def test_matches_keras(case_id):
    keras_fixture.check(CASES[case_id], programs)


def test_fixture_is_current_with_generator():
    keras_fixture.assert_current(CASES, programs)


def test_errors_say_what_to_do():
    class Bad(keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(2,), initializer="nonsense")

        def call(self, x):
            return x

    with pytest.raises(ValueError, match=r"add_weight: unknown initializer 'nonsense'\. Use one of"):
        Bad()(tl.ones((1, 3)))
    with pytest.raises(ValueError, match=r"Flatten has no weights for kernel_regularizer.*Dense\(64, kernel_regul"):
        keras.layers.Flatten(kernel_regularizer="l2")
    with pytest.raises(ValueError, match=r"Use 'l1' or 'l2'"):
        keras.layers.Dense(2, kernel_regularizer="l3")
    with pytest.raises(tl.UnsupportedError, match=r"clip the weight yourself"):
        keras.layers.Layer().add_weight(shape=(2,), constraint="non_neg")
    with pytest.raises(ValueError, match=r"seed must be an int"):
        keras.random.normal((2,), seed="a")


def test_a_penalty_is_on_the_tape_of_a_training_step_under_its_layer():
    keras.layers.clear_session()
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, kernel_regularizer=keras.regularizers.L2(0.5))])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(np.ones((4, 3), np.float32), np.zeros((4, 2), np.float32), verbose=0)
    listing = str(model.last_tape)  # the layer's ops, then its penalty, in its scope; the sum is the target
    assert "square(dense/kernel)" in listing and listing.index("square(dense/kernel)") > listing.index("matmul")
    assert listing.splitlines()[-4].strip().startswith("%9 = add(%5, %8)")
    kernel = model.layers[0].kernel
    with tl.GradientTape() as tape:
        penalty = model.losses[0]
    assert np.allclose(tape.gradient(penalty, kernel), 0.5 * 2 * kernel.numpy())  # d(l2 * sum w^2)/dw = 2 l2 w


def test_registered_objects_are_found_by_name():
    @keras.saving.register_keras_serializable(package="Lesson")
    class Twice(keras.layers.Layer):
        def call(self, x):
            return 2.0 * x

    assert keras.saving.get_registered_object("Lesson>Twice") is Twice
    assert keras.utils.register_keras_serializable is not None
