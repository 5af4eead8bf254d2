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
from tapelab.keras import symbolic
from tapelab.keras.layers import InputLayer, Layer
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
        self._layers = _layers_in_keras_order(self._input_tensors, self._output_tensors)
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

    # --- the graph as a config: get_config() / Model.from_config(config, custom_objects) ---------------------
    def get_config(self):
        """The graph as plain data: each layer's class and config (in ``layers``' order), each call (``nodes``, in
        order: which layer, by its place in ``layers``, or which operator, on what), and which tensors are the
        inputs and outputs. Operators' arguments (a slice's bounds) are kept as they
        are. A tensor is named by a reference ``[node, k]`` (the k-th output of that node; the i-th
        input is ``["input", i]``)."""
        ref = {id(t): ["input", i] for i, t in enumerate(self._input_tensors)}
        index = {id(layer): k for k, layer in enumerate(self._layers)}
        nodes = []
        for position, node in enumerate(self._nodes):
            args, kwargs = _swap((list(node.args), node.kwargs), lambda t: ref[id(t)])
            nodes.append({"layer": index[id(node.layer)], "args": args, "kwargs": kwargs} if node.layer is not None
                         else {"op": node.name, "args": args, "kwargs": kwargs})
            for k, t in enumerate(nest.flatten(node.outputs)):
                ref[id(t)] = [position, k]
        layers = [{"class_name": type(layer).__name__, "config": layer.get_config()} for layer in self._layers]
        for entry, layer in zip(layers, self._layers):
            if isinstance(layer, InputLayer):
                entry["config"] = {"shape": layer.input_shape_declared, "batch_size": layer.batch_size,
                                   "dtype": layer.dtype.name, "name": layer.name}
        return {"name": self.name, "trainable": self.trainable, "layers": layers, "nodes": nodes,
                "inputs": nest.pack_like(self._inputs, [ref[id(t)] for t in self._input_tensors]),
                "input_names": [t.name for t in self._input_tensors],
                "input_layers": [index[id(t.node.layer)] for t in self._input_tensors],
                "outputs": nest.pack_like(self._outputs, [ref[id(t)] for t in self._output_tensors])}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A new functional model from :meth:`get_config`'s dict (new weights): each layer made again from its
        class (found among tapelab's layers, ``custom_objects`` and registered classes) and called as before."""
        from tapelab.keras import layers as layers_module
        from tapelab.keras.saving import get_registered_object

        made = []
        for entry in config["layers"]:
            name = entry["class_name"]
            if name == "InputLayer":
                made.append(layers_module.InputLayer(**entry["config"]))
                continue
            layer_class = get_registered_object(name, custom_objects, vars(layers_module))
            if layer_class is None:
                raise TypeError(spell(
                    f"Model.from_config: could not locate class {name!r}. A layer class of your own must be given: "
                    f"Model.from_config(config, custom_objects={{{name!r}: {name}}}), or registered with "
                    "@tl.keras.saving.register_keras_serializable()."))
            made.append(layer_class.from_config(entry["config"]))
        by_ref = {("input", k): _input_of(made[layer], name)
                  for k, (layer, name) in enumerate(zip(config["input_layers"], config["input_names"]))}
        for position, entry in enumerate(config["nodes"]):
            args, kwargs = _swap((entry["args"], entry["kwargs"]), lambda r: by_ref[tuple(r)], refs=True)
            out = made[entry["layer"]](*args, **kwargs) if "layer" in entry else \
                symbolic.call(_operator(entry["op"]), args, kwargs)
            for k, t in enumerate(nest.flatten(out)):
                by_ref[(position, k)] = t
        picked = {"inputs": None, "outputs": None}
        for what in picked:
            refs = config[what]
            leaves = [by_ref[tuple(r)] for r in _refs(refs)]
            picked[what] = nest.pack_like(_ref_structure(refs), leaves)
        return cls(picked["inputs"], picked["outputs"], name=config.get("name"),
                   trainable=config.get("trainable", True))

    def __repr__(self):
        return f"<tapelab.keras.Functional '{self.name}': {len(self._input_tensors)} input(s) -> " \
               f"{len(self._output_tensors)} output(s), {len(self._layers)} layers>"


def _swap(structure, replace, refs=False):
    """``structure`` with each KerasTensor (``refs``: each ``[node, k]`` reference) replaced by ``replace(it)``."""
    if refs:
        if _is_ref(structure):
            return replace(structure)
        if isinstance(structure, dict):
            return {k: _swap(v, replace, refs) for k, v in structure.items()}
        if isinstance(structure, (list, tuple)):
            return type(structure)(_swap(v, replace, refs) for v in structure)
        return structure
    leaves = [replace(leaf) if isinstance(leaf, KerasTensor) else leaf for leaf in nest.flatten(structure)]
    return nest.pack_like(structure, leaves)


def _is_ref(value):
    return isinstance(value, list) and len(value) == 2 and isinstance(value[1], int) and (
        value[0] == "input" or isinstance(value[0], int))


def _refs(structure):
    if _is_ref(structure):
        return [structure]
    if isinstance(structure, dict):
        return [r for k in sorted(structure) for r in _refs(structure[k])]
    return [r for item in structure for r in _refs(item)]


def _ref_structure(structure):
    """The references' structure with each reference as one leaf (so nest.pack_like can fill it)."""
    if _is_ref(structure):
        return None
    if isinstance(structure, dict):
        return {k: _ref_structure(v) for k, v in structure.items()}
    return [_ref_structure(item) for item in structure]


def _input_of(layer, name):
    """The KerasTensor ``keras.Input`` makes for a rebuilt InputLayer."""
    return symbolic.input_tensor(layer, layer.input_shape_declared, layer.batch_size, layer.dtype, name)


def _operator(name):
    from tapelab.engine import tensor

    return getattr(tensor._ops, name)


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


def _layers_in_keras_order(inputs, outputs):
    """The model's layers as Keras lists them: by depth, the farthest from the outputs first (a layer's depth is
    its longest path to an output), layers of one depth in the order a walk back from the outputs meets them; an
    input no output uses, at depth 0. Each layer once; operators (``x + y``) are not layers."""
    given = {id(t) for t in inputs}
    met, walked, finished = {}, [], set()  # met: id(operation) -> (order met, operation)

    def walk(t):  # depth first from an output, as Keras's _build_map
        node = t.node
        if id(node) in finished:
            return
        operation = node.layer if node.layer is not None else node
        met.setdefault(id(operation), (len(met), operation))
        if not isinstance(node.layer, InputLayer) and id(t) not in given:
            for source in node.inputs:
                walk(source)
        finished.add(id(node))
        walked.append(node)

    for t in outputs:
        walk(t)
    node_depth, depth_of = {}, {}
    for node in reversed(walked):  # from the outputs back: a node is one deeper than the deepest node it feeds
        operation = node.layer if node.layer is not None else node
        depth = max(node_depth.setdefault(id(node), 0), depth_of.get(id(operation), 0))
        depth_of[id(operation)] = node_depth[id(node)] = depth
        for source in node.inputs:
            node_depth[id(source.node)] = max(depth + 1, node_depth.get(id(source.node), 0))
    for t in inputs:  # (an input no output uses: depth 0, first of that depth)
        if id(t.node.layer) not in depth_of:
            depth_of[id(t.node.layer)], met[id(t.node.layer)] = 0, (-1, t.node.layer)
    ordered = sorted(met.values(), key=lambda pair: (-depth_of[id(pair[1])], pair[0]))
    return [operation for _, operation in ordered if isinstance(operation, Layer)]


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
