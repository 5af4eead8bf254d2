"""Keras's symbolic tensors: what ``keras.Input`` gives, and what a layer called on one gives back.

    inputs = tl.keras.Input(shape=(784,), name="digits")    # <KerasTensor shape=(None, 784), dtype=float32, ...>
    x = tl.keras.layers.Dense(64, activation="relu")(inputs)  # a KerasTensor again: nothing is computed yet
    outputs = tl.keras.layers.Dense(10)(x)
    model = tl.keras.Model(inputs=inputs, outputs=outputs)    # the graph from inputs to outputs, as a model

A :class:`KerasTensor` holds a shape (``None`` for the batch axis) and a dtype, and the :class:`Node` that made
it: a layer (or an operator such as ``x + 1``) called on other KerasTensors. A layer called on one is built
then, as Keras builds it: here by running it once, unrecorded, on an example batch of zeros (one row), which
also gives the output's shape and dtype. ``tl.keras.Model(inputs, outputs)`` (:mod:`tapelab.keras.functional`)
walks the nodes back from the outputs and runs them, in order, on real tensors.
"""

import contextlib
import itertools

import numpy as np

from tapelab.engine import dtypes, nest
from tapelab.engine import tensor as _tensor
from tapelab.engine.recording import state as _state
from tapelab.engine.tensor import Tensor

_numbers = itertools.count()


class Node:
    """One call of the graph: ``call(*args, **kwargs)``, where KerasTensors stand among the arguments (``inputs``,
    in order) for the tensors a model run will have there; ``outputs`` are the KerasTensors it made (in the
    structure the call returned). ``layer`` is the layer called (None for an operator, whose ``call`` is the op)."""

    __slots__ = ("call", "args", "kwargs", "inputs", "outputs", "layer")

    def __init__(self, call, args, kwargs, layer):
        self.call, self.args, self.kwargs, self.layer = call, args, kwargs, layer
        self.inputs = [t for t in nest.flatten([list(args), kwargs]) if isinstance(t, KerasTensor)]
        self.outputs = None

    def run(self, value_of):
        """Call it on real tensors: ``value_of(keras_tensor)`` gives the tensor each KerasTensor stands for."""
        args, kwargs = _replace((list(self.args), self.kwargs), value_of)
        return self.call(*args, **kwargs)

    @property
    def name(self):
        return self.layer.name if self.layer is not None else getattr(self.call, "__name__", "op")


class KerasTensor:
    """A symbolic tensor: a shape and a dtype, no values (see the module's docstring). Give it to a layer, to
    another model or to an operator (``+ - * / @``, ``x[...]``); ``tl.keras.Model(inputs, outputs)`` turns the
    graph into a model that computes."""

    __slots__ = ("shape", "dtype", "name", "node", "_example")
    __array_priority__ = 200  # `ndarray + keras_tensor` defers to KerasTensor.__radd__
    _not_a_tensor = None  # (set below: what tl.convert_to_tensor says when given one)

    def __init__(self, example, node, name=None, batch_size=None):
        self._example = example  # a real tensor of this shape with one example (the layers were built on it)
        self.shape = (batch_size,) + tuple(example._value.shape[1:]) if example._value.ndim else ()
        self.dtype = example.dtype.name
        self.name = name or f"keras_tensor{_suffix(next(_numbers))}"
        self.node = node

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return (f"<KerasTensor shape={self.shape}, dtype={self.dtype}, sparse=False, ragged=False, "
                f"name={self.name}>")

    # --- operators: each one is a node of the graph, as a layer call is -------------------------------------
    def __add__(self, other):
        return call(_op("add"), (self, other), {})

    def __radd__(self, other):
        return call(_op("add"), (other, self), {})

    def __sub__(self, other):
        return call(_op("subtract"), (self, other), {})

    def __rsub__(self, other):
        return call(_op("subtract"), (other, self), {})

    def __mul__(self, other):
        return call(_op("multiply"), (self, other), {})

    def __rmul__(self, other):
        return call(_op("multiply"), (other, self), {})

    def __truediv__(self, other):
        return call(_op("divide"), (self, other), {})

    def __rtruediv__(self, other):
        return call(_op("divide"), (other, self), {})

    def __matmul__(self, other):
        return call(_op("matmul"), (self, other), {})

    def __pow__(self, other):
        return call(_op("pow"), (self, other), {})

    def __neg__(self):
        return call(_op("negative"), (self,), {})

    def __getitem__(self, key):
        return call(_op("getitem"), (self, key), {})

    # --- what a symbolic tensor cannot do: it has no values yet ---------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise ValueError(_NOT_A_VALUE)

    def numpy(self):
        raise ValueError(_NOT_A_VALUE)

    def __bool__(self):
        raise TypeError(f"{self!r} has no value to test with `if` or `and`: it is a placeholder of a Keras graph. "
                        "Decide inside a layer's call(), where the tensors are real.")

    def __iter__(self):
        raise TypeError(f"{self!r} cannot be iterated: it is a placeholder of a Keras graph. Slice it (x[:, 0]) "
                        "or split it inside a layer.")

    def __len__(self):
        raise TypeError(f"{self!r} has no length: its batch size is not known until the model runs.")


_NOT_A_VALUE = (
    "A KerasTensor cannot be used as input to a TensorFlow function. A KerasTensor is a symbolic placeholder for a "
    "shape and dtype, used when constructing Keras Functional models: it has no values. You can give it to a Keras "
    "layer, to a model, or to an operator (+ - * / @, slicing). To use a tl function (tl.matmul, tl.nn.relu, ...) "
    "in the graph, wrap it in a layer: tl.keras.layers.Lambda(lambda t: tl.nn.relu(t))(x), or write a Layer "
    "subclass whose call() uses it.")


KerasTensor._not_a_tensor = _NOT_A_VALUE


def _suffix(n):
    return "" if n == 0 else f"_{n}"


def _op(name):
    return getattr(_tensor._ops, name)  # (what a Tensor's operators call: tl.add, tl.matmul, ...)


def is_symbolic(*structures):
    """Whether a KerasTensor is among the leaves of ``structures``."""
    return any(isinstance(leaf, KerasTensor) for leaf in nest.flatten(list(structures)))


def call(fn, args, kwargs, layer=None):
    """``fn(*args, **kwargs)`` with KerasTensors among the arguments: a node of the graph. ``fn`` runs now on the
    KerasTensors' examples (unrecorded, not training), which builds a layer's weights and gives the outputs' shapes
    and dtypes; it returns KerasTensors in the structure ``fn`` returned."""
    node = Node(fn, args, kwargs, layer)
    example_args, example_kwargs = _replace((list(args), kwargs), lambda t: t._example)
    if layer is not None:
        example_kwargs.setdefault("training", False)
    try:
        with unrecorded():
            out = fn(*example_args, **example_kwargs)
    except Exception as e:
        what = f"layer {layer.name!r}" if layer is not None else getattr(fn, "__name__", "an operator")
        shapes = ", ".join(str(t.shape) for t in node.inputs)
        e.add_note(f"(raised while building the model: {what} was called on KerasTensors of shapes {shapes}; "
                   "shapes above with a batch of 1 are the example tapelab builds it on.)")
        raise
    batch = _batch_size(node.inputs)
    leaves = nest.flatten(out)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            what = f"layer {layer.name!r}" if layer is not None else getattr(fn, "__name__", "the operator")
            raise TypeError(f"{what} returned {type(leaf).__name__} {leaf!r} on a KerasTensor; a layer's call() "
                            "must return tensors (tl ops on its inputs).")
    node.outputs = nest.pack_like(out, [KerasTensor(leaf, node, batch_size=batch) for leaf in leaves])
    if layer is not None:
        layer.__dict__.setdefault("_node", node)  # (layer.input and layer.output: its first call's, as Keras)
    return node.outputs


def _batch_size(inputs):
    """The batch size the inputs declare (``keras.Input(batch_size=...)``), if they agree on one; else None."""
    sizes = {t.shape[0] if t.shape else None for t in inputs}
    return sizes.pop() if len(sizes) == 1 else None


def _replace(structure, value_of):
    leaves = [value_of(leaf) if isinstance(leaf, KerasTensor) else leaf for leaf in nest.flatten(structure)]
    return nest.pack_like(structure, leaves)


def input_tensor(layer, shape, batch_size, dtype, name):
    """The KerasTensor ``keras.Input`` gives: made by ``layer`` (an InputLayer), which nothing feeds."""
    node = Node(layer, (), {}, layer)
    example = Tensor(np.zeros((batch_size or 1,) + tuple(shape), dtypes.as_dtype(dtype).as_numpy_dtype))
    node.outputs = KerasTensor(example, node, name=name, batch_size=batch_size)
    layer.__dict__["_node"] = node
    return node.outputs


@contextlib.contextmanager
def unrecorded():
    """Run code without any active tape recording it (building a model is not the learner's computation)."""
    from tapelab.engine.tape import GradientTape

    with contextlib.ExitStack() as stack:
        for tape in [t for t in _state.recorders if isinstance(t, GradientTape)]:
            stack.enter_context(tape.stop_recording())
        yield
