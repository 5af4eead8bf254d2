"""A traced graph as a plan: the straight-line numpy program a graph runs when nothing is recording.

Tracing ran every op once through ``run()``, with all its checks. Those depend only on dtypes and shapes, and the
trace signature fixes both, so a later call need not repeat them, nor make a ``Tensor`` for every intermediate, nor
tell the recorders. The plan is the graph's nodes written out once as Python, one line per node, and compiled:

    def plan(x, y):
        t0 = multiply(x, W._value)         # multiply
        t1 = add(t0, B._value)             # add
        ...
        assign_sub(W, t13)                 # W.assign_sub
        return (t4,)

Each line calls the op's numpy forward on arrays; Variables are read where they are used and updated in place
(when nothing else holds their array: a tape that recorded it keeps it as it was); a value is let go after its
last use. Python nodes (an optimizer's update, a metric) run their Python as a replay does. ``print(plan)`` shows
the program. A graph with a node the plan cannot write out keeps no plan (``Plan.of`` says why) and replays
through ``run()``; so does every call while a tape records (it must see the ops) or check-numerics is on.
"""

import functools
import keyword

import numpy as np

from tapelab.engine import nest
from tapelab.engine.errors import InvalidArgumentError, LeakedTensorError, UnsupportedError
from tapelab.engine.primitives import Op
from tapelab.engine.tensor import Tensor, Variable, alone


class Unplannable(Exception):
    """A graph node the plan cannot write out (it is replayed instead)."""


def assign(var, value):
    old = var._value
    if alone(old):
        np.copyto(old, value)
    else:
        var._value = np.array(value)


def assign_add(var, value):
    old = var._value
    if alone(old):
        np.add(old, value, out=old)
    else:
        var._value = old + value


def assign_sub(var, value):
    old = var._value
    if alone(old):
        np.subtract(old, value, out=old)
    else:
        var._value = old - value


_ASSIGNS = {"assign": assign, "assign_add": assign_add, "assign_sub": assign_sub}


def python_node(node, *args):
    """A Python node, replayed as a graph replays it (its tensor inputs as tensors): a tensor result's array."""
    result = node.replay(*args)
    return result._value if isinstance(result, Tensor) else None


class Plan:
    """A graph's nodes as one compiled Python function over numpy arrays; see the module's docstring."""

    def __init__(self, graph):
        self.graph = graph
        self.lines = []  # (source line, entry index or None)
        self.env = {"assign": assign, "assign_add": assign_add, "assign_sub": assign_sub,
                    "python_node": python_node, "asarray": np.asarray, "Tensor": Tensor}
        self._bound = {}  # id(value) -> its global name in env
        names = {}  # tensor key -> the local name (or expression) that holds its array in the plan
        placeholders = [self._bind(p, graph.input_names.get(p._key) or "x") for p in graph.placeholders]
        for p, name in zip(graph.placeholders, placeholders):
            names[p._key] = name
        constant = {}  # key -> array, for what the trace computed from constants alone: computed once, here
        fed = {p._key for p in graph.placeholders}
        outputs = list(dict.fromkeys(t._key for t in nest.flatten(graph.outputs)  # (what the nodes make, once each)
                                     if isinstance(t, Tensor) and t._key in graph.tensors and t._key not in fed))
        kept = set(outputs)

        def use(t, tensors=False, variables=False):
            """How a line names t's array; ``tensors``: as a tensor (as a replay passes it to a Python node);
            ``variables``: a Variable as itself."""
            if isinstance(t, Variable):
                return self._bind(t, t.given_name or "Variable") + ("" if tensors or variables else "._value")
            if t._key in names:
                return f"Tensor({names[t._key]})" if tensors else names[t._key]
            if t._key in constant:
                value = constant[t._key]
            elif t._key in graph.tensors:  # (a graph tensor no node has made yet: not a plan)
                raise Unplannable("an input of a node is a tensor of the graph computed after it")
            else:
                value = t._value  # a constant, captured as traced
            return self._bind(Tensor(value) if tensors else value, "c")

        # an op computing what an earlier op saved as its residual, from the same inputs (the cross-entropy's traced
        # rule), takes that residual: the saving op's line keeps it as t<k>r
        savers, reuses = {}, {}
        for k, e in enumerate(graph.entries):
            if isinstance(e.op, Op) and not e.params:
                if e.op.saves:
                    savers[(e.op.name, e.keys)] = k
                elif e.op.residual_of and (e.op.residual_of, e.keys) in savers:
                    reuses[k] = savers[(e.op.residual_of, e.keys)]
        kept_residuals = set(reuses.values())
        last_use = {}  # key -> the last line that reads it
        for k, e in enumerate(graph.entries):
            for t in e.args:
                if k not in reuses:
                    last_use[t._key] = k

        for k, e in enumerate(graph.entries):
            out, op = f"t{k}", e.op
            kind = "op" if isinstance(op, Op) else getattr(op, "kind", None)
            if kind == "op" and op.vjps is not None and all(
                    t._key in constant or not isinstance(t, Variable) and t._key not in graph.tensors for t in e.args):
                constant[e.key] = e.out  # (a pure op on constants: its value is what the trace computed)
                continue
            if k in reuses and reuses[k] not in constant:
                names[e.key] = f"t{reuses[k]}r"  # (no line: the saving op's line made it)
                continue
            python = kind == "python"
            args = ", ".join(use(t, tensors=python and not op.on_arrays, variables=python) for t in e.args)
            if kind == "op":
                call = self._bind(functools.partial(op.forward, **e.params) if e.params else op.forward,
                                  op.name)
                result = f"{call}({args}){'[0]' if op.saves and k not in kept_residuals else ''}"
                if e.out.ndim == 0:  # (a 0-d result may come back as a numpy scalar: run() makes it an array)
                    result = f"asarray({result})" if k not in kept_residuals else f"{result}; {out} = asarray({out})"
                line = f"{out}, {out}r = {result}" if k in kept_residuals else f"{out} = {result}"
                names[e.key] = out
            elif kind == "assign":
                variable, value = e.args
                if value._value.dtype != variable._value.dtype:
                    raise Unplannable(f"{op.name} of a {value.dtype.name} value to a {variable.dtype.name} Variable")
                line = f"{op.name}({use(variable, variables=True)}, {use(value)})"
                if e.key in last_use or e.key in kept:  # (the updated value, used again)
                    line += f"; {out} = {use(variable)}"
                    names[e.key] = out
            elif kind == "python":
                node = self._bind(op.on_arrays or op, "node")
                call = f"{node}({args})" if op.on_arrays else f"python_node({node}, {args})"
                line = f"{out} = {call}" if (e.key in last_use or e.key in kept) else call
                names[e.key] = out
            else:
                raise Unplannable(f"node {k} ({op!r}) is neither an op of the table, an assign nor a Python node")
            done = sorted({n for t in e.args if last_use.get(t._key) == k and t._key not in kept
                           and (n := names.get(t._key, "")).startswith("t")})
            self.lines.append((line + (f"; del {', '.join(done)}" if done else ""), k))
        self.outputs = outputs  # the keys of the tensors the program returns, in order
        returns = ", ".join(names[k] if k in names else self._bind(constant[k], "c") for k in outputs)
        body = "\n".join(f"    {line}" for line, _ in self.lines) or "    pass"
        self.source = f"def plan({', '.join(placeholders)}):\n{body}\n    return ({returns}{',' if outputs else ''})\n"
        code = compile(self.source, f"<plan of graph '{graph.name}'>", "exec")
        exec(code, self.env)  # noqa: S102 (the program written above, from the graph's own nodes)
        self.function = self.env["plan"]

    @classmethod
    def of(cls, graph):
        """``(plan, None)``, or ``(None, why)`` for a graph that cannot be planned."""
        try:
            return cls(graph), None
        except Unplannable as why:
            return None, str(why)

    def _bind(self, value, prefix):
        """The plan's name for ``value`` (the same name for the same object): ``prefix`` as an identifier, numbered
        if it is taken."""
        name = self._bound.get(id(value))
        if name is None:
            base = "".join(c if c.isalnum() else "_" for c in prefix)
            base = base if base.isidentifier() and not keyword.iskeyword(base) else f"{base}_"
            name, count = base, 0
            while name in self.env:
                count += 1
                name = f"{base}_{count}"
            self._bound[id(value)] = name
            self.env[name] = value
        return name

    def run(self, arrays):
        """The output arrays (one per key of :attr:`outputs`), from the placeholders' arrays."""
        try:
            return self.function(*arrays)
        except (LeakedTensorError, UnsupportedError):
            raise
        except (ValueError, IndexError, TypeError) as error:  # as run() says it: which op, on what
            entry = self._failed_entry(error)
            if entry is None or not isinstance(entry.op, Op):
                raise
            shapes = " and ".join(f"{tuple(v.shape)} {v.dtype}" for v in entry.kept)
            raise InvalidArgumentError(f"{entry.op.name}: cannot compute it for inputs {shapes}: {error}") from None

    def _failed_entry(self, error):
        tb, line = error.__traceback__, None
        while tb is not None:  # the plan's own frame: its line number is the node's
            if tb.tb_frame.f_code is self.function.__code__:
                line = tb.tb_lineno
            tb = tb.tb_next
        if line is None or not 2 <= line < 2 + len(self.lines):
            return None
        return self.graph.entries[self.lines[line - 2][1]]

    def __str__(self):
        return self.source

    def __repr__(self):
        return f"<tapelab plan of graph '{self.graph.name}': {len(self.lines)} lines>"

