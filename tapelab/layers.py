"""Keras-shaped layers: ``Dense``, ``Flatten`` and the ``Sequential`` container.

    model = tl.layers.Sequential([
        tl.layers.Flatten(),
        tl.layers.Dense(128, activation="relu"),
        tl.layers.Dense(10),
    ])
    logits = model(x)              # builds the weights on the first call (input size found then)
    model.trainable_variables      # [dense/kernel, dense/bias, dense_1/kernel, dense_1/bias]

Each layer runs its ops inside ``tl.name_scope(layer.name)``, so a tape's listing and graph group
them as ``dense/matmul``, ``dense/add``, ``dense/relu``.
"""

import collections

import numpy as np

from tapelab import dtypes, ops
from tapelab import random as _random
from tapelab.errors import InvalidArgumentError
from tapelab.learner import spell
from tapelab.module import Module, _snake_case
from tapelab.primitives import OPS
from tapelab.tape import run
from tapelab.tensor import Tensor, Variable, convert_to_tensor

_name_counts = collections.Counter()


def unique_name(base):
    """``dense``, then ``dense_1``, ``dense_2`` ... as Keras names layers."""
    n = _name_counts[base]
    _name_counts[base] += 1
    return base if n == 0 else f"{base}_{n}"


def clear_session():
    """Restart layer numbering (the next Dense is ``dense`` again), like ``keras.backend.clear_session``."""
    _name_counts.clear()


# --- activations ------------------------------------------------------------------------------
def linear(x):
    """The identity: f(x) = x."""
    return x


ACTIVATIONS = {
    "linear": linear,
    "relu": ops.relu,
    "sigmoid": ops.sigmoid,
    "tanh": ops.tanh,
    "softmax": ops.softmax,
    "log_softmax": ops.log_softmax,
}


def get_activation(activation):
    """An activation function from a name (``"relu"``), a callable, or ``None`` (the identity)."""
    if activation is None:
        return linear
    if callable(activation):
        return activation
    if isinstance(activation, str) and activation in ACTIVATIONS:
        return ACTIVATIONS[activation]
    raise ValueError(
        spell(f"unknown activation {activation!r}. Use one of {sorted(ACTIVATIONS)}, None (no activation), "
              "or a function such as tl.nn.relu.")
    )


# --- initialisers -----------------------------------------------------------------------------
def glorot_uniform(shape, dtype=dtypes.float32):
    """Keras's default kernel initialiser: U(-limit, limit) with limit = sqrt(6 / (fan_in + fan_out)).

    The variance is limit^2 / 3 = 2 / (fan_in + fan_out), which keeps activations and gradients
    about the same size from layer to layer. Draws from ``tl.random``'s generator, so
    ``tl.random.set_seed(s)`` makes models repeatable.
    """
    fan_in, fan_out = (shape[0], shape[1]) if len(shape) == 2 else (int(np.prod(shape[:-1])), shape[-1])
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    values = _random.generator().uniform(-limit, limit, size=tuple(shape))
    return values.astype(dtypes.as_dtype(dtype).as_numpy_dtype)


# --- layers -----------------------------------------------------------------------------------
class Layer(Module):
    """A Module that is called on tensors: ``build`` (once, when the input shape is known), then ``call``.

    Subclasses implement ``call(inputs)`` and, if they own weights, ``build(input_shape)`` using
    :meth:`add_weight`. Calling the layer runs ``call`` inside ``tl.name_scope(self.name)``.
    """

    def __init__(self, name=None, dtype=dtypes.float32):
        super().__init__(name=name or unique_name(_snake_case(type(self).__name__)))
        self.dtype = dtypes.as_dtype(dtype)
        self.built = False
        self._weights = []  # in creation order; sorts first among attributes, so variables keep this order

    def add_weight(self, name, shape, initializer, trainable=True):
        """Create a Variable named ``<layer>/<name>`` and track it."""
        value = initializer(tuple(shape), self.dtype)
        var = Variable(value, trainable=trainable, name=f"{self.name}/{name}", dtype=self.dtype)
        self._weights.append(var)
        return var

    def build(self, input_shape):
        """Create the layer's weights once the input shape is known (the first call runs it, then sets ``built``).

        Override it with :meth:`add_weight` calls; the default creates nothing. For example::

            def build(self, input_shape):
                self.w = self.add_weight("w", (input_shape[-1], 4), glorot_uniform)
        """

    def call(self, inputs):
        """The layer's computation on a tensor; ``layer(x)`` runs it inside ``tl.name_scope(layer.name)``.

        Override it in every layer, e.g. ``return tl.matmul(inputs, self.w)``.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement call(inputs)")

    def __call__(self, inputs):
        inputs = convert_to_tensor(inputs)
        if not self.built:
            self.build(tuple(inputs.shape))
            self.built = True
        with self.name_scope:
            return self.call(inputs)

    @property
    def weights(self):
        return list(self.variables)


class Dense(Layer):
    """A fully connected layer: ``activation(inputs @ kernel + bias)``, like ``keras.layers.Dense``.

    The kernel has shape (input size, units) and starts Glorot-uniform; the bias starts at zero.
    The input size is found on the first call.

    >>> tl.random.set_seed(0)
    >>> layer = tl.layers.Dense(3, activation="relu")
    >>> layer(tl.ones((2, 4))).shape
    TensorShape([2, 3])
    >>> [v.name for v in layer.trainable_variables]
    ['dense/kernel:0', 'dense/bias:0']
    """

    def __init__(self, units, activation=None, use_bias=True, name=None, dtype=dtypes.float32):
        if int(units) != units or units < 1:
            raise ValueError(f"Dense: units must be a positive integer, got {units!r}")
        super().__init__(name=name, dtype=dtype)
        self.units = int(units)
        self.activation = get_activation(activation)
        self.use_bias = bool(use_bias)
        self.kernel = None
        self.bias = None

    def build(self, input_shape):
        _check_batched(self, input_shape)
        self.kernel = self.add_weight("kernel", (input_shape[-1], self.units), glorot_uniform)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.units,), lambda shape, dtype: np.zeros(shape, dtype.name))

    def call(self, inputs):
        inputs = _as_layer_dtype(self, inputs)
        shape = inputs._value.shape
        if len(shape) < 2:
            _check_batched(self, shape)
        if shape[-1] != self.kernel._value.shape[0]:
            raise InvalidArgumentError(
                f"{self.name}: this layer was built for inputs with {self.kernel.shape[0]} features (kernel shape "
                f"{tuple(self.kernel.shape)}) but got inputs of shape {tuple(inputs.shape)}. A layer's input size "
                "is fixed by its first call; make a new layer for a different input size."
            )
        # shapes and dtypes are checked above, so the primitives run directly (no second check in tl.matmul)
        y = run(OPS["matmul"], (inputs, self.kernel))  # (batch, in) @ (in, units) -> (batch, units)
        if self.use_bias:
            y = run(OPS["add"], (y, self.bias))  # the bias broadcasts over the batch
        return self.activation(y)

    def __repr__(self):
        size = "?" if self.kernel is None else self.kernel.shape[0]
        return f"<tapelab.layers.Dense '{self.name}' {size} -> {self.units}>"


def _check_batched(layer, shape):
    if len(shape) < 2:
        raise ValueError(
            spell(f"{layer.name}: Dense expects inputs of shape (batch, features), got shape {tuple(shape)}. "
                  "For a single example use tl.reshape(x, (1, -1)); for images put tl.layers.Flatten() first.")
        )


def _as_layer_dtype(layer, x):
    """Float inputs are cast to the layer's dtype (Keras's autocast); integer pixels need scaling first."""
    if x._value.dtype == layer.dtype.as_numpy_dtype:
        return x
    if x.dtype.is_floating:
        return ops.cast(x, layer.dtype)
    raise TypeError(
        f"{layer.name}: inputs have dtype {x.dtype.name} but the layer computes in {layer.dtype.name}. "
        f"Convert them first, e.g. x = x.astype('float32') / 255 for uint8 images."
    )


class Flatten(Layer):
    """Flatten everything but the batch axis: (batch, 28, 28) -> (batch, 784)."""

    def call(self, inputs):
        if inputs.ndim < 1:
            raise ValueError(f"{self.name}: Flatten needs at least a batch axis, got a scalar")
        return ops.reshape(inputs, (inputs.shape[0], -1))


class Sequential(Layer):
    """Layers applied one after another, like ``keras.Sequential``.

    The container itself opens no name scope: each layer's ops appear under the layer's own name.

    >>> model = tl.layers.Sequential([tl.layers.Dense(8, activation="relu"), tl.layers.Dense(2)])
    >>> model(tl.ones((5, 3))).shape
    TensorShape([5, 2])
    """

    def __init__(self, layers=None, name=None):
        super().__init__(name=name)
        self.layers = []
        for layer in layers or []:
            self.add(layer)

    def add(self, layer):
        """Append a layer (anything callable on a tensor; Modules contribute their variables)."""
        if not callable(layer):
            raise TypeError(spell(f"Sequential.add: expected a layer (a callable such as tl.layers.Dense), "
                                  f"got {layer!r}"))
        self.layers.append(layer)

    def __call__(self, inputs):
        x = convert_to_tensor(inputs) if not isinstance(inputs, Tensor) else inputs
        self.built = True
        for layer in self.layers:
            x = layer(x)
        return x

    call = __call__

    def summary(self, print_fn=print):
        """Print one line per layer: name, output units and parameter count."""
        lines = [f'Model: "{self.name}"']
        for layer in self.layers:
            n = layer.count_params() if isinstance(layer, Module) else 0
            lines.append(f"  {getattr(layer, 'name', type(layer).__name__):<20} params: {n}")
        lines.append(f"Total params: {self.count_params()}")
        print_fn("\n".join(lines))

__all__ = ["Dense", "Flatten", "Layer"]
