"""Optimizers with Keras 3's defaults and update rules: ``SGD`` (with momentum / Nesterov), ``Adam`` and
``RMSprop``.

The training recipe from TF2 tutorials works unchanged:

    with tl.GradientTape() as tape:
        loss = loss_fn(y, model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

Every update is computed in the variable's own dtype (hyper-parameters are cast to it, as Keras
does), so float32 weights stay float32.
"""

import warnings

import numpy as np

from tapelab.engine.function import _python_node_or_none
from tapelab.engine.learner import spell
from tapelab.engine.recording import tracing_graph
from tapelab.engine.tensor import Tensor, Variable, to_numpy


class Optimizer:
    """Base class: checks ``(gradient, variable)`` pairs, keeps per-variable slots, counts ``iterations``."""

    def __init__(self, learning_rate, name, clipnorm=None, clipvalue=None, global_clipnorm=None):
        _check_positive(name, "learning_rate", learning_rate)
        self.learning_rate = float(learning_rate)
        self.name = name
        given = [c is not None for c in (clipnorm, clipvalue, global_clipnorm)]
        if sum(given) > 1:
            raise ValueError(
                f"{name}: only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set (as in Keras). "
                f"Received: clipnorm={clipnorm}, clipvalue={clipvalue}, global_clipnorm={global_clipnorm}. Choose "
                "one: global_clipnorm keeps the direction of the whole update, clipnorm clips each gradient alone.")
        for what, value in (("clipnorm", clipnorm), ("clipvalue", clipvalue), ("global_clipnorm", global_clipnorm)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float, np.number))):
                raise TypeError(f"{name}: {what} must be a number, got {value!r}")
        self.clipnorm, self.clipvalue, self.global_clipnorm = (None if c is None else float(c)
                                                                for c in (clipnorm, clipvalue, global_clipnorm))
        self.iterations = 0  # how many times apply_gradients has run (Keras's optimizer.iterations)
        self._slots = {}  # id(variable) -> (variable, {slot name: numpy array})

    def apply_gradients(self, grads_and_vars):
        """Update each variable from its gradient, then add one to ``iterations``.

        ``grads_and_vars`` is an iterable of ``(gradient, variable)`` pairs, usually
        ``zip(grads, model.trainable_variables)``. A ``None`` gradient (the loss does not depend on
        that variable) is skipped with a warning; if every gradient is ``None`` nothing could be
        learned, so a ``ValueError`` is raised. Returns ``iterations``.
        """
        pairs = list(grads_and_vars)
        updates, missing = self._checked_pairs(pairs)
        self._check_some_gradient(updates, missing)
        if tracing_graph() is not None:  # tl.function is tracing: the graph replays this whole update on every run
            return self._record_update(pairs, updates)
        for g, var in self._clipped(updates):
            self._update(g, var)
        self.iterations += 1
        return self.iterations

    def apply(self, grads, trainable_variables=None):
        """Keras 3's form of :meth:`apply_gradients`: ``optimizer.apply(grads, model.trainable_variables)``."""
        if trainable_variables is None:
            raise ValueError(f"{self.name}.apply: give the variables the gradients are for: "
                             "optimizer.apply(grads, model.trainable_variables)")
        grads, trainable_variables = list(grads), list(trainable_variables)
        if len(grads) != len(trainable_variables):
            raise ValueError(f"{self.name}.apply: {len(grads)} gradients for {len(trainable_variables)} variables; "
                             "give one gradient per variable, in the same order (tape.gradient(loss, variables)).")
        return self.apply_gradients(zip(grads, trainable_variables))

    def _checked_pairs(self, pairs):
        """``(updates, missing)``: ``(gradient as a numpy array, variable)`` for each gradient given, and the names
        of the variables whose gradient is None. Anything but a (gradient, Variable) pair is refused."""
        missing, updates = [], []
        for k, pair in enumerate(pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(
                    f"{self.name}.apply_gradients: expected (gradient, variable) pairs, e.g. "
                    f"zip(grads, model.trainable_variables); item {k} is {pair!r}"
                )
            g, var = pair
            if not isinstance(var, Variable):
                raise TypeError(
                    spell(f"{self.name}.apply_gradients: item {k} pairs a gradient with a {type(var).__name__}, not a "
                          "tl.Variable. Only Variables can be updated in place; create the parameter with "
                          "tl.Variable(...) (a tl.constant or the result of an op cannot change).")
                )
            if g is None:
                missing.append(var.name)
                continue
            value = g._value if g.__class__ is Tensor else None  # (the usual case, a gradient() result: checked here)
            if value is None or value.shape != var._value.shape or value.dtype != var._value.dtype:
                value = self._gradient_value(g, var)
            updates.append((value, var))
        return updates, missing

    def _check_some_gradient(self, updates, missing):
        """Refuse a step where every gradient is None (nothing could be learned); warn about the None ones."""
        if not updates:
            raise ValueError(
                spell(f"{self.name}.apply_gradients: no gradients provided for any variable (all were None): "
                      f"{missing}. The loss does not depend on these variables. Check that the loss is computed "
                      "inside `with tl.GradientTape() as tape:` from the model's output, and that you pass the same "
                      "variables to tape.gradient and to apply_gradients.")
            )
        if missing:
            warnings.warn(
                f"{self.name}.apply_gradients: gradients do not exist for variables {missing} (the gradient is "
                "None: the loss does not depend on them); they were not updated.",
                UserWarning,
                stacklevel=3,  # (the caller of apply_gradients)
            )

    def _record_update(self, pairs, updates):
        """Inside ``tl.function``'s trace: the update as one node of the graph, which every run replays."""
        for _, var in updates:
            self._slots_for(var)  # the state exists from the first trace on (a later trace may not make it)
        kept = [(g, var) for g, var in pairs if g is not None]
        n = len(kept)

        def on_arrays(*inputs):  # a plan's call: the gradients' arrays, then the Variables, as this trace checked them
            for g, var in self._clipped(list(zip(inputs[:n], inputs[n:]))):
                self._update(g, var)
            self.iterations += 1
            return self.iterations

        same_dtypes = all(g.dtype == var.dtype for g, var in kept)  # (else each run casts, in _checked_pairs)
        _python_node_or_none(f"{self.name}.apply_gradients", self._apply_pairs, ([g for g, _ in kept],
                             [var for _, var in kept]), example=np.int64(self.iterations),
                             on_arrays=on_arrays if same_dtypes else None)
        return self.iterations

    def _apply_pairs(self, gradients, variables):
        return self.apply_gradients(zip(gradients, variables))

    def _clipped(self, updates):
        """The ``(gradient, variable)`` pairs with Keras's gradient clipping applied (at most one is set):

            clipnorm:         g * clipnorm / max(|g|, clipnorm)              each gradient on its own
            global_clipnorm:  g * global_clipnorm / max(N, global_clipnorm)  N = sqrt(sum over gradients of |g|^2)
            clipvalue:        clip(g, -clipvalue, clipvalue)                 elementwise
        """
        if self.clipnorm is not None and self.clipnorm > 0:
            return [(_clip_by_norm(g, self._cast(self.clipnorm, var)), var) for g, var in updates]
        if self.global_clipnorm is not None and self.global_clipnorm > 0:
            clip = self.global_clipnorm
            norm = np.sqrt(sum(np.sum(np.square(g), dtype=np.float64) for g, _ in updates))
            scale = clip / max(norm, clip) if np.isfinite(norm) else np.nan  # (NaN on an inf norm, as in Keras)
            return [(g * self._cast(scale, var), var) for g, var in updates]
        if self.clipvalue is not None and self.clipvalue > 0:
            return [(np.clip(g, self._cast(-self.clipvalue, var), self._cast(self.clipvalue, var)), var)
                    for g, var in updates]
        return updates

    def _gradient_value(self, g, var):
        value = to_numpy(g)
        if value.shape != var._value.shape:
            raise ValueError(
                f"{self.name}.apply_gradients: the gradient for variable '{var.name}' has shape "
                f"{tuple(value.shape)} but the variable has shape {tuple(var.shape)}. Each gradient must have "
                "its variable's shape: pair them in the same order, e.g. zip(grads, variables) with grads = "
                "tape.gradient(loss, variables)."
            )
        if value.dtype != var._value.dtype:
            if value.dtype.kind != "f":
                raise TypeError(
                    f"{self.name}.apply_gradients: the gradient for '{var.name}' has dtype {value.dtype}, "
                    f"but a gradient must be a float ({var.dtype.name})."
                )
            value = value.astype(var._value.dtype)  # as Keras: the gradient is cast to the variable's dtype
        return value

    def _slots_for(self, var):
        """``var``'s state (non-trainable tl.Variables, made on the first step, as Keras builds them); the update
        rules read their arrays and change them, as every Variable changes, with ``_update``."""
        entry = self._slots.get(id(var))
        if entry is None or entry[0] is not var:
            base = (var.given_name or "Variable").replace("/", "_")
            entry = (var, {name: Variable(np.zeros_like(var._value), trainable=False, name=f"{base}_{name}")
                           for name in self._slot_names()})
            self._slots[id(var)] = entry
        return entry[1]

    def _slot_names(self):
        return ()

    def _update(self, g, var):
        """Apply one gradient ``g`` (a numpy array) to ``var``; state per variable comes from ``_slots_for``.

        A step array made here from ``g`` goes to ``var._update(..., given=True)``, which writes the new value
        into it.
        """
        raise NotImplementedError

    def _cast(self, x, var):
        return var._value.dtype.type(x)  # a hyper-parameter in the variable's dtype (Keras: ops.cast)

    def minimize(self, loss, var_list, tape):
        """``apply_gradients(zip(tape.gradient(loss, var_list), var_list))``."""
        var_list = list(var_list)
        return self.apply_gradients(zip(tape.gradient(loss, var_list), var_list))

    def get_slot(self, var, name):
        """A copy of the optimizer's state ``name`` (e.g. ``"momentum"``, ``"m"``, ``"v"``) for ``var``."""
        return self._slots_for(var)[name].numpy()


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with momentum, with Keras 3's update rule.

    Plain:      w = w - lr * g
    Momentum:   m = momentum * m - lr * g;   w = w + m
    Nesterov:   m = momentum * m - lr * g;   w = w + momentum * m - lr * g

    >>> w = tl.Variable(1.0)
    >>> opt = tl.optimizers.SGD(learning_rate=0.1)
    >>> opt.apply_gradients([(tl.constant(2.0), w)])
    1
    >>> float(w)
    0.800000011920929
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, name="SGD"):
        super().__init__(learning_rate, name, clipnorm, clipvalue, global_clipnorm)
        if not 0 <= momentum <= 1:
            raise ValueError(f"SGD: momentum must be between 0 and 1, got {momentum!r}")
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)

    def _slot_names(self):
        return ("momentum",) if self.momentum != 0 else ()

    def _update(self, g, var):
        lr = self._cast(self.learning_rate, var)
        if self.momentum == 0:  # w = w - lr * g
            var._step(np.subtract, g * lr)
            return
        slot = self._slots_for(var)["momentum"]
        momentum = self._cast(self.momentum, var)
        slot._update("assign", slot._value * momentum - g * lr, given=True)  # m = momentum * m - lr * g
        m = slot._value
        if self.nesterov:
            var._update("assign_add", m * momentum - g * lr, given=True)  # look ahead along the new velocity
        else:
            var._update("assign_add", m)  # (m stays the optimizer's: not given)


class Adam(Optimizer):
    """Adam with Keras 3's defaults (epsilon=1e-7) and its form of the bias correction.

    With t = iterations + 1:
        m = m + (g - m) * (1 - beta_1)              # running mean of g
        v = v + (g^2 - v) * (1 - beta_2)            # running mean of g^2
        alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)
        w = w - m * alpha / (sqrt(v) + epsilon)

    >>> w = tl.Variable([1.0, -1.0])
    >>> opt = tl.optimizers.Adam(learning_rate=0.1)
    >>> opt.apply_gradients([(tl.constant([0.5, -3.0]), w)])
    1
    >>> w.numpy().round(4)   # the first Adam step moves every weight by about lr, against its gradient's sign
    array([ 0.9, -0.9], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, name="Adam"):
        super().__init__(learning_rate, name, clipnorm, clipvalue, global_clipnorm)
        for what, value in (("beta_1", beta_1), ("beta_2", beta_2)):
            if not 0 <= value < 1:
                raise ValueError(f"Adam: {what} must be in [0, 1), got {value!r}")
        _check_positive(name, "epsilon", epsilon)
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)

    def _slot_names(self):
        return ("m", "v")

    def _update(self, g, var):
        slots = self._slots_for(var)
        lr = self._cast(self.learning_rate, var)
        t = self._cast(self.iterations + 1, var)
        one = self._cast(1, var)
        beta_1_power = np.power(self._cast(self.beta_1, var), t)
        beta_2_power = np.power(self._cast(self.beta_2, var), t)
        alpha = lr * np.sqrt(one - beta_2_power) / (one - beta_1_power)
        m_slot, v_slot = slots["m"], slots["v"]
        m_slot._update("assign_add", (g - m_slot._value) * self._cast(1 - self.beta_1, var), given=True)
        v_slot._update("assign_add", (np.square(g) - v_slot._value) * self._cast(1 - self.beta_2, var), given=True)
        m, v = m_slot._value, v_slot._value
        var._update("assign_sub", (m * alpha) / (np.sqrt(v) + self._cast(self.epsilon, var)), given=True)


class RMSprop(Optimizer):
    """RMSprop with Keras 3's defaults: each step divides by a running root mean square of the gradients.

        v = rho * v + (1 - rho) * g^2
        w = w - lr * g / sqrt(v + epsilon)
    """

    def __init__(self, learning_rate=0.001, rho=0.9, epsilon=1e-7, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, name="RMSprop"):
        super().__init__(learning_rate, name, clipnorm, clipvalue, global_clipnorm)
        if not 0 <= rho < 1:
            raise ValueError(f"RMSprop: rho must be in [0, 1), got {rho!r}")
        _check_positive(name, "epsilon", epsilon)
        self.rho, self.epsilon = float(rho), float(epsilon)

    def _slot_names(self):
        return ("velocity",)

    def _update(self, g, var):
        slot = self._slots_for(var)["velocity"]
        rho = self._cast(self.rho, var)
        slot._update("assign", rho * slot._value + (self._cast(1, var) - rho) * np.square(g), given=True)
        v = slot._value
        lr, epsilon = self._cast(self.learning_rate, var), self._cast(self.epsilon, var)
        var._update("assign_sub", g * lr / np.sqrt(v + epsilon), given=True)


def get(identifier):
    """An optimizer from a name (``"adam"``, ``"sgd"``, ``"rmsprop"``: Keras's defaults) or an Optimizer."""
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Optimizer):
        return identifier()
    names = {"adam": Adam, "sgd": SGD, "rmsprop": RMSprop}
    if isinstance(identifier, str) and identifier.lower() in names:
        return names[identifier.lower()]()
    raise ValueError(spell(f"unknown optimizer {identifier!r}: use one of {sorted(names)} or an optimizer such as "
                           "tl.keras.optimizers.Adam(learning_rate=0.001)"))


def _clip_by_norm(g, clip):
    """``g * clip / max(|g|, clip)``: ``g`` unchanged if its L2 norm is at most ``clip`` (Keras's clip_by_norm)."""
    norm = np.sqrt(np.sum(np.square(g)))
    return g * clip / np.maximum(norm, clip)


def _check_positive(owner, what, value):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) or not value > 0:
        raise ValueError(f"{owner}: {what} must be a positive number, got {value!r}")

__all__ = ["Adam", "Optimizer", "RMSprop", "SGD", "get"]
