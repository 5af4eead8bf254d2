"""``tl.keras.callbacks`` against real Keras 3: the same programs, the same hooks in the same order, the same decisions.

``fixtures/keras_callbacks.json`` holds small programs (and the helpers they share, its ``prelude``) and what they
gave under TensorFlow 2.21 / Keras 3 (``fixtures/make_keras_callbacks.py`` recorded them). Each runs here with
``tf = tapelab`` and must give the same description: the order of the hooks with their epoch or batch and the keys
of their ``logs``; ``History``; ``params``; EarlyStopping's, ReduceLROnPlateau's and ModelCheckpoint's decisions on
scripted values; learning rates; CSVLogger's file; TerminateOnNaN; file names; warnings (tapelab's may go on with
advice after Keras's text). Numbers are compared with a tolerance. Where a program raises, the exception must be
of Keras's type, and tapelab's message must say what to do (``ADVICE``). tapelab's own additions (the tqdm bar of
``ProgbarLogger``, the live plots) are tested in test_keras.py, not here.
"""

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import tapelab
from tapelab import keras
from tests.fixtures.make_keras_callbacks import plain  # (the fixture's JSON description of a value)

FIXTURE = json.loads((Path(__file__).parents[1] / "fixtures" / "keras_callbacks.json").read_text(encoding="utf-8"))
CASES = {case["id"]: case for case in FIXTURE["cases"]}

# what tapelab's message says on top of Keras's, for each case where Keras raises: the advice a learner needs
ADVICE = {
    "early_stopping_unknown_monitor_auto": ["mode='max'", "mode='min'", "spelling"],
    "early_stopping_direction_unknown": ["mode='max'", "mode='min'", "accuracy"],
    "reduce_lr_factor_too_big": ["between 0 and 1", "factor=0.5"],
    "reduce_lr_factor_one": ["between 0 and 1"],
    "lr_scheduler_returns_int": ["return e.g. lr * 0.9", "0.1 (not 1)", "(int, not float)"],
    "lr_scheduler_returns_string": ["float(...)", "(str, not float)"],
    "terminate_on_nan_raise_error": ["batch 2"],
    "checkpoint_unknown_name_in_path": ["val_acc", "fills in", "val_accuracy", "val_loss"],
    "checkpoint_weights_suffix": ["w.weights.h5"],
    "checkpoint_model_suffix": ["save_weights_only=True", "model.weights.h5"],
    "checkpoint_save_freq": ["every 100 batches"],
    "callbacks_function": ["LambdaCallback(on_epoch_end=", "fit"],
    "callbacks_class_not_instance": ["EarlyStopping()", "an instance"],
    "callbacks_string": ["EarlyStopping(patience=2)", "str 'early_stopping'"],
    "callbacks_evaluate_not_callback": ["evaluate", "Callback objects"],
    "callbacks_predict_not_callback": ["predict", "int 3"],
    "callback_that_raises": [],  # Keras's own KeyError; the note is checked below
}

NUMBER = re.compile(r"(-?\d+\.\d+(?:e[-+]?\d+)?)")


def run(code, tmp):
    namespace = {"tf": tapelab, "keras": keras, "np": np, "tmp": str(tmp)}
    exec(compile(FIXTURE["prelude"], "<prelude>", "exec"), namespace)  # noqa: S102 - the fixture's own code
    exec(compile(code, "<case>", "exec"), namespace)  # noqa: S102
    return plain(namespace["result"])


def same_text(mine, theirs):
    """Equal, but for numbers in the text, which may differ in their last digits (float32 round-off)."""
    a, b = NUMBER.split(mine), NUMBER.split(theirs)
    if len(a) != len(b):
        return False
    return all(x == y if i % 2 == 0 else math.isclose(float(x), float(y), rel_tol=1e-4, abs_tol=1e-6)
               for i, (x, y) in enumerate(zip(a, b)))


def compare(mine, theirs, path="result"):
    """Assert that tapelab's description matches Keras's; ``path`` says where in it a difference is."""
    if isinstance(theirs, dict) and "raised" in theirs:
        assert isinstance(mine, dict) and "raised" in mine, f"{path}: Keras raised {theirs}, tapelab gave {mine}"
        assert theirs["raised"] in mine["is_a"], (
            f"{path}: Keras raised {theirs['raised']}, tapelab {mine['raised']} ({mine['message']})")
        return
    if isinstance(theirs, dict):
        assert isinstance(mine, dict), f"{path}: Keras {theirs!r}, tapelab {mine!r}"
        assert list(mine) == list(theirs), f"{path}: keys {list(mine)}, Keras's {list(theirs)}"
        for key in theirs:
            if key == "warnings":  # (tapelab's warning is Keras's text, then what to do)
                assert len(mine[key]) == len(theirs[key]), f"{path}.warnings: {mine[key]} vs Keras's {theirs[key]}"
                for m, t in zip(mine[key], theirs[key]):
                    assert m.startswith(t), f"{path}.warnings: {m!r} does not start with Keras's {t!r}"
            else:
                compare(mine[key], theirs[key], f"{path}.{key}")
        return
    if isinstance(theirs, list):
        assert isinstance(mine, list) and len(mine) == len(theirs), f"{path}: {mine!r}, Keras's {theirs!r}"
        for i, (m, t) in enumerate(zip(mine, theirs)):
            compare(m, t, f"{path}[{i}]")
        return
    if isinstance(theirs, bool) or theirs is None:
        assert mine is theirs, f"{path}: {mine!r}, Keras's {theirs!r}"
    elif isinstance(theirs, (int, float)):
        assert isinstance(mine, (int, float)) and not isinstance(mine, bool), f"{path}: {mine!r}, Keras's {theirs!r}"
        assert math.isclose(mine, theirs, rel_tol=1e-4, abs_tol=1e-6), f"{path}: {mine!r}, Keras's {theirs!r}"
    elif isinstance(theirs, str):
        assert isinstance(mine, str) and same_text(mine, theirs), f"{path}: {mine!r}, Keras's {theirs!r}"
    else:
        raise AssertionError(f"{path}: unexpected {theirs!r} in the fixture")


def test_the_fixture_is_keras_3():
    assert FIXTURE["versions"]["keras"].startswith("3.")
    assert len(CASES) == len(FIXTURE["cases"]) >= 80
    assert not [i for i, c in CASES.items() if isinstance(c["keras"], dict) and "uncaught" in c["keras"]]


@pytest.mark.parametrize("case_id", list(CASES))
def test_callbacks_do_what_keras_does(case_id, tmp_path):
    case = CASES[case_id]
    mine = run(case["code"], tmp_path)
    compare(mine, case["keras"])
    if isinstance(case["keras"], dict) and "raised" in case["keras"]:
        for phrase in ADVICE[case_id]:
            assert phrase in mine["message"], f"{case_id}: {mine['message']!r} does not say {phrase!r}"


def test_every_error_case_has_its_advice():
    raising = {i for i, c in CASES.items() if isinstance(c["keras"], dict) and "raised" in c["keras"]}
    assert raising == set(ADVICE)


# --- what tapelab adds ----------------------------------------------------------------------------------------
def small_model():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(3)])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model, np.ones((6, 3), np.float32), np.array([0, 1, 2, 0, 1, 2])


def test_a_callback_that_raises_is_named_with_its_hook_and_what_to_do():
    class Broken(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            return logs["val_loss"]  # no validation data: no val_loss

    model, x, y = small_model()
    with pytest.raises(KeyError) as info:
        model.fit(x, y, epochs=2, verbose=0, callbacks=[Broken()])
    note = "\n".join(getattr(info.value, "__notes__", []))
    assert "Broken.on_epoch_end(0)" in note
    assert "Fix the hook" in note and "self.model.stop_training = True" in note


def test_the_note_is_added_once_even_through_nested_callback_lists():
    class Broken(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            raise RuntimeError("broken")

    model, x, y = small_model()
    inner = keras.callbacks.CallbackList([Broken()], model=model)
    with pytest.raises(RuntimeError) as info:
        model.fit(x, y, epochs=1, verbose=0, callbacks=[inner])
    notes = getattr(info.value, "__notes__", [])
    assert len(notes) == 1 and "Broken.on_train_begin()" in notes[0]


def test_the_unsupported_callbacks_say_what_to_use():
    for name in ("TensorBoard", "BackupAndRestore", "RemoteMonitor"):
        with pytest.raises(tapelab.UnsupportedError) as info:
            getattr(keras.callbacks, name)()
        assert "CSVLogger" in str(info.value) or "ModelCheckpoint" in str(info.value)


def test_whole_model_checkpoints_are_left_to_tensorflow_with_the_weights_way(tmp_path):
    with pytest.raises(tapelab.UnsupportedError) as info:
        keras.callbacks.ModelCheckpoint(str(tmp_path / "model.keras"))
    assert "model.weights.h5" in str(info.value) and "save_weights_only=True" in str(info.value)


def test_a_lambda_callback_refuses_a_misspelled_hook():
    with pytest.raises(TypeError) as info:
        keras.callbacks.LambdaCallback(on_epoch_ends=lambda epoch, logs: None)
    assert "on_epoch_ends" in str(info.value) and "on_epoch_end" in str(info.value)


def test_fit_adds_its_bar_and_plots_after_the_learners_callbacks(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    seen = {}

    class Look(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            seen["history"] = self.model.history

    model, x, y = small_model()
    history = model.fit(x, y, epochs=1, verbose=0, callbacks=[Look()])
    assert seen["history"] is history is model.history
    assert isinstance(history, keras.callbacks.History) and history.epoch == [0]
