"""Loss functions shaped like ``keras.losses``, built from tapelab ops so the tape records every step.

    loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True)
    with tl.GradientTape() as tape:
        loss = loss_fn(y, model(x))       # a float32 scalar: the mean over the batch

A loss object's ``reduction`` is ``"sum_over_batch_size"`` (the mean; Keras's default), ``"sum"``
or ``"none"`` (one value per example).
"""

import numpy as np

from tapelab import array_ops, nn
from tapelab import math as tmath
from tapelab.engine.errors import InvalidArgumentError
from tapelab.engine.learner import spell
from tapelab.engine.tensor import Tensor, convert_to_tensor, to_numpy

EPSILON = 1e-7  # keras.backend.epsilon(): how far probabilities are kept from 0 and 1 before the log

_REDUCTIONS = ("sum_over_batch_size", "sum", "none", None)


def _as_pred(y_pred, who):
    y_pred = convert_to_tensor(y_pred)
    if y_pred._value.dtype.kind != "f":
        raise TypeError(
            f"{who}: y_pred must be a float tensor (the model's output), got {y_pred.dtype.name}. "
            "Did you swap the arguments? The order is loss(y_true, y_pred)."
        )
    return y_pred


def _as_target(y_true, dtype):
    # Keras: y_true = convert_to_tensor(y_true, dtype=y_pred.dtype)
    if isinstance(y_true, Tensor):
        return y_true if y_true.dtype == dtype else array_ops.cast(y_true, dtype)
    return Tensor(np.asarray(y_true, dtype=dtype.as_numpy_dtype))


def mean_squared_error(y_true, y_pred):
    """Per-example mean squared error: ``mean((y_true - y_pred)^2, axis=-1)``.

    If the ranks differ by one because of a trailing axis of size 1 ((n,) against (n, 1)), that
    axis is added to the other, as Keras does; other shape differences raise instead of
    broadcasting silently into an (n, n) matrix.
    """
    y_pred = _as_pred(y_pred, "mean_squared_error")
    y_true = _as_target(y_true, y_pred.dtype)
    ts, ps = tuple(y_true.shape), tuple(y_pred.shape)
    if len(ts) == len(ps) + 1 and ts[-1:] == (1,):
        y_pred = array_ops.reshape(y_pred, ps + (1,))
    elif len(ps) == len(ts) + 1 and ps[-1:] == (1,):
        y_true = array_ops.reshape(y_true, ts + (1,))
    if tuple(y_true.shape) != tuple(y_pred.shape):
        raise InvalidArgumentError(
            f"mean_squared_error: y_true has shape {ts} but y_pred has shape {ps}. They must match (one may have "
            "an extra trailing axis of size 1); otherwise y_true - y_pred would broadcast into a bigger array "
            "and the loss would be silently wrong. Reshape one of them."
        )
    return tmath.reduce_mean(tmath.square(tmath.subtract(y_true, y_pred)), axis=-1)  # mean over the last axis


MSE = mse = mean_squared_error  # Keras 3's names for it


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False):
    """Per-example cross-entropy ``-log p[label]`` for integer labels.

    ``y_pred`` has shape (batch, classes): logits if ``from_logits=True`` (the stable choice: the
    log-sum-exp is computed without overflow), else probabilities, which are clipped to
    [1e-7, 1 - 1e-7] before the log so that a probability of 0 gives a large finite loss instead of
    inf (Keras does the same). ``y_true`` has shape (batch,) or (batch, 1).

    >>> tl.losses.sparse_categorical_crossentropy([0], [[0.5, 0.25, 0.25]]).numpy()   # -log 0.5
    array([0.6931472], dtype=float32)
    """
    who = "sparse_categorical_crossentropy"
    y_pred = _as_pred(y_pred, who)
    labels = _labels(y_true, y_pred, who)
    if from_logits:
        logits = y_pred
    else:
        # log(clip(p, eps, 1 - eps)); the softmax inside the op below renormalises the clipped values
        clipped = tmath.minimum(tmath.maximum(y_pred, EPSILON), 1 - EPSILON)
        logits = tmath.log(clipped)
    return nn.checked_sparse_xent(labels, logits)


def _labels(y_true, y_pred, who):
    """y_true as class ids of shape y_pred.shape[:-1]: a (batch, 1) column loses its last axis and
    whole-number floats become int64 (as Keras). Dtype and range are checked by the op itself.

    A tensor stays a tensor (made into ids by ops), so a traced function reads new labels on every run."""
    if y_pred.ndim < 1:
        raise InvalidArgumentError(f"{who}: y_pred must have a class axis (shape (batch, classes)), got a scalar")
    given = y_true if isinstance(y_true, Tensor) else None
    raw = given._value if given is not None else to_numpy(y_true)
    batch_shape = y_pred._value.shape[:-1]
    column = raw.ndim == y_pred.ndim and raw.shape[-1:] == (1,)
    _check_label_shape(raw.shape[:-1] if column else raw.shape, raw, y_pred, batch_shape, who)
    if given is not None:
        labels = array_ops.reshape(given, batch_shape) if column else given
        return array_ops.cast(labels, "int64") if labels.dtype.is_floating else labels
    if raw.shape != batch_shape:  # (the learner's own array otherwise, so a picture names it as the code does)
        raw = raw.reshape(batch_shape)
    if raw.dtype.kind == "f":
        _check_whole_numbers(raw, y_pred, who)
        raw = raw.astype(np.int64)  # Keras casts float labels to int64 too
    return convert_to_tensor(raw)


def _check_label_shape(shape, raw, y_pred, batch_shape, who):
    """One label per row of ``y_pred`` (``shape``: the labels' without a trailing column), or say what is wrong."""
    if shape == batch_shape:
        return
    hint = ""
    if y_pred.ndim == 1 and raw.ndim == 1:
        hint = (" y_pred has no batch axis: logits for a batch have shape (batch, classes); for one example "
                "use tl.reshape(y_pred, (1, -1)).")
    if raw.shape == tuple(y_pred.shape):
        hint = (" y_true looks one-hot encoded (one column per class): use integer labels instead, e.g. "
                "y = tl.argmax(y_onehot, axis=-1), or a categorical (not sparse) cross-entropy.")
    raise InvalidArgumentError(
        f"{who}: y_true has shape {tuple(raw.shape)} but y_pred has shape {tuple(y_pred.shape)}; "
        f"expected one integer label per row of y_pred, i.e. shape {batch_shape} (or {batch_shape + (1,)})."
        + hint
    )


def _check_whole_numbers(raw, y_pred, who):
    """Float labels must be whole class ids (``2.0``, not ``2.5`` or nan)."""
    fractional = ~np.isfinite(raw) | (raw != np.round(raw))
    if np.any(fractional):
        raise InvalidArgumentError(
            f"{who}: y_true must hold integer class ids 0..{y_pred.shape[-1] - 1}, but it has the value "
            f"{raw[fractional].flat[0]}. Pass integer labels (one class id per example)."
        )


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Per-example cross-entropy ``-sum(y_true * log p)`` for one-hot (or probability) labels.

    With ``from_logits=False`` the predictions are first scaled to sum to 1 and clipped to
    [1e-7, 1 - 1e-7] (as Keras).
    """
    who = "categorical_crossentropy"
    y_pred = _as_pred(y_pred, who)
    y_true = _as_target(y_true, y_pred.dtype)
    if tuple(y_true.shape) != tuple(y_pred.shape):
        raise InvalidArgumentError(
            f"{who}: y_true has shape {tuple(y_true.shape)} but y_pred has shape {tuple(y_pred.shape)}; they must "
            "match (one-hot labels, one column per class). For integer labels use "
            "sparse_categorical_crossentropy.")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_pred.shape[axis]
    if from_logits:
        return -tmath.reduce_sum(y_true * tmath.log_softmax(y_pred, axis=axis), axis=axis)
    p = y_pred / tmath.reduce_sum(y_pred, axis=axis, keepdims=True)
    p = tmath.minimum(tmath.maximum(p, EPSILON), 1 - EPSILON)
    return -tmath.reduce_sum(y_true * tmath.log(p), axis=axis)


def binary_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    """Per-example mean over the last axis of ``-(y log p + (1 - y) log(1 - p))`` for 0/1 labels."""
    who = "binary_crossentropy"
    y_pred = _as_pred(y_pred, who)
    y_true = _as_target(y_true, y_pred.dtype)
    if tuple(y_true.shape) + (1,) == tuple(y_pred.shape):  # labels (batch,) for one output (batch, 1), as Keras
        y_true = array_ops.reshape(y_true, tuple(y_pred.shape))
    if tuple(y_true.shape) != tuple(y_pred.shape):
        raise InvalidArgumentError(f"{who}: y_true has shape {tuple(y_true.shape)} but y_pred has shape "
                                   f"{tuple(y_pred.shape)}; they must match (one 0/1 label per output).")
    if from_logits:
        from tapelab import nn

        values = nn.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)
    else:
        p = tmath.minimum(tmath.maximum(y_pred, EPSILON), 1 - EPSILON)
        values = -(y_true * tmath.log(p) + (1.0 - y_true) * tmath.log(1.0 - p))
    return tmath.reduce_mean(values, axis=axis)


class Loss:
    """Base class: ``loss(y_true, y_pred)`` computes per-example values, then reduces them."""

    def __init__(self, reduction="sum_over_batch_size", name=None):
        if reduction not in _REDUCTIONS:
            raise ValueError(f"{type(self).__name__}: reduction must be one of {_REDUCTIONS[:3]}, got {reduction!r}")
        self.reduction = reduction
        self.name = name or type(self).__name__

    def call(self, y_true, y_pred):
        """One loss value per example (``__call__`` then reduces them); subclasses implement it.

        >>> tl.losses.MeanSquaredError().call([[1.0, 2.0]], [[1.0, 4.0]]).numpy()   # (0 + 4) / 2
        array([2.], dtype=float32)
        """
        raise NotImplementedError(f"{type(self).__name__} must implement call(y_true, y_pred)")

    def __call__(self, y_true, y_pred):
        values = self.call(y_true, y_pred)
        if self.reduction in ("none", None):
            return values
        if self.reduction == "sum":
            return tmath.reduce_sum(values)
        return tmath.reduce_mean(values)  # "sum_over_batch_size": sum / number of values

    def __repr__(self):
        return f"<tapelab.keras.losses.{type(self).__name__} reduction={self.reduction!r}>"


class _FunctionLoss(Loss):
    """A function ``fn(y_true, y_pred, **kwargs)`` of per-example values, reduced like any Loss (the mean over the
    batch by default): what ``compile(loss=fn)`` makes of a function, as Keras does."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, **kwargs):
        super().__init__(reduction, name or getattr(fn, "__name__", None))
        self.fn, self.fn_kwargs = fn, kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self.fn_kwargs)


class MeanSquaredError(Loss):
    """The mean of ``(y_true - y_pred)^2``, like ``keras.losses.MeanSquaredError``.

    >>> float(tl.losses.MeanSquaredError()([1.0, 2.0], [1.0, 4.0]))    # (0 + 4) / 2
    2.0
    """

    def call(self, y_true, y_pred):
        return mean_squared_error(y_true, y_pred)


class SparseCategoricalCrossentropy(Loss):
    """Cross-entropy for integer class labels, averaged over the batch.

    Use ``from_logits=True`` when the model's last layer has no softmax (recommended: more stable).

    >>> loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True)
    >>> float(loss_fn([1], [[0.0, 0.0]]))      # log 2
    0.6931471824645996
    """

    def __init__(self, from_logits=False, reduction="sum_over_batch_size", name=None):
        super().__init__(reduction, name)
        self.from_logits = bool(from_logits)

    def call(self, y_true, y_pred):
        return sparse_categorical_crossentropy(y_true, y_pred, from_logits=self.from_logits)

    def __repr__(self):
        return f"<tapelab.keras.losses.SparseCategoricalCrossentropy from_logits={self.from_logits}>"

class CategoricalCrossentropy(Loss):
    """Cross-entropy for one-hot labels, averaged over the batch (``from_logits=True`` for raw scores)."""

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size", name=None):
        super().__init__(reduction, name)
        self.from_logits, self.label_smoothing, self.axis = bool(from_logits), float(label_smoothing), axis

    def call(self, y_true, y_pred):
        return categorical_crossentropy(y_true, y_pred, self.from_logits, self.label_smoothing, self.axis)


class BinaryCrossentropy(Loss):
    """Cross-entropy for 0/1 labels, averaged over the batch (``from_logits=True`` for raw scores)."""

    def __init__(self, from_logits=False, reduction="sum_over_batch_size", name=None):
        super().__init__(reduction, name)
        self.from_logits = bool(from_logits)

    def call(self, y_true, y_pred):
        return binary_crossentropy(y_true, y_pred, self.from_logits)


_BY_NAME = {"mse": MeanSquaredError, "mean_squared_error": MeanSquaredError,
            "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
            "categorical_crossentropy": CategoricalCrossentropy, "binary_crossentropy": BinaryCrossentropy}


def output_of(structure, names, k, who):
    """Output ``k``'s part of ``structure`` (labels or predictions of a model with the outputs ``names``): a dict's
    entry under ``names[k]``, a list's ``k``-th item."""
    if isinstance(structure, dict):
        if names[k] not in structure:
            raise ValueError(spell(f"{who}: no entry {names[k]!r} among {sorted(structure)}; the model's outputs are "
                                   f"{names}: give one entry per output."))
        return structure[names[k]]
    if isinstance(structure, (list, tuple)) and len(structure) == len(names):
        return structure[k]
    got = f"{len(structure)} items" if isinstance(structure, (list, tuple)) else f"one {type(structure).__name__}"
    raise ValueError(spell(f"{who}: the model has {len(names)} outputs ({', '.join(names)}) but got {got}; give a "
                           "list with one item per output, in order, or a dict keyed by the outputs' names."))


class OutputLosses(Loss):
    """The loss of a model with several outputs (``names``): ``sum_k weight_k * loss_k(y[k], y_pred[k])``.
    ``losses`` is one loss for every output, or one per output (a list in order, or a dict by name; None: that
    output is not trained); ``weights`` likewise (default 1). ``parts`` holds the last call's loss per output, by
    name: ``fit`` logs them as ``<name>_loss``, as Keras does."""

    def __init__(self, names, losses, weights=None):
        super().__init__(name="loss")
        self.names = list(names)
        self.losses = self._per_output(losses, "loss", get)
        self.weights = self._per_output(1.0 if weights is None else weights, "loss_weights", float)
        self.parts = {}

    def _per_output(self, given, what, make):
        names = self.names
        if isinstance(given, dict):
            unknown = sorted(set(given) - set(names))
            if unknown:
                raise ValueError(spell(f"compile: {what}= names {', '.join(map(repr, unknown))}, which the model "
                                       f"does not have; its outputs are {names}."))
            return [None if given.get(n) is None else make(given[n]) for n in names]
        if isinstance(given, (list, tuple)):
            if len(given) != len(names):
                raise ValueError(spell(f"compile: {what}= has {len(given)} items for a model of {len(names)} "
                                       f"outputs ({', '.join(names)}); give one per output, or a dict by name."))
            return [None if g is None else make(g) for g in given]
        return [make(given)] * len(names)

    def call(self, y_true, y_pred):
        self.parts, total = {}, None
        for k, (name, loss, weight) in enumerate(zip(self.names, self.losses, self.weights)):
            if loss is None:
                continue
            part = loss(output_of(y_true, self.names, k, "loss: y"), output_of(y_pred, self.names, k, "loss: y_pred"))
            self.parts[name] = part
            part = part if weight == 1.0 else tmath.multiply(part, weight)
            total = part if total is None else tmath.add(total, part)
        return total

    def __call__(self, y_true, y_pred):
        return self.call(y_true, y_pred)


def get(identifier):
    """A loss from a name (``"sparse_categorical_crossentropy"``, ``"mse"``, ...), a Loss, or a function
    ``f(y_true, y_pred)``."""
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()  # the class itself given: an instance with its defaults, as Keras
    if isinstance(identifier, Loss):
        return identifier
    if callable(identifier):  # per-example values, averaged over the batch (Keras's default reduction)
        return _FunctionLoss(identifier)
    raise ValueError(spell(f"unknown loss {identifier!r}. Use one of {sorted(_BY_NAME)}, a loss object such as "
                           "tl.keras.losses.SparseCategoricalCrossentropy(from_logits=True), or a function "
                           "f(y_true, y_pred)."))


__all__ = ["BinaryCrossentropy", "CategoricalCrossentropy", "Loss", "MSE", "MeanSquaredError",
           "SparseCategoricalCrossentropy", "binary_crossentropy", "categorical_crossentropy", "get",
           "mean_squared_error", "mse", "sparse_categorical_crossentropy"]
