"""Keras's functional API: ``tl.keras.Model(inputs, outputs)`` is the graph of layer calls from ``keras.Input``
tensors to the outputs, run as a model.

    inputs = tl.keras.Input(shape=(784,), name="digits")
    x = tl.keras.layers.Dense(64, activation="relu")(inputs)
    outputs = tl.keras.layers.Dense(10, name="predictions")(x)
    model = tl.keras.Model(inputs=inputs, outputs=outputs)
    model.summary()                       # digits (InputLayer), dense (Dense), predictions (Dense)
    logits = model(x_batch)               # each layer called in order, on real tensors: one name scope each

A model of several inputs or outputs takes and gives them as a list or a dict (keyed by the ``keras.Input``
names, or as ``outputs`` was given); a model is a layer, so it can be called on KerasTensors inside a bigger
model. ``fit`` trains it as any model (``compile(loss=...)`` with one loss per output for several outputs).
"""

from tapelab import array_ops
from tapelab.engine import nest
from tapelab.engine.learner import spell
from tapelab.engine.tensor import Tensor, convert_to_tensor
from tapelab.keras.layers import InputLayer
from tapelab.keras.models import Model
from tapelab.keras.symbolic import KerasTensor


class Functional(Model):
    """What ``tl.keras.Model(inputs, outputs)`` makes (see the module's docstring)."""

    def __init__(self, inputs, outputs, name=None, trainable=True, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        self._inputs, self._outputs = _structure(inputs), _structure(outputs)
        self._input_tensors = _checked(self.name, "inputs", self._inputs)
        self._output_tensors = _checked(self.name, "outputs", self._outputs)
        for t in self._input_tensors:
            if not isinstance(t.node.layer, InputLayer):
                raise ValueError(spell(
                    f"{self.name}: inputs= must be tensors made by tl.keras.Input(...), got {t!r}, which layer "
                    f"{t.node.name!r} made. Give the Input the graph starts from (a model's inputs are where data "
                    "enters)."))
        self._nodes = _nodes_between(self.name, self._input_tensors, self._output_tensors)
        layers = [t.node.layer for t in self._input_tensors] + [n.layer for n in self._nodes if n.layer is not None]
        self._layers = list({id(layer): layer for layer in layers}.values())  # (a shared layer once)
        self.built = True

    @property
    def inputs(self):
        """The ``keras.Input`` tensors, as a flat list (Keras's ``model.inputs``)."""
        return list(self._input_tensors)

    @property
    def outputs(self):
        """The output KerasTensors, as a flat list."""
        return list(self._output_tensors)

    @property
    def output_names(self):
        """Each output's name: its key when ``outputs`` is a dict, else the name of the layer that makes it."""
        if isinstance(self._outputs, dict):
            return sorted(self._outputs)  # (the order nest.flatten gives a dict's leaves)
        names = []
        for t in self._output_tensors:
            name = t.node.name
            names.append(name if name not in names else f"{name}_{len(names)}")
        return names

    @property
    def input(self):
        return self._inputs

    @property
    def output(self):
        return self._outputs

    @property
    def input_shape(self):
        return nest.pack_like(self._inputs, [t.shape for t in self._input_tensors])

    @property
    def output_shape(self):
        return nest.pack_like(self._outputs, [t.shape for t in self._output_tensors])

    @output_shape.setter
    def output_shape(self, value):  # (Layer.__init__ and __call__ set it; a functional model's is its outputs')
        pass

    def call(self, inputs, training=None):
        values = {id(t): value for t, value in zip(self._input_tensors, self._fed(inputs))}
        for node in self._nodes:
            out = node.run(lambda t: values[id(t)])
            for t, value in zip(nest.flatten(node.outputs), nest.flatten(out)):
                values[id(t)] = value
        return nest.pack_like(self._outputs, [values[id(t)] for t in self._output_tensors])

    def _fed(self, inputs):
        """The given inputs, one tensor per ``keras.Input`` (in order), each checked against its shape and dtype."""
        wanted = self._input_tensors
        if isinstance(inputs, dict):
            names = [t.node.layer.name for t in wanted]
            keys = list(self._inputs) if isinstance(self._inputs, dict) else names
            missing = [k for k in keys if k not in inputs]
            if missing:
                raise ValueError(spell(
                    f"{self.name}: the inputs are a dict without {', '.join(map(repr, missing))}; the model's inputs "
                    f"are {', '.join(map(repr, keys))} (the names given to tl.keras.Input). Give one array per "
                    "input under those keys."))
            given = nest.flatten({k: inputs[k] for k in keys}) if isinstance(self._inputs, dict) else \
                [inputs[k] for k in keys]
        else:
            given = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
            if len(given) != len(wanted):
                raise ValueError(spell(
                    f"{self.name}: expects {len(wanted)} input(s) "
                    f"({', '.join(repr(t.node.layer.name) for t in wanted)}), got {len(given)}. Give a list of "
                    "one array per input, in the order of inputs=, or a dict keyed by the inputs' names."))
        return [_as_input(self.name, t, value) for t, value in zip(wanted, given)]

    def graph(self):
        """The layer graph, for pictures: ``(boxes, arrows)``, a box ``(key, layer)`` per layer (or ``(key, name)``
        per operator such as ``x + y``), in order, and an arrow ``(from key, to key)`` per connection."""
        def key(node):
            return id(node.layer) if node.layer is not None else id(node)

        boxes = {id(t.node.layer): t.node.layer for t in self._input_tensors}
        arrows = []
        for node in self._nodes:
            boxes.setdefault(key(node), node.layer if node.layer is not None else node.name)
            arrows += [(key(t.node), key(node)) for t in node.inputs]
        return list(boxes.items()), list(dict.fromkeys(arrows))

    def summary(self, print_fn=print):
        """One row per layer (its inputs first), with its output shape, its number of weights and, when the graph
        is not a chain, the layers each one takes its inputs from (Keras's "Connected to")."""
        chain = len(self._input_tensors) == 1 and all(len(n.inputs) == 1 for n in self._nodes)
        if chain:
            return super().summary(print_fn)
        made_by = {}
        for node in self._nodes:
            for t in nest.flatten(node.outputs):
                made_by[id(t)] = node
        connected = {}
        for node in self._nodes:
            if node.layer is not None:
                sources = [made_by[id(t)].name if id(t) in made_by else t.node.name for t in node.inputs]
                connected.setdefault(id(node.layer), []).extend(sources)
        return super().summary(print_fn, connected={k: ", ".join(v) for k, v in connected.items()})

    def __repr__(self):
        return f"<tapelab.keras.Functional '{self.name}': {len(self._input_tensors)} input(s) -> " \
               f"{len(self._output_tensors)} output(s), {len(self._layers)} layers>"


def _structure(value):
    """A single KerasTensor, or a list / dict of them (a tuple as a list, as Keras takes it)."""
    return list(value) if isinstance(value, tuple) else value


def _checked(name, what, structure):
    leaves = nest.flatten(structure)
    if not leaves:
        raise ValueError(f"{name}: {what}= is empty; give the KerasTensors of keras.Input(...) and of the layers")
    for leaf in leaves:
        if not isinstance(leaf, KerasTensor):
            hint = ("keras.Input(shape=...) gives one" if what == "inputs" else
                    "calling a layer on an Input's tensor gives one, e.g. tl.keras.layers.Dense(10)(inputs)")
            raise ValueError(spell(f"{name}: {what}= must be KerasTensors ({hint}), got {type(leaf).__name__} "
                                  f"{leaf!r}. To write a model's computation as Python instead, subclass "
                                  "tl.keras.Model and write call()."))
    return leaves


def _nodes_between(name, inputs, outputs):
    """The nodes that lead from ``inputs`` to ``outputs``, each after the nodes whose outputs it takes. An output
    that depends on a ``keras.Input`` not among ``inputs`` is a disconnected graph: an error saying which."""
    given = {id(t) for t in inputs}
    order, state = [], {}  # state: id(node) -> "open" while its inputs are visited, "done" after

    def visit(t, path):
        if id(t) in given:
            return
        node = t.node
        if isinstance(node.layer, InputLayer):
            names = ", ".join(repr(i.node.layer.name) for i in inputs)
            raise ValueError(spell(
                f"{name}: graph disconnected: output {path} depends on Input {node.layer.name!r} "
                f"(shape {t.shape}), which is not among inputs= ({names}). Add it to inputs=[...], or build the "
                "output from the given inputs only."))
        if state.get(id(node)) == "done":
            return
        state[id(node)] = "open"
        for source in node.inputs:
            visit(source, path)
        state[id(node)] = "done"
        order.append(node)

    for i, t in enumerate(outputs):
        visit(t, f"{i} ({t.name})")
    return order


def _as_input(name, t, value):
    """``value`` as the tensor ``keras.Input`` ``t`` stands for: its dtype (floats cast, as Keras does), its shape."""
    if not isinstance(value, Tensor):
        value = convert_to_tensor(value)
    if value.dtype.name != t.dtype and value.dtype.is_floating and t.dtype.startswith("float"):
        value = array_ops.cast(value, t.dtype)
    shape = tuple(value.shape)
    if len(shape) != len(t.shape) or any(d is not None and d != n for d, n in zip(t.shape, shape)):
        raise ValueError(spell(
            f"{name}: Input {t.node.layer.name!r} expects a batch of shape {t.shape} (None: any batch size), got "
            f"{shape}. Reshape the data to match, or build the model on a keras.Input of the data's shape."))
    return value


Model._functional = Functional  # (what Model(inputs, outputs) makes)

__all__ = ["Functional"]
