"""Tape -> plain data: named tensors and ops, the one thing the listing, the DOT export and the stepper read.

    tape_data(tape, target, sources) -> TapeData(tensors={key: TensorInfo}, ops=[OpInfo], ...)

Keys are the tensors' own keys (``tensor._key``: tensors are unhashable, like TF's, and a tape does not keep
alive the tensors it computed; an entry gives them back, recomputed if need be).

Names are the learner's, looked up when the picture is made, in this order:
1. an explicit name: a Variable's ``name=`` (``x`` for ``x:0``; a layer's ``dense/kernel``), a traced
   graph's argument name; repeated ones get TF's suffixes (``kernel``, ``kernel_1``);
2. the name the calling code holds the tensor by (:func:`tapelab.viz.names.code_names`: identity only; if
   one tensor has two names, the first bound; a name rebound since names only what it holds now);
3. a scalar constant nobody named (and not a source or target) shows its value (``2``);
4. any other tensor gets a name no Python code can have: ``%3`` is the output of op 3 (``tape.entries[3]``),
   ``%in0``, ``%in1``, ... are unnamed inputs.

A traced ``Graph`` (``tl.function``) holds no values: its placeholders, the nodes computed from them
and the Variables it captures show none (``value`` is ``None``); only its constants do.
"""

from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from tapelab.engine import nest
from tapelab.engine.backward import Mode, depending_on, walk
from tapelab.engine.primitives import NUMPY
from tapelab.engine.retention import Retention
from tapelab.engine.tape import UnconnectedGradients
from tapelab.engine.tensor import Tensor, Variable
from tapelab.viz import fmt
from tapelab.viz.foreign import adopt
from tapelab.viz.names import code_names

# why a source's gradient is None, in the order they are checked
NOT_FLOAT = "integer dtype: only float tensors have gradients"
STOPPED = "computed while recording was stopped"
NOT_WATCHED = "not watched by the tape"
NOT_CONNECTED = "not connected to the target"
FLOATS = ("float16", "float32", "float64")  # the dtypes that have gradients


@dataclass
class TensorInfo:
    """One tensor as drawn: its name, where it came from, what it held and what flowed back into it."""

    key: int
    name: str
    kind: str  # "variable", "watched", "placeholder", "constant", "stopped" or "intermediate"
    shape: tuple
    dtype: str
    value: np.ndarray  # the value at record time (None in a traced graph, except for constants)
    trainable: bool = False
    producer: int = None  # index of the op that computed it (intermediates)
    scope: str = ""  # the name scope of its producer ("" for inputs)
    grad: np.ndarray = None  # after gradient(): what reached it
    is_target: bool = False
    is_source: bool = False
    none_reason: str = None  # for a source whose gradient is None: why
    zeros_reason: str = None  # for a source gradient(..., unconnected_gradients="zero") gave zeros: why
    literal: bool = False  # a scalar constant nobody named: its name is its value, and pictures write it inline
    # how the backward pass treats it (with no target yet: how it would, from any target)
    reachable: bool = False  # the walk may send it gradients: it depends on a source (none yet: the tape tracked it)
    reached: bool = False  # some gradient of the target arrives at it (no target yet: it is tracked)
    parts: int = 0  # how many parts its gradient adds up from: one per op input reading it that a gradient
    #                 is sent to, plus one for a target (where the pass starts); more than one: ``+=``


@dataclass
class OpInfo:
    """One recorded op: its name, params, scope, input and output tensor keys, VJP formulas."""

    index: int
    name: str
    inputs: list
    output: int
    params: dict
    scope: str
    formulas: tuple


@dataclass
class TapeData:
    """Everything the listing and the graph show, with no reference to the engine's classes."""

    tensors: dict  # key -> TensorInfo; inputs first (in order of first use), then op outputs
    ops: list  # OpInfo, in execution order
    targets: list = field(default_factory=list)  # keys
    sources: list = field(default_factory=list)  # keys
    has_gradient: bool = False  # whether grads come from a gradient() call on these entries
    sent: dict = None  # asked for (parts=True): (op index, input index) -> the part of dL/dinput that op sent

    def name(self, key):
        return self.tensors[key].name

    @property
    def inputs(self):
        return [t for t in self.tensors.values() if t.producer is None]

    @property
    def named_inputs(self):
        """The inputs a learner sees listed: all but the scalar constants written as their values (``multiply(x,
        2)``)."""
        return [t for t in self.inputs if not t.literal]

    @property
    def target_name(self):
        """The target's name (``loss``), ``(a + b)`` for several targets, ``the target`` without one."""
        names = [self.name(k) for k in self.targets]
        if not names:
            return "the target"
        return fmt.operand(names[0]) if len(names) == 1 else "(" + " + ".join(names) + ")"

    def grad_of(self, key):
        """The gradient of the target with respect to a tensor, in symbols: ``∂loss/∂x`` (``grad x`` while the
        tape has no target yet)."""
        if not self.targets:
            return f"grad {fmt.operand(self.name(key))}"
        return fmt.partial(self.target_name, self.name(key))

    def call_text(self, index):
        """``z = matmul(x, y)``: an op written with its tensors' names and its params."""
        op = self.ops[index]
        params = fmt.params_text(op.params)
        args = ", ".join([self.name(k) for k in op.inputs] + ([params] if params else []))
        return f"{self.name(op.output)} = {op.name}({args})"


def _as_list(x):
    return None if x is None else nest.flatten(x)


class _Reading(NamedTuple):
    """Which record a picture reads, and for which target and sources."""

    entries: list  # the recorder's entries (or, once a one-shot tape let them go, its backward record's)
    backward: object  # the backward record whose gradients belong to these entries and this target, or None
    targets: list
    sources: list
    replay: bool  # the backward record was not taken for all these sources: the walk runs again from its seeds
    tracked: set  # keys of the tensors the recorder tracked
    stopped_from: dict  # key -> keys it was computed from, inside stop_recording()
    watched: tuple  # the tensors it watched


def tape_data(tape, target=None, sources=None, *, parts=False):
    """Read ``tape`` (a :class:`~tapelab.engine.recording.Recorder`: a tape, a traced graph; or a tape of one's own,
    :mod:`tapelab.viz.foreign`) into :class:`TapeData`,
    naming tensors as the calling code does.

    ``target``/``sources`` default to those of the tape's last ``gradient()`` call; without one there
    are none (watched tensors are still drawn as such). A non-persistent tape that already ran
    ``gradient()`` is read from its ``last_backward`` record. Sources that call was not taken for get their
    gradients by walking back again from its seeds. ``parts``: also keep the part of the gradient each op sent
    each of its inputs (``TapeData.sent``, which the flow view draws on the edges).
    """
    tape, target, sources = adopt(tape, target, sources)  # (a tape of one's own: read into a tapelab tape)
    shown = Retention(tape.tensors)  # what the tape let go, computed again once for this picture
    return _data(tape, _reading(tape, target, sources, shown), shown, parts)


def before_backward_data(tape, watched):
    """:class:`TapeData` of ``tape`` as its last backward pass found it: that pass's entries, targets and sources,
    ``watched`` (the tensors it watched then: a one-shot tape lets go of some) and what it tracked, with none of
    the pass's gradients (the stepper shows them step by step, on the edges)."""
    bw = tape.last_backward
    tracked = {t._key for t in watched} | {e.key for e in bw.entries if e.key in bw.tracked_keys}
    read = _Reading(bw.entries, None, list(bw.targets), list(bw.sources), False, tracked, bw.stopped_from,
                    tuple(watched))
    return _data(tape, read, Retention(tape.tensors))


def _data(tape, read, shown, parts=False):
    """The steps of a reading: the tensors and ops, the gradients, the names, each tensor's part in the pass."""
    tensors, by_key, ops = _tensors_and_ops(tape, read, shown)
    reaches = _reaches(read)
    grads, sent = {}, None  # key -> the gradient that reached it
    if read.backward is not None:
        bw = read.backward
        if parts:  # the pass again, each op's parts kept by (op index, input index)
            sent, index = {}, {id(e): k for k, e in enumerate(read.entries)}

            def keep_parts(e, g, steps, grads):
                sent.update(((index[id(e)], i), c) for i, c, _ in steps)

            grads = walk(bw.entries, bw.seeds, reaches, Mode(NUMPY, None, keep_parts))
        else:
            grads = walk(bw.entries, bw.seeds, reaches) if read.replay else bw.replay_grads()
    ends = {t._key for t in list(read.sources) + read.targets}  # sources and targets are named, never as a value
    _name_tensors(tensors, by_key, tape.input_names, ends)
    data = TapeData(tensors, ops, [t._key for t in read.targets if t._key in tensors],
                    [s._key for s in read.sources if s._key in tensors], has_gradient=read.backward is not None,
                    sent=sent)
    _mark_the_backward_pass(data, reaches, grads)
    _explain_missing_gradients(data, read, grads)
    return data


def _reading(tape, target, sources, shown):
    """Which entries to read, whether the last backward record's gradients belong to them, the target and
    sources (given, or that record's), and what the recorder tracked."""
    bw = tape.last_backward
    entries = tape.entries
    if not entries and bw is not None:
        entries = bw.entries
    # gradients belong to these entries only if the backward record saw exactly them, for the same target
    use_bw = bw is not None and len(bw.entries) == len(entries) and all(a is b for a, b in zip(bw.entries, entries))
    targets, srcs = _as_list(target), _as_list(sources)
    if use_bw and targets is not None and {t._key for t in targets} != {t._key for t in bw.targets}:
        use_bw = False  # a different target than the gradient was taken for: no gradients to show
    if targets is None:
        targets = list(bw.targets) if use_bw else []
    if srcs is None:  # without a gradient() call or explicit sources nothing is a source (the watched still show)
        srcs = list(bw.sources) if use_bw else []
    # the record's gradients answer for sources it was taken for; for others the walk runs again from its seeds
    replay = use_bw and not {s._key for s in srcs} <= {s._key for s in bw.sources}
    if bw is not None and (use_bw or not tape.entries):  # the backward record knows what was tracked then
        tracked, stopped_from = bw.tracked_keys, bw.stopped_from
    else:
        tracked = {t._key for t in tape.watched} | {e.key for e in entries if tape.tracks(shown.output(e))}
        stopped_from = tape.stopped_from
    return _Reading(entries, bw if use_bw else None, targets, srcs, replay, tracked, stopped_from, tape.watched)


def _tensors_and_ops(tape, read, shown):
    """Every tensor drawn (inputs in order of first use, then sources and watched tensors the entries never used,
    then the ops' outputs) and every op: ``(tensors, by_key, ops)``, key -> TensorInfo and key -> the tensor."""
    produced = {}  # output key -> op index
    for k, e in enumerate(read.entries):
        produced.setdefault(e.key, k)
    tensors, by_key = {}, {}
    watched = {t._key for t in read.watched}
    placeholders = {t._key for t in tape.placeholders}
    for e in read.entries:
        for t, v in zip(shown.inputs(e), shown.values(e)):
            if t._key not in tensors and t._key not in produced:
                tensors[t._key], by_key[t._key] = _input_info(tape, t, v, watched, placeholders, read), t
    for t in list(read.sources) + list(read.watched) + read.targets:
        if isinstance(t, Tensor) and t._key not in tensors and t._key not in produced:
            tensors[t._key], by_key[t._key] = _input_info(tape, t, t._value, watched, placeholders, read), t
    ops = []
    for k, e in enumerate(read.entries):
        out = shown.output(e)
        if out._key not in tensors:
            v = out._value
            tensors[out._key] = TensorInfo(out._key, None, "intermediate", tuple(v.shape), v.dtype.name,
                                          v if tape.holds_values else None, producer=k, scope=e.scope)
            by_key[out._key] = out
        rule = e.op.formulas  # one string per input; none for a traced Graph's assign, argmax, ... nodes
        formulas = tuple(rule[i] if rule else None for i in range(len(e.keys)))
        ops.append(OpInfo(k, e.op.name, list(e.keys), out._key, dict(e.params), e.scope, formulas))
    return tensors, by_key, ops


def _input_info(tape, t, value, watched, placeholders, read):
    """An input tensor as drawn: a Variable, a traced graph's placeholder, watched, stopped or a constant."""
    if isinstance(t, Variable):
        kind = "variable"
    elif t._key in placeholders:
        kind = "placeholder"
    elif t._key in watched or t._key in read.tracked:
        kind = "watched"
    elif t._key in read.stopped_from:
        kind = "stopped"
    else:
        kind = "constant"
    shown = value if tape.holds_values or kind == "constant" else None  # (a traced graph: values when it runs)
    return TensorInfo(t._key, None, kind, tuple(value.shape), value.dtype.name, shown,
                      trainable=isinstance(t, Variable) and bool(t.trainable))


def _reaches(read):
    """Keys of the tensors the backward pass sends gradients to, as the engine finds them."""
    bw = read.backward
    if bw is not None and not read.replay:
        return bw.reaches
    if read.sources:  # the tracked sources and what was computed from them
        return depending_on(read.entries, {s._key for s in read.sources} & set(read.tracked))
    return read.tracked  # no sources yet: any tracked tensor could be one


def _mark_the_backward_pass(data, reaches, grads):
    """Each tensor's part in the backward pass: whether gradients may reach it, how many parts add up, its
    gradient."""
    for key in data.targets:
        data.tensors[key].is_target = True
    parts = _parts(data.ops, data.targets, reaches)
    for key, info in data.tensors.items():
        info.reachable, info.parts = key in reaches, parts[key]
        info.reached = info.parts > 0 if data.targets else info.reachable
        if key in grads:
            info.grad = grads[key]


def _explain_missing_gradients(data, read, grads):
    """Mark the sources, and say why a source's gradient is None (or zeros, as gradient() was asked to give)."""
    tensors, ops, stopped, has_gradient = data.tensors, data.ops, read.stopped_from, data.has_gradient
    reach = _reaching(ops, data.targets)
    stopped_target = any(k in stopped for k in data.targets)
    stopped_on_path = [k for k in reach if k in stopped and k in tensors]
    zeros = has_gradient and read.backward.unconnected is UnconnectedGradients.ZERO
    for key in data.sources:
        info = tensors[key]
        info.is_source = True
        # what gradient() returned (or would: the engine follows recorded ops from tracked tensors only)
        gets_grad = info.dtype in FLOATS and (key in grads if has_gradient else info.reached)
        if not gets_grad and (has_gradient or data.targets):
            through = sorted(tensors[k].name for k in stopped_on_path if key in _came_from(k, ops, stopped))
            reason = _none_reason(info, key, read.tracked, stopped, stopped_target, through)
            if zeros and reason != NOT_FLOAT:  # gradient() gave zeros instead of None
                info.grad, info.zeros_reason = np.zeros(info.shape, info.dtype), reason
            else:
                info.none_reason = reason


def _name_tensors(tensors, by_key, input_names, ends):
    """Give every TensorInfo its name (see the module's docstring for the order of the rules)."""
    taken, seen = set(), {}

    def claim(info, base):  # TF's suffixes for a repeated explicit name: w, w_1, ...
        n = seen.get(base, 0)
        name = base if n == 0 else f"{base}_{n}"
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        seen[base] = n + 1
        taken.add(name)
        info.name = name

    for key, info in tensors.items():
        t = by_key[key]
        explicit = t.given_name if isinstance(t, Variable) else input_names.get(key)
        if explicit:
            claim(info, explicit)
    unnamed = [by_key[k] for k, info in tensors.items() if info.name is None]
    for key, name in code_names(unnamed).items():
        if name not in taken:
            taken.add(name)
            tensors[key].name = name
    inputs = 0
    for info in tensors.values():
        if info.name is not None:
            continue
        if info.producer is not None:
            info.name = f"%{info.producer}"
        elif info.kind == "constant" and info.value is not None and info.shape == () and info.key not in ends:
            info.name, info.literal = fmt.value_text(info.value.reshape(())), True
        else:
            info.name = f"%in{inputs}"
            inputs += 1


def _parts(ops, targets, reaches):
    """key -> how many parts the backward pass sends its gradient, as the engine's walk does: a target starts with
    one (its seed); going back, an op whose output got a gradient sends one to each input in ``reaches``. With no
    target yet, every op counts as if its output got one."""
    parts = Counter(dict.fromkeys(targets, 1))
    for op in reversed(ops):
        if targets and not parts[op.output]:  # (every op reading op.output came later: its count is complete)
            continue
        parts.update(k for k in op.inputs if k in reaches)
    return parts


def _reaching(ops, targets):
    """Keys of tensors the targets depend on (through recorded ops)."""
    need = set(targets)
    for op in reversed(ops):
        if op.output in need:
            need.update(op.inputs)
    return need


def _came_from(key, ops, stopped):
    """Keys of everything ``key`` was computed from: through recorded ops and through unrecorded (stopped) ones."""
    producer = {op.output: op for op in ops}
    seen, todo = set(), [key]
    while todo:
        k = todo.pop()
        links = list(stopped.get(k, ())) + (producer[k].inputs if k in producer else [])
        for j in links:
            if j not in seen:
                seen.add(j)
                todo.append(j)
    return seen


def _none_reason(info, key, tracked, stopped, stopped_target, through_stopped):
    """Why no gradient reached this source (the engine's own rules, in the order a learner checks them).

    ``through_stopped``: names of the tensors on the target's path that were computed from this source
    while recording was stopped (the tape did not record that link)."""
    if info.dtype not in FLOATS:
        return NOT_FLOAT
    if key in stopped:  # a Variable read only there was not computed: it was never watched
        return STOPPED if stopped[key] else "read only while recording was stopped: never watched"
    if key not in tracked:
        return NOT_WATCHED
    if stopped_target:  # the target itself was computed inside stop_recording(): nothing leads back
        return "the target was " + STOPPED
    if through_stopped:  # it does lead to the target, but through a link the tape did not record
        return f"{NOT_CONNECTED}: its path runs through {', '.join(through_stopped)}, {STOPPED}"
    return NOT_CONNECTED
