"""Recurrent layers (``keras.layers.SimpleRNN``, ``GRU``, ``LSTM``): a loop over time steps, unrolled on the tape.

    SimpleRNN:  h_t = activation(x_t @ kernel + bias + h_{t-1} @ recurrent_kernel)      h_0 = 0, or initial_state
    GRU:        gates z, r from x_t and h_{t-1}; h_t = z * h_{t-1} + (1 - z) * candidate    (see :class:`GRU`)
    LSTM:       gates i, f, o and a candidate from x_t and h_{t-1}; a second state, the cell c:
                c_t = f * c_{t-1} + i * candidate,  h_t = o * tanh(c_t)                      (see :class:`LSTM`)

Each step runs in its own name scope (``simple_rnn/t07/``), so a tape of a 50-step sequence draws collapsed per
step and :func:`tapelab.viz.gradient_flow` gives the gradient's size at every step: backpropagation through time
is the tape's backward pass over those steps, last to first.
"""

import numpy as np

from tapelab import array_ops
from tapelab import random as _random
from tapelab.engine.errors import InvalidArgumentError, UnsupportedError
from tapelab.engine.primitives import OPS
from tapelab.engine.tape import name_scope, run
from tapelab.engine.tensor import Tensor, convert_to_tensor, to_numpy
from tapelab.keras import initializers
from tapelab.keras.activations import get as get_activation
from tapelab.keras.layers import Layer, _as_layer_dtype

_MATMUL, _ADD = OPS["matmul"], OPS["add"]


class _Recurrent(Layer):
    """The loop every recurrent layer shares: checks, the initial state, one name scope per step, the outputs.
    A subclass makes its weights in ``build`` and computes one step in ``step(x_t, h) -> h`` (with two states,
    as an LSTM has, ``step(x_t, h, c) -> (h, c)``; ``states`` names them)."""

    states = ("h",)
    dropout_seed_first = False  # Keras's cell takes its dropout seed before its initializers' (True) or after

    def __init__(self, units, activation, use_bias, kernel_initializer, recurrent_initializer, bias_initializer,
                 return_sequences, return_state, go_backwards, name, **kwargs):
        if isinstance(units, bool) or int(units) != units or units < 1:
            raise ValueError(f"{type(self).__name__}: units must be a positive integer, got {units!r}")
        super().__init__(name=name, **kwargs)
        self.units = int(units)
        self.activation = get_activation(activation)
        self.use_bias = bool(use_bias)
        if self.dropout_seed_first:
            self._dropout_seed = _random.keras_seed()  # (unused: its place in Keras's order of seeds)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        if not self.dropout_seed_first:
            self._dropout_seed = _random.keras_seed()
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.kernel = self.recurrent_kernel = self.bias = None

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
        states = self._initial_states(initial_state, batch, inputs.dtype)
        outputs = []
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        for t in order:
            with name_scope(f"t{t:02d}"):
                states = self.step(inputs[:, t, :], *states)
            if len(self.states) == 1:
                states = (states,)
            outputs.append(states[0])  # (the output is h)
        output = array_ops.stack(outputs, axis=1) if self.return_sequences else states[0]
        return (output, *states) if self.return_state else output

    def _initial_states(self, initial_state, batch, dtype):
        n = len(self.states)
        if initial_state is None:
            return tuple(array_ops.zeros((batch, self.units), dtype) for _ in range(n))
        given = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
        if len(given) != n:
            kind = type(self).__name__
            if n == 1:
                raise ValueError(f"{self.name}: a {kind} has one state; initial_state holds {len(given)} tensors. "
                                 f"Pass one tensor of shape (batch, {self.units}).")
            raise ValueError(f"{self.name}: an {kind} has {n} states ({', '.join(self.states)}); initial_state "
                             f"holds {len(given)} tensor(s). Pass a list [{', '.join(self.states)}] of tensors of "
                             f"shape (batch, {self.units}) each.")
        states = []
        for name, state in zip(self.states, given):
            state = state if isinstance(state, Tensor) else convert_to_tensor(state, dtype=dtype)
            if tuple(state.shape) != (batch, self.units):
                which = "initial_state" if n == 1 else f"initial_state's {name}"
                raise ValueError(
                    f"{self.name}: {which} has shape {tuple(state.shape)}, but the state of {batch} sequences of "
                    f"this layer has shape ({batch}, {self.units}) (batch, units).")
            states.append(state)
        return tuple(states)

    def __repr__(self):
        size = "?" if self.kernel is None else self.kernel.shape[0]
        return f"<tapelab.keras.layers.{type(self).__name__} '{self.name}' {size} -> {self.units}>"


class SimpleRNN(_Recurrent):
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

    dropout_seed_first = True

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", return_sequences=False,
                 return_state=False, go_backwards=False, name=None, **kwargs):
        super().__init__(units, activation, use_bias, kernel_initializer, recurrent_initializer, bias_initializer,
                         return_sequences, return_state, go_backwards, name, **kwargs)

    def build(self, input_shape):
        _check_sequences(self, input_shape)
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer=self.kernel_initializer,
                                      name="kernel")
        self.recurrent_kernel = self.add_weight(shape=(self.units, self.units), initializer=self.recurrent_initializer,
                                                name="recurrent_kernel")
        if self.use_bias:
            self.bias = self.add_weight(shape=(self.units,), initializer=self.bias_initializer, name="bias")

    def step(self, x_t, h):
        """One time step: ``activation(x_t @ kernel + bias + h @ recurrent_kernel)`` (Keras's order of sums)."""
        z = run(_MATMUL, (x_t, self.kernel))
        if self.use_bias:
            z = run(_ADD, (z, self.bias))
        return self.activation(run(_ADD, (z, run(_MATMUL, (h, self.recurrent_kernel)))))


class GRU(_Recurrent):
    """A gated recurrent unit, like ``keras.layers.GRU`` (Keras 3's defaults: ``reset_after=True``).

    Per step, with the kernel's and the bias's three parts in Keras's order (z, r, candidate):

        z = sigmoid(x_t @ W_z + b_z + h @ U_z + rb_z)            update gate: how much of h to keep
        r = sigmoid(x_t @ W_r + b_r + h @ U_r + rb_r)            reset gate: how much of h the candidate sees
        c = tanh(x_t @ W_c + b_c + r * (h @ U_c + rb_c))         the candidate state
        h = z * h + (1 - z) * c

    Where z is near 1 the step copies h forward: the gradient to an early step passes through ``z * ...``
    instead of through a product of tanh derivatives and weights, so it need not vanish. (With zero biases,
    at the start of training, z is about 0.5: the gradient halves at each step until the gate learns.)

    >>> tl.random.set_seed(0)
    >>> gru = tl.keras.layers.GRU(4)
    >>> gru(tl.ones((2, 5, 3))).shape
    TensorShape([2, 4])
    >>> [tuple(w.shape) for w in gru.weights]     # kernel, recurrent_kernel, bias (input and recurrent rows)
    [(3, 12), (4, 12), (2, 12)]
    """

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 return_sequences=False, return_state=False, go_backwards=False, reset_after=True, name=None,
                 **kwargs):
        if not reset_after:
            raise UnsupportedError("GRU(reset_after=False)", "leave reset_after at Keras 3's default, True (the reset "
                                   "gate applied after the recurrent product; TF 1's variant applied it before)")
        super().__init__(units, activation, use_bias, kernel_initializer, recurrent_initializer, bias_initializer,
                         return_sequences, return_state, go_backwards, name, **kwargs)
        self.recurrent_activation = get_activation(recurrent_activation)
        self.reset_after = True

    def build(self, input_shape):
        _check_sequences(self, input_shape)
        u = self.units
        self.kernel = self.add_weight(shape=(input_shape[-1], 3 * u), initializer=self.kernel_initializer,
                                      name="kernel")
        self.recurrent_kernel = self.add_weight(shape=(u, 3 * u), initializer=self.recurrent_initializer,
                                                name="recurrent_kernel")
        if self.use_bias:  # rows: input, recurrent
            self.bias = self.add_weight(shape=(2, 3 * u), initializer=self.bias_initializer, name="bias")

    def step(self, x_t, h):
        u = self.units
        inner_x = run(_MATMUL, (x_t, self.kernel))  # (batch, 3u): the z, r, candidate parts from x_t
        inner_h = run(_MATMUL, (h, self.recurrent_kernel))  # (batch, 3u): the same from h
        if self.use_bias:
            inner_x = run(_ADD, (inner_x, self.bias[0]))
            inner_h = run(_ADD, (inner_h, self.bias[1]))
        z = self.recurrent_activation(inner_x[:, :u] + inner_h[:, :u])
        r = self.recurrent_activation(inner_x[:, u:2 * u] + inner_h[:, u:2 * u])
        candidate = self.activation(inner_x[:, 2 * u:] + r * inner_h[:, 2 * u:])
        return z * h + (1.0 - z) * candidate


class LSTM(_Recurrent):
    """Long short-term memory, like ``keras.layers.LSTM`` (Keras 3's defaults): two states, h (the output) and the
    cell c, which four parts of one product update at each step.

    Per step, with the kernel's and the bias's four parts in Keras's order (i, f, c, o):

        z = x_t @ kernel + h @ recurrent_kernel + bias             (batch, 4 units): the four parts side by side
        i = sigmoid(z_i)        input gate: how much of the candidate to write
        f = sigmoid(z_f)        forget gate: how much of the cell to keep
        o = sigmoid(z_o)        output gate: how much of the cell to show
        c = f * c + i * tanh(z_c)
        h = o * tanh(c)

    The cell is carried forward by ``f * c``, a sum and no squashing: where f is near 1 the gradient to an early
    step passes back nearly unchanged. ``unit_forget_bias=True`` (the default) starts the forget gate's bias at 1,
    so f starts near sigmoid(1) = 0.73 instead of 0.5. ``return_state=True`` returns ``output, h, c``; an
    ``initial_state`` is the list ``[h, c]``.

    >>> tl.random.set_seed(0)
    >>> lstm = tl.keras.layers.LSTM(4)
    >>> lstm(tl.ones((2, 5, 3))).shape
    TensorShape([2, 4])
    >>> [tuple(w.shape) for w in lstm.weights]     # kernel, recurrent_kernel, bias (parts i, f, c, o)
    [(3, 16), (4, 16), (16,)]
    """

    states = ("h", "c")

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, return_sequences=False, return_state=False, go_backwards=False, name=None,
                 **kwargs):
        super().__init__(units, activation, use_bias, kernel_initializer, recurrent_initializer, bias_initializer,
                         return_sequences, return_state, go_backwards, name, **kwargs)
        self.recurrent_activation = get_activation(recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)

    def build(self, input_shape):
        _check_sequences(self, input_shape)
        u = self.units
        self.kernel = self.add_weight(shape=(input_shape[-1], 4 * u), initializer=self.kernel_initializer,
                                      name="kernel")
        self.recurrent_kernel = self.add_weight(shape=(u, 4 * u), initializer=self.recurrent_initializer,
                                                name="recurrent_kernel")
        if self.use_bias:
            self.bias = self.add_weight(shape=(4 * u,), initializer=self._bias_values, name="bias")

    def _bias_values(self, shape, dtype=None):
        """Keras's bias: the bias initializer's values, with the forget gate's part at 1 if ``unit_forget_bias``."""
        u, init = self.units, self.bias_initializer
        if not self.unit_forget_bias:
            return to_numpy(init((4 * u,), dtype=dtype))
        return np.concatenate([to_numpy(init((u,), dtype=dtype)), np.ones(u, to_numpy(init((1,), dtype=dtype)).dtype),
                               to_numpy(init((2 * u,), dtype=dtype))])

    def step(self, x_t, h, c):
        u = self.units
        z = run(_ADD, (run(_MATMUL, (x_t, self.kernel)), run(_MATMUL, (h, self.recurrent_kernel))))
        if self.use_bias:
            z = run(_ADD, (z, self.bias))  # (Keras's order of sums: x part, h part, bias)
        i = self.recurrent_activation(z[:, :u])
        f = self.recurrent_activation(z[:, u:2 * u])
        c = f * c + i * self.activation(z[:, 2 * u:3 * u])
        o = self.recurrent_activation(z[:, 3 * u:])
        return o * self.activation(c), c


def _check_sequences(layer, shape):
    if len(shape) != 3:
        raise ValueError(
            f"{layer.name}: a recurrent layer expects sequences of shape (batch, time steps, features), got shape "
            f"{tuple(shape)} ({len(shape)}-D). For one feature per step add an axis, e.g. "
            "tl.expand_dims(x, -1); for a single sequence add the batch axis, e.g. x[tl.newaxis] or "
            "tl.expand_dims(x, 0).")


__all__ = ["GRU", "LSTM", "SimpleRNN"]
