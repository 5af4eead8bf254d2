"""Keras's functional API (``keras.Input``, layers called on symbolic tensors, ``keras.Model(inputs, outputs)``)
against real Keras 3: each program of ``fixtures/make_keras_functional.py`` runs here with tapelab and must give
what Keras gave (layers, shapes, parameter counts, outputs, training histories; the same exception type)."""

import numpy as np
import pytest

import tapelab as tl
from tests.fixtures import make_keras_functional as programs
from tests.keras import keras_fixture

keras = tl.keras
CASES = keras_fixture.cases("keras_functional")


@pytest.mark.parametrize("case_id", list(CASES))
def test_matches_keras(case_id):
    keras_fixture.check(CASES[case_id], programs)


def test_fixture_is_current_with_generator():
    keras_fixture.assert_current(CASES, programs)


# --- what tapelab adds: the errors teach, the graph is drawn, the tape groups by layer ---------------------------
def two_inputs():
    keras.layers.clear_session()
    a, b = keras.Input((4,), name="a"), keras.Input((3,), name="b")
    return a, b


def test_errors_say_what_to_do():
    a, b = two_inputs()
    with pytest.raises(ValueError, match=r"graph disconnected.*Input 'b'.*Add it to inputs="):
        keras.Model(a, keras.layers.Dense(2)(b))
    with pytest.raises(ValueError, match=r"wrap it in a layer: tl.keras.layers.Lambda"):
        tl.nn.relu(a)
    with pytest.raises(ValueError, match=r"must be KerasTensors .*subclass tl.keras.Model"):
        keras.Model(a, np.ones(3))
    model = keras.Model([a, b], keras.layers.Dense(2)(keras.layers.concatenate([a, b])))
    with pytest.raises(ValueError, match=r"expects 2 input\(s\) \('a', 'b'\), got 1"):
        model([np.ones((2, 4), np.float32)])
    with pytest.raises(ValueError, match=r"dict without 'b'"):
        model({"a": np.ones((2, 4), np.float32)})
    with pytest.raises(ValueError, match=r"Input 'a' expects a batch of shape \(None, 4\).*got \(2, 5\)"):
        model([np.ones((2, 5), np.float32), np.ones((2, 3), np.float32)])
    with pytest.raises(ValueError, match=r"at least 2 inputs"):
        keras.layers.Add()(a)
    with pytest.raises(ValueError, match=r"inputs of one shape") as raised:
        keras.layers.Add()([a, b])
    assert "raised while building the model" in "".join(raised.value.__notes__)


def test_compile_per_output_errors_name_the_outputs():
    a, _ = two_inputs()
    model = keras.Model(a, [keras.layers.Dense(1, name="left")(a), keras.layers.Dense(1, name="right")(a)])
    with pytest.raises(ValueError, match=r"names 'middle'.*outputs are \['left', 'right'\]"):
        model.compile(loss={"middle": "mse"})
    with pytest.raises(ValueError, match=r"3 items for a model of 2 outputs"):
        model.compile(loss=["mse"] * 3)
    with pytest.raises(ValueError, match=r"say which output each metric is for"):
        model.compile(loss="mse", metrics=["mae"])
    single = keras.Model(a, keras.layers.Dense(1)(a))
    with pytest.raises(ValueError, match=r"this model has one output: give one loss"):
        single.compile(loss=["mse"])


def test_a_step_of_a_functional_model_is_recorded_layer_by_layer():
    a, b = two_inputs()
    h = keras.layers.Dense(5, name="hidden")(keras.layers.concatenate([a, b], name="joined"))
    model = keras.Model([a, b], keras.layers.Dense(1, name="out")(h))
    with tl.GradientTape() as tape:
        loss = tl.reduce_mean(model([np.ones((2, 4), np.float32), np.ones((2, 3), np.float32)]))
    scopes = [e.scope for e in tape.entries]  # (joining two constants is not recorded: nothing to differentiate)
    assert scopes == ["hidden/"] * 2 + ["out/"] * 2 + [""]  # (matmul, add; matmul, add; reduce_mean)
    assert all(g is not None for g in tape.gradient(loss, model.trainable_variables))


def test_plot_model_draws_the_layer_graph(tmp_path):
    a, b = two_inputs()
    h = keras.layers.Dense(8, name="hidden")(a) + keras.layers.Dense(8, name="side")(b)
    model = keras.Model([a, b], keras.layers.Dense(1, name="out")(h))
    picture = keras.utils.plot_model(model, to_file=tmp_path / "model.svg", show_shapes=True)
    svg = (tmp_path / "model.svg").read_text(encoding="utf-8")
    for text in ("a (InputLayer)", "hidden (Dense)", "output: (None, 8)", "add", "out (Dense)"):
        assert text in svg, text
    assert picture.source.count("->") == 5  # a->hidden, b->side, hidden->add, side->add, add->out
    with pytest.raises(ValueError, match=r"tl.viz.draw\(tape, collapse=True\)"):
        keras.utils.plot_model(keras.Model())


def test_summary_of_a_graph_says_what_each_layer_is_connected_to(capsys):
    a, b = two_inputs()
    model = keras.Model([a, b], keras.layers.Dense(2, name="out")(keras.layers.concatenate([a, b], name="joined")))
    model.summary()
    printed = capsys.readouterr().out
    assert "Connected to" in printed
    assert [line.split()[-1] for line in printed.splitlines() if line.startswith(("joined", "out"))] == \
        ["b", "joined"]
    assert "Total params: 16" in printed


def test_from_config_names_the_class_it_cannot_find_and_how_to_give_it():
    class Twice(keras.layers.Layer):
        def call(self, x):
            return 2.0 * x

    inputs = keras.Input((3,))
    config = keras.Model(inputs, Twice()(inputs)).get_config()
    with pytest.raises(TypeError, match=r"could not locate class 'Twice'.*custom_objects=\{'Twice': Twice\}"):
        keras.Model.from_config(config)
    again = keras.Model.from_config(config, custom_objects={"Twice": Twice})
    np.testing.assert_array_equal(again(np.ones((1, 3), np.float32)), [[2.0, 2.0, 2.0]])
