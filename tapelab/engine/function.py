"""Static graphs from the tape: ``tl.function`` traces Python once into a graph, then replays it.

    @tl.function
    def f(x):
        print("tracing!")          # Python runs only while tracing
        return x * x + 1.0

    f(tl.constant(2.0))            # traces (prints), then the graph holds: a = multiply(x, x); b = add(a, 1)
    f(tl.constant(3.0))            # same signature: replays the graph, Python is not run
    f(tl.constant([1.0, 2.0]))     # a new shape: traces again (f.trace_count == 2)

Tracing runs the function eagerly once, on placeholders that carry the first call's values, while a
``Graph``, meanwhile the only recorder (``recording.state.recorders``), writes every op down (the same
``Entry`` records a tape keeps); a gradient taken *inside* the function is traced as tensor ops too, so a
whole training step becomes one graph. A later call runs the graph's *plan* (:mod:`~tapelab.engine.plan`): its
nodes as one straight-line numpy program, with the checks left to the trace. While a tape records (or
check-numerics is on), the graph is replayed through the op table instead, so the tape sees every op.
"""

import contextlib
import functools
import inspect
import warnings
import weakref
from types import SimpleNamespace

import numpy as np

from tapelab.engine import dtypes, nest, recording
from tapelab.engine.errors import LeakedTensorError, UnsupportedError
from tapelab.engine.learner import spell
from tapelab.engine.plan import Plan
from tapelab.engine.recording import Recorder, switches
from tapelab.engine.recording import state as _state
from tapelab.engine.recording import tracing_graph as _tracing_graph
from tapelab.engine.tape import Entry, run
from tapelab.engine.tensor import Tensor, TensorShape, Variable, convert_to_tensor

settings = SimpleNamespace(run_eagerly=False)  # tl.config.run_functions_eagerly(True): call the Python instead


class TracingError(UnsupportedError, TypeError):
    """Python asked for a traced tensor's value, which does not exist while the graph is being built.

    TensorFlow's autograph would rewrite an ``if`` or ``while`` on a tensor into graph ops; tapelab
    leaves that to TensorFlow (an :class:`UnsupportedError`) and says which op to write instead.
    """

    def __init__(self, message):
        super().__init__("autograph (Python control flow on traced tensors)", message=message)


class SymbolicTensor(Tensor):
    """A tensor inside a function being traced: a placeholder or the output of a graph node.

    It carries the tracing call's value so shapes work out, but refuses to hand that value to Python:
    the graph must work for every later input, not only this one.
    """

    __slots__ = ()
    __hash__ = object.__hash__  # graph tensors can key a feed dict, as in TF 1's session.run
    _traced = True

    def _refuse(self, what):
        raise TracingError(
            f"{what} needs this tensor's value, but inside tl.function the tensor is a node of a graph being "
            f"traced (shape {tuple(self.shape)}, {self.dtype.name}): its value differs on every call, and "
            "Python runs only once, while tracing. Keep the decision in the graph: tl.where(cond, a, b) "
            "picks elementwise, tl.cond(pred, true_fn, false_fn) picks a branch; a loop over a Python range "
            "unrolls. (Rewriting Python `if`, `while` and `for` over tensors into such ops is the job of "
            "TensorFlow's autograph, which is left to TensorFlow.) Or leave this code outside the traced function."
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


class _Expired:
    """The value slot of a graph tensor once tracing is over: its shape and dtype, and no numbers."""

    __slots__ = ("shape", "dtype", "ndim", "size", "graph")
    __array_priority__ = 1000

    def __init__(self, value, graph):
        self.shape, self.dtype, self.ndim, self.size = value.shape, value.dtype, value.ndim, value.size
        self.graph = graph

    def _leaked(self, *args, **kwargs):
        raise LeakedTensorError(
            f"this tensor was made inside tl.function while graph '{self.graph}' was traced: it is a node of that "
            "graph and has no value outside it. It leaked out (through a global, an attribute or a list). Return "
            "it from the function instead and use the value the call returns."
        )

    __array__ = __array_ufunc__ = __array_function__ = __getitem__ = __iter__ = __len__ = _leaked

    def __getattr__(self, name):
        self._leaked()


class LeakedTensor(SymbolicTensor):
    """A tensor of a traced graph, found outside the trace that made it (kept in a global or an attribute)."""

    __slots__ = ()

    def _refuse(self, what):
        self._value._leaked()

    def numpy(self):
        raise AttributeError(spell(
            f"this tensor of graph '{self._value.graph}' has no numpy(): it was made while tl.function traced the "
            "graph and has no value outside it (it leaked out through a global or an attribute). Return it from "
            "the function and use the returned value."))

    def __str__(self):
        return f"tapelab.Tensor(<leaked from graph '{self._value.graph}'>, shape={tuple(self.shape)}, " \
               f"dtype={self.dtype.name})"

    __repr__ = __str__


class _StateNode:
    """A graph node that changes state (the tape never records these; a traced graph must): replaying the graph
    runs its Python again, on the values the graph computed this time."""

    vjps = None
    formulas = ()


class _Assign(_StateNode):
    """``variable.assign(value)`` (or ``assign_add`` / ``assign_sub``)."""

    kind = "assign"

    def __init__(self, how):
        self.name = how

    def replay(self, variable, value):
        getattr(variable, self.name)(value)

    def __repr__(self):
        return f"<graph node {self.name}>"


class _PythonNode(_StateNode):
    """Python that changes state (an optimizer step, a metric update), run again on every run of the graph with
    that run's values: ``fn(*args, **kwargs)`` with the tensors among them replaced. ``on_arrays``, if given, does
    the same from the inputs' arrays (Variables as themselves), skipping what the trace checked: a plan calls it."""

    kind = "python"

    def __init__(self, name, fn, structure, leaves, on_arrays=None):
        self.name, self.fn, self.structure = name, fn, structure
        self.leaves = leaves  # the flattened (args, kwargs): None where a tensor input goes
        self.on_arrays = on_arrays

    def replay(self, *values):
        values = iter(values)
        args, kwargs = nest.pack_like(self.structure, [next(values) if leaf is None else leaf for leaf in self.leaves])
        return self.fn(*args, **kwargs)

    def __repr__(self):
        return f"<graph node {self.name}>"


def _python_node_or_none(name, fn, args, kwargs=None, example=None, on_arrays=None):
    """While ``tl.function`` traces: record ``fn(*args, **kwargs)`` as a graph node and return its output
    (a tensor like ``example``); otherwise None, and the caller runs ``fn`` itself. ``on_arrays(*inputs)``: the
    same work from the tensor inputs' arrays (Variables as they are), for a plan."""
    graph = _tracing_graph()
    if graph is None:
        return None
    structure = (list(args), dict(kwargs or {}))
    flat = nest.flatten(structure)
    inputs = tuple(x for x in flat if isinstance(x, Tensor))
    leaves = [None if isinstance(x, Tensor) else x for x in flat]
    out = SymbolicTensor(np.asarray(np.float32(0) if example is None else example))
    graph.tensors[out._key] = out
    node = _PythonNode(name, fn, structure, leaves, on_arrays)
    graph.entries.append(Entry(node, inputs, tuple(t._value for t in inputs), out, {}, _state.scopes[-1]))
    return out


_ASSIGN = {how: _Assign(how) for how in ("assign", "assign_add", "assign_sub")}


class Graph(Recorder):
    """A traced computation: placeholders in, nodes in execution order, outputs out.

    ``graph.run(feeds)`` runs it again on new values (TF 1's ``session.run``); ``print(graph)`` lists
    it and ``tl.viz.draw(graph)`` draws it, with the same code as a tape.
    """

    def __init__(self, name):
        self.name = name
        self.placeholders = []  # one SymbolicTensor per tensor argument
        self.input_names = {}  # placeholder key -> the function's parameter name (how pictures name it)
        self.entries = []  # the nodes, as tape entries keeping everything: args are the input tensors
        self.tensors = {}  # key -> the graph's own tensors: its placeholders and every node's output
        self.outputs = None  # the function's result (a structure of tensors and Python values)
        self._restore = {}  # id -> (Variable, value before tracing changed it)
        self.created_variables = []  # tl.Variables made while tracing (allowed on a function's first call only)
        self.plan = None  # the nodes as one numpy program (engine/plan.py), made when tracing is over
        self.variable_args = ()  # the Variables passed as arguments when traced, each once, in order

    # --- recording (the graph sits on the recorder stack while the function is traced) ---------
    def _record(self, op, inputs, values, out, params, residual):
        for t in inputs:
            if isinstance(t, SymbolicTensor) and t._key not in self.tensors:
                raise LeakedTensorError(
                    f"{op.name}: an input is a tensor of another traced graph, kept from an earlier trace (in a "
                    f"global or an attribute); graph '{self.name}' cannot use it. Pass values in as arguments."
                )
        out.__class__ = SymbolicTensor  # same layout: the op's result becomes a graph tensor
        self.tensors[out._key] = out
        self.entries.append(Entry(op, inputs, values, out, params, _state.scopes[-1]))

    def _record_assign(self, variable, how, value, old):
        self._restore.setdefault(id(variable), (variable, old))  # tracing only rehearses: undone afterwards
        new = SymbolicTensor(variable._value)  # stands for the updated value (called after the update)
        self.tensors[new._key] = new
        self.entries.append(Entry(_ASSIGN[how], (variable, value), (old, value._value), new, {}, _state.scopes[-1]))

    is_traced_graph = True  # (recording.tracing_graph finds the graph being traced among the recorders by this)

    def _record_variable(self, variable):
        self.created_variables.append(variable)

    def _expire(self):
        """Tracing is over: the graph's tensors keep their shapes and dtypes, and refuse to be used as values."""
        for t in self.tensors.values():
            if type(t) is SymbolicTensor:
                t._value = _Expired(t._value, self.name)
                t.__class__ = LeakedTensor

    # --- what a picture reads (the Recorder protocol's read side) ---------------------------
    holds_values = False  # its tensors have values only when it runs (its constants do now)
    stopped = ()  # (a graph has no stop_recording)

    @property
    def watched(self):
        return tuple(self.placeholders)

    def tracks(self, tensor):
        return tensor._key in self.tensors

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
            env[p._key] = t
        return self._run(list(env.values()))

    def _run(self, feeds, variables=()):
        """Run on ``feeds`` (one tensor or numpy array per placeholder, of the traced dtype and shape): the plan's
        numpy program when nothing records, else every node again through the op table, recorded as usual.
        ``variables``: the call's Variable arguments, in the place of those traced (of the same shapes and dtypes,
        as TF's trace types for Variables say: a Variable argument is an input of the graph, not a capture)."""
        env = {p._key: t if isinstance(t, Tensor) else Tensor(t) for p, t in zip(self.placeholders, feeds)}
        arrays = [t._value for t in env.values()]
        swapped = [(old, new) for old, new in zip(self.variable_args, variables) if old is not new]
        env.update({old._key: new for old, new in swapped})
        if self.plan is not None and not _state.recorders and not switches.check_numerics:
            # the plan names each Variable it uses as a global of its program: the call's Variable goes there
            names = [(self.plan._bound.get(id(old)), new) for old, new in swapped]
            names = [(name, self.plan.env[name], new) for name, new in names if name is not None]
            for name, _, new in names:
                self.plan.env[name] = new
            try:
                made = dict(zip(self.plan.outputs, self.plan.run(arrays)))
            finally:
                for name, old, _ in names:
                    self.plan.env[name] = old
            env.update({k: Tensor(v) for k, v in made.items()})
        else:
            for e in self.entries:
                args = tuple(env.get(t._key, t) for t in e.args)  # Variables are read now; constants as captured
                if isinstance(e.op, _StateNode):
                    result = e.op.replay(*args)
                    if isinstance(result, Tensor):  # (what a metric's call returns: usable in the graph)
                        env[e.key] = result
                else:
                    env[e.key] = run(e.op, args, **e.params)
        return nest.pack_like(self.outputs, [env.get(t._key, t) if isinstance(t, Tensor) else t
                                             for t in nest.flatten(self.outputs)])

    def as_graph_def(self):
        """The graph's nodes in order, each with its ``name``, ``op`` and ``input`` (node names), as TF's
        ``GraphDef`` lists them: placeholders, captured constants and Variables, the ops, the outputs."""
        names, nodes, used = {}, [], set()

        def node(op, inputs, base):
            name, count = base, 0
            while name in used:  # (a parameter may be called x_1 already: count on until a name is free)
                count += 1
                name = f"{base}_{count}"
            used.add(name)
            nodes.append(SimpleNamespace(name=name, op=op, input=inputs))
            return name

        def name_of(t):
            if t._key not in names:
                base = getattr(t, "given_name", None) or ("ReadVariableOp" if isinstance(t, Variable) else "Const")
                names[t._key] = node("ReadVariableOp" if isinstance(t, Variable) else "Const", [], base)
            return names[t._key]

        for p in self.placeholders:
            names[p._key] = node("Placeholder", [], self.input_names.get(p._key, "input"))
        for e in self.entries:
            inputs = [name_of(t) for t in e.args]
            names[e.key] = node(e.op.name, inputs, e.op.name)
        for t in nest.flatten(self.outputs):
            if isinstance(t, Tensor):
                node("Identity", [name_of(t)], "Identity")
        return SimpleNamespace(node=nodes)

    def __str__(self):  # the listing, as a tape's (tapelab.viz, through recording.display)
        if recording.display.text is None:
            return repr(self)
        return recording.display.text(self)

    def __repr__(self):
        return f"<tapelab.Graph '{self.name}': {len(self.placeholders)} inputs, {len(self.entries)} nodes>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        if recording.display.mimebundle is None:
            return {"text/plain": repr(self)}
        shown = recording.display.mimebundle(self, include, exclude)  # (data, metadata) when it has a picture
        data, metadata = shown if isinstance(shown, tuple) else (shown, {})
        return {**data, "text/plain": str(self)}, metadata


def _parameter_names(fn, args, kwargs, placeholders):
    """placeholder key -> the name of the parameter it was passed as (``x`` for ``def f(x)``), where one is known."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs).arguments
    except (TypeError, ValueError):  # a builtin without a signature, or arguments that do not bind
        return {}
    ids = {id(p): p._key for p in placeholders}
    return {ids[id(value)]: name for name, value in bound.items() if id(value) in ids}


class TensorSpec:
    """The shape and dtype a tensor argument must have, like ``tf.TensorSpec``: ``None`` for a dimension
    means any size; ``shape=None`` any rank.

    >>> tl.TensorSpec(shape=[None], dtype=tl.int32)
    TensorSpec(shape=(None,), dtype=tapelab.int32, name=None)
    """

    def __init__(self, shape, dtype=dtypes.float32, name=None):
        self.dims = None if shape is None else tuple(None if d is None else int(d) for d in shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        return cls(tuple(tensor.shape), tensor.dtype, name)

    @property
    def shape(self):
        return None if self.dims is None else TensorShape(self.dims)

    def is_compatible_with(self, value):
        """Whether a tensor (or spec) ``value`` fits: the same dtype, and a size wherever this spec has one."""
        dims = value.dims if isinstance(value, TensorSpec) else tuple(value.shape)
        if value.dtype != self.dtype:
            return False
        if self.dims is None or dims is None:
            return True
        return len(dims) == len(self.dims) and all(a is None or b is None or a == b for a, b in zip(self.dims, dims))

    def _example(self):
        # a value to trace with: size 1 for an unknown dimension, a scalar for an unknown rank
        return Tensor(np.zeros(() if self.dims is None else tuple(1 if d is None else d for d in self.dims),
                               self.dtype.as_numpy_dtype))

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and (self.dims, self.dtype, self.name) == (other.dims, other.dtype,
                                                                                        other.name)

    def __hash__(self):
        return hash((self.dims, self.dtype.name, self.name))

    def __repr__(self):
        shape = "<unknown>" if self.dims is None else str(self.dims)
        return f"TensorSpec(shape={shape}, dtype={self.dtype!r}, name={self.name!r})"


class Function:
    """A Python function that runs as a traced graph; see :func:`function`."""

    def __init__(self, python_function, name=None, input_signature=None, reduce_retracing=False):
        functools.update_wrapper(self, python_function)
        self.python_function = python_function
        self.name = name or getattr(python_function, "__name__", "function")
        self.input_signature = None if input_signature is None else tuple(input_signature)
        self.reduce_retracing = reduce_retracing  # (accepted: tapelab traces once per concrete signature anyway)
        self.graphs = {}  # signature -> Graph
        self._concrete = {}  # signature -> ConcreteFunction
        self._made_variables = False  # a first trace made tl.Variables: later traces may not
        self._per_instance = {}  # id(obj) -> (weak reference to obj, its own Function): see __get__
        try:  # what a call's arguments are bound to (see _canonical)
            self._parameters = inspect.signature(python_function)
        except (TypeError, ValueError):  # (a builtin without one: the arguments as given)
            self._parameters = None
        kinds = [p.kind for p in (self._parameters.parameters.values() if self._parameters else ())]
        plain = all(kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                    for kind in kinds)
        self._plain_arity = len(kinds) if plain else -1  # so many positional arguments: bound as they are

    @property
    def trace_count(self):
        """How many graphs the function holds: one per signature traced. A first call that makes Variables runs
        the Python twice (the second time with the Variables in place) and counts once: only that graph is kept."""
        return len(self.graphs)

    def experimental_get_tracing_count(self):
        """TF's name for :attr:`trace_count`."""
        return self.trace_count

    def __get__(self, obj, objtype=None):
        """A decorated method binds like a function, and, as in TF, each object gets a Function of its own (its own
        graphs, and its own first call that may make Variables). Kept by id with a weak reference, so an
        unhashable object works and a dead one's entry goes."""
        if obj is None:
            return self
        ref, function = self._per_instance.get(id(obj), (None, None))
        if ref is None or ref() is not obj:
            function = Function(self.python_function, self.name, self.input_signature, self.reduce_retracing)
            key, cache = id(obj), self._per_instance
            try:
                ref = weakref.ref(obj, lambda dead: cache.pop(key) if cache.get(key, (None,))[0] is dead else None)
            except TypeError:  # no weak references (__slots__ without __weakref__): the entry keeps it
                def ref(obj=obj):
                    return obj
            cache[key] = (ref, function)
        return _BoundFunction(function, obj)

    def __call__(self, *args, **kwargs):
        return self._call(args, kwargs)

    def _call(self, args, kwargs, skip=0):
        if settings.run_eagerly:
            return self.python_function(*args, **kwargs)
        if self.input_signature is not None:
            args, kwargs = self._conform(args, kwargs, skip)
        args, kwargs = self._canonical(args, kwargs)
        key, tensors, variables = _signature(args, kwargs)
        graph = self.graphs.get(key)
        if graph is None:
            return self._trace(key, args, kwargs, skip)
        return graph._run(tensors, variables)  # (the key holds every feed's dtype and shape: they fit)

    def _canonical(self, args, kwargs):
        """The arguments bound to the function's parameters, as TF binds them before it looks for a trace: each
        positional parameter by position, defaults filled in (``k(t, 2)``, ``k(t, n=2)``, ``k(x=t, n=2)`` are one
        call), a keyword-only one by keyword."""
        if not kwargs and len(args) == self._plain_arity or self._parameters is None:
            return args, kwargs
        try:
            bound = self._parameters.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"Binding inputs to tl.function {self.name} failed due to `{error}`. Received args: "
                            f"{args!r} and kwargs: {kwargs!r} for signature: {self._parameters}.") from None
        bound.apply_defaults()
        return bound.args, bound.kwargs

    def get_concrete_function(self, *args, **kwargs):
        """The traced function for these arguments (tensors, or :class:`TensorSpec` for any value of that shape
        and dtype), traced now if needed; call it with the tensor arguments only."""
        return self._concrete_for(args, kwargs)

    def _concrete_for(self, args, kwargs, skip=0):
        if len(args) == skip and not kwargs and self.input_signature is not None:  # (args holds self only)
            args = args + tuple(self.input_signature)
        specs = {}

        def example(x):  # a spec is traced with an example value of its shape
            if isinstance(x, TensorSpec):
                value = x._example()
                specs[id(value)] = x
                return value
            return x

        traced_args, traced_kwargs = self._canonical(*_map_args(example, args, kwargs))
        if self.input_signature is not None:
            traced_args, traced_kwargs = self._conform(traced_args, traced_kwargs, skip)
        key = _signature(traced_args, traced_kwargs)[0]
        if key not in self.graphs:
            self._trace(key, traced_args, traced_kwargs, skip)
        concrete = self._concrete[key]
        if specs:
            concrete = ConcreteFunction(self, concrete._bound, concrete.graph, specs, skip)
        return concrete

    def pretty_printed_concrete_signatures(self, verbose=True):
        """Every traced signature, as TF prints them: the parameters' specs, the output's, the captures."""
        return "\n\n".join(c.pretty_printed_signature(verbose) for c in self._concrete.values())

    def _conform(self, args, kwargs, skip):
        """Check the arguments against ``input_signature`` (converting Python values to tensors, as TF does)."""
        signature = self.input_signature
        given = list(args[skip:])
        if len(given) > len(signature):
            raise TypeError(f"{self.name}: input_signature has {len(signature)} entries but {len(given)} positional "
                            "arguments were given.")
        params = _positional_names(self.python_function)[skip:skip + len(signature)]
        for name in params[len(given):]:
            if name in kwargs:
                given.append(kwargs.pop(name))
        checked = []
        for spec, value in zip(signature, given):
            t = convert_to_tensor(value, dtype=spec.dtype) if not isinstance(value, Tensor) else value
            if not spec.is_compatible_with(t):
                raise TypeError(
                    f"Binding inputs to tl.function {self.name} failed: can not cast "
                    f"{TensorSpec.from_tensor(t)!r} to {spec!r}. A function with an input_signature takes "
                    "only tensors of those dtypes and shapes (None: any size)."
                )
            checked.append(t)
        return tuple(args[:skip]) + tuple(checked), kwargs

    def _trace(self, key, args, kwargs, skip=0):
        if _tracing_graph() is not None:
            return self.python_function(*args, **kwargs)  # called from another traced function: inline it
        graph = self._trace_graph(args, kwargs)
        if graph.created_variables:  # TF: only the first call may make Variables; it then traces once more
            if self._made_variables or self.graphs:
                raise ValueError(_ONCE.format(name=self.name))
            self._made_variables = True
            graph = self._trace_graph(args, kwargs)
            if graph.created_variables:
                raise ValueError(_ONCE.format(name=self.name))
        self.graphs[key] = graph
        self._concrete[key] = ConcreteFunction(self, _bind(self.python_function, args, kwargs), graph, skip=skip)
        # as in TF, the first call runs the new graph too: its updates happen once, outer tapes record it
        return graph._run(*_signature(args, kwargs)[1:])

    def _trace_graph(self, args, kwargs):
        graph = Graph(f"{self.name}_{len(self.graphs)}")

        def placeholder(x):
            if isinstance(x, Tensor) and not isinstance(x, Variable):
                p = SymbolicTensor(x._value)
            elif isinstance(x, np.ndarray):
                p = SymbolicTensor(x)
            else:
                return x
            graph.placeholders.append(p)
            graph.tensors[p._key] = p
            return p

        traced_args, traced_kwargs = _map_args(placeholder, args, kwargs)
        graph.variable_args = tuple(_signature(args, kwargs)[2])
        graph.input_names = _parameter_names(self.python_function, traced_args, traced_kwargs, graph.placeholders)
        outer, _state.recorders[:] = _state.recorders[:], [graph]  # outer tapes must not see the rehearsal
        try:
            outputs = self.python_function(*traced_args, **traced_kwargs)
        finally:
            _state.recorders[:] = outer
            for variable, value in graph._restore.values():  # (undo the rehearsal: not a change of the Variable)
                variable._value = value
        # as TF: Python numbers returned become (constant) tensors
        graph.outputs = nest.pack_like(outputs, [convert_to_tensor(x) if isinstance(x, (bool, int, float, np.generic))
                                                 else x for x in nest.flatten(outputs)])
        graph._expire()
        graph.plan, why = Plan.of(graph)
        if why:
            warnings.warn(f"tl.function {self.name}: graph '{graph.name}' replays every node through the op table on "
                          f"each call, since {why}; its results are the same, only slower.", stacklevel=4)
        return graph

    def __repr__(self):
        return f"<tapelab.engine.function {self.name}: traced {self.trace_count} time(s)>"


_ONCE = ("tl.function only supports singleton tl.Variables created on the first call: {name} made a tl.Variable "
         "on a later trace (or on every call). A traced function runs its Python again for each new signature, so "
         "it would make a new Variable each time. Make the Variable outside the function, or only once "
         "(`if self.v is None: self.v = tl.Variable(...)`).")


class _BoundFunction:
    """A ``tl.function`` method, bound to its object (``model.step``); ``input_signature`` skips ``self``."""

    def __init__(self, function, obj):
        self._function, self._obj = function, obj

    def __call__(self, *args, **kwargs):
        return self._function._call((self._obj,) + args, kwargs, skip=1)

    def get_concrete_function(self, *args, **kwargs):
        return self._function._concrete_for((self._obj,) + args, kwargs, skip=1)

    def __getattr__(self, name):
        return getattr(self._function, name)


class ConcreteFunction:
    """One traced signature of a :class:`Function`: call it with the tensor arguments only, as TF's.

    Python arguments (numbers, objects) were fixed when it was traced and are left out of a call. It
    also lists and draws like its graph: ``print(cf)``, ``tl.viz.draw(cf)``, ``cf.placeholders``,
    ``cf.run(feeds)``.
    """

    def __init__(self, function, bound, graph, specs=None, skip=0):
        self.function, self._bound, self.graph = function, bound, graph
        self._skip = skip
        # the parameters a call passes: those that held tensors (or Variables) when traced, in order
        self._tensor_params = [name for name, value in list(bound.arguments.items())[skip:]
                               if any(isinstance(v, Tensor) for v in nest.flatten(value))]
        specs = specs or {}
        self._specs = []  # one per tensor argument, named after its parameter (as TF names them)
        for name, value in bound.arguments.items():
            leaves = nest.flatten(value)
            for t in leaves:
                if isinstance(t, Tensor) and not isinstance(t, Variable):
                    spec = specs.get(id(t)) or TensorSpec.from_tensor(t)
                    self._specs.append(TensorSpec(spec.dims, spec.dtype, name if len(leaves) == 1 else spec.name))

    def __call__(self, *args, **kwargs):
        if len(args) > len(self._tensor_params):
            raise TypeError(f"{self.function.name}: this concrete function takes {len(self._tensor_params)} "
                            f"tensor argument(s) ({', '.join(self._tensor_params)}), got {len(args)}.")
        given = dict(zip(self._tensor_params, args))
        for name, value in kwargs.items():
            if name not in self._tensor_params:
                fixed = self._bound.arguments.get(name, "<no such parameter>")
                raise TypeError(f"{self.function.name}: {name} was fixed to {fixed!r} when this concrete function was "
                                "traced; a concrete function takes only its tensor arguments. Call the tl.function "
                                "itself for another value.")
            given[name] = value
        missing = [name for name in self._tensor_params if name not in given]
        if missing:
            raise TypeError(f"{self.function.name}: missing the tensor argument(s) {', '.join(missing)}.")
        arguments = dict(self._bound.arguments, **given)
        specs = iter(self._specs)
        for name in self._tensor_params:  # as TF: each tensor is converted to its spec's dtype, then checked
            structure = self._bound.arguments[name]
            try:
                leaves = nest.flatten_up_to(structure, arguments[name])
            except (TypeError, ValueError, KeyError, IndexError):
                raise TypeError(f"{self.function.name}: {name} was traced as {structure!r}, got {arguments[name]!r}. "
                                "A concrete function takes the structure it was traced with; call the tl.function "
                                "itself for another one.") from None
            converted = [self._conform(name, next(specs), value) if isinstance(was, Tensor) and not isinstance(
                was, Variable) else value for was, value in zip(nest.flatten(structure), leaves)]
            arguments[name] = nest.pack_like(structure, converted)
        bound = inspect.BoundArguments(self._bound.signature, arguments)
        return self.function._call(bound.args, bound.kwargs, self._skip)

    def _conform(self, name, spec, value):
        """``value`` as a tensor that fits ``spec``, or a TypeError that says what was given and what to do."""
        try:
            t = value if isinstance(value, Tensor) else convert_to_tensor(value, dtype=spec.dtype)
        except (TypeError, ValueError) as error:
            raise TypeError(f"{self.function.name}: {name} must be a tensor that fits {spec!r}, got {value!r}, "
                            f"which does not convert to one ({error}). Pass a tensor of that dtype and shape.") \
                from None
        if not spec.is_compatible_with(t):
            raise TypeError(f"{self.function.name}: {name} must fit {spec!r}, got {TensorSpec.from_tensor(t)!r}. A "
                            "concrete function runs the one graph it was traced for: pass a tensor of that dtype and "
                            "shape, or call the tl.function itself (it traces a new graph for a new signature).")
        return t

    @property
    def structured_input_signature(self):
        """The arguments as traced: a spec for each tensor, the Python values as they were."""
        specs = iter(self._specs)

        def spec(x):
            return next(specs) if isinstance(x, Tensor) and not isinstance(x, Variable) else x

        args = [nest.pack_like(a, [spec(x) for x in nest.flatten(a)]) for a in self._bound.args[self._skip:]]
        kwargs = {k: nest.pack_like(v, [spec(x) for x in nest.flatten(v)]) for k, v in self._bound.kwargs.items()}
        return tuple(args), kwargs

    @property
    def structured_outputs(self):
        """The function's outputs as traced: tensors of the graph (no values)."""
        return self.graph.outputs

    @property
    def inputs(self):
        return list(self.graph.placeholders)

    @property
    def outputs(self):
        return [t for t in nest.flatten(self.graph.outputs) if isinstance(t, Tensor)]

    def pretty_printed_signature(self, verbose=True):
        specs = iter(self._specs)
        lines = ["Input Parameters:"]
        for name, value in list(self._bound.arguments.items())[self._skip:]:
            kind = self._bound.signature.parameters[name].kind.name
            flat = [next(specs) if isinstance(x, Tensor) and not isinstance(x, Variable) else x
                    for x in nest.flatten(value)]
            shown = nest.pack_like(value, flat)
            lines.append(f"  {name} ({kind}): {shown!r}" if isinstance(shown, (TensorSpec, Variable))
                         else f"  {name} ({kind}): Literal[{shown!r}]")
        outputs = nest.flatten(self.graph.outputs)
        out_specs = nest.pack_like(self.graph.outputs, [TensorSpec.from_tensor(t) if isinstance(t, Tensor) else t
                                                        for t in outputs])
        lines += ["Output Type:", f"  {out_specs!r}", "Captures:"]
        captured = {id(t): t for e in self.graph.entries for t in e.args if isinstance(t, Variable)}
        lines += [f"  {v.name}: {TensorSpec.from_tensor(v)!r}" for v in captured.values()] or ["  None"]
        return "\n".join(lines)

    def __str__(self):  # the graph's listing, then its signature as TF prints a ConcreteFunction
        return f"{self.graph}\n\nConcreteFunction {self.pretty_printed_signature()}"

    def __repr__(self):
        return f"<ConcreteFunction {self.function.name} at graph '{self.graph.name}'>"

    def __getattr__(self, name):  # placeholders, run(), entries, ...: what the graph has
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.graph, name)

    def _repr_mimebundle_(self, include=None, exclude=None):
        return self.graph._repr_mimebundle_(include, exclude)


def _bind(fn, args, kwargs):
    try:
        return inspect.signature(fn).bind(*args, **kwargs)
    except (TypeError, ValueError):  # no signature to bind to: the arguments by position
        params = [inspect.Parameter(f"arg{i}", inspect.Parameter.POSITIONAL_ONLY) for i in range(len(args))]
        params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY) for k in kwargs]
        return inspect.Signature(params).bind(*args, **kwargs)


def _positional_names(fn):
    try:
        return [name for name, p in inspect.signature(fn).parameters.items()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return []


def function(func=None, *, input_signature=None, autograph=True, jit_compile=None, reduce_retracing=False,
             experimental_compile=None, name=None):
    """Trace ``func`` into a static graph on its first call per input signature, then replay the graph.

    The signature, as TF's trace types, after binding the arguments to the parameters (by position or
    keyword, defaults filled in): the shape and dtype of each tensor (or numpy array) argument; the
    shape, dtype and trainability of each Variable argument (another Variable like it runs the same
    graph, on itself); the value of every other argument (``1``, ``1.0`` and ``True`` are one value:
    the graph keeps the one it was traced with, as TF's). Variables the function reads are captured
    by reference, so an ``assign_sub`` between calls is seen. Usable as ``@tl.function`` or
    ``tl.function(f)``.

    ``input_signature`` (a list of :class:`TensorSpec`) fixes the arguments' dtypes and shapes: other
    tensors are refused with a TypeError. tapelab still traces once per concrete shape (TF traces
    once for a whole ``None`` dimension). ``autograph``, ``jit_compile`` and ``reduce_retracing`` are
    accepted and change nothing: tapelab has no autograph and no compiler.

    >>> @tl.function
    ... def square_plus_one(x):
    ...     return x * x + 1.0
    >>> square_plus_one(tl.constant(3.0))
    <tapelab.Tensor: shape=(), dtype=float32, numpy=10.0>
    """
    if func is None:
        return lambda f: Function(f, name, input_signature, reduce_retracing)
    return Function(func, name, input_signature, reduce_retracing)


@contextlib.contextmanager
def init_scope():
    """Run the code inside eagerly even while ``tl.function`` traces (TF's way to make state once, on tracing):
    its ops are not part of the graph, and its updates happen once, now."""
    saved = _state.recorders[:]
    _state.recorders[:] = [t for t in saved if not isinstance(t, Graph)]
    try:
        yield
    finally:
        _state.recorders[:] = saved


def _map_args(fn, args, kwargs):
    return [nest.pack_like(a, [fn(x) for x in nest.flatten(a)]) for a in args], \
        {k: nest.pack_like(v, [fn(x) for x in nest.flatten(v)]) for k, v in kwargs.items()}


_NAN = ("nan",)  # as TF: a NaN argument matches a NaN (Python's NaN equals nothing, not even itself)
_LITERALS = (bool, int, float, complex, str, bytes, type(None))


def _literal(x):
    """How a Python number, string or None keys a trace: by value alone, as TF's ``Literal`` trace type compares
    them (``1 == 1.0 == True``: one trace; the graph keeps the value it was traced with)."""
    return ("python", _NAN if x != x else x)


def _structure(s):
    """The nesting of ``s`` (lists, tuples, dicts; leaves as None), hashable; a dict's keys in sorted order."""
    if isinstance(s, dict):
        return type(s), tuple((k, _structure(s[k])) for k in sorted(s))
    if isinstance(s, (list, tuple)):
        return type(s), tuple(_structure(x) for x in s)
    return None


def _signature(args, kwargs):
    """A hashable key for the arguments (bound to the function's parameters already), the tensor arguments in
    order (the graph's inputs) and the Variable arguments, each once, in order.

    As TF's trace types: a tensor (or numpy array) by its shape and dtype; a Variable by its shape, dtype and
    trainability, and which earlier Variable argument it is, if any (``f(v, v)`` and ``f(v, w)`` trace apart); a
    Python number, string or None by its value (``1``, ``1.0`` and ``True`` are one argument); another object by
    its own equality and hash (by identity unless it defines them)."""
    if kwargs or any(isinstance(x, (list, tuple, dict)) for x in args):
        leaves, structure = nest.flatten([list(args), kwargs]), _structure((tuple(args), kwargs))
    else:  # the usual call: positional tensors and numbers
        leaves, structure = args, len(args)
    key, tensors, variables = [], [], []
    for x in leaves:
        cls = x.__class__
        if cls is Tensor or cls is np.ndarray:
            arr = x._value if cls is Tensor else x
            key.append(("tensor", arr.shape, arr.dtype.str))
            tensors.append(x)
        elif cls is float or cls is int or cls is bool:
            key.append(("python", _NAN if x != x else x))
        elif isinstance(x, Variable):
            alias = next((i for i, v in enumerate(variables) if v is x), None)
            if alias is None:
                variables.append(x)
            key.append(("variable", x._value.shape, x._value.dtype.str, x.trainable, alias))
        elif isinstance(x, (Tensor, np.ndarray)):
            arr = x._value if isinstance(x, Tensor) else x
            key.append(("tensor", arr.shape, arr.dtype.str))
            tensors.append(x)
        elif hasattr(type(x), "__tf_tracing_type__"):  # an object that says what makes two of it trace alike
            key.append(("traced", x.__tf_tracing_type__(None)))
        elif isinstance(x, _LITERALS):
            key.append(_literal(x))
        else:
            try:
                hash(x)
                key.append(("python", type(x).__name__, x))
            except TypeError:
                key.append(("python", type(x).__name__, repr(x)))
    return (structure, tuple(key)), tensors, variables
