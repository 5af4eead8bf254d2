"""Accuracy and running means for reporting training progress (plain numbers; nothing is recorded)."""

import numpy as np

from tapelab.tensor import to_numpy


def accuracy(y_true, y_pred):
    """The fraction of rows whose highest score is the true class, as a Python float.

    ``y_pred`` holds scores (logits or probabilities) of shape (batch, classes); ``y_true`` holds
    integer labels of shape (batch,) or (batch, 1).

    >>> tl.metrics.accuracy([0, 1, 1], [[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
    0.6666666666666666
    """
    hits, n = _hits(y_true, y_pred)
    return hits / n


def _hits(y_true, y_pred):
    """(rows whose highest score is the true class, rows), with the shapes checked."""
    labels, scores = to_numpy(y_true), to_numpy(y_pred)
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
    return int(np.sum(np.argmax(scores, axis=-1) == labels)), labels.size


def evaluate_accuracy(model, x, y, batch_size=1000):
    """``accuracy(y, model(x))`` computed ``batch_size`` rows at a time (call it outside a tape)."""
    hits = 0
    for start in range(0, len(x), batch_size):
        hits += _hits(y[start:start + batch_size], model(x[start:start + batch_size]))[0]
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
        """Forget every value added so far (call it at the start of each epoch)."""
        self.total, self.count = 0.0, 0

    def update_state(self, value):
        """Add one value (or every element of an array of values).

        >>> m = tl.metrics.Mean()
        >>> m.update_state([1.0, 2.0, 6.0]); m.count
        3
        """
        value = to_numpy(value)
        self.total += float(np.sum(value))
        self.count += int(np.size(value))

    def result(self):
        """The mean of every value added since the last reset, as a Python float (0.0 before any)."""
        return self.total / self.count if self.count else 0.0


class SparseCategoricalAccuracy:
    """Accuracy accumulated over batches, like ``keras.metrics.SparseCategoricalAccuracy``.

    >>> acc = tl.metrics.SparseCategoricalAccuracy()
    >>> acc.update_state([0, 1], [[0.9, 0.1], [0.2, 0.8]])     # both right
    >>> acc.update_state([1, 1], [[0.6, 0.4], [0.3, 0.7]])     # one right
    >>> acc.result()
    0.75
    """

    def __init__(self, name="accuracy"):
        self.name = name
        self.reset_state()

    def reset_state(self):
        """Start counting again from zero (call it at the start of each epoch)."""
        self.correct, self.count = 0, 0

    def update_state(self, y_true, y_pred):
        """Add one batch: integer labels (batch,) or (batch, 1), and scores (batch, classes)."""
        hits, n = _hits(y_true, y_pred)
        self.correct += hits
        self.count += n

    def result(self):
        """The fraction of all rows seen since the last reset that were right, as a Python float."""
        return self.correct / self.count if self.count else 0.0

__all__ = ["Mean", "SparseCategoricalAccuracy", "accuracy", "evaluate_accuracy"]
