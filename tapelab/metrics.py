"""Accuracy and running means for reporting training progress (plain numbers; nothing is recorded)."""

import numpy as np

from tapelab.tensor import Tensor


def _array(x):
    return x._value if isinstance(x, Tensor) else np.asarray(x)


def accuracy(y_true, y_pred):
    """The fraction of rows whose highest score is the true class, as a Python float.

    ``y_pred`` holds scores (logits or probabilities) of shape (batch, classes); ``y_true`` holds
    integer labels of shape (batch,) or (batch, 1).

    >>> tl.metrics.accuracy([0, 1, 1], [[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
    0.6666666666666666
    """
    labels, scores = _array(y_true), _array(y_pred)
    if scores.ndim < 1:
        raise ValueError("accuracy: y_pred must have a class axis, shape (batch, classes)")
    if labels.ndim == scores.ndim and labels.shape[-1:] == (1,):
        labels = labels.reshape(labels.shape[:-1])
    if labels.shape != scores.shape[:-1]:
        raise ValueError(
            f"accuracy: y_true has shape {labels.shape} but y_pred has shape {scores.shape}; expected one integer "
            f"label per row, shape {scores.shape[:-1]}. (Arguments are accuracy(y_true, y_pred).)"
        )
    if labels.size == 0:
        raise ValueError("accuracy: no examples (y_true is empty)")
    return float(np.mean(np.argmax(scores, axis=-1) == labels))


def evaluate_accuracy(model, x, y, batch_size=1000):
    """``accuracy(y, model(x))`` computed ``batch_size`` rows at a time (call it outside a tape)."""
    hits = 0
    for start in range(0, len(x), batch_size):
        scores = _array(model(x[start:start + batch_size]))
        hits += int(np.sum(np.argmax(scores, axis=-1) == np.asarray(y[start:start + batch_size]).reshape(-1)))
    return hits / len(x)


class Mean:
    """A running mean, like ``keras.metrics.Mean``: ``update_state(value)``, ``result()``, ``reset_state()``.

    >>> m = tl.metrics.Mean()
    >>> m.update_state(1.0); m.update_state(3.0); m.result()
    2.0
    """

    def __init__(self, name="mean"):
        self.name = name
        self.reset_state()

    def reset_state(self):
        self.total, self.count = 0.0, 0

    def update_state(self, value):
        """Add one value (or every element of an array of values)."""
        value = _array(value)
        self.total += float(np.sum(value))
        self.count += int(np.size(value))

    def result(self):
        return self.total / self.count if self.count else 0.0


class SparseCategoricalAccuracy:
    """Accuracy accumulated over batches, like ``keras.metrics.SparseCategoricalAccuracy``."""

    def __init__(self, name="accuracy"):
        self.name = name
        self.reset_state()

    def reset_state(self):
        self.correct, self.count = 0, 0

    def update_state(self, y_true, y_pred):
        n = int(np.size(_array(y_true)))
        self.correct += round(accuracy(y_true, y_pred) * n)
        self.count += n

    def result(self):
        return self.correct / self.count if self.count else 0.0
