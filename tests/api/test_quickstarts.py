"""TensorFlow's two quickstarts run unchanged with ``import tensorflow as tf`` meaning tapelab.

Their code cells are kept in ``fixtures/quickstarts/`` (see the header of each). The data is the shipped
MNIST sample (8,000 training and 2,000 test digits), so the accuracies are the sample's, not the full set's.
"""

import contextlib
import importlib.util
import io
import sys
from pathlib import Path

import pytest

import tapelab as tl

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("run_tf_guides", ROOT / "scripts" / "run_tf_guides.py")
GUIDES = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GUIDES)


@pytest.fixture
def as_tensorflow(monkeypatch):
    """``import tensorflow`` gives tapelab for the test (sys.modules is put back afterwards)."""
    saved = dict(sys.modules)
    GUIDES.alias_tensorflow()
    yield
    for name in [n for n in sys.modules if n == "tensorflow" or n.startswith("tensorflow.")]:
        if name not in saved:
            del sys.modules[name]


def run_cells(name):
    """Run the quickstart's cells in order in one namespace; return the namespace and what it printed."""
    namespace, out = {"__name__": "__main__"}, io.StringIO()
    tl.random.set_seed(0)
    tl.keras.backend.clear_session()  # layer names count from the start, as in a fresh kernel
    for k, code in enumerate(GUIDES.code_cells(ROOT / "tests" / "fixtures" / "quickstarts" / f"{name}.py"), 1):
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"<{name} cell {k}>", "exec"), namespace)  # noqa: S102 - TF's published code
    return namespace, out.getvalue()


def test_quickstart_for_beginners_runs_unchanged(as_tensorflow):
    ns, printed = run_cells("beginner")
    assert isinstance(ns["model"], tl.keras.Sequential)
    history = ns["model"].history.history
    assert len(history["loss"]) == 5 and history["loss"][-1] < history["loss"][0] / 2
    assert history["accuracy"][-1] > 0.95  # training accuracy after 5 epochs on the 8,000-digit sample
    loss, accuracy = ns["model"].evaluate(ns["x_test"], ns["y_test"], verbose=0)
    assert accuracy > 0.93 and loss < 0.3, (loss, accuracy)  # 2,000 test digits
    assert "63/63 - accuracy: " in printed  # evaluate(verbose=2) prints Keras's line
    probabilities = ns["probability_model"](ns["x_test"][:5]).numpy()
    assert probabilities.shape == (5, 10) and abs(probabilities.sum(axis=1) - 1).max() < 1e-5


def test_quickstart_for_experts_runs_unchanged(as_tensorflow):
    ns, printed = run_cells("advanced")
    epochs = [line for line in printed.splitlines() if line.startswith("Epoch ")]
    assert len(epochs) == 5
    # the metrics print as float32 tensors, as in TF: "Test Accuracy: 97.45..."
    assert "Test Accuracy: tf.Tensor(" not in printed and "Accuracy: " in epochs[0]
    test_accuracy = float(ns["test_accuracy"].result())
    assert test_accuracy > 0.95, test_accuracy  # the CNN on 2,000 test digits after 5 epochs (96.3% here)
    assert ns["train_accuracy"].result().dtype == tl.float32
    assert [layer.name for layer in ns["model"].layers] == ["conv2d", "flatten", "dense", "dense_1"]  # Keras's
