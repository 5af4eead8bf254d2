"""Weight penalties (``keras.regularizers``): a layer given ``kernel_regularizer=L2(0.01)`` adds
``0.01 * sum(kernel^2)`` to ``layer.losses``, and ``fit`` adds ``model.losses`` to the loss it differentiates.

    layer = tl.keras.layers.Dense(64, kernel_regularizer=tl.keras.regularizers.L2(1e-4))
    L1(l1)        penalty = l1 * sum(|w|)                pushes weights to exactly 0 (sparse)
    L2(l2)        penalty = l2 * sum(w^2)                pulls large weights in ("weight decay")
    L1L2(l1, l2)  both

A penalty is computed from tl ops, so on the tape of a training step it is a branch of the graph that ends in the
loss: its gradient, ``l2 * 2w``, is added to each weight's.
"""

import numpy as np

from tapelab import math as tmath
from tapelab.engine.learner import spell


class Regularizer:
    """Base class: ``regularizer(weight)`` is a float32 scalar penalty (a tensor, recorded like any op)."""

    def __call__(self, x):
        return 0.0

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        args = ", ".join(f"{k}={v:g}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"


def _factor(name, value):
    value = float(value)
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name}: the factor must be a finite number >= 0, got {value!r}")
    return value


class L1(Regularizer):
    """``l1 * sum(|x|)``."""

    def __init__(self, l1=0.01):
        self.l1 = float(np.float32(_factor("L1", l1)))  # (Keras keeps L1's factor as a float32)

    def __call__(self, x):
        return tmath.multiply(tmath.reduce_sum(tmath.abs(x)), self.l1)

    def get_config(self):
        return {"l1": self.l1}


class L2(Regularizer):
    """``l2 * sum(x^2)``."""

    def __init__(self, l2=0.01):
        self.l2 = _factor("L2", l2)

    def __call__(self, x):
        return tmath.multiply(tmath.reduce_sum(tmath.square(x)), self.l2)

    def get_config(self):
        return {"l2": self.l2}


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x^2)`` (each 0 unless given)."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = _factor("L1L2", l1), _factor("L1L2", l2)

    def __call__(self, x):
        return tmath.add(L1(self.l1)(x), L2(self.l2)(x))

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


l1, l2, l1_l2 = L1, L2, L1L2  # (Keras's lower-case names for the classes: l2(0.01) is L2(0.01))
_BY_NAME = {"l1": L1, "l2": L2, "l1l2": L1L2}


def get(identifier):
    """A regularizer from a name (``"l1"``, ``"l2"``: factor 0.01; ``"L1L2"``: both 0), a Regularizer, or a function
    ``f(weight) -> penalty``; None stays None."""
    if identifier is None or isinstance(identifier, Regularizer):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    if isinstance(identifier, type) and issubclass(identifier, Regularizer):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(spell(f"Could not interpret regularizer identifier: {identifier!r}. Use 'l1' or 'l2', "
                           "an object such as tl.keras.regularizers.L2(1e-4), or a function f(weight) -> penalty."))


__all__ = ["L1", "L1L2", "L2", "Regularizer", "get", "l1", "l1_l2", "l2"]
