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
SIZES = (16, 17)  # what a size the graph leaves open (None) is in the two examples a graph is built on


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

    __slots__ = ("shape", "dtype", "name", "node", "_examples")
    __array_priority__ = 200  # `ndarray + keras_tensor` defers to KerasTensor.__radd__
    _not_a_tensor = None  # (set below: what tl.convert_to_tensor says when given one)

    def __init__(self, examples, node, name=None, batch_size=None):
        # two real tensors of this shape with one example each (the layers were built on the first): a size the
        # graph does not fix (None) is 16 in the first and 17 in the second, so where they differ the size is None
        self._examples = examples
        first, second = (e._value.shape for e in examples)
        self.shape = (batch_size,) + tuple(a if a == b else None for a, b in zip(first[1:], second[1:])) \
            if len(first) else ()
        self.dtype = examples[0].dtype.name
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
    """Whether a KerasTensor is among the leaves of ``structures`` (a layer's inputs, args and kwargs: only a
    non-empty list, tuple or dict is flattened, so a plain array and empty args cost a check each)."""
    for s in structures:
        if isinstance(s, KerasTensor):
            return True
        if isinstance(s, (list, tuple, dict)) and s and any(isinstance(leaf, KerasTensor) for leaf in nest.flatten(s)):
            return True
    return False


def call(fn, args, kwargs, layer=None):
    """``fn(*args, **kwargs)`` with KerasTensors among the arguments: a node of the graph. ``fn`` runs now on the
    KerasTensors' examples (unrecorded, not training), which builds a layer's weights and gives the outputs' shapes
    and dtypes; it returns KerasTensors in the structure ``fn`` returned."""
    node = Node(fn, args, kwargs, layer)
    first = _run_on_examples(node, 0)
    unfixed = any(e0 is not e1 for t in node.inputs for e0, e1 in [t._examples])  # (a None size in some input)
    second = _run_on_examples(node, 1) if unfixed else first
    batch = _batch_size(node.inputs)
    node.outputs = nest.pack_like(first, [KerasTensor(pair, node, batch_size=batch)
                                          for pair in zip(nest.flatten(first), nest.flatten(second))])
    if layer is not None and "_node" not in layer.__dict__:  # (layer.input, layer.output: its first call's)
        layer.__dict__["_node"] = node
        if isinstance(node.outputs, KerasTensor):
            layer.output_shape = node.outputs.shape  # (for summary(): with None where the graph fixes no size)
    return node.outputs


def _run_on_examples(node, k):
    """The node's call on its inputs' ``k``-th examples (unrecorded; a layer not training)."""
    args, kwargs = _replace((list(node.args), node.kwargs), lambda t: t._examples[k])
    if node.layer is not None:
        kwargs.setdefault("training", False)
    what = f"layer {node.layer.name!r}" if node.layer is not None else getattr(node.call, "__name__", "an operator")
    try:
        with unrecorded():
            out = node.call(*args, **kwargs)
    except Exception as e:
        shapes = ", ".join(str(t.shape) for t in node.inputs)
        e.add_note(f"(raised while building the model: {what} was called on KerasTensors of shapes {shapes}; "
                   f"tapelab builds it on examples: a batch of 1, and {SIZES[k]} for each None size.)")
        raise
    for leaf in nest.flatten(out):
        if not isinstance(leaf, Tensor):
            raise TypeError(f"{what} returned {type(leaf).__name__} {leaf!r} on a KerasTensor; a layer's call() "
                            "must return tensors (tl ops on its inputs).")
    return out


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
    np_dtype = dtypes.as_dtype(dtype).as_numpy_dtype
    examples = [Tensor(np.zeros((batch_size or 1,) + tuple(size if n is None else n for n in shape), np_dtype))
                for size in SIZES]
    node.outputs = KerasTensor(examples if None in shape else examples[:1] * 2, node, name=name,
                               batch_size=batch_size)
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
