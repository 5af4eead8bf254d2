"""A tape of your own, shown by tapelab's pictures: the protocol a foreign tape follows, and how it is read.

A tape you write yourself (lesson 10 builds one in numpy) is listed, drawn and stepped through by the same
tools as tapelab's own: ``print(tl.viz.format_tape(my_tape))``, ``tl.viz.draw(my_tape)`` and
``tl.viz.BackwardStepper(my_tape, loss, [w, b])``. These names are the whole protocol; anything else on the tape
is yours:

    tape.entries        the ops in the order they ran; each entry has
        .op             its name, e.g. "mul" (or an object with a .name)
        .inputs         the values it read (a list or tuple)
        .output         the value it made
        .vjps           one function per input: g, the gradient at the output, -> that input's part of the
                        gradient (None where no gradient flows)
        .formulas       (optional) one text per input, in the rule's own names: "dx = g * y" (x, y, ... the
                        inputs in order, g the gradient at the output, out the output)
    a value             holds its number or numpy array as .value (and, optionally, a name as .name); a
                        tapelab tensor is a value too

tapelab's own tape follows it: its entries have ``op``, ``inputs``, ``output`` and ``vjps`` (the op's rules bound
to the entry's arrays), so ``adopt`` reads them as it reads a foreign tape's, to the same gradients.

With only these, the stepper walks back through the entries with tapelab's walk: each entry's VJPs called on the
gradient at its output, the parts summed per value. To step through the tape's *own* backward pass instead (and
see its mistakes where they happen), the tape also has

    tape.backward(target, on_step)   its backward pass from ``target``, calling ``on_step(entry)`` after it has
                                     sent that entry's gradient on to its inputs
    a value's .grad                  its gradient so far (None or an array): what the stepper's totals show

The same value object is the same tensor in every picture (identity, as a tape knows its tensors; a tapelab tensor
by its key). tapelab reads
the foreign tape into one of its own (:func:`adopt`), so every picture works on it unchanged. A tape that breaks
the protocol gets a ``TypeError`` naming what is missing.
"""

import numpy as np

from tapelab.engine.backward import Backward, Contribution, Step, depending_on
from tapelab.engine.primitives import Op
from tapelab.engine.recording import Recorder
from tapelab.engine.tape import Entry, GradientTape
from tapelab.engine.tensor import Tensor
from tapelab.viz.names import held_names

ENTRY_FIELDS = ("op", "inputs", "output", "vjps")  # what every entry must have


def is_foreign(tape):
    """Whether ``tape`` is a tape of one's own that the pictures read through :func:`adopt`: not tapelab's own."""
    return not _tapelabs(tape) and hasattr(tape, "entries")


def _tapelabs(tape):
    """A tapelab recorder, or what reads as one (a ``ConcreteFunction`` reads as its graph)."""
    return isinstance(tape, Recorder) or hasattr(tape, "is_traced_graph")


def adopt(tape, target=None, sources=None):
    """``(recorder, target, sources)``: a tapelab recorder as is, or a foreign tape read into a :class:`ForeignTape`
    with ``target`` and ``sources`` (its values) as that tape's tensors."""
    if _tapelabs(tape):
        return tape, target, sources
    if not hasattr(tape, "entries"):
        raise TypeError(
            f"{type(tape).__name__} is not a tape tapelab can show: it has no .entries. Give a tapelab GradientTape, "
            "or a tape of your own with .entries, the ops in the order they ran (each with .op, .inputs, .output and "
            ".vjps; see tapelab/viz/foreign.py)."
        )
    own = ForeignTape(tape)
    return own, own.tensor_of(target, "the target"), own.tensors_of(sources)


class ForeignTape(GradientTape):
    """A foreign tape's entries as a tapelab tape: one tensor per value, one op per entry whose VJP rules call the
    entry's own. Its leaves are watched (a tape of one's own computes every value's gradient); it is persistent,
    and its ``backward_steps`` runs the foreign tape's own ``backward`` where it has one."""

    def __init__(self, tape):
        super().__init__(persistent=True)
        self.foreign = tape
        self.foreign_name = type(tape).__name__  # (what the listing's title says)
        self.values = {}  # tensor key -> the foreign value
        self.input_names = {}  # tensor key -> the value's own .name, else the name the calling code holds it by
        self._tensors = {}  # _identity(value) -> its tensor
        self._foreign_entries = list(_checked_entries(tape))
        for k, e in enumerate(self._foreign_entries):
            inputs = tuple(self._tensor(v, f"tape.entries[{k}].inputs[{i}]") for i, v in enumerate(e.inputs))
            out = self._tensor(e.output, f"tape.entries[{k}].output")
            entry = Entry(_op(e, k, inputs), inputs, tuple(t._value for t in inputs), out, {}, "")
            self.entries.append(entry)
            self._tracked[out._key] = entry
        produced = {e.key for e in self.entries}
        for t in self._tensors.values():  # the leaves: watched
            if t._key not in produced and t._value.dtype.kind == "f":
                self._tracked[t._key] = self._watched[t._key] = t
        names = held_names(list(self.values.values()))
        for key, v in self.values.items():
            # (a tapelab Variable's name as given, "W", not "W:0")
            name = getattr(v, "given_name", None) if isinstance(v, Tensor) else getattr(v, "name", None)
            name = name if isinstance(name, str) and name else names.get(id(v))
            if name:
                self.input_names[key] = name

    def _tensor(self, value, where):
        t = self._tensors.get(_identity(value))
        if t is None:
            t = self._tensors[_identity(value)] = Tensor(_array(value, where))
            self.values[t._key] = value
        return t

    def tensor_of(self, value, what):
        """The tensor of one of the tape's values (None stays None; a tensor of this tape stays as it is)."""
        if value is None or (isinstance(value, Tensor) and value._key in self.values):
            return value
        t = self._tensors.get(_identity(value))
        if t is None:
            raise ValueError(
                f"{what} ({type(value).__name__}) is not a value of this {self.foreign_name}: no entry read or made "
                "it. Give the value itself (the object the entries hold), not a copy of its numbers."
            )
        return t

    def tensors_of(self, values):
        if values is None:
            return None
        if isinstance(values, (list, tuple)):
            return [self.tensor_of(v, f"source {i}") for i, v in enumerate(values)]
        return self.tensor_of(values, "the source")

    # --- stepping the foreign tape's own backward pass -----------------------------------------------------------
    def backward_steps(self, target, sources, output_gradients=None):
        """The steps of the foreign tape's own ``backward(target, on_step)`` (its totals: each value's ``.grad``), or,
        for a tape without one, tapelab's walk over its entries' VJPs."""
        backward = getattr(self.foreign, "backward", None)
        if not callable(backward):
            return super().backward_steps(target, sources, output_gradients)
        if output_gradients is not None:
            raise ValueError("output_gradients: a tape's own backward pass starts from its own seed; leave it out.")
        sources = [sources] if isinstance(sources, Tensor) else list(sources)
        reaches = depending_on(self.entries, {s._key for s in sources})
        index = {id(e): k for k, e in enumerate(self._foreign_entries)}
        steps, received = [], {target._key}  # (received: the keys a part was sent to so far, and the target)

        def on_step(e):
            k = index.get(id(e))
            if k is None:
                raise ValueError(
                    f"on_step({type(e).__name__}): the backward pass passed something that is not one of "
                    "tape.entries. Call on_step(entry) with each entry of tape.entries, after sending its gradient."
                )
            step = self._step(k, reaches, received, steps[-1].totals if steps else {})
            if step is not None:
                steps.append(step)

        backward(self.values[target._key], on_step)
        seeds = {target._key: (target, np.ones_like(target._value))}
        self._last_backward = Backward(self.entries, [target], sources, seeds, reaches, set(self._tracked), {},
                                       dict(steps[-1].totals) if steps else {}, True)
        return steps

    def _step(self, k, reaches, received, before):
        """A :class:`Step` of entry ``k`` as the foreign pass left it (None if it sent nothing on): the gradient at
        its output, the part each VJP gives for it, and the totals. Within the step, a value that gets several
        parts shows the sum of the parts before its last, and then the total the pass left in its ``.grad``: where
        the pass did not add up its parts (it overwrote one), that sum is visibly wrong."""
        entry, foreign = self.entries[k], self._foreign_entries[k]
        g = _grad(self.values[entry.key])
        if g is None:
            return None
        sends = [(i, t, vjp) for i, (t, vjp) in enumerate(zip(entry.args, foreign.vjps))
                 if vjp is not None and t._key in reaches]
        last = {t._key: i for i, t, _ in sends}  # the last part each input gets in this step
        running, contributions = dict(before), []
        for i, t, vjp in sends:
            part, key = np.asarray(vjp(g)), t._key
            left = _grad(self.values[key])  # what the pass left in its .grad
            if left is None:  # (a pass that left an input's .grad unset sent it nothing)
                continue
            total = left if last[key] == i else part if key not in running else running[key] + part
            running[key] = total
            received.add(key)
            contributions.append(Contribution(i, t, entry.op.formulas[i], part, total))
        if not contributions:
            return None
        totals = {key: grad for key, v in self.values.items() if key in received and (grad := _grad(v)) is not None}
        return Step(k, entry, g, contributions, totals)


def _identity(value):
    """What makes two values the same value: the object itself (a tapelab tensor: its key, which a tape's entries
    give back on a new tensor object)."""
    return ("key", value._key) if isinstance(value, Tensor) else id(value)


def _checked_entries(tape):
    """The foreign tape's entries, each checked against the protocol (else a TypeError naming what is missing)."""
    try:
        entries = list(tape.entries)
    except TypeError:
        raise TypeError(f"{type(tape).__name__}.entries must be a list of entries, in the order the ops ran; "
                        f"it is a {type(tape.entries).__name__}.") from None
    for k, e in enumerate(entries):
        missing = [f for f in ENTRY_FIELDS if not hasattr(e, f)]
        if missing:
            raise TypeError(
                f"tape.entries[{k}] ({type(e).__name__}) has no {', no '.join('.' + f for f in missing)}. Each entry "
                "needs .op (its name), .inputs (the values it read), .output (the value it made) and .vjps (one "
                "function per input, g -> that input's part of the gradient, or None)."
            )
        if len(e.vjps) != len(e.inputs):
            raise TypeError(
                f"tape.entries[{k}] ({_name(e.op)}) has {len(e.inputs)} inputs but {len(e.vjps)} vjps: give one "
                "VJP per input, in the same order (None for an input no gradient flows to)."
            )
        for i, vjp in enumerate(e.vjps):
            if vjp is not None and not callable(vjp):
                raise TypeError(f"tape.entries[{k}] ({_name(e.op)}).vjps[{i}] is a {type(vjp).__name__}, not a "
                                "function of g (or None).")
    return entries


def _name(op):
    return op if isinstance(op, str) else getattr(op, "name", None) or getattr(op, "__name__", None) or str(op)


def _array(value, where):
    """A value's array (``.value``, or a tapelab tensor's own), as a tensor holds it: a numpy array of numbers."""
    if isinstance(value, Tensor):
        return value._value
    if not hasattr(value, "value"):
        raise TypeError(f"{where} is a {type(value).__name__} with no .value: a value on a tape holds its number or "
                        "numpy array as .value.")
    array = np.asarray(value.value)
    if array.dtype.kind not in "fiub":
        raise TypeError(f"{where}.value has dtype {array.dtype}: a value holds numbers (a float, an int or a numpy "
                        "array of them).")
    return array


def _grad(value):
    """A foreign value's gradient so far (``.grad``) as an array of its own, or None."""
    g = getattr(value, "grad", None)
    return None if g is None else np.array(g)


def _op(entry, k, inputs):
    """A tapelab op for one foreign entry: its name, its formulas, and VJP rules that call the entry's own."""
    names = "xyzuvw"
    formulas = getattr(entry, "formulas", None) or getattr(entry.op, "formulas", None)  # (tapelab's own: its op's)
    if formulas is None or len(formulas) != len(inputs):
        formulas = tuple(f"d{names[i] if i < len(names) else f'x{i}'} = vjps[{i}](g)" for i in range(len(inputs)))
    name = _name(entry.op)
    return Op(name, None, tuple(None if vjp is None else _rule(vjp, name, k, i, t)
                                for i, (vjp, t) in enumerate(zip(entry.vjps, inputs))), tuple(formulas))


def _rule(vjp, name, k, i, t):
    """A VJP rule as tapelab's walk calls one (``rule(B, g, out, *inputs)``) that calls the foreign ``vjp(g)``."""
    shape = t._value.shape

    def rule(B, g, out, *inputs):
        part = np.asarray(vjp(g))
        if part.shape != shape:
            hint = (" The input was broadcast in the forward pass: sum the part over the broadcast axes (undo the "
                    "broadcasting) so it has the input's shape." if _broadcasts(shape, part.shape) else "")
            raise ValueError(f"{name} (tape.entries[{k}]): vjps[{i}] returned a part of shape {part.shape}, but "
                             f"input {i} has shape {shape}; a gradient has its value's shape.{hint}")
        return part.astype(t._value.dtype, copy=False) if part.dtype != t._value.dtype else part

    return rule


def _broadcasts(shape, to):
    """Whether an array of ``shape`` broadcasts to ``to``."""
    try:
        return np.broadcast_shapes(shape, to) == tuple(to)
    except ValueError:
        return False
