"""Static graphs from the tape: ``tl.function`` traces Python once into a graph, then replays it.

    @tl.function
    def f(x):
        print("tracing!")          # Python runs only while tracing
        return x * x + 1.0

    f(tl.constant(2.0))            # traces (prints), then the graph holds: a = multiply(x, x); b = add(a, 1)
    f(tl.constant(3.0))            # same signature: replays the graph, Python is not run
    f(tl.constant([1.0, 2.0]))     # a new shape: traces again (f.trace_count == 2)

Tracing runs the function eagerly once, on placeholders that carry the first call's values, while a
recorder sits on the tape stack and writes every op down (the same ``Entry`` records a tape keeps).
Replaying runs those ops again through the op table, so an outer ``GradientTape`` records them as
usual; a gradient taken *inside* the function is traced as tensor ops too, so a whole training step
becomes one graph.
"""

import functools
import inspect

import numpy as np

from tapelab import nest
from tapelab.learner import spell
from tapelab.tape import Entry, _state, run
from tapelab.tensor import Tensor, Variable


class TracingError(TypeError):
    """Python asked for a traced tensor's value, which does not exist while the graph is being built."""

    def __init__(self, message):
        super().__init__(spell(message))


class SymbolicTensor(Tensor):
    """A tensor inside a function being traced: a placeholder or the output of a graph node.

    It carries the tracing call's value so shapes work out, but refuses to hand that value to Python:
    the graph must work for every later input, not only this one.
    """

    __slots__ = ()
    __hash__ = object.__hash__  # graph tensors can key a feed dict, as in TF 1's session.run

    def _refuse(self, what):
        raise TracingError(
            f"{what} needs this tensor's value, but inside tl.function the tensor is a node of a graph being "
            f"traced (shape {tuple(self.shape)}, {self.dtype.name}): its value differs on every call, and "
            "Python runs only once, while tracing. Keep the decision in the graph: tl.where(cond, a, b) "
            "picks elementwise, tl.cond(pred, true_fn, false_fn) picks a branch. Or leave this code "
            "outside the traced function."
        )

    def __bool__(self):
        self._refuse("bool() (an `if` or `while` on a tensor)")

    def __int__(self):
        self._refuse("int()")

    def __float__(self):
        self._refuse("float()")

    def __index__(self):
        self._refuse("using a tensor as a Python index")

    def numpy(self):
        self._refuse(".numpy()")

    def __array__(self, dtype=None, copy=None):
        self._refuse("converting to a numpy array")

    def __format__(self, spec):
        return str(self) if not spec else self._refuse("formatting a number")

    def __str__(self):
        return f"tapelab.Tensor(<traced>, shape={tuple(self.shape)}, dtype={self.dtype.name})"

    __repr__ = __str__


class _Assign:
    """A graph node that updates a Variable (the tape never records these; a traced graph must)."""

    vjps = None
    formulas = ()

    def __init__(self, how):
        self.name = how

    def __repr__(self):
        return f"<graph node {self.name}>"


_ASSIGN = {how: _Assign(how) for how in ("assign", "assign_add", "assign_sub")}


class Graph:
    """A traced computation: placeholders in, nodes in execution order, outputs out.

    ``graph.run(feeds)`` runs it again on new values (TF 1's ``session.run``); ``print(graph)`` lists
    it and ``tl.viz.draw(graph)`` draws it, with the same code as a tape.
    """

    def __init__(self, name):
        self.name = name
        self.placeholders = []  # one SymbolicTensor per tensor argument
        self.input_names = {}  # id(placeholder) -> the function's parameter name (how pictures name it)
        self.entries = []  # the nodes, as tape entries: (op, inputs, values, output, params, scope)
        self.outputs = None  # the function's result (a structure of tensors and Python values)
        self.last_backward = None  # (so the tape viewer can draw a graph)
        self._symbolic = set()  # ids of the graph's own tensors
        self._stopped = {}
        self._restore = {}  # id -> (Variable, value before tracing changed it)

    # --- recording (the graph sits on the tape stack while the function is traced) -------------
    _paused = False

    def _record(self, op, inputs, values, out, params, residual):
        out.__class__ = SymbolicTensor  # same layout: the op's result becomes a graph tensor
        self._symbolic.add(id(out))
        self.entries.append(Entry(op, inputs, values, out, params, _state.scope))

    def _record_assign(self, variable, how, value, old):
        self._restore.setdefault(id(variable), (variable, old))  # tracing only rehearses: undone afterwards
        new = SymbolicTensor(variable._value)  # stands for the updated value (called after the update)
        self._symbolic.add(id(new))
        self.entries.append(Entry(_ASSIGN[how], (variable, value), (old, value._value), new, {}, _state.scope))

    @property
    def watched(self):
        return tuple(self.placeholders)

    stopped, stopped_from = (), {}  # (a graph has no stop_recording)

    def tracks(self, tensor):
        return id(tensor) in self._symbolic

    # --- running -----------------------------------------------------------------------------
    def run(self, feeds):
        """Run the graph on new inputs: ``feeds`` maps placeholders to values (or lists them in order).

        >>> f = tl.function(lambda x: x * x)
        >>> g = f.get_concrete_function(tl.constant(2.0))
        >>> g.run({g.placeholders[0]: 3.0})
        <tapelab.Tensor: shape=(), dtype=float32, numpy=9.0>
        """
        if isinstance(feeds, dict):
            missing = [p for p in self.placeholders if p not in feeds]
            if missing:
                raise ValueError(
                    f"run(): no value fed for {len(missing)} placeholder(s) of graph '{self.name}'; feed every "
                    f"one of graph.placeholders (shapes {[tuple(p.shape) for p in self.placeholders]})."
                )
            feeds = [feeds[p] for p in self.placeholders]
        if len(feeds) != len(self.placeholders):
            raise ValueError(f"run(): graph '{self.name}' takes {len(self.placeholders)} inputs, got {len(feeds)}")
        env = {}
        for p, value in zip(self.placeholders, feeds):
            t = value if isinstance(value, Tensor) else Tensor(np.asarray(value, dtype=p._value.dtype))
            if t.shape != p.shape or t.dtype != p.dtype:
                raise ValueError(
                    spell(f"run(): graph '{self.name}' was traced for a {p.dtype.name} input of shape "
                          f"{tuple(p.shape)}, got {t.dtype.name} {tuple(t.shape)}. Call the tl.function instead: it "
                          "traces a new graph for a new signature.")
                )
            env[id(p)] = t

        def value_of(t):  # a graph tensor's value in this run; Variables are read now; constants as captured
            return env[id(t)] if id(t) in env else t

        for e in self.entries:
            if isinstance(e.op, _Assign):
                getattr(e.inputs[0], e.op.name)(value_of(e.inputs[1]))
            else:
                env[id(e.output)] = run(e.op, tuple(value_of(t) for t in e.inputs), **e.params)
        return nest.pack_like(self.outputs, [value_of(t) if isinstance(t, Tensor) else t
                                             for t in nest.flatten(self.outputs)])

    def __str__(self):
        from tapelab.viz import format_tape

        return format_tape(self).replace("GradientTape:", f"Graph '{self.name}':", 1)

    def __repr__(self):
        return f"<tapelab.Graph '{self.name}': {len(self.placeholders)} inputs, {len(self.entries)} nodes>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        from tapelab.viz.render import tape_mimebundle

        bundle = tape_mimebundle(self, include, exclude)
        bundle["text/plain"] = str(self)
        return bundle


def _parameter_names(fn, args, kwargs, placeholders):
    """id(placeholder) -> the name of the parameter it was passed as (``x`` for ``def f(x)``), where one is known."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs).arguments
    except (TypeError, ValueError):  # a builtin without a signature, or arguments that do not bind
        return {}
    ids = {id(p) for p in placeholders}
    return {id(value): name for name, value in bound.items() if id(value) in ids}


class Function:
    """A Python function that runs as a traced graph; see :func:`function`."""

    def __init__(self, python_function, name=None):
        functools.update_wrapper(self, python_function)
        self.python_function = python_function
        self.name = name or getattr(python_function, "__name__", "function")
        self.graphs = {}  # signature -> Graph

    @property
    def trace_count(self):
        """How many times Python ran the function to trace a graph (once per new signature)."""
        return len(self.graphs)

    def experimental_get_tracing_count(self):
        """TF's name for :attr:`trace_count`."""
        return self.trace_count

    def __get__(self, obj, objtype=None):  # a decorated method binds like a function
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        key, tensors = _signature(args, kwargs)
        graph = self.graphs.get(key)
        if graph is None:
            return self._trace(key, args, kwargs)
        return graph.run(tensors)

    def get_concrete_function(self, *args, **kwargs):
        """The graph for these arguments' signature (traced now if needed)."""
        key, _ = _signature(args, kwargs)
        if key not in self.graphs:
            self._trace(key, args, kwargs)
        return self.graphs[key]

    def _trace(self, key, args, kwargs):
        if any(isinstance(r, Graph) for r in _state.tapes):
            return self.python_function(*args, **kwargs)  # called from another traced function: inline it
        graph = Graph(f"{self.name}_{len(self.graphs)}")

        def placeholder(x):
            if isinstance(x, Tensor) and not isinstance(x, Variable):
                p = SymbolicTensor(x._value)
            elif isinstance(x, np.ndarray):
                p = SymbolicTensor(x)
            else:
                return x
            graph.placeholders.append(p)
            graph._symbolic.add(id(p))
            return p

        traced_args, traced_kwargs = _map_args(placeholder, args, kwargs)
        graph.input_names = _parameter_names(self.python_function, traced_args, traced_kwargs, graph.placeholders)
        outer, _state.tapes[:] = _state.tapes[:], [graph]  # outer tapes must not see the rehearsal
        try:
            graph.outputs = self.python_function(*traced_args, **traced_kwargs)
        finally:
            _state.tapes[:] = outer
            for variable, value in graph._restore.values():
                variable._value = value
        self.graphs[key] = graph
        # as in TF, the first call runs the new graph too: its updates happen once, outer tapes record it
        return graph.run(_signature(args, kwargs)[1])

    def __repr__(self):
        return f"<tapelab.function {self.name}: traced {self.trace_count} time(s)>"


def function(func=None, *, name=None):
    """Trace ``func`` into a static graph on its first call per input signature, then replay the graph.

    The signature is the shape and dtype of each tensor (or numpy array) argument, the identity of
    each Variable argument and the value of every other argument. Variables the function reads are
    captured by reference, so an ``assign_sub`` between calls is seen. Usable as ``@tl.function``
    or ``tl.function(f)``.

    >>> @tl.function
    ... def square_plus_one(x):
    ...     return x * x + 1.0
    >>> square_plus_one(tl.constant(3.0))
    <tapelab.Tensor: shape=(), dtype=float32, numpy=10.0>
    """
    if func is None:
        return lambda f: Function(f, name)
    return Function(func, name)


def _map_args(fn, args, kwargs):
    return [nest.pack_like(a, [fn(x) for x in nest.flatten(a)]) for a in args], \
        {k: nest.pack_like(v, [fn(x) for x in nest.flatten(v)]) for k, v in kwargs.items()}


def _signature(args, kwargs):
    """A hashable key for the arguments, and the tensor arguments in order (the graph's inputs)."""
    key, tensors = [], []
    for x in nest.flatten([list(args), kwargs]):
        if isinstance(x, Variable):
            key.append(("variable", id(x)))
        elif isinstance(x, (Tensor, np.ndarray)):
            arr = x._value if isinstance(x, Tensor) else x
            key.append(("tensor", arr.shape, arr.dtype.str))
            tensors.append(x)
        else:
            try:
                hash(x)
                key.append(("python", type(x).__name__, x))
            except TypeError:
                key.append(("python", type(x).__name__, repr(x)))
    structure = repr(nest.pack_like([list(args), kwargs], ["."] * len(nest.flatten([list(args), kwargs]))))
    return (structure, tuple(key)), tensors


def cond(pred, true_fn, false_fn, name=None):
    """``true_fn()`` if ``pred`` else ``false_fn()`` — also inside ``tl.function``.

    Eagerly, only the chosen branch runs. While tracing, ``pred`` has no value yet, so both branches
    are traced and the result is picked with :func:`tl.where` (both must return tensors of the same
    structure; keep side effects such as ``assign`` out of them).
    """
    if not isinstance(pred, SymbolicTensor):
        return true_fn() if bool(pred) else false_fn()
    from tapelab.ops import where

    a, b = true_fn(), false_fn()
    flat_a, flat_b = nest.flatten(a), nest.flatten(b)
    if len(flat_a) != len(flat_b):
        raise ValueError("cond: true_fn and false_fn must return the same structure of tensors")
    return nest.pack_like(a, [where(pred, x, y) for x, y in zip(flat_a, flat_b)])
