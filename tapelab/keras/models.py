"""Keras-shaped models (``keras.Model`` and ``keras.Sequential``): ``compile``, then ``fit`` runs the tape loop.

    model = tl.keras.Sequential([tl.keras.layers.Flatten(input_shape=(28, 28)), tl.keras.layers.Dense(10)])
    model.compile(optimizer="adam", loss=tl.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(x_train, y_train, epochs=5)     # one progress bar per epoch: loss and accuracy
    model.evaluate(x_test, y_test)
    tl.viz.draw(model.last_tape)                        # the tape of fit's last training step

``fit`` is the loop the lessons write by hand: for each batch, :meth:`Model.train_step` runs the model
inside a ``GradientTape``, takes the loss's gradient with respect to ``trainable_variables`` and hands
it to the optimizer. Read ``train_step`` below: that is all ``fit`` does, besides batching and reporting.
"""

import contextlib
import itertools
import warnings
from pathlib import Path

import numpy as np

from tapelab import math as tmath
from tapelab.engine import nest
from tapelab.engine.errors import Unsupported, UnsupportedError
from tapelab.engine.learner import spell
from tapelab.engine.tape import GradientTape
from tapelab.engine.tensor import Tensor, convert_to_tensor, to_numpy
from tapelab.keras import callbacks as callbacks_module
from tapelab.keras import losses as losses_module
from tapelab.keras import metrics as metrics_module
from tapelab.keras import optimizers as optimizers_module
from tapelab.keras.callbacks import History  # noqa: F401 (also models.History, as before)
from tapelab.keras.layers import InputLayer, Layer
from tapelab.keras.naming import each_once, keras_name
from tapelab.keras.symbolic import KerasTensor, unrecorded


class Model(Layer):
    """A layer with a training loop: subclass it (create layers in ``__init__``, use them in ``call``), or use
    :class:`Sequential`.

    >>> class MyModel(tl.keras.Model):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.d1 = tl.keras.layers.Dense(8, activation="relu")
    ...         self.d2 = tl.keras.layers.Dense(2)
    ...     def call(self, x):
    ...         return self.d2(self.d1(x))
    >>> model = MyModel()
    >>> model(tl.ones((5, 3))).shape
    TensorShape([5, 2])
    >>> [layer.name for layer in model.layers] == [model.d1.name, model.d2.name]
    True

    A model runs no name scope of its own: each layer's ops are recorded under the layer's name, so a tape's
    picture groups them layer by layer.
    """

    _functional = None  # the Functional class (tapelab/keras/functional.py builds on this module and sets it)

    def __new__(cls, *args, **kwargs):
        if cls is Model and (args or "inputs" in kwargs or "outputs" in kwargs):  # Model(inputs, outputs): Keras's
            return super().__new__(Model._functional)  # functional API
        return super().__new__(cls)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A new model from a config: a functional model's graph (:meth:`Functional.from_config`), else
        ``cls(**config)``."""
        if "nodes" in config and cls is Model:
            return Model._functional.from_config(config, custom_objects)
        return super().from_config(config, custom_objects)

    def __init__(self, *args, **kwargs):
        if args:
            raise TypeError(spell(f"{type(self).__name__}() takes keyword arguments only (name=...), got "
                                  f"{len(args)} positional. Model(inputs, outputs) makes a functional model."))
        super().__init__(**kwargs)
        self.optimizer = self.loss = None
        self.compiled_metrics = []
        self.last_tape = None  # the GradientTape of the last training step (fit / train_step), for drawing
        self._step_loss = None  # that step's own loss (fit's curve plots it; the logs hold the epoch's running mean)
        self.stop_training = False

    @property
    def layers(self):
        """The model's layers: a Sequential's in order, a subclassed model's in the order they were assigned
        (also in lists or dicts, also appended later)."""
        return list(self._layers) if "_layers" in self.__dict__ else Layer._sublayers(self)

    def _sublayers(self):
        return [layer for layer in self.layers if isinstance(layer, Layer)]  # (a Sequential may hold functions)

    @property
    def weights(self):
        """Every weight, layer by layer (each layer's trainable ones first), as Keras orders them."""
        return each_once(self._own_variables() + [w for layer in self._sublayers() for w in layer.weights])

    @property
    def name_scope(self):
        """No scope: a model's ops stay under each layer's own name, so pictures group its tape layer by layer."""
        return _NO_SCOPE

    # --- compile / fit / evaluate / predict ------------------------------------------------------------------
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None, run_eagerly=None,
                jit_compile=None, **kwargs):
        """Choose the optimizer, the loss and the metrics ``fit`` reports (names such as ``"adam"``,
        ``"sparse_categorical_crossentropy"``, ``"accuracy"``, or objects). Every step runs eagerly on the tape
        (``run_eagerly`` and ``jit_compile`` are accepted for Keras's sake).

        A functional model with several outputs takes one loss for all, or one per output (a list in order, or a
        dict by output name), ``loss_weights`` likewise, and metrics per output (``{"out": ["accuracy"]}``); the
        loss trained is the weighted sum, and ``fit`` logs each output's as ``<output>_loss``."""
        if kwargs:
            raise TypeError(f"{self.name}.compile: unexpected keyword argument(s) {', '.join(sorted(kwargs))}")
        self.optimizer = optimizers_module.get(optimizer)
        self._compiled = True
        if loss is None:  # (the model's own losses, add_loss and regularizers, are then all it trains on)
            self.loss, self.compiled_metrics, self._output_losses = None, [metrics_module.get(m) for m in
                                                                            _as_list(metrics)], {}
            return
        names = self.output_names
        if len(names) > 1:
            self.loss = losses_module.OutputLosses(names, loss, loss_weights)
            self.compiled_metrics = [] if metrics is None else metrics_module.per_output(metrics, names)
            self._output_losses = {name: metrics_module.Mean(name=f"{name}_loss") for name in names}
            return
        if isinstance(loss, (list, dict)) or loss_weights is not None:
            raise ValueError(spell(f"{self.name}.compile: loss= is a {type(loss).__name__} (or loss_weights= is "
                                   "given), which is for a functional model of several outputs; this model has one "
                                   "output: give one loss."))
        self.loss = losses_module.get(loss)
        self.compiled_metrics = [metrics_module.get(m) for m in _as_list(metrics)]
        self._output_losses = {}

    @property
    def output_names(self):
        """The names of the model's outputs (a functional model's; one output: ``[name]``)."""
        return [self.name]

    @property
    def metrics(self):
        """The running metrics of ``fit`` and ``evaluate``: the loss's mean first, then each output's loss (several
        outputs), then the compiled ones."""
        return [self._loss_tracker, *self.__dict__.get("_output_losses", {}).values()] + self.compiled_metrics

    @property
    def metrics_names(self):
        return [m.name for m in self.metrics]

    def train_step(self, data):
        """One step of gradient descent on one batch ``data = (x, y)``: the loop the lessons write by hand.

        Returns the running metrics as ``{name: value}``; the step's tape is kept as ``model.last_tape``.
        """
        x, y = _pair(self.name, "fit", data)
        with GradientTape() as tape:
            predictions = self(x, training=True)  # (the first call builds the layers' weights)
            loss = self.compute_loss(y, predictions)
        variables = self.trainable_variables
        if variables:
            gradients = tape.gradient(loss, variables)
            self.optimizer.apply_gradients(zip(gradients, variables))
        else:
            warnings.warn("The model does not have any trainable weights.", stacklevel=2)
        self.last_tape, self._step_loss = tape, loss
        return self._update_metrics(loss, y, predictions)

    def test_step(self, data):
        """The loss and metrics on one batch, without training (what ``evaluate`` runs per batch)."""
        x, y = _pair(self.name, "evaluate", data)
        predictions = self(x, training=False)
        return self._update_metrics(self.compute_loss(y, predictions), y, predictions)

    def compute_loss(self, y, predictions):
        """The compiled loss, plus the model's extra losses (``self.losses``: ``add_loss`` values, regularizers),
        as Keras adds them: what ``train_step`` differentiates and ``fit`` logs as ``loss``."""
        loss = None if self.loss is None else self.loss(y, predictions)
        for extra in self.losses:
            extra = convert_to_tensor(extra)
            extra = tmath.reduce_sum(extra) if extra.ndim else extra
            loss = extra if loss is None else tmath.add(loss, extra)
        if loss is None:
            raise ValueError(spell(f"{self.name}: No loss to compute. Provide a `loss` argument in `compile()`, e.g. "
                                   "loss='sparse_categorical_crossentropy' (this model adds no loss of its own with "
                                   "add_loss or a regularizer)."))
        return loss

    def _update_metrics(self, loss, y, predictions):
        examples = len(nest.flatten(predictions)[0])
        self._loss_tracker.update_state(loss, sample_weight=examples)  # the epoch's mean over examples
        for name, part in getattr(self.loss, "parts", {}).items():
            self._output_losses[name].update_state(part, sample_weight=examples)
        for metric in self.compiled_metrics:
            metric.update_state(y, predictions)
        return {m.name: float(m.result()) for m in sorted(self.metrics, key=lambda m: m.name)}  # Keras 3's order

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_split=0.0,
            validation_data=None, shuffle=True, initial_epoch=0, steps_per_epoch=None, plot=False, seed=None,
            flow=False):
        """Train for ``epochs`` passes over ``(x, y)`` (arrays, batched ``batch_size`` rows at a time, 32 by
        default) or over a batched ``tl.data.Dataset`` of ``(x, y)``. Returns a :class:`History`.

        Each epoch shows a progress bar with the running loss and metrics (``verbose=2``: one line per epoch,
        ``0``: nothing); ``plot=True`` also draws a live plot of the loss of each step, the mean since the epoch
        began (the bar's loss, as Keras reports it) and, with validation data, the validation loss of each epoch
        (``history.loss_plot``); ``flow=True`` a live plot of each layer's gradient norm |dL/dW| at every step
        (``history.flow_plot``, a :class:`tapelab.lessons.plots.FlowPlot`; pass one of your own for its other
        options). ``validation_data=(x_val, y_val)`` (or a Dataset, or ``validation_split``: the last
        fraction of the rows) is evaluated after each epoch, as ``val_loss`` and ``val_<metric>``. With
        ``steps_per_epoch`` an epoch is that many batches, each epoch going on where the last one stopped.
        ``callbacks``: :mod:`tapelab.keras.callbacks` objects, called at each point of the loop below (Keras's).
        """
        self._check_compiled("fit")
        if validation_split and validation_data is None:
            x, y, validation_data = _split(self.name, x, y, validation_split)
        batches = _batches(self.name, "fit", x, y, batch_size, shuffle, seed)
        stream = _endless(batches) if steps_per_epoch else None
        callbacks = _callback_list(self, "fit", callbacks, add_history=True, add_progbar=verbose != 0,
                                   verbose=verbose, epochs=epochs, steps=steps_per_epoch or _length(batches))
        for live in ([callbacks_module.LiveLossPlot()] if plot else []) + _flow_plots(self.name, flow):
            callbacks.append(live)
        if validation_data is not None:
            val_x, val_y = _as_pair(validation_data)
            val_batches = _batches(self.name, "fit", val_x, val_y, None if _is_dataset(val_x) else batch_size, False,
                                   None)
        self.stop_training = False
        callbacks.on_train_begin()
        training_logs = None
        for epoch in range(initial_epoch, epochs):
            for metric in self.metrics:
                metric.reset_state()
            callbacks.on_epoch_begin(epoch)
            step_logs = None
            for step, data in enumerate(batches if stream is None else itertools.islice(stream, steps_per_epoch)):
                callbacks.on_train_batch_begin(step)
                step_logs = self.train_step(data)
                callbacks.on_train_batch_end(step, step_logs)
                if self.stop_training:
                    break
            if step_logs is None:
                raise ValueError(f"{self.name}.fit: there are no batches to train on (x has 0 examples, or the "
                                 "Dataset yields nothing).")
            epoch_logs = dict(step_logs)
            if validation_data is not None:
                val_logs = self._evaluate(val_batches, callbacks)
                epoch_logs.update({f"val_{name}": value for name, value in val_logs.items()})
            callbacks.on_epoch_end(epoch, epoch_logs)
            training_logs = epoch_logs
            if self.stop_training:
                break
        callbacks.on_train_end(training_logs)
        return self.history

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", return_dict=False, callbacks=None):
        """The mean loss (and metrics) on ``(x, y)`` or a batched Dataset, without training.

        Returns the loss alone, or ``[loss, metric, ...]`` with compiled metrics (``return_dict=True``: a dict).
        """
        self._check_compiled("evaluate")
        batches = _batches(self.name, "evaluate", x, y, batch_size, False, None)
        logs = self._evaluate(batches, _callback_list(self, "evaluate", callbacks, add_progbar=verbose != 0,
                                                      verbose=verbose, epochs=1, steps=_length(batches)))
        if return_dict:
            return logs
        values = [logs[m.name] for m in self.metrics]
        return values[0] if len(values) == 1 else values

    def _evaluate(self, batches, callbacks):
        """evaluate's loop (also fit's, on its validation data): test_step on each batch, the callbacks told."""
        for metric in self.metrics:
            metric.reset_state()
        callbacks.on_test_begin()
        logs = None
        for step, data in enumerate(batches):
            callbacks.on_test_batch_begin(step)
            logs = self.test_step(data)
            callbacks.on_test_batch_end(step, logs)
        if logs is None:
            raise ValueError(f"{self.name}.evaluate: there are no batches to evaluate (x has 0 examples, or the "
                             "Dataset yields nothing).")
        callbacks.on_test_end(logs)
        return logs

    def predict(self, x, batch_size=None, verbose="auto", callbacks=None):
        """The model's outputs on ``x`` (an array or a Dataset), ``batch_size`` rows at a time, as a numpy array."""
        batches = _batches(self.name, "predict", x, None, batch_size, False, None)
        callbacks = _callback_list(self, "predict", callbacks, add_progbar=verbose != 0, verbose=verbose, epochs=1,
                                   steps=_length(batches))
        callbacks.on_predict_begin()
        outputs = []
        for step, data in enumerate(batches):
            callbacks.on_predict_batch_begin(step)
            out = self(data[0] if isinstance(data, tuple) else data, training=False)
            outputs.append(nest.pack_like(out, [to_numpy(t) for t in nest.flatten(out)]))  # (several: list or dict)
            callbacks.on_predict_batch_end(step, {"outputs": outputs[-1]})
        callbacks.on_predict_end()
        if not outputs:
            return np.zeros((0,), np.float32)
        return nest.pack_like(outputs[0], [np.concatenate(parts) for parts in zip(*map(nest.flatten, outputs))])

    def _check_compiled(self, what):
        if not self.__dict__.get("_compiled"):
            raise RuntimeError(spell(f"{self.name}.{what}: the model is not compiled. Call model.compile(optimizer="
                                     "'adam', loss='sparse_categorical_crossentropy', metrics=['accuracy']) first."))

    @property
    def _loss_tracker(self):
        if "_loss_mean" not in self.__dict__:
            self.__dict__["_loss_mean"] = metrics_module.Mean(name="loss")
        return self.__dict__["_loss_mean"]

    # --- summary and weights ------------------------------------------------------------------------------
    def summary(self, print_fn=print, connected=None):
        """Print one row per layer: its name and type, its output shape and its number of weights (``connected``:
        ``{id(layer): text}``, a column of the layers each one takes its inputs from, as Keras adds for a graph)."""
        rows = [(f"{getattr(layer, 'name', getattr(layer, '__name__', '?'))} ({type(layer).__name__})",
                 str(getattr(layer, "output_shape", None) or "?"),
                 f"{layer.count_params() if isinstance(layer, Layer) else 0:,}") for layer in self.layers]
        header = _HEADER
        if connected is not None:
            header += ("Connected to",)
            rows = [row + (connected.get(id(layer), "-"),) for row, layer in zip(rows, self.layers)]
        widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
        line = "  ".join(["{:<%d}" % widths[0], "{:<%d}" % widths[1], "{:>%d}" % widths[2]]
                         + ["{:<%d}" % w for w in widths[3:]]).format
        rule = "-" * (sum(widths) + 2 * len(widths) - 2)
        trainable = sum(v.shape.num_elements() for v in self.trainable_variables)
        total = self.count_params()
        table = [line(*row).rstrip() for row in [header, *rows]]
        print_fn("\n".join([f'Model: "{self.name}"', rule, table[0], rule, *table[1:], rule,
                            f"Total params: {total:,}", f"Trainable params: {trainable:,}",
                            f"Non-trainable params: {total - trainable:,}"]))

    def save_weights(self, filepath):
        """Save every weight: ``*.weights.h5`` as HDF5 in Keras 3's layout (``layers/dense/vars/0``, ..., through
        h5py; Keras loads it), anything else as a numpy ``.npz`` with the same keys."""
        path = Path(filepath)
        groups = _weight_groups(self)
        if str(path).endswith(".h5"):
            with _h5py().File(path, "w") as f:
                for group_path, variables in groups:
                    group = f.create_group(group_path)
                    for i, v in enumerate(variables):
                        group.create_dataset(str(i), data=v.numpy())
        else:
            np.savez(path, **{f"{group}/{i}": v.numpy() for group, variables in groups
                              for i, v in enumerate(variables)})

    def save(self, filepath, overwrite=True, **kwargs):
        """Whole-model files (``.keras``, SavedModel) are left to TensorFlow: save the weights instead."""
        raise UnsupportedError(f"{self.name}.save", _WHOLE_MODEL)

    def load_weights(self, filepath):
        """Load weights saved by :meth:`save_weights` into a model of the same architecture."""
        path = Path(filepath)
        if not path.exists() and path.with_suffix(path.suffix + ".npz").exists():
            path = path.with_suffix(path.suffix + ".npz")  # np.savez added .npz
        if not path.exists():
            raise FileNotFoundError(f"{self.name}.load_weights: no file {filepath!r}")
        if not self.built or not self.variables:
            raise ValueError(spell(f"{self.name}.load_weights: the model has no weights yet. Call it once on a "
                                   "batch (model(x)) or give its first layer input_shape=..., then load."))
        stored = _stored_weights(path)
        wanted = [(f"{group}/{i}", v) for group, variables in _weight_groups(self) for i, v in enumerate(variables)]
        self._check_same_weights(stored, wanted)
        for key, var in wanted:
            if stored[key].shape != tuple(var.shape):
                raise ValueError(f"{self.name}.load_weights: {key} has shape {stored[key].shape} in the file but "
                                 f"{tuple(var.shape)} in the model")
            var.assign(stored[key])

    def _check_same_weights(self, stored, wanted):
        """The file holds exactly the model's weights (``wanted``: ``(key, variable)`` pairs), by name."""
        missing = [key for key, _ in wanted if key not in stored]
        if missing or len(stored) != len(wanted):
            raise ValueError(f"{self.name}.load_weights: the file holds weights {sorted(stored)}, the model has "
                             f"{[key for key, _ in wanted]}; load into a model built like the one that was saved.")

_HEADER = ("Layer (type)", "Output Shape", "Param #")
_NO_SCOPE = contextlib.nullcontext()
_WHOLE_MODEL = ("model.save_weights('model.weights.h5'); later build the model from its code and call "
                "model.load_weights('model.weights.h5').")
load_model = Unsupported("tl.keras.models.load_model", "whole-model files (.keras, SavedModel)", _WHOLE_MODEL)




class Sequential(Model):
    """Layers applied one after another, like ``keras.Sequential``.

    Give the first layer ``input_shape=`` (or start with ``tl.keras.Input(shape)``) and the model is built at
    once (``summary()`` works before any data); otherwise it is built on its first call.

    >>> model = tl.keras.Sequential([tl.keras.layers.Dense(8, activation="relu", input_shape=(3,)),
    ...                              tl.keras.layers.Dense(2)])
    >>> model(tl.ones((5, 3))).shape
    TensorShape([5, 2])
    >>> model.count_params()
    50
    """

    def __init__(self, layers=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self._input = None
        self._layers = []
        for layer in layers or []:
            self._append(layer)
        self._build_from_input()

    def add(self, layer):
        """Append a layer (an :class:`InputLayer` from ``keras.Input`` only fixes the input shape)."""
        self._append(layer)
        self._build_from_input()

    def _append(self, layer):
        if isinstance(layer, KerasTensor) and isinstance(layer.node.layer, InputLayer):
            layer = layer.node.layer  # keras.Input(shape): where the model starts
        if not callable(layer):
            raise TypeError(spell(f"{self.name}.add: expected a layer (such as tl.keras.layers.Dense(10)), "
                                  f"got {layer!r}"))
        if isinstance(layer, InputLayer):
            if self.layers:
                first = getattr(self.layers[0], "name", self.layers[0])
                raise ValueError(f"{self.name}.add: keras.Input must come first, before {first!r}")
            self._input = layer.input_shape_declared
            return
        self._layers.append(layer)
        declared = getattr(layer, "input_shape_declared", None) or getattr(layer, "_input", None)
        if len(self.layers) == 1 and declared is not None:  # the first layer's input shape is the model's
            self._input = declared
        self.built = False

    def _build_from_input(self):
        """With a known input shape, build every layer now by running one zero example through the model."""
        if self._input is None or not self.layers or any(n is None for n in self._input):
            return
        self.built = True
        with unrecorded():
            self(np.zeros((1,) + tuple(self._input), np.float32), training=False)

    def call(self, inputs, training=None):
        x = inputs
        for layer in self._layers:  # (not self.layers, which copies the list)
            x = layer(x, training=training) if isinstance(layer, Layer) else layer(x)
        return x


# --- batching and reporting -------------------------------------------------------------------------------------
def _pair(name, what, data):
    if not (isinstance(data, (tuple, list)) and len(data) == 2):
        raise ValueError(spell(
            f"{name}.{what}: each batch must be a pair (x, y), got {type(data).__name__}"
            f"{f' of {len(data)} items' if isinstance(data, (tuple, list)) else ''}. Make the Dataset from both: "
            "tl.data.Dataset.from_tensor_slices((x, y)).batch(32)."))
    return data


def _callback_list(model, what, callbacks, add_history=False, add_progbar=False, **params):
    """``callbacks=`` of fit, evaluate or predict as one CallbackList (Keras's: a CallbackList given is used as it
    is), each checked to be a Callback with an error that names the model and the method."""
    if isinstance(callbacks, callbacks_module.CallbackList):
        return callbacks
    callbacks = callbacks_module._as_callbacks(callbacks, model, what)
    return callbacks_module.CallbackList(callbacks, add_history, add_progbar, model, **params)


def _endless(batches):
    """The batches again and again (a new shuffle each pass), for epochs of ``steps_per_epoch`` batches."""
    while True:
        empty = True
        for data in batches:
            empty = False
            yield data
        if empty:
            return


def _flow_plots(name, flow):
    """fit's gradient-flow plot: ``flow`` is False (none), True (a new one) or a FlowPlot of the learner's."""
    if flow is False or flow is None:
        return []
    if flow is not True:
        from tapelab.lessons.plots import FlowPlot  # (matplotlib loads only when a plot is made)

        if not isinstance(flow, FlowPlot):
            raise TypeError(f"{name}.fit: flow= is True, False or a tl.plots.FlowPlot, got {type(flow).__name__}")
    return [callbacks_module.LiveFlowPlot(None if flow is True else flow)]


def _as_list(value):
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _as_pair(data):
    if isinstance(data, (list, tuple)):
        if len(data) != 2:
            raise ValueError(f"validation_data must be (x_val, y_val), got {len(data)} items")
        return data
    return data, None  # a Dataset of (x, y) batches


def _split(name, x, y, fraction):
    if not 0 < fraction < 1:
        raise ValueError(f"{name}.fit: validation_split must be between 0 and 1, got {fraction!r}")
    if y is None or _is_dataset(x):
        raise ValueError(f"{name}.fit: validation_split needs arrays x and y; give a Dataset validation_data instead")
    cut = int(len(x) * (1 - fraction))
    return x[:cut], y[:cut], (x[cut:], y[cut:])


def _is_dataset(x):
    from tapelab.data import Dataset

    return isinstance(x, Dataset)


def _batches(name, what, x, y, batch_size, shuffle, seed):
    """Batches of ``(x, y)`` (or of ``x`` alone, for predict) from arrays or a batched Dataset."""
    if x is None:
        raise ValueError(f"{name}.{what}: give the data, x (and y), or a tl.data.Dataset of (x, y) batches")
    if _is_dataset(x):
        if y is not None:
            raise ValueError(spell(f"{name}.{what}: x is a Dataset, so y must not be given: the Dataset yields "
                                   "(x, y) pairs (tl.data.Dataset.from_tensor_slices((x, y)).batch(32))."))
        if batch_size is not None:
            raise ValueError(f"{name}.{what}: x is a Dataset, which is batched already; drop batch_size= (or batch "
                             "the Dataset with .batch(n)).")
        return x
    from tapelab.datasets import batches

    if isinstance(x, dict) or _several(x) or isinstance(y, dict) or _several(y):
        return _StructuredBatches(name, what, x, y, batch_size, shuffle, seed)
    x = to_numpy(x) if isinstance(x, Tensor) else np.asarray(x)
    if y is None and what != "predict":
        raise ValueError(spell(f"{name}.{what}: give the labels y as well as x (model.{what}(x, y)), "
                               "or a tl.data.Dataset of (x, y) pairs."))
    if y is not None:
        y = to_numpy(y) if isinstance(y, Tensor) else np.asarray(y)
        if len(y) != len(x):
            raise ValueError(
                f"{name}.{what}: x has {len(x)} examples (shape {x.shape}) but y has {len(y)} labels (shape "
                f"{y.shape}); give one label per example, e.g. x_train with y_train (not y_test).")
    if x.dtype.kind == "f" and x.dtype != np.float32:
        x = x.astype(np.float32)
    return batches(x, y, batch_size=32 if batch_size is None else batch_size, shuffle=shuffle, seed=seed)


def _several(data):
    """Whether ``data`` is a list of arrays (one per input or output of a model), not one array written as a list."""
    return isinstance(data, (list, tuple)) and len(data) > 0 and all(
        isinstance(d, (np.ndarray, Tensor)) or _several(d) for d in data)


class _StructuredBatches:
    """Batches of a model's several inputs (or outputs): ``x`` and ``y`` are lists or dicts of arrays with one row
    per example each; every batch takes the same rows of each, and keeps the structure."""

    def __init__(self, name, what, x, y, batch_size, shuffle, seed):
        from tapelab.datasets import batches

        self.x, self.y = (list(x) if isinstance(x, tuple) else x), (list(y) if isinstance(y, tuple) else y)
        self.xs = [to_numpy(a) if isinstance(a, Tensor) else np.asarray(a) for a in nest.flatten(x)]
        self.ys = [] if y is None else [to_numpy(a) if isinstance(a, Tensor) else np.asarray(a)
                                        for a in nest.flatten(y)]
        rows = {len(a) for a in self.xs + self.ys}
        if len(rows) != 1:
            shapes = ", ".join(str(a.shape) for a in self.xs + self.ys)
            raise ValueError(spell(f"{name}.{what}: the arrays of x and y have different numbers of examples "
                                   f"(shapes {shapes}); give one row per example in each."))
        self.xs = [a.astype(np.float32) if a.dtype.kind == "f" and a.dtype != np.float32 else a for a in self.xs]
        self.rows = batches(np.arange(rows.pop()), None, batch_size=32 if batch_size is None else batch_size,
                            shuffle=shuffle, seed=seed)

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        for index in self.rows:
            xb = nest.pack_like(self.x, [a[index] for a in self.xs])
            yield xb if self.y is None else (xb, nest.pack_like(self.y, [a[index] for a in self.ys]))


def _length(batches):
    try:
        return len(batches)
    except TypeError:
        return None


def _weight_groups(layer, path="", seen=None):
    """``(group, variables)`` for ``layer`` and every layer inside it, in Keras 3's ``.weights.h5`` layout: a
    layer's own weights under ``<path>vars``; then, attribute by attribute in name order (a model's ``layers``
    among them), each inner layer under ``<attribute>`` or, in a list, ``<attribute>/<dense, dense_1, ...>``
    (class names counted within the list), each layer once, where it is met first. So a model of the same
    architecture finds its weights whatever its layers are called."""
    seen = set() if seen is None else seen
    seen.add(id(layer))
    groups = [(f"{path}vars", layer._own_variables())]
    attributes = {key: value for key, value in vars(layer).items() if not key.startswith("_")}
    if isinstance(layer, Model):
        attributes["layers"] = layer.layers
    for key in sorted(attributes):
        value = attributes[key]
        if isinstance(value, Layer):
            children = [(key, value)]
        elif isinstance(value, (list, tuple)):
            counts, children = {}, []
            for item in value:
                if isinstance(item, Layer):
                    base = keras_name(type(item).__name__)
                    children.append((f"{key}/{base}_{counts[base]}" if base in counts else f"{key}/{base}", item))
                    counts[base] = counts.get(base, 0) + 1
        else:
            continue
        for child_path, child in children:
            if id(child) not in seen:
                groups += _weight_groups(child, f"{path}{child_path}/", seen)
    return groups


def _stored_weights(path):
    """``{key: array}`` of a weights file (``.h5`` or ``.npz``), without Keras's ``optimizer/`` entries."""
    if str(path).endswith(".h5"):
        with _h5py().File(path, "r") as f:
            stored = {key: np.asarray(f[key]) for key in _h5_keys(f)}
    else:
        with np.load(path) as f:
            stored = {key: f[key] for key in f.files}
    return {key: value for key, value in stored.items() if not key.startswith("optimizer/")}  # Keras's


def _h5py():
    try:
        import h5py
    except ImportError:
        raise ImportError("HDF5 files (.h5) need the h5py package: pip install h5py (it comes with tapelab[lab]), "
                          "or save to a .npz name instead.") from None
    return h5py


def _h5_keys(f):
    keys = []
    f.visititems(lambda key, item: keys.append(key) if hasattr(item, "shape") else None)
    return keys


__all__ = ["Model", "Sequential", "load_model"]
