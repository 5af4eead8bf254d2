"""``keras.callbacks``: code that ``fit``, ``evaluate`` and ``predict`` call at fixed points of their loops.

    class PrintLoss(tl.keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            print(f"epoch {epoch}: loss {logs['loss']:.4f}")

    model.fit(x, y, epochs=20, callbacks=[PrintLoss(), tl.keras.callbacks.EarlyStopping(monitor="loss", patience=2)])

The points, in Keras 3's order (a callback overrides the hooks it needs; ``self.model`` is the model, and
``self.params`` is ``{"verbose", "epochs", "steps"}``)::

    fit:       on_train_begin
                 on_epoch_begin(epoch)
                   on_train_batch_begin(batch), train_step, on_train_batch_end(batch, logs)   each batch
                   on_test_begin, on_test_batch_begin/end, on_test_end(logs)                 validation data
                 on_epoch_end(epoch, logs)           logs: the epoch's metrics, and val_* with validation data
               on_train_end(logs)
    evaluate:  on_test_begin, on_test_batch_begin(batch), on_test_batch_end(batch, logs), ..., on_test_end(logs)
    predict:   on_predict_begin, on_predict_batch_begin(batch), on_predict_batch_end(batch, {"outputs": ...}), ...

A batch's ``logs`` hold the running means since the epoch began (what the progress bar shows). Setting
``self.model.stop_training = True`` ends ``fit`` after the current batch. ``fit`` adds a :class:`History`
(which it returns) and, unless ``verbose=0``, a :class:`ProgbarLogger`; ``fit(plot=True)`` adds a
:class:`LiveLossPlot` and ``fit(flow=True)`` a :class:`LiveFlowPlot`.
"""

import csv
import math
import os
import warnings

import numpy as np

from tapelab.engine.errors import Unsupported, UnsupportedError
from tapelab.engine.learner import spell

HOOKS = ("on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end", "on_train_batch_begin",
         "on_train_batch_end", "on_test_begin", "on_test_end", "on_test_batch_begin", "on_test_batch_end",
         "on_predict_begin", "on_predict_end", "on_predict_batch_begin", "on_predict_batch_end")


class Callback:
    """The base class: every hook does nothing until a subclass overrides it (see the module's docstring)."""

    def __init__(self):
        self.params = None
        self.model = None

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None):
        """Called once when ``fit`` starts."""

    def on_train_end(self, logs=None):
        """Called once when ``fit`` ends; ``logs`` are the last epoch's."""

    def on_epoch_begin(self, epoch, logs=None):
        """Called at the start of each epoch (``epoch`` counts from 0)."""

    def on_epoch_end(self, epoch, logs=None):
        """Called at the end of each epoch; ``logs`` hold its metrics (and ``val_*`` with validation data)."""

    def on_train_batch_begin(self, batch, logs=None):
        """Called before each training step (``batch`` counts from 0 in each epoch)."""
        self.on_batch_begin(batch, logs=logs)  # (Keras's older name for it)

    def on_train_batch_end(self, batch, logs=None):
        """Called after each training step; ``logs`` hold the running metrics since the epoch began."""
        self.on_batch_end(batch, logs=logs)

    def on_batch_begin(self, batch, logs=None):
        """Keras's older name for ``on_train_batch_begin`` (which calls it)."""

    def on_batch_end(self, batch, logs=None):
        """Keras's older name for ``on_train_batch_end`` (which calls it)."""

    def on_test_begin(self, logs=None):
        """Called when ``evaluate`` starts (also for ``fit``'s validation data)."""

    def on_test_end(self, logs=None):
        """Called when ``evaluate`` ends; ``logs`` hold its metrics."""

    def on_test_batch_begin(self, batch, logs=None):
        """Called before each batch ``evaluate`` runs."""

    def on_test_batch_end(self, batch, logs=None):
        """Called after each batch ``evaluate`` runs; ``logs`` hold the running metrics."""

    def on_predict_begin(self, logs=None):
        """Called when ``predict`` starts."""

    def on_predict_end(self, logs=None):
        """Called when ``predict`` ends."""

    def on_predict_batch_begin(self, batch, logs=None):
        """Called before each batch ``predict`` runs."""

    def on_predict_batch_end(self, batch, logs=None):
        """Called after each batch ``predict`` runs; ``logs["outputs"]`` is the batch's output."""


class CallbackList(Callback):
    """The callbacks of one ``fit``, ``evaluate`` or ``predict`` call, as one callback: each hook calls that hook
    of every callback in turn. ``add_history``/``add_progbar`` add a :class:`History` and a
    :class:`ProgbarLogger` (unless one is given); ``params`` (``verbose``, ``epochs``, ``steps``) are handed to
    every callback. Each hook gets one ``logs`` dict, shared by the callbacks, its keys sorted and its numbers
    Python floats (``{}`` when there are none), as in Keras."""

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None, **params):
        super().__init__()
        self.callbacks = _as_callbacks(callbacks, model)
        self._history = next((c for c in self.callbacks if isinstance(c, History)), None)
        self._progbar = next((c for c in self.callbacks if isinstance(c, ProgbarLogger)), None)
        if self._history is None and add_history:
            self._history = History()
            self.callbacks.append(self._history)
        if self._progbar is None and add_progbar:
            self._progbar = ProgbarLogger()
            self.callbacks.append(self._progbar)
        self.set_model(model)
        self.set_params(params)

    def append(self, callback):
        """Add one more callback (fit's live plots), given the list's model and params."""
        _check_callback(callback, self.model)
        self.callbacks.append(callback)
        callback.set_model(self.model)
        if self.params:
            callback.set_params(self.params)

    def set_model(self, model):
        if model is None:
            return
        super().set_model(model)
        if self._history is not None:
            model.history = self._history
        for c in self.callbacks:
            c.set_model(model)

    def set_params(self, params):
        self.params = params
        if params:
            for c in self.callbacks:
                c.set_params(params)

    def _call(self, hook, args, logs, keyword=False):
        logs = _plain_logs(logs)
        for c in self.callbacks:
            try:
                if keyword:
                    getattr(c, hook)(*args, logs=logs)
                else:
                    getattr(c, hook)(*args, logs)
            except Exception as e:
                if isinstance(c, CallbackList):
                    raise  # (the inner list has said which callback)
                e.add_note(spell(f"(raised in {type(c).__name__}.{hook}({', '.join(map(repr, args))}), a callback's "
                                 "hook: the loop stopped with it. Fix the hook; to end training on purpose, set "
                                 "self.model.stop_training = True in it instead.)"))
                raise

    def on_train_begin(self, logs=None):
        self._call("on_train_begin", (), logs)

    def on_train_end(self, logs=None):
        self._call("on_train_end", (), logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._call("on_epoch_begin", (epoch,), logs)

    def on_epoch_end(self, epoch, logs=None):
        self._call("on_epoch_end", (epoch,), logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._call("on_train_batch_begin", (batch,), logs, keyword=True)

    def on_train_batch_end(self, batch, logs=None):
        self._call("on_train_batch_end", (batch,), logs, keyword=True)

    def on_batch_begin(self, batch, logs=None):
        self._call("on_batch_begin", (batch,), logs, keyword=True)

    def on_batch_end(self, batch, logs=None):
        self._call("on_batch_end", (batch,), logs, keyword=True)

    def on_test_begin(self, logs=None):
        self._call("on_test_begin", (), logs)

    def on_test_end(self, logs=None):
        self._call("on_test_end", (), logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._call("on_test_batch_begin", (batch,), logs, keyword=True)

    def on_test_batch_end(self, batch, logs=None):
        self._call("on_test_batch_end", (batch,), logs, keyword=True)

    def on_predict_begin(self, logs=None):
        self._call("on_predict_begin", (), logs)

    def on_predict_end(self, logs=None):
        self._call("on_predict_end", (), logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._call("on_predict_batch_begin", (batch,), logs, keyword=True)

    def on_predict_batch_end(self, batch, logs=None):
        self._call("on_predict_batch_end", (batch,), logs, keyword=True)


def _plain_logs(logs):
    """A new dict of ``logs``, keys sorted, numbers (numpy's, 0-d tensors) as Python floats; ``{}`` for None."""
    out = {}
    for key, value in sorted((logs or {}).items()):
        if isinstance(value, dict):
            out.update(_plain_logs(value))
            continue
        try:
            value = float(value)
        except (TypeError, ValueError):
            pass
        out[key] = value
    return out


def _as_callbacks(callbacks, model, what=None):
    """``callbacks=`` as a list of Callback objects (one Callback, a list or a tuple of them; lists nested)."""
    if callbacks is None:
        return []
    if isinstance(callbacks, (list, tuple)):
        out = [c for item in callbacks for c in _as_callbacks(item, model, what)]
        return out
    _check_callback(callbacks, model, what)
    return [callbacks]


def _check_callback(c, model, what=None):
    """Keras's errors for what is not a Callback (its AttributeError, or a TypeError for a class), saying what to
    give instead."""
    if isinstance(c, Callback):
        return
    where = f"{getattr(model, 'name', 'model')}.{what}" if what else getattr(model, "name", "CallbackList")
    if isinstance(c, type) and issubclass(c, Callback):
        raise TypeError(spell(f"{where}: callbacks= takes Callback objects, got the class {c.__name__} itself. Give "
                              f"an instance: {c.__name__}(...), e.g. callbacks=[{c.__name__}()]."))
    if callable(c):
        hint = ("a Callback object; to call a function at a point of the loop, wrap it: "
                "tl.keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: ...)")
    else:
        hint = "a list of Callback objects, e.g. callbacks=[tl.keras.callbacks.EarlyStopping(patience=2)]"
    raise AttributeError(spell(f"{where}: callbacks= takes Callback objects, got {type(c).__name__} {c!r}, which "
                               f"has no set_model or hooks. Give {hint}."))


# --- what fit adds ---------------------------------------------------------------------------------------------
class History(Callback):
    """What ``fit`` returns: ``history.history["loss"]`` is the list of each epoch's mean loss (and so on for
    every metric and, with validation data, ``val_loss``/``val_<metric>``); ``history.epoch`` the epochs trained.
    After ``fit(plot=True)``, ``loss_plot`` is its live plot (a :class:`tapelab.lessons.plots.LossPlot`: show it
    again, or read its curves); after ``fit(flow=True)``, ``flow_plot`` its plot of each layer's gradient norm."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []
        self.loss_plot = None
        self.flow_plot = None

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for name, value in (logs or {}).items():
            self.history.setdefault(name, []).append(value)
        self.model.history = self

    def __repr__(self):
        last = ", ".join(f"{k}={v[-1]:.4f}" for k, v in self.history.items())
        return f"<tapelab.keras.callbacks.History epochs={len(self.epoch)} {last}>"


class ProgbarLogger(Callback):
    """The progress bar of each epoch, with the running loss and metrics (a tqdm bar: a widget in Jupyter, text in
    a terminal). ``verbose=2``: one line per epoch instead; ``verbose=0``: nothing (fit adds none)."""

    def __init__(self):
        super().__init__()
        self.bar, self.in_fit, self.seen = None, False, 0

    def on_train_begin(self, logs=None):
        self.in_fit = True

    def on_train_end(self, logs=None):
        self.in_fit = False

    def on_epoch_begin(self, epoch, logs=None):
        self._open(f"Epoch {epoch + 1}/{(self.params or {}).get('epochs', 1)}")

    def on_train_batch_end(self, batch, logs=None):
        self._advance(logs)

    def on_epoch_end(self, epoch, logs=None):
        self._close()
        if self._verbose() == 2:
            print(f"Epoch {epoch + 1}/{(self.params or {}).get('epochs', 1)} - {line(logs)}")

    def on_test_begin(self, logs=None):
        if not self.in_fit:
            self._open("evaluate")

    def on_test_batch_end(self, batch, logs=None):
        if not self.in_fit:
            self._advance(logs)

    def on_test_end(self, logs=None):
        if self.in_fit:  # fit's validation: one line under the epoch's bar
            if self._verbose() == 1:
                print(f"validation: {line(logs)}")
            return
        self._close()
        if self._verbose() == 2:
            print(f"{self.seen}/{self.seen} - {line(logs)}")

    def on_predict_begin(self, logs=None):
        self._open("predict")

    def on_predict_batch_end(self, batch, logs=None):
        self._advance(None)

    def on_predict_end(self, logs=None):
        self._close()

    def _verbose(self):
        verbose = (self.params or {}).get("verbose", 1)
        return 1 if verbose in ("auto", True) else verbose

    def _open(self, desc):
        self._close()
        self.seen = 0
        if self._verbose() == 1:
            from tapelab.lessons.plots import progress

            self.bar = progress(desc=desc, total=(self.params or {}).get("steps"), unit="step")

    def _advance(self, logs):
        self.seen += 1
        if self.bar is not None:
            self.bar.update(1)
            if logs:
                self.bar.log(**logs)

    def _close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def line(logs):
    """Keras's one-line summary of ``logs``: ``loss: 0.1234 - accuracy: 0.9500``."""
    return " - ".join(f"{name}: {value:.4f}" for name, value in (logs or {}).items())


STEP_LOSS, RUNNING_MEAN, VAL_LOSS = ("loss of this step (batch)", "mean loss since the epoch began (the bar's)",
                                     "validation loss after the epoch")


class LiveLossPlot(Callback):
    """A live plot of the loss during ``fit`` (``fit(plot=True)`` adds one): the loss of each step, the mean since
    the epoch began (the bar's loss, as Keras reports it) and, with validation data, each epoch's ``val_loss``.
    ``plot`` is its :class:`tapelab.lessons.plots.LossPlot` (None: a new one); the History keeps it as
    ``loss_plot``."""

    def __init__(self, plot=None):
        super().__init__()
        self.plot, self.step = plot, 0

    def on_train_begin(self, logs=None):
        if self.plot is None:
            from tapelab.lessons.plots import LossPlot  # (matplotlib loads only when a plot is made)

            self.plot = LossPlot(title=f"{self.model.name}.fit: training loss",
                                 xlabel="training step (one batch each)")

    def on_train_batch_begin(self, batch, logs=None):
        self.model._step_loss = None  # (a train_step of your own may not say what its step's loss was)

    def on_train_batch_end(self, batch, logs=None):
        self.step += 1
        step_loss, running = self.model._step_loss, (logs or {}).get("loss")
        points = {} if running is None else {RUNNING_MEAN: running}
        if step_loss is not None:
            points[STEP_LOSS] = step_loss
        self.plot.update(step=self.step, **points)

    def on_epoch_end(self, epoch, logs=None):
        if logs and "val_loss" in logs:
            self.plot.update(step=self.step, draw=True, **{VAL_LOSS: logs["val_loss"]})

    def on_train_end(self, logs=None):
        self.plot.close()
        if getattr(self.model, "history", None) is not None:
            self.model.history.loss_plot = self.plot


class LiveFlowPlot(Callback):
    """A live plot of each layer's gradient norm |dL/dW| at every step of ``fit`` (``fit(flow=True)`` adds one),
    read from the step's tape. ``plot`` is its :class:`tapelab.lessons.plots.FlowPlot` (None: a new one); the
    History keeps it as ``flow_plot``."""

    def __init__(self, plot=None):
        super().__init__()
        self.plot, self.step = plot, 0

    def on_train_begin(self, logs=None):
        if self.plot is None:
            from tapelab.lessons.plots import FlowPlot  # (matplotlib loads only when a plot is made)

            self.plot = FlowPlot(title=f"{self.model.name}.fit: |dL/dW| of each layer",
                                 xlabel="training step (one batch each)")

    def on_train_batch_end(self, batch, logs=None):
        self.step += 1
        self.plot.update(self.model.last_tape, step=self.step)

    def on_train_end(self, logs=None):
        self.plot.close()
        if getattr(self.model, "history", None) is not None:
            self.model.history.flow_plot = self.plot


# --- the callbacks Keras ships ---------------------------------------------------------------------------------
class LambdaCallback(Callback):
    """A callback made of functions: ``LambdaCallback(on_epoch_end=lambda epoch, logs: print(logs["loss"]))``.
    Each keyword is a hook's name; its function takes the hook's arguments (``epoch`` or ``batch``, then ``logs``;
    ``on_train_begin`` and the other ``*_begin``/``*_end`` hooks just ``logs``)."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, on_train_end=None,
                 on_train_batch_begin=None, on_train_batch_end=None, **kwargs):
        super().__init__()
        unknown = sorted(set(kwargs) - set(HOOKS) - {"on_batch_begin", "on_batch_end"})
        if unknown:
            raise TypeError(spell(f"LambdaCallback: {', '.join(unknown)} is not a hook. The hooks are: "
                                  f"{', '.join(HOOKS)}."))
        given = dict(kwargs, on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end, on_train_begin=on_train_begin,
                     on_train_end=on_train_end, on_train_batch_begin=on_train_batch_begin,
                     on_train_batch_end=on_train_batch_end)
        for hook, fn in given.items():
            if fn is not None:
                if not callable(fn):
                    raise TypeError(f"LambdaCallback: {hook} must be a function, got {type(fn).__name__} {fn!r}")
                setattr(self, hook, fn)


class TerminateOnNaN(Callback):
    """Stop ``fit`` at the first batch whose loss is NaN or infinite (``raise_error=True``: raise instead)."""

    def __init__(self, raise_error=False):
        super().__init__()
        self.raise_error = raise_error

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(loss):
            if self.raise_error:
                raise RuntimeError(f"NaN or Inf loss encountered at batch {batch}. Loss value: {loss}. Terminating "
                                   "training immediately.")
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class _Monitor(Callback):
    """What EarlyStopping, ReduceLROnPlateau and ModelCheckpoint share: one logged quantity (``monitor``), and
    whether a value improves on the best so far by more than ``min_delta`` (smaller for a loss, larger for an
    accuracy; ``mode`` "min" or "max" says which for other names). As Keras's, the direction is settled at the
    first epoch's end, from ``mode`` or the model's metrics (a ValueError if neither tells)."""

    def __init__(self, monitor="val_loss", mode="auto", baseline=None, min_delta=0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"{type(self).__name__} mode '{mode}' is unknown, fallback to auto mode. (mode is 'min' "
                          "for a quantity that should fall, 'max' for one that should rise, or 'auto'.)",
                          stacklevel=3)
            mode = "auto"
        self.monitor, self.mode, self.best, self.min_delta = monitor, mode, baseline, abs(min_delta)
        self.larger = None  # True: larger is better (settled at the first epoch's end, from the model's metrics)

    def _settle_direction(self):
        if self.larger is None:
            self.larger = self._larger_is_better()

    def _improves(self, value, reference):
        self._settle_direction()
        if reference is None:
            return True
        return value - self.min_delta > reference if self.larger else value + self.min_delta < reference

    def _larger_is_better(self):
        if self.mode != "auto":
            return self.mode == "max"
        name = self.monitor.removeprefix("val_")
        directions = {m.name: m._direction for m in getattr(self.model, "metrics", ())}
        if name == "loss" or directions.get(name) == "down":
            return False
        if directions.get(name) == "up":
            return True
        known = ", ".join(sorted({"loss", *(n for n, d in directions.items() if d)}))
        raise ValueError(spell(
            f"{type(self).__name__} callback received monitor={self.monitor}, but it cannot tell whether that "
            f"quantity should be maximized or minimized (it knows which way is better for: {known}, and their "
            "val_ names). Pass mode='max' to monitor the highest value, or mode='min' for the lowest; or check the "
            "name's spelling."))

    def _missing(self, what, logs, end=""):
        """Keras's warning for a monitor that is not in ``logs``, and what to do about it."""
        names = list(logs or {})
        hint = " Pass monitor= one of those names." if names else ""
        if self.monitor.startswith("val_") and not any(n.startswith("val_") for n in names):
            hint = f" The val_ names come from validation data: fit(..., validation_data=(x_val, y_val)), or " \
                   f"monitor='{self.monitor.removeprefix('val_')}'."
        warnings.warn(f"{what} `{self.monitor}` which is not available. Available metrics are: "
                      f"{','.join(names)}{end}{hint}", stacklevel=3)


class EarlyStopping(_Monitor):
    """Stop ``fit`` when ``monitor`` (``"val_loss"`` by default) has not improved for ``patience`` epochs.
    ``restore_best_weights=True`` puts back the weights of the best epoch at the end."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__(monitor, mode, min_delta=min_delta)
        self.patience, self.verbose, self.baseline = patience, verbose, baseline
        self.restore_best_weights, self.start_from_epoch = restore_best_weights, start_from_epoch
        self.wait, self.stopped_epoch, self.best_weights, self.best_epoch = 0, 0, None, 0

    def on_train_begin(self, logs=None):
        self.wait, self.stopped_epoch, self.best, self.best_weights, self.best_epoch = 0, 0, None, None, 0

    def on_epoch_end(self, epoch, logs=None):
        self._settle_direction()
        current = (logs or {}).get(self.monitor)
        if current is None:
            self._missing("Early stopping conditioned on metric", logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights, self.best_epoch = self.model.get_weights(), epoch
        self.wait += 1
        if self._improves(current, self.best):
            self.best, self.best_epoch = current, epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._improves(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)


class ReduceLROnPlateau(_Monitor):
    """Multiply the optimizer's learning rate by ``factor`` when ``monitor`` has not improved for ``patience``
    epochs (then wait ``cooldown`` epochs; never below ``min_lr``). Adds ``learning_rate`` to each epoch's logs."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0.0, **kwargs):
        super().__init__(monitor, mode, min_delta=min_delta)
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Received factor={factor}. The "
                             "learning rate is multiplied by factor to reduce it: give a number between 0 and 1, "
                             "e.g. factor=0.5 halves it.")
        self.factor, self.patience, self.verbose = factor, patience, verbose
        self.cooldown, self.min_lr = cooldown, min_lr
        self.wait = self.cooldown_counter = 0

    def on_train_begin(self, logs=None):
        self.best, self.wait, self.cooldown_counter = None, 0, 0

    def in_cooldown(self):
        return self.cooldown_counter > 0

    def on_epoch_end(self, epoch, logs=None):
        self._settle_direction()
        logs = {} if logs is None else logs
        optimizer = self.model.optimizer
        logs["learning_rate"] = _float32(optimizer.learning_rate)
        current = logs.get(self.monitor)
        if current is None:
            self._missing("Learning rate reduction is conditioned on metric", logs, end=".")
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._improves(current, self.best):
            self.best, self.wait = current, 0
        elif not self.in_cooldown():
            self.wait += 1
            old = _float32(optimizer.learning_rate)
            if self.wait >= self.patience and np.float32(old) > np.float32(self.min_lr):  # (Keras's float32 rate)
                new = max(old * self.factor, self.min_lr)
                optimizer.learning_rate = new
                if self.verbose > 0:
                    print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new}.")
                self.cooldown_counter, self.wait = self.cooldown, 0


def _float32(value):
    """A learning rate as Keras reads it back from its float32 variable (0.1 -> 0.10000000149011612)."""
    return float(np.float32(value))


class LearningRateScheduler(Callback):
    """Set the learning rate at the start of each epoch: ``schedule(epoch, lr)`` (or ``schedule(epoch)``) returns
    the new one, a float. Adds ``learning_rate`` to each epoch's logs."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self.model.optimizer
        try:
            lr = self.schedule(epoch, _float32(optimizer.learning_rate))
        except TypeError:  # (Keras's older one-argument schedules)
            lr = self.schedule(epoch)
        if not isinstance(lr, (float, np.float32, np.float64)):  # (as Keras: numpy's float32 and float64 too)
            raise ValueError(f"The output of the `schedule` function should be a float. Got: {lr!r} "
                             f"({type(lr).__name__}, not float). LearningRateScheduler's schedule(epoch, lr) returns "
                             "the epoch's learning rate: return e.g. lr * 0.9, 0.1 (not 1), or float(...).")
        optimizer.learning_rate = float(lr)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {lr}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = _float32(self.model.optimizer.learning_rate)


class CSVLogger(Callback):
    """Write each epoch's logs as a row of a CSV file (``epoch`` first, then the logs' names in sorted order)."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename, self.sep, self.append = os.fspath(filename), separator, append
        self.file = self.writer = self.keys = None

    def on_train_begin(self, logs=None):
        header = True
        if self.append and os.path.exists(self.filename):
            with open(self.filename, encoding="utf-8") as f:
                header = not f.readline()
        self.file = open(self.filename, "a" if self.append else "w", newline="", encoding="utf-8")  # noqa: SIM115
        self.writer, self.keys, self.header = None, None, header

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
            if self.keys and not any(k.startswith("val_") for k in self.keys):
                self.keys += [f"val_{k}" for k in self.keys]  # (Keras's columns, "NA" without validation data)
        if self.writer is None:
            self.writer = csv.DictWriter(self.file, fieldnames=["epoch"] + self.keys, delimiter=self.sep)
            if self.header:
                self.writer.writeheader()
        self.writer.writerow({"epoch": epoch, **{k: logs.get(k, "NA") for k in self.keys}})
        self.file.flush()

    def on_train_end(self, logs=None):
        if self.file is not None:
            self.file.close()
        self.writer = None


class ModelCheckpoint(_Monitor):
    """Save the model's weights after each epoch (``save_freq="epoch"``) or every ``save_freq`` batches, to
    ``filepath`` (a ``.weights.h5`` file; ``{epoch:02d}`` and the logs' names, e.g. ``{val_loss:.2f}``, are filled
    in). ``save_best_only=True``: only when ``monitor`` improves. Whole-model ``.keras`` files are left to
    TensorFlow: pass ``save_weights_only=True``."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch", initial_value_threshold=None):
        super().__init__(monitor, mode, initial_value_threshold)
        self.filepath, self.verbose = os.fspath(filepath), verbose
        self.save_best_only, self.save_weights_only, self.save_freq = save_best_only, save_weights_only, save_freq
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError(f"Unrecognized save_freq: {save_freq}. Expected save_freq are 'epoch' or integer values "
                             "(save_freq=100: every 100 batches).")
        if save_weights_only and not self.filepath.endswith(".weights.h5"):
            raise ValueError(f"When using `save_weights_only=True` in `ModelCheckpoint`, the filepath provided must "
                             f"end in `.weights.h5` (Keras weights format). Received: filepath={self.filepath}. "
                             f"Name the file e.g. '{_weights_path(self.filepath)}'.")
        if not save_weights_only and not self.filepath.endswith((".keras", ".h5")):
            raise ValueError(f"The filepath provided must end in `.keras` (Keras model format). Received: "
                             f"filepath={self.filepath}. tapelab saves weights: ModelCheckpoint("
                             f"'{_weights_path(self.filepath)}', save_weights_only=True).")
        if not save_weights_only:
            raise UnsupportedError(
                "ModelCheckpoint(save_weights_only=False) (whole-model .keras files)",
                f"save the weights: ModelCheckpoint('{_weights_path(self.filepath)}', save_weights_only=True), "
                "and model.load_weights(...) them later.")
        self.epoch, self.seen = 0, 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq != "epoch":
            self.seen += 1
            if self.seen >= self.save_freq:
                self.seen = 0
                self._save(self.epoch, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._settle_direction()
        if self.save_freq == "epoch":
            self._save(epoch, None, logs)

    def _save(self, epoch, batch, logs):
        logs = logs or {}
        try:
            path = self.filepath.format(epoch=epoch + 1, **logs) if batch is None or "batch" in logs else \
                self.filepath.format(epoch=epoch + 1, batch=batch + 1, **logs)
        except KeyError as e:
            names = ", ".join(["epoch"] + ([] if batch is None else ["batch"]) + list(logs))
            raise KeyError(f'Failed to format this callback filepath: "{self.filepath}". Reason: {e} is not a name '
                           f"of this epoch's logs. ModelCheckpoint fills in {{...}} from: {names} (val_ names need "
                           "validation_data= in fit).") from None
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                warnings.warn(f"Can save best model only with {self.monitor} available. (The logs hold "
                              f"{', '.join(logs) or 'nothing'}; saving every epoch. Pass monitor= one of those, "
                              "or validation_data= to fit for the val_ names.)", stacklevel=3)
            else:
                best = "None" if self.best is None else f"{self.best:.5f}"
                if not self._improves(current, self.best):
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {best}")
                    return
                if self.verbose > 0:
                    print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {best} to {current:.5f}, saving model "
                          f"to {path}")
                self.best = current
        elif self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: saving model to {path}")
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        self.model.save_weights(path)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: finished saving model to {path}")


def _weights_path(path):
    """``path`` renamed to end in ``.weights.h5``: ``model.keras`` -> ``model.weights.h5``."""
    if path.endswith(".weights.h5"):
        return path
    root, ext = os.path.splitext(path)
    return (root if ext and "{" not in ext else path) + ".weights.h5"


_TENSORBOARD = "watch training in the notebook: fit(plot=True) draws the loss live; CSVLogger writes it to a file."
TensorBoard = Unsupported("tl.keras.callbacks.TensorBoard", "TensorBoard logs", _TENSORBOARD)
BackupAndRestore = Unsupported("tl.keras.callbacks.BackupAndRestore", "resuming an interrupted fit from disk",
                               "save the weights with ModelCheckpoint(..., save_weights_only=True) and load them.")
RemoteMonitor = Unsupported("tl.keras.callbacks.RemoteMonitor", "sending logs to a server", _TENSORBOARD)

__all__ = ["BackupAndRestore", "CSVLogger", "Callback", "CallbackList", "EarlyStopping", "History", "LambdaCallback",
           "LearningRateScheduler", "LiveFlowPlot", "LiveLossPlot", "ModelCheckpoint", "ProgbarLogger",
           "ReduceLROnPlateau", "RemoteMonitor", "TensorBoard", "TerminateOnNaN"]
