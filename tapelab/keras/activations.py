"""Activation functions with Keras 3's names and arguments (``keras.activations``): ``Dense(128, activation="relu")``.

Each is a tapelab op (or a few), so the tape records it under the layer that used it.
"""

from tapelab import array_ops, nn
from tapelab import math as tmath
from tapelab.engine.learner import spell


def linear(x):
    """The identity: f(x) = x (a layer with ``activation=None``)."""
    return x


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """max(x, 0); ``negative_slope`` lets negatives through scaled (a leaky relu), ``max_value`` caps it."""
    if threshold:
        raise NotImplementedError(spell(f"relu: threshold other than 0 is not supported (got {threshold!r}); for "
                                        f"a thresholded relu use tl.where(x > {threshold!r}, x, 0.)"))
    y = nn.leaky_relu(x, alpha=negative_slope) if negative_slope else nn.relu(x)
    return y if max_value is None else tmath.minimum(y, array_ops.cast(max_value, y.dtype))  # (as Keras: in x's dtype)


def leaky_relu(x, negative_slope=0.2):
    """x for x > 0, ``negative_slope * x`` otherwise."""
    return nn.leaky_relu(x, alpha=negative_slope)


def elu(x, alpha=1.0):
    """x for x > 0, ``alpha * (exp(x) - 1)`` otherwise."""
    # (alpha * elu(x), not alpha * (exp(x) - 1): exp of a large x would be inf in the branch where() drops, and
    # its gradient 0 * inf = NaN)
    return nn.elu(x) if alpha == 1.0 else array_ops.where(x > 0, x, alpha * nn.elu(x))


def gelu(x, approximate=False):
    """x * Phi(x), Phi the standard normal CDF (``approximate=True``: its tanh form)."""
    return nn.gelu(x, approximate=approximate)


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along ``axis``: scores to probabilities."""
    return tmath.softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    """log(softmax(x)), computed stably."""
    return tmath.log_softmax(x, axis=axis)


def sigmoid(x):
    """1 / (1 + exp(-x))."""
    return tmath.sigmoid(x)


def tanh(x):
    """The hyperbolic tangent."""
    return tmath.tanh(x)


def exponential(x):
    """exp(x)."""
    return tmath.exp(x)


def selu(x):
    """The scaled exponential linear unit (self-normalising)."""
    return nn.selu(x)


def softplus(x):
    """log(1 + exp(x)), a smooth relu."""
    return nn.softplus(x)


def softsign(x):
    """x / (1 + |x|)."""
    return nn.softsign(x)


def relu6(x):
    """min(max(x, 0), 6)."""
    return nn.relu6(x)


def silu(x):
    """x * sigmoid(x) (also called swish)."""
    return nn.silu(x)


swish = silu


def log_sigmoid(x):
    """log(sigmoid(x)), computed stably."""
    return nn.log_sigmoid(x)


_BY_NAME = {f.__name__: f for f in [linear, relu, leaky_relu, elu, gelu, softmax, log_softmax, sigmoid, tanh,
                                     exponential, selu, softplus, softsign, relu6, silu, log_sigmoid]}
_BY_NAME["swish"] = silu


def get(identifier):
    """An activation from a name (``"relu"``), a function, or ``None`` (the identity)."""
    if identifier is None:
        return linear
    if callable(identifier):
        return identifier
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]
    raise ValueError(spell(f"unknown activation {identifier!r}. Use one of {sorted(_BY_NAME)}, None (no "
                           "activation), or a function such as tl.nn.relu."))


__all__ = sorted(_BY_NAME) + ["get"]
