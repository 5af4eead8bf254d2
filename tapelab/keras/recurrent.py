"""Recurrent layers (``keras.layers.SimpleRNN``): a loop over time steps, unrolled on the tape.

    h_t = activation(x_t @ kernel + bias + h_{t-1} @ recurrent_kernel)        h_0 = 0, or initial_state

Each step runs in its own name scope (``simple_rnn/t07/``), so a tape of a 50-step sequence draws collapsed per
step and :func:`tapelab.viz.gradient_flow` gives the gradient's size at every step: backpropagation through time
is the tape's backward pass over those steps, last to first.
"""

from tapelab import array_ops
from tapelab.engine.errors import InvalidArgumentError
from tapelab.engine.primitives import OPS
from tapelab.engine.tape import name_scope, run
from tapelab.engine.tensor import Tensor, convert_to_tensor
from tapelab.keras import initializers
from tapelab.keras.activations import get as get_activation
from tapelab.keras.layers import Layer, _as_layer_dtype

_MATMUL, _ADD = OPS["matmul"], OPS["add"]


class SimpleRNN(Layer):
    """A fully connected recurrent layer, like ``keras.layers.SimpleRNN`` (Keras 3's defaults).

    Inputs have shape (batch, time steps, features). The output is the last step's h, shape (batch, units),
    or every step's with ``return_sequences=True``, shape (batch, time steps, units); ``return_state=True``
    also returns the last h: ``output, state = layer(x)``.

    >>> tl.random.set_seed(0)
    >>> rnn = tl.keras.layers.SimpleRNN(4, return_sequences=True)
    >>> rnn(tl.ones((2, 5, 3))).shape
    TensorShape([2, 5, 4])
    >>> [tuple(w.shape) for w in rnn.weights]     # kernel, recurrent_kernel, bias
    [(3, 4), (4, 4), (4,)]
    """

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", return_sequences=False,
                 return_state=False, go_backwards=False, name=None, **kwargs):
        if isinstance(units, bool) or int(units) != units or units < 1:
            raise ValueError(f"SimpleRNN: units must be a positive integer, got {units!r}")
        super().__init__(name=name, **kwargs)
        self.units = int(units)
        self.activation = get_activation(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.kernel = self.recurrent_kernel = self.bias = None

    def build(self, input_shape):
        _check_sequences(self, input_shape)
        self.kernel = self.add_weight("kernel", (input_shape[-1], self.units), self.kernel_initializer)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", (self.units, self.units),
                                                self.recurrent_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.units,), self.bias_initializer)

    def call(self, inputs, initial_state=None):
        inputs = _as_layer_dtype(self, convert_to_tensor(inputs))
        _check_sequences(self, inputs.shape)
        batch, steps, features = inputs.shape
        if features != self.kernel.shape[0]:
            raise InvalidArgumentError(
                f"{self.name}: this layer was built for sequences of {self.kernel.shape[0]} features per step "
                f"(kernel shape {tuple(self.kernel.shape)}) but got inputs of shape {tuple(inputs.shape)} "
                f"({features} features). A layer's input size is fixed by its first call; make a new layer for "
                "another feature size.")
        h = self._initial_state(initial_state, batch, inputs.dtype)
        outputs = []
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        for t in order:
            with name_scope(f"t{t:02d}"):
                h = self.step(inputs[:, t, :], h)
            outputs.append(h)
        output = array_ops.stack(outputs, axis=1) if self.return_sequences else h
        return (output, h) if self.return_state else output

    def step(self, x_t, h):
        """One time step: ``activation(x_t @ kernel + bias + h @ recurrent_kernel)`` (Keras's order of sums)."""
        z = run(_MATMUL, (x_t, self.kernel))
        if self.use_bias:
            z = run(_ADD, (z, self.bias))
        return self.activation(run(_ADD, (z, run(_MATMUL, (h, self.recurrent_kernel)))))

    def _initial_state(self, initial_state, batch, dtype):
        if initial_state is None:
            return array_ops.zeros((batch, self.units), dtype)
        if isinstance(initial_state, (list, tuple)):
            if len(initial_state) != 1:
                raise ValueError(f"{self.name}: a SimpleRNN has one state; initial_state holds "
                                 f"{len(initial_state)} tensors. Pass one tensor of shape (batch, {self.units}).")
            (initial_state,) = initial_state
        state = initial_state if isinstance(initial_state, Tensor) else convert_to_tensor(initial_state, dtype=dtype)
        if tuple(state.shape) != (batch, self.units):
            raise ValueError(
                f"{self.name}: initial_state has shape {tuple(state.shape)}, but the state of {batch} sequences of "
                f"this layer has shape ({batch}, {self.units}) (batch, units).")
        return state

    def __repr__(self):
        size = "?" if self.kernel is None else self.kernel.shape[0]
        return f"<tapelab.keras.layers.SimpleRNN '{self.name}' {size} -> {self.units}>"


def _check_sequences(layer, shape):
    if len(shape) != 3:
        raise ValueError(
            f"{layer.name}: a recurrent layer expects sequences of shape (batch, time steps, features), got shape "
            f"{tuple(shape)} ({len(shape)}-D). For one feature per step add an axis, e.g. "
            "tl.expand_dims(x, -1); for a single sequence add the batch axis, e.g. x[tl.newaxis] or "
            "tl.expand_dims(x, 0).")


__all__ = ["SimpleRNN"]
