"""Metrics for reporting training progress, as ``keras.metrics``: stateful objects that add up batches.

    train_loss = tl.keras.metrics.Mean(name="train_loss")
    train_accuracy = tl.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
    train_loss(loss)                      # update_state(loss), then result()
    train_accuracy(labels, predictions)
    train_accuracy.result()               # a float32 tensor: the accuracy over every batch since reset_state()

Nothing here is recorded on a tape (a metric has no gradient). Inside ``tl.function`` an update
becomes a node of the graph that runs the metric's update again on every call, with that call's values.
"""

import numpy as np

from tapelab.engine.errors import InvalidArgumentError
from tapelab.engine.function import _python_node_or_none
from tapelab.engine.learner import spell
from tapelab.engine.tensor import Tensor, to_numpy
from tapelab.module import snake_case


def accuracy(y_true, y_pred):
    """The fraction of rows whose highest score is the true class, as a Python float.

    ``y_pred`` holds scores (logits or probabilities) of shape (batch, classes); ``y_true`` holds
    integer labels of shape (batch,) or (batch, 1).

    >>> tl.metrics.accuracy([0, 1, 1], [[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
    0.6666666666666666
    """
    hits = _sparse_hits("accuracy", to_numpy(y_true), to_numpy(y_pred))
    if hits.size == 0:
        raise ValueError("accuracy: no examples (y_true is empty)")
    return float(hits.mean(dtype=np.float64))


def evaluate_accuracy(model, x, y, batch_size=1000):
    """``accuracy(y, model(x))`` computed ``batch_size`` rows at a time (call it outside a tape)."""
    if len(x) == 0:
        raise ValueError("evaluate_accuracy: x has no rows, so there is no accuracy to compute. Pass the test set.")
    hits = 0
    for start in range(0, len(x), batch_size):
        hits += int(_sparse_hits("accuracy", np.asarray(y[start:start + batch_size]),
                                 to_numpy(model(x[start:start + batch_size]))).sum())
    return hits / len(x)


def _sparse_hits(name, labels, scores):
    """1.0 where the highest score is the label, per row (labels (batch,) or (batch, 1); scores (batch, classes))."""
    if scores.ndim < 1:
        raise ValueError(f"{name}: y_pred must have a class axis, shape (batch, classes)")
    if labels.ndim == scores.ndim and labels.shape[-1:] == (1,):
        labels = labels.reshape(labels.shape[:-1])
    if labels.shape != scores.shape[:-1]:
        raise InvalidArgumentError(
            f"{name}: y_true has shape {labels.shape} but y_pred has shape {scores.shape}; expected one integer "
            f"label per row, shape {scores.shape[:-1]}. (Arguments are (y_true, y_pred); for one-hot labels use "
            "CategoricalAccuracy.)"
        )
    return (np.argmax(scores, axis=-1) == labels).astype(np.float32)


def _same_shape(name, y_true, y_pred):
    if y_true.shape != y_pred.shape:
        raise InvalidArgumentError(f"{name}: y_true has shape {y_true.shape} but y_pred has shape {y_pred.shape}; "
                                   "they must match (the arguments are (y_true, y_pred)).")


class Metric:
    """Base class: ``update_state(...)`` adds a batch, ``result()`` is a float32 tensor, ``reset_state()``
    starts again; calling the metric updates it and returns the result."""

    _direction = None  # "up" or "down": which way is better (callbacks that monitor it read it, as Keras's do)

    def __init__(self, name=None, dtype=None):
        self.name = name or snake_case(type(self).__name__)
        self.dtype = "float32"
        self._reset()

    # Inside tl.function each public method becomes a node of the graph, run again on every call with that
    # call's values (an update while tracing would happen once; a result would be the tracing-time value).
    def reset_state(self):
        """Forget every batch added so far (call it at the start of each epoch)."""
        if _python_node_or_none(f"{self.name}.reset_state", self._reset, ()) is None:
            self._reset()

    def update_state(self, *args, **kwargs):
        """Add one batch."""
        if _python_node_or_none(f"{self.name}.update_state", self._update, args, kwargs) is None:
            self._update(*args, **kwargs)

    def result(self):
        """The value over every batch since the last reset (0 before any), a float32 tensor."""
        node = _python_node_or_none(f"{self.name}.result", self._result, ())
        return node if node is not None else self._result()

    def _reset(self):
        self.total, self.count = 0.0, 0.0

    def _result(self):
        return Tensor(np.asarray(self.total / self.count if self.count else 0.0, np.float32))

    def __call__(self, *args, **kwargs):
        node = _python_node_or_none(f"{self.name}.update_state", self._update_and_result, args, kwargs)
        return node if node is not None else self._update_and_result(*args, **kwargs)

    def _update_and_result(self, *args, **kwargs):
        self._update(*args, **kwargs)
        return self._result()

    def _update(self, *args, **kwargs):
        raise NotImplementedError

    def _add(self, values, sample_weight=None):
        values = np.asarray(values, np.float64)
        if sample_weight is None:
            self.total += float(values.sum())
            self.count += float(values.size)
            return
        weight = np.asarray(to_numpy(sample_weight), np.float64)
        if 0 < weight.ndim < values.ndim:  # one weight per example: each example's values count as their mean
            values = values.mean(axis=tuple(range(weight.ndim, values.ndim)))
        weight = np.broadcast_to(weight, values.shape)
        self.total += float((values * weight).sum())
        self.count += float(weight.sum())

    def __repr__(self):
        return f"<tapelab.keras.metrics.{type(self).__name__} '{self.name}' result={float(self.result()):.4g}>"


class Mean(Metric):
    """The running mean of every value added.

    >>> m = tl.metrics.Mean()
    >>> m.update_state(1.0); m.update_state([3.0, 5.0]); float(m.result())
    3.0
    """

    def _update(self, values, sample_weight=None):
        self._add(to_numpy(values), sample_weight)


class Sum(Metric):
    """The running sum of every value added."""

    def _update(self, values, sample_weight=None):
        self._add(to_numpy(values), sample_weight)

    def _result(self):
        return Tensor(np.asarray(self.total, np.float32))


class SparseCategoricalAccuracy(Metric):
    """How often the highest score is the integer label, over every batch since ``reset_state()``.

    >>> acc = tl.metrics.SparseCategoricalAccuracy()
    >>> acc.update_state([0, 1], [[0.9, 0.1], [0.2, 0.8]])     # both right
    >>> acc.update_state([1, 1], [[0.6, 0.4], [0.3, 0.7]])     # one right
    >>> float(acc.result())
    0.75
    """

    _direction = "up"

    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(name, dtype)

    def _update(self, y_true, y_pred, sample_weight=None):
        self._add(_sparse_hits(self.name, to_numpy(y_true), to_numpy(y_pred)), sample_weight)


class CategoricalAccuracy(Metric):
    """How often the highest score is where the one-hot label has its 1."""

    _direction = "up"

    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(name, dtype)

    def _update(self, y_true, y_pred, sample_weight=None):
        labels, scores = to_numpy(y_true), to_numpy(y_pred)
        _same_shape(self.name, labels, scores)
        self._add((np.argmax(labels, axis=-1) == np.argmax(scores, axis=-1)).astype(np.float32), sample_weight)


class Accuracy(Metric):
    """How often ``y_pred`` equals ``y_true`` exactly (class ids against class ids)."""

    _direction = "up"

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(name, dtype)

    def _update(self, y_true, y_pred, sample_weight=None):
        labels, predictions = to_numpy(y_true), to_numpy(y_pred)
        _same_shape(self.name, labels, predictions)
        self._add((labels == predictions).astype(np.float32), sample_weight)


class BinaryAccuracy(Metric):
    """How often ``y_pred > threshold`` equals the 0/1 label."""

    _direction = "up"

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        self.threshold = threshold
        super().__init__(name, dtype)

    def _update(self, y_true, y_pred, sample_weight=None):
        labels, scores = to_numpy(y_true), to_numpy(y_pred)
        if labels.shape + (1,) == scores.shape:  # labels (batch,) for one output per example (batch, 1)
            labels = labels[..., None]
        _same_shape(self.name, labels, scores)
        self._add((labels == (scores > self.threshold)).astype(np.float32), sample_weight)


class _MeanError(Metric):
    """The mean of an elementwise error of ``y_true - y_pred`` (``_error``) over every batch."""

    _direction = "down"

    def _update(self, y_true, y_pred, sample_weight=None):
        labels, predictions = to_numpy(y_true), to_numpy(y_pred)
        # the loss's shape rule: an extra trailing axis of size 1 on one side ((n,) against (n, 1)) is matched
        if labels.ndim == predictions.ndim + 1 and labels.shape[-1:] == (1,):
            predictions = predictions[..., None]
        elif predictions.ndim == labels.ndim + 1 and predictions.shape[-1:] == (1,):
            labels = labels[..., None]
        _same_shape(self.name, labels, predictions)
        self._add(np.mean(self._error(labels - predictions), axis=-1), sample_weight)


class MeanSquaredError(_MeanError):
    """The mean of ``(y_true - y_pred)^2`` over every batch."""

    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(name, dtype)

    _error = staticmethod(np.square)


class MeanAbsoluteError(_MeanError):
    """The mean of ``|y_true - y_pred|`` over every batch (an error in the targets' own units)."""

    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(name, dtype)

    _error = staticmethod(np.abs)


class _AutoAccuracy(Metric):
    """``metrics=["accuracy"]`` in ``compile``: which accuracy is meant follows from the labels' shape, as Keras
    picks it (integer labels: sparse categorical; one-hot: categorical; one output: binary)."""

    _direction = "up"

    def __init__(self, name="accuracy"):
        self._chosen = None
        super().__init__(name)

    def _reset(self):
        super()._reset()
        if getattr(self, "_chosen", None) is not None:
            self._chosen._reset()

    def _update(self, y_true, y_pred, sample_weight=None):
        if self._chosen is None:
            labels, scores = np.shape(to_numpy(y_true)), np.shape(to_numpy(y_pred))
            if labels == scores and scores[-1:] != (1,) and len(scores) > 1:
                self._chosen = CategoricalAccuracy(self.name)
            elif scores[-1:] == (1,) or len(scores) == 1:
                self._chosen = BinaryAccuracy(self.name)
            else:
                self._chosen = SparseCategoricalAccuracy(self.name)
        self._chosen._update(y_true, y_pred, sample_weight)

    def _result(self):
        return self._chosen._result() if self._chosen is not None else super()._result()


class OnOutput(Metric):
    """``metric`` on output ``k`` of a model with the outputs ``names`` (``compile(metrics={"out": [...]})``), named
    ``<output>_<metric>`` as Keras logs it."""

    def __init__(self, metric, names, k):
        self.metric, self.names, self.k = metric, names, k
        self._direction = metric._direction
        super().__init__(name=f"{names[k]}_{metric.name}")

    def _reset(self):
        if "metric" in self.__dict__:
            self.metric.reset_state()

    def _update(self, y_true, y_pred, sample_weight=None):
        from tapelab.keras.losses import output_of

        self.metric.update_state(output_of(y_true, self.names, self.k, self.name),
                                 output_of(y_pred, self.names, self.k, self.name))

    def _result(self):
        return self.metric.result()


def per_output(metrics, names):
    """``compile(metrics=...)`` for a model with several outputs: a dict by output name, or a list with one list per
    output (or None), each metric on its output (:class:`OnOutput`)."""
    if isinstance(metrics, dict):
        unknown = sorted(set(metrics) - set(names))
        if unknown:
            raise ValueError(spell(f"compile: metrics= names {', '.join(map(repr, unknown))}, which the model does not "
                                   f"have; its outputs are {names}."))
        chosen = [metrics.get(n) for n in names]
    elif isinstance(metrics, (list, tuple)) and len(metrics) == len(names) and all(
            m is None or isinstance(m, (list, tuple)) for m in metrics):
        chosen = list(metrics)
    else:
        raise ValueError(spell(f"compile: the model has {len(names)} outputs ({', '.join(names)}), so say which "
                               "output each metric is for: metrics={name: [...]}, or a list of one list per output, "
                               "e.g. metrics=[[], ['accuracy']]."))
    return [OnOutput(get(m), names, k) for k, ms in enumerate(chosen)
            for m in ([] if ms is None else ms if isinstance(ms, (list, tuple)) else [ms])]


def get(identifier):
    """A metric from a name (``"accuracy"``, ``"mse"``, ...: it is the metric's name, as in Keras's history), a
    Metric, or a function ``f(y_true, y_pred)`` of per-example values (its running mean)."""
    names = {"accuracy": _AutoAccuracy, "acc": _AutoAccuracy, "sparse_categorical_accuracy": SparseCategoricalAccuracy,
             "categorical_accuracy": CategoricalAccuracy, "binary_accuracy": BinaryAccuracy,
             "mse": MeanSquaredError, "mean_squared_error": MeanSquaredError,
             "mae": MeanAbsoluteError, "mean_absolute_error": MeanAbsoluteError}
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if isinstance(identifier, str) and identifier.lower() in names:
        return names[identifier.lower()](name=identifier)
    from tapelab.keras import losses

    if isinstance(identifier, str) and identifier.lower() in losses._BY_NAME:  # a loss, as a metric: its mean
        return MeanMetricWrapper(losses._BY_NAME[identifier.lower()](reduction="none"), name=identifier)
    if callable(identifier) and not isinstance(identifier, type):
        return MeanMetricWrapper(identifier)
    raise ValueError(f"unknown metric {identifier!r}: use one of {sorted(names)}, a loss's name, a metric object or "
                     "a function f(y_true, y_pred)")


class MeanMetricWrapper(Mean):
    """The running mean of ``fn(y_true, y_pred)``: a loss used as a metric (``metrics=["mse"]``)."""

    def __init__(self, fn, name=None, dtype=None):
        self.fn = fn
        super().__init__(name or getattr(fn, "__name__", "mean_metric_wrapper"), dtype)

    def _update(self, y_true, y_pred, sample_weight=None):
        self._add(to_numpy(self.fn(y_true, y_pred)), sample_weight)


__all__ = ["Accuracy", "BinaryAccuracy", "CategoricalAccuracy", "Mean", "MeanAbsoluteError", "MeanMetricWrapper",
           "MeanSquaredError", "Metric", "SparseCategoricalAccuracy", "Sum", "accuracy", "evaluate_accuracy", "get"]
