"""Merge layers (``keras.layers.Concatenate``, ``Add``, ...): one tensor from a list of tensors, the way a functional
model joins its branches.

    merged = tl.keras.layers.concatenate([title_features, body_features])    # along the last axis
    summed = tl.keras.layers.Add()([x, shortcut])                            # a residual connection

Each is made of the table's ops (``concat``, ``add``, ``multiply``, ``maximum``, ...), so the tape shows them under
the layer's name and their gradients are those ops' rules.
"""

import functools

from tapelab import array_ops
from tapelab import math as tmath
from tapelab.engine.learner import spell
from tapelab.keras.layers import Layer


class _Merge(Layer):
    """A layer that takes a list of at least two tensors of one shape (``_combine`` joins them)."""

    def __call__(self, inputs, *args, **kwargs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            got = f"a list of {len(inputs)}" if isinstance(inputs, (list, tuple)) else type(inputs).__name__
            raise ValueError(spell(f"{self.name}: a {type(self).__name__} layer should be called on a list of at "
                                   f"least 2 inputs, got {got}. Give the tensors to join as a list: "
                                   f"{type(self).__name__}()([a, b])."))
        return super().__call__(list(inputs), *args, **kwargs)

    def call(self, inputs):
        shapes = [tuple(t.shape) for t in inputs]
        self._check(shapes)
        return functools.reduce(self._combine, inputs[1:], inputs[0])

    def _check(self, shapes):
        if len(set(shapes)) != 1:
            raise ValueError(spell(f"{self.name}: {type(self).__name__} needs inputs of one shape, got "
                                   f"{', '.join(map(str, shapes))}. Reshape or project them first (e.g. a Dense "
                                   "layer to the same width)."))


class Add(_Merge):
    """The elementwise sum of the inputs."""

    _combine = staticmethod(tmath.add)


class Subtract(_Merge):
    """The first input minus the second (exactly two inputs)."""

    _combine = staticmethod(tmath.subtract)

    def _check(self, shapes):
        if len(shapes) != 2:
            raise ValueError(f"{self.name}: Subtract takes exactly 2 inputs, got {len(shapes)}")
        super()._check(shapes)


class Multiply(_Merge):
    """The elementwise product of the inputs."""

    _combine = staticmethod(tmath.multiply)


class Maximum(_Merge):
    """The elementwise maximum of the inputs."""

    _combine = staticmethod(tmath.maximum)


class Minimum(_Merge):
    """The elementwise minimum of the inputs."""

    _combine = staticmethod(tmath.minimum)


class Average(Add):
    """The elementwise mean of the inputs."""

    def call(self, inputs):
        return tmath.divide(super().call(inputs), float(len(inputs)))


class Concatenate(_Merge):
    """The inputs joined along ``axis`` (the last by default); their other axes must agree."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        shapes = [tuple(t.shape) for t in inputs]
        rank = len(shapes[0])
        axis = self.axis % rank if rank else 0
        if any(len(s) != rank or s[:axis] + s[axis + 1:] != shapes[0][:axis] + shapes[0][axis + 1:] for s in shapes):
            raise ValueError(spell(f"{self.name}: Concatenate joins along axis {self.axis}, so the inputs' other "
                                   f"axes must match, got shapes {', '.join(map(str, shapes))}. Reshape them, or "
                                   "choose the axis they differ on."))
        return array_ops.concat(inputs, axis=self.axis)


def add(inputs, **kwargs):
    """``Add()(inputs)``: the elementwise sum of a list of tensors."""
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    """``Subtract()(inputs)``: the first of two tensors minus the second."""
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    """``Multiply()(inputs)``: the elementwise product of a list of tensors."""
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    """``Average()(inputs)``: the elementwise mean of a list of tensors."""
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    """``Maximum()(inputs)``: the elementwise maximum of a list of tensors."""
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    """``Minimum()(inputs)``: the elementwise minimum of a list of tensors."""
    return Minimum(**kwargs)(inputs)


def concatenate(inputs, axis=-1, **kwargs):
    """``Concatenate(axis)(inputs)``: a list of tensors joined along ``axis``."""
    return Concatenate(axis=axis, **kwargs)(inputs)


__all__ = ["Add", "Average", "Concatenate", "Maximum", "Minimum", "Multiply", "Subtract", "add", "average",
           "concatenate", "maximum", "minimum", "multiply", "subtract"]
