"""``Module``: a container that finds its Variables by looking at its attributes, like ``tf.Module``.

    class Linear(tl.Module):
        def __init__(self):
            super().__init__()
            self.w = tl.Variable(5.0)
            self.b = tl.Variable(10.0)

        def __call__(self, x):
            return x * self.w + self.b

    Linear().trainable_variables    # (w, b): found, not registered
"""

import re

from tapelab.engine.tape import name_scope as _name_scope
from tapelab.engine.tensor import Variable


def snake_case(name):
    """``MyDenseLayer`` -> ``my_dense_layer``: tf.Module's default names (Keras's metrics name themselves so too)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def leaves(value):
    """The leaves of ``value`` looking through lists, tuples and dicts (dicts by sorted key, as TF)."""
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            yield from leaves(value[key])
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from leaves(item)
    else:
        yield value


class Module:
    """Base class for models and layers: ``variables`` are collected from the attributes.

    Every attribute (and everything inside a list, tuple or dict attribute) is inspected in sorted
    attribute-name order: Variables are collected, Modules are searched in turn, each object once.
    That is ``tf.Module``'s rule, so nothing needs registering.

    >>> tl.keras.backend.clear_session()  # layer names start again at dense
    >>> class Model(tl.Module):
    ...     def __init__(self):
    ...         super().__init__(name="model")
    ...         self.layers = [tl.layers.Dense(4), tl.layers.Dense(1)]
    >>> m = Model()
    >>> [s.name for s in m.submodules]
    ['dense', 'dense_1']
    """

    def __init__(self, name=None):
        if name is None:
            name = snake_case(type(self).__name__)
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(
                f"{type(self).__name__}: name {name!r} is not a valid name; use letters, digits and underscores "
                "(it names the module's group of ops on the tape)."
            )
        self._name = name
        self._name_scope = _name_scope(name)

    @property
    def name(self):
        """The module's name (also the name scope its ops are recorded under)."""
        return self._name

    @property
    def name_scope(self):
        """A ``tl.name_scope(self.name)`` context: ops run inside it are grouped under this module's name."""
        return self._name_scope

    def _walk(self):
        """Every object reachable from the attributes, each once: own attributes first, then submodules."""
        seen = {id(self)}
        stack = [self]
        while stack:
            module = stack.pop(0)
            found = []
            attrs = vars(module) if hasattr(module, "__dict__") else {}
            for key in sorted(attrs):
                for leaf in leaves(attrs[key]):
                    if id(leaf) in seen:
                        continue
                    seen.add(id(leaf))
                    yield leaf
                    if isinstance(leaf, Module):
                        found.append(leaf)
            stack[:0] = found  # depth first, in attribute order (as tf.Module)

    @property
    def variables(self):
        """All Variables of this module and its submodules, in a fixed order, without duplicates."""
        return tuple(v for v in self._walk() if isinstance(v, Variable))

    @property
    def trainable_variables(self):
        """The trainable Variables (what an optimizer updates)."""
        return tuple(v for v in self._walk() if isinstance(v, Variable) and v.trainable)

    @property
    def non_trainable_variables(self):
        """The Variables with ``trainable=False``."""
        return tuple(v for v in self._walk() if isinstance(v, Variable) and not v.trainable)

    @property
    def submodules(self):
        """Every Module reachable from this one (not itself), each once."""
        return tuple(m for m in self._walk() if isinstance(m, Module))

    def count_params(self):
        """The number of scalars in all variables."""
        return sum(v.shape.num_elements() for v in self.variables)

    def __repr__(self):
        return f"<{type(self).__module__.split('.')[0]}.{type(self).__name__} '{self.name}'>"
