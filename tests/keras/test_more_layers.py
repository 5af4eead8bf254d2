"""Embedding, LSTM, UpSampling2D, the 1-D global poolings and Conv1D (issue 29) against real Keras 3: each program
of ``fixtures/make_keras_more_layers.py`` runs here with tapelab and must give what Keras gave (outputs, weight
shapes, the gradients of a loss with respect to the inputs and every weight; the same exception type), except where
tapelab deliberately refuses (``REFUSED``, each with its reason). Then what the fixture cannot show: gradients
against finite differences, the name scopes on the tape, training, and the errors' words."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

import tapelab as tl
from tests.fixtures import make_keras_more_layers as programs

keras = tl.keras
FIXTURE = json.loads((Path(__file__).parents[1] / "fixtures" / "keras_more_layers.json").read_text(encoding="utf-8"))
CASES = {case["id"]: case for case in FIXTURE["cases"]}

# Where Keras computes something and tapelab raises instead, on purpose: the error type tapelab raises, and why.
REFUSED = {
    "embedding_negative_id": ("InvalidArgumentError", "Keras's ops.take counts -1 from the end of the table; an id "
                              "is never negative, so tapelab says so (as tf.gather does on CPU)"),
    "embedding_fractional_float_ids": ("TypeError", "Keras casts 1.5 to the id 1 without a word; tapelab accepts "
                                       "float ids only when they are whole numbers"),
    "embedding_mask_zero_with_padding_into_gru": ("UnsupportedError", "Keras's GRU skips the masked (padded) steps; "
                                                  "tapelab leaves masking out and says so"),
}


def assert_same(expected, actual, where="result"):
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and sorted(actual) == sorted(expected), (where, sorted(actual))
        for key in expected:
            assert_same(expected[key], actual[key], f"{where}[{key!r}]")
    elif isinstance(expected, list):
        assert isinstance(actual, (list, tuple)) and len(actual) == len(expected), (where, actual)
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_same(e, a, f"{where}[{i}]")
    elif isinstance(expected, float):
        assert math.isclose(expected, actual, rel_tol=1e-4, abs_tol=2e-5), (where, expected, actual)
    else:
        assert expected == actual, (where, expected, actual)


@pytest.mark.parametrize("case_id", list(CASES))
def test_matches_keras(case_id):
    case = CASES[case_id]
    keras.layers.clear_session()
    tl.random.set_seed(0)
    got = programs.run(case["code"], tl, keras, np)
    expected = case["keras"]
    if case_id in REFUSED:
        assert expected["kind"] == "value", "Keras raises here now: drop the case from REFUSED"
        assert got["kind"] == "error" and got["type"] == REFUSED[case_id][0], got
    elif expected["kind"] == "error":
        assert got["kind"] == "error", f"Keras raised {expected['type']}; tapelab returned {got.get('result')}"
        assert got["type"] == expected["type"], got
    else:
        assert got["kind"] == "value", got
        assert_same(expected["result"], got["result"])


def test_fixture_is_current_with_generator():
    assert [(c["id"], c["code"]) for c in FIXTURE["cases"]] == [
        (name, programs.textwrap.dedent(code).strip("\n")) for name, code in programs.PROGRAMS]
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
