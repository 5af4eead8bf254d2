"""The gradient tape: records every op as a plain entry, then plays the entries back in reverse.

    ops (primitives table) --run()--> Entry(op, where each input came from, the arrays its rules read, ...) on each tape
    tape.gradient(target, sources) --> backward.walk: reversed entries, VJP rules, gradients summed per tensor key

A tape knows tensors by their key (``tensor._key``, unique for the run) and holds none that it computed itself:
those live as long as the learner's code holds them, and an entry keeps only the arrays its op's rules read
(``Op.reads``), as a hand-written backward pass does (:mod:`~tapelab.engine.retention` says what is let go and how
a picture gets it back).
"""

import enum
import functools
import warnings

import numpy as np

from tapelab.engine import nest, numerics, recording
from tapelab.engine.backward import Backward, Contribution, Mode, Step, Walked, depending_on, walk
from tapelab.engine.errors import InvalidArgumentError, LeakedTensorError, UnsupportedError
from tapelab.engine.learner import spell, stacklevel
from tapelab.engine.primitives import NUMPY, on_tensors
from tapelab.engine.recording import Recorder, full_collections, switches
from tapelab.engine.recording import state as _state
from tapelab.engine.retention import SWEEP, Retention, let_go
from tapelab.engine.tensor import Tensor, Variable, to_numpy

LONG = 100  # entries: a recording this long holds Python's full garbage collections back until it stops


class Entry:
    """One recorded op: what ran, on what, and what it produced.

    ``args`` holds, per input, the tensor itself, or the entry that computed it on this tape (either has the
    input's tensor key as ``_key``). ``kept`` holds the
    input arrays as the op saw them, except, once the tape has swept (:func:`~tapelab.engine.retention.let_go`), the
    large ones of computed inputs that the op's rules never read (a :class:`~tapelab.engine.primitives.Spec`
    instead); ``out`` is the output array, unless it was swept, large, and the rules do not read it (a
    :class:`~tapelab.engine.retention.Released` instead). ``keys`` and ``key`` are the inputs' and
    the output's tensor keys (``_key``); ``residual`` is what the op's forward saved for its rules (None for most ops).
    :attr:`inputs`, :attr:`values` and :attr:`output` give the whole op back, recomputing what was let go.
    """

    __slots__ = ("op", "args", "kept", "_key", "out", "params", "scope", "residual")

    def __init__(self, op, inputs, values, output, params, scope, residual=None):
        """An entry that keeps everything: its args are the input tensors (a traced graph's nodes, a tape of one's
        own read by ``tapelab/viz/foreign.py``). A tape makes its own entries in ``GradientTape._record``."""
        self.op, self.args, self.kept, self.params = op, inputs, values, params
        self._key, self.out, self.scope, self.residual = output._key, output._value, scope, residual

    @property
    def key(self):
        """The output's tensor key (``_key``, as a tensor's: each of ``args``, tensor or entry, has the key of the
        input it stands for)."""
        return self._key

    @property
    def keys(self):
        """The inputs' tensor keys."""
        return tuple([a._key for a in self.args])

    @property
    def inputs(self):
        """The input tensors (one the tape computed and let go comes back recomputed, under its own key)."""
        return Retention().inputs(self)

    @property
    def values(self):
        """The input arrays, as the op saw them."""
        return Retention().values(self)

    @property
    def output(self):
        """The output tensor (recomputed if the tape let it go)."""
        return Retention().output(self)

    @property
    def rule_params(self):
        """The keyword arguments of the op's gradient rules: its params, and the residual if it saved one."""
        return self.params if self.residual is None else {**self.params, "residual": self.residual}

    @property
    def vjps(self):
        """One function per input, ``g -> that input's part of the gradient`` (None where no gradient flows): the op's
        rules bound to this entry's arrays, as a tape of one's own records them (``tapelab/viz/foreign.py``)."""
        values, out, params = self.values, self.output._value, self.rule_params
        return tuple(None if rule is None else functools.partial(_part, rule, out, values, params)
                     for rule in (self.op.vjps[i] for i in range(len(self.args))))

    def __repr__(self):
        shapes = ", ".join(str(tuple(v.shape)) for v in self.kept)
        return f"<Entry {self.scope}{self.op.name}({shapes}) -> {tuple(self.out.shape)}>"


def _part(rule, out, values, params, g):
    return rule(NUMPY, np.asarray(g), out, *values, **params)


_new = object.__new__


def run(op, inputs, **params):
    """Run primitive ``op`` on tensors ``inputs`` and record it on every tape that is watching them."""
    # the input arrays (one or two inputs, nearly every op, spelled out: run() is the hot path)
    n = len(inputs)
    if n == 2:
        values = (inputs[0]._value, inputs[1]._value)
        if op.same_dtype:
            first, second = values[0].dtype, values[1].dtype
            if first is not second and first != second:  # (`is` first: inputs usually share one dtype object)
                raise InvalidArgumentError(dtype_mismatch(op, inputs))
    else:
        values = (inputs[0]._value,) if n == 1 else tuple([t._value for t in inputs])
        if op.same_dtype and n:
            first = values[0].dtype
            if any(v.dtype is not first and v.dtype != first for v in values):
                raise InvalidArgumentError(dtype_mismatch(op, inputs))
    if op.float_only and values[0].dtype.kind != "f":
        raise InvalidArgumentError(
            f"{op.name}: expects a float tensor, got {values[0].dtype}. Cast it first, "
            f"e.g. tl.cast(x, tl.float32), or write a float literal such as 4.0 instead of 4."
        )
    try:
        value = op.forward(*values, **params)
    except (LeakedTensorError, UnsupportedError):  # (a traced tensor used as a number says so itself)
        raise
    except (ValueError, IndexError, TypeError) as e:
        shapes = " and ".join(f"{tuple(v.shape)} {v.dtype}" for v in values)
        raise InvalidArgumentError(f"{op.name}: cannot compute it for inputs {shapes}: {e}") from None
    residual = None
    if op.saves:
        value, residual = value
    out = Tensor(value if type(value) is np.ndarray else np.asarray(value))
    recorders = _state.recorders
    if recorders:  # (recording.record(), inline: usually no recorder, or one tape)
        for recorder in recorders:
            recorder._record(op, inputs, values, out, params, residual)
    if switches.check_numerics and out._value.dtype.kind == "f" and not np.isfinite(out._value).all():
        raise numerics.forward_error(op, inputs, out)  # (recorded first, so the error can point at the entry)
    return out


def dtype_mismatch(op, inputs):
    """The message for inputs of different dtypes to an op that needs one (run() and matmul raise it)."""
    names = [t.dtype.name for t in inputs]
    wider = next((n for n in ("float64", "float32", "float16") if n in names), names[0])
    return (
        f"{op.name}: all inputs must have the same dtype, got {' and '.join(names)}. tapelab never converts "
        f"silently (neither does TensorFlow): convert one input first, e.g. tl.cast(x, tl.{wider})."
    )


# the table's primitives run on tensors through run(), so a tape records them: what the VJP rules compute with when
# an outer tape differentiates the backward pass (NUMPY's twin), and what jacobians stack their rows with
TENSORS = on_tensors(run)


class UnconnectedGradients(enum.Enum):
    """What ``gradient()`` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


class GradientTape(Recorder):
    """Records operations for automatic differentiation, like ``tf.GradientTape``.

    >>> x = tl.Variable(3.0)
    >>> with tl.GradientTape() as tape:
    ...     y = x * x
    >>> tape.gradient(y, x)
    <tapelab.Tensor: shape=(), dtype=float32, numpy=6.0>
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self._clear_entries()
        self._tracked = {}  # key -> the watched tensor, or the entry whose op computed it (float outputs)
        self._watched = {}  # key -> tensor: what watch() (or reading a Variable) added, in order
        self._stopped = {}  # key -> tensor: computed from tracked tensors inside stop_recording()
        self._stopped_from = {}  # key -> keys of the tracked or stopped tensors it was computed from
        self._read_unwatched = set()  # keys of float Variables an op read while this tape did not watch them
        self._paused = False  # True inside stop_recording() and during its own backward pass
        self._walking = False  # True during its own backward pass (whose ops are not the learner's: not noted)
        self._last_backward = None  # the latest gradient() call's Backward record, or what makes it (see below)
        self._used = False
        self._forgotten = None  # after a reset(): the keys this tape tracked before
        self._holding = False  # it holds Python's full garbage collections back (a long recording)

    # --- recording ---------------------------------------------------------------------------
    def __enter__(self):
        recorders = _state.recorders
        if self in recorders:
            raise ValueError(
                "this GradientTape is already recording: a tape cannot be entered twice at once. "
                "Use one `with` block per tape, or a new GradientTape() for a nested (higher-order) tape."
            )
        if self._used:
            raise RuntimeError(
                "this non-persistent GradientTape was already used by gradient() and has released what it "
                "recorded. Create a new GradientTape() (or use persistent=True)."
            )
        recorders.append(self)
        return self

    def __exit__(self, *exc):
        recorders = _state.recorders
        if self in recorders:
            recorders.remove(self)
        if self.persistent:  # it is kept for more gradients and pictures: what no rule reads goes now
            self._sweep()
        if self._holding:
            self._holding = False
            full_collections.release()
        return False

    def _record(self, op, inputs, values, out, params, residual):
        if op.vjps is None:  # not differentiable: no gradient can flow back through it
            return
        if self._paused:
            if not self._walking:
                self._note_unrecorded(inputs, out)
            return
        tracked = self._tracked
        # per input, what it is to this tape: the entry that computed it, the tensor itself if watched (or a
        # Variable read now: _read), else None. One and two inputs, nearly every op, are spelled out (the hot path).
        n = len(inputs)
        if n == 2:
            x, y = inputs
            from_x, from_y = tracked.get(x._key), tracked.get(y._key)
            if from_x is None and isinstance(x, Variable):
                from_x = self._read(x)
            if from_y is None and isinstance(y, Variable):
                from_y = self._read(y)
            if from_x is None and from_y is None:
                return
            args = (x if from_x is None else from_x, y if from_y is None else from_y)
        elif n == 1:
            x = inputs[0]
            from_x = tracked.get(x._key)
            if from_x is None and isinstance(x, Variable):
                from_x = self._read(x)
            if from_x is None:
                return
            args = (from_x,)
        else:
            made = [tracked.get(t._key) for t in inputs]
            made = [self._read(t) if m is None and isinstance(t, Variable) else m for t, m in zip(inputs, made)]
            if all(m is None for m in made):
                return
            args = tuple([t if m is None else m for t, m in zip(inputs, made)])
        # the entry, made without an __init__ call, keeping everything (retention.let_go sweeps it later)
        entry = _new(Entry)
        entry.op, entry.args, entry.params, entry.residual = op, args, params, residual
        value = out._value
        entry._key, entry.out, entry.kept, entry.scope = out._key, value, values, _state.scopes[-1]
        entries = self.entries
        entries.append(entry)
        if value.dtype.kind == "f":
            tracked[entry._key] = entry
        self._unswept += value.nbytes
        if self._unswept >= SWEEP:  # what no rule reads goes now, not at every op
            self._sweep()
        if len(entries) == LONG and not self._holding:  # a long recording: full collections wait (recording.py)
            self._holding = True
            full_collections.hold()

    def _clear_entries(self):
        self.entries = []
        self._swept, self._unswept = 0, 0  # entries[:_swept] are swept (retention.let_go); bytes recorded since

    def _sweep(self):
        """Let go of what no rule reads in the entries recorded since the last sweep (retention.let_go)."""
        let_go(self.entries, self._swept)
        self._swept, self._unswept = len(self.entries), 0

    def _read(self, variable):
        """A Variable read while recording, not yet tracked: watched if trainable (TF's ``watch_accessed_variables``)
        and returned if it is a float; else None. An int Variable read is listed among the watched variables, as TF
        lists it, but no gradient reaches it; a float one read unwatched is noted (see :meth:`watch`)."""
        key = variable._key
        if self.watch_accessed_variables and variable.trainable:
            self._watched[key] = variable
            if variable._value.dtype.kind == "f":
                self._tracked[key] = variable
                return variable
        elif variable._value.dtype.kind == "f":
            self._read_unwatched.add(key)
        return None

    def _note_unrecorded(self, inputs, out):
        """Inside stop_recording(): note what was computed (or read) unrecorded, and from what."""
        tracked, stopped, stopped_from = self._tracked, self._stopped, self._stopped_from
        came_from = []
        for t in inputs:
            k = t._key
            if isinstance(t, Variable) and k not in tracked and self.watch_accessed_variables and t.trainable:
                stopped[k], stopped_from[k] = t, ()  # a Variable read only here is never watched
            if k in tracked or k in stopped:
                came_from.append(k)
        if came_from:
            stopped[out._key], stopped_from[out._key] = out, tuple(came_from)

    def watch(self, tensor):
        """Ask the tape to track ``tensor`` (or a list/tuple/dict of them) so gradients can reach it."""
        for t in nest.flatten(tensor):
            if not isinstance(t, Tensor):
                raise ValueError(
                    spell(f"watch() takes tensors or Variables, not {type(t).__name__} ({t!r}). "
                          f"Make a tensor first, e.g. x = tl.constant({t!r}), compute with x, and watch x.")
                )
            if t._value.dtype.kind != "f":
                warnings.warn(
                    spell(f"watch(): the tensor has dtype {t.dtype.name}; only float tensors have gradients, so its "
                          f"gradient will be None. Use a float, e.g. tl.constant(3.0) or tl.cast(x, tl.float32)."),
                    stacklevel=2,
                )
                if isinstance(t, Variable):
                    self._watched[t._key] = t  # (TF lists it among the watched variables all the same)
                continue
            if t._key in self._read_unwatched and t._key not in self._tracked:
                self._unlink_earlier_reads(t)
            self._tracked[t._key] = self._watched[t._key] = t

    def _unlink_earlier_reads(self, variable):
        """``variable`` is watched now, after ops on this tape read it unwatched: as in TF, where each read of a
        Variable is a new tensor, those earlier reads stay constants (no gradient flows back through them), so
        the entries get a constant of the value they read in place of the Variable."""
        key = variable._key
        self._read_unwatched.discard(key)
        for entry in self.entries:
            args = entry.args
            if any(a is variable for a in args):
                entry.args = tuple([Tensor(np.array(v if isinstance(v, np.ndarray) else variable._value))
                                    if a is variable else a for a, v in zip(args, entry.kept)])

    @property
    def watched(self):
        """Every tensor watched so far (explicitly, or Variables read while recording), in order; after a one-shot
        tape's gradient(), its Variables (as TF still lists them)."""
        if self._used:
            return tuple(t for t in self._watched.values() if isinstance(t, Variable))
        return tuple(self._watched.values())

    @property
    def last_backward(self):
        """A :class:`Backward` record of the latest ``gradient()`` call (None before one), for the pictures: made
        when first asked for, from what the call kept."""
        record = self._last_backward
        if record.__class__ is tuple:
            record = self._last_backward = Backward(*record)
        return record

    @property
    def stopped(self):
        """Tensors computed from watched ones (or Variables read) inside ``stop_recording()``: no gradient."""
        return tuple(self._stopped.values())

    @property
    def stopped_from(self):
        """``t._key -> keys of what t was computed from`` for each tensor in :attr:`stopped` (the unrecorded links)."""
        return self._stopped_from

    @property
    def used(self):
        """True once a non-persistent tape has run ``gradient()`` (or ``backward_steps()``) and let go."""
        return self._used

    def tracks(self, tensor):
        """Whether gradients can flow into ``tensor`` on this tape (watched, or computed from watched ones)."""
        return tensor._key in self._tracked

    def watched_variables(self):
        """The Variables this tape watches (explicitly or because they were read while recording)."""
        return tuple(sorted((t for t in self._watched.values() if isinstance(t, Variable)), key=lambda v: v._uid))

    def stop_recording(self):
        """A context in which this tape records nothing (like TF's ``tape.stop_recording()``)."""
        if self not in _state.recorders:
            raise RuntimeError(
                spell("stop_recording() is for a tape that is recording: use it inside "
                      "`with tl.GradientTape() as tape:`.")
            )
        return _Paused(self)

    def reset(self):
        """Forget everything recorded and watched, as if this were a new tape (recording goes on)."""
        self._clear_entries()
        self._watched.clear()
        self._read_unwatched.clear()
        self._forgotten = (self._forgotten or set()) | self._tracked.keys()
        self._tracked.clear()
        self._stopped.clear()
        self._stopped_from.clear()
        self._last_backward = None
        self._used = False

    # --- playing back --------------------------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """d(target)/d(sources), summed over the elements of a non-scalar or list target.

        ``sources`` may be one tensor, or a list, tuple or dict of them: the result has the same
        structure. A source the target does not depend on gets ``None`` (or zeros with
        ``unconnected_gradients="zero"``); integer sources always get ``None``.
        """
        unconnected = _unconnected(unconnected_gradients)
        flat_sources, grads = self._backward("gradient", target, sources, output_gradients, unconnected=unconnected)
        return nest.pack_like(sources, [self._result(s, grads, unconnected) for s in flat_sources])

    def backward_steps(self, target, sources, output_gradients=None):
        """The backward pass as a list of :class:`Step` records, one per op, in the order they run.

        Each step shows the gradient arriving at an op's output, the formula and the contribution
        sent to each input, and every tensor's running total; the final totals equal ``gradient()``.
        Like ``gradient()``, a non-persistent tape can do this once.
        """
        steps, shown = [], Retention()  # (shown: the input tensors the tape let go, computed again once)
        index = {id(e): k for k, e in enumerate(self.entries)}

        def on_step(e, g, contributions, grads):
            inputs = shown.inputs(e)
            steps.append(Step(index[id(e)], e, to_numpy(g),
                              [Contribution(i, inputs[i], e.op.formulas[i], to_numpy(c), to_numpy(total))
                               for i, c, total in contributions],
                              {k: to_numpy(v) for k, v in grads.items()}))

        self._backward("backward_steps", target, sources, output_gradients, on_step)
        return steps

    def _backward(self, what, target, sources, output_gradients, on_step=None, unconnected=None):
        """Check, seed, walk the entries backwards, keep a record for display, release a one-shot tape."""
        self._check_usable(what)
        flat_sources = self._flat_sources(sources, what)
        targets = [target] if isinstance(target, Tensor) else [_as_target(t, what) for t in nest.flatten(target)]
        seeds = self._seeds(target, targets, output_gradients)
        self._warn_unseen(targets, flat_sources, what)
        walked = self._backprop(seeds, flat_sources, on_step)
        self._keep_backward(targets, flat_sources, seeds, walked, unconnected)
        self._release()
        return flat_sources, walked.grads

    def _keep_backward(self, targets, sources, seeds, walked, unconnected=None):
        """Keep what this backward pass saw for display (see :class:`Backward`)."""
        grads = walked.grads
        if walked.complete and grads and isinstance(next(iter(grads.values())), Tensor):  # a recorded pass
            grads = {k: to_numpy(v) for k, v in grads.items()}
        if self.persistent:  # it records on: keep copies
            entries, reaches, tracked_keys, stopped_from = (list(self.entries), set(walked.reaches),
                                                            set(self._tracked), dict(self._stopped_from))
        else:  # a one-shot tape lets go of these right after (_release), so they need no copy
            entries, reaches, tracked_keys, stopped_from = (self.entries, walked.reaches, self._tracked.keys(),
                                                            self._stopped_from)
        self._last_backward = (entries, targets, sources, seeds, reaches, tracked_keys, stopped_from, grads,
                               walked.complete, unconnected)

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """The full Jacobian: result ``[i...]`` has shape ``target.shape + source.shape``."""
        unconnected = _unconnected(unconnected_gradients)
        self._check_usable("jacobian")
        flat_sources = self._flat_sources(sources, "jacobian")
        target = _as_target(target, "jacobian")
        connected = self._reshapes(target)
        self._warn_unseen([target], flat_sources, "jacobian")
        shape = tuple(target.shape)
        rows, size = [], int(np.prod(shape, dtype=np.int64))  # one gradient per element of the target
        for k in range(size):
            seed = np.zeros(size, target._value.dtype)
            seed[k] = 1
            grads = self._backprop({target._key: (target, seed.reshape(shape))}, flat_sources).grads if connected \
                else {}
            rows.append([self._result(s, grads, unconnected) for s in flat_sources])
        self._release()
        result = []
        for j, s in enumerate(flat_sources):
            column = [row[j] for row in rows]
            if any(c is None for c in column):
                result.append(None)
            elif column:  # the rows stacked (recorded, so an outer tape can differentiate the jacobian)
                B = TENSORS
                one = (1,) + tuple(s.shape)
                result.append(B.reshape(B.concat(*[B.reshape(c, shape=one) for c in column], axis=0),
                                        shape=shape + tuple(s.shape)))
            else:  # a target with no elements
                result.append(Tensor(np.zeros(shape + tuple(s.shape), s._value.dtype)))
        return nest.pack_like(sources, result)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """The Jacobian of each example of a batch on its own: ``result[b]`` is d target[b] / d source[b].

        Both have the batch first; the result has shape ``(batch,) + target.shape[1:] + source.shape[1:]``.
        It assumes example b of the target depends only on example b of the source (as in a layer), so one
        backward pass per element of an example gives every example's row at once.
        """
        unconnected = _unconnected(unconnected_gradients)
        self._check_usable("batch_jacobian")
        (source,) = self._flat_sources([source], "batch_jacobian")
        target = _as_target(target, "batch_jacobian")
        connected = self._reshapes(target)
        if target.ndim < 1 or source.ndim < 1 or target.shape[0] != source.shape[0]:
            raise ValueError(
                f"batch_jacobian(): need the first dimension of target shape {tuple(target.shape)} and source shape "
                f"{tuple(source.shape)} to match: both hold the batch first. For a whole Jacobian use jacobian()."
            )
        self._warn_unseen([target], [source], "batch_jacobian")
        batch, per_example = target.shape[0], int(np.prod(target.shape[1:], dtype=np.int64))
        rows = []
        for k in range(per_example):  # seed element k of every example at once
            seed = np.zeros((batch, per_example), target._value.dtype)
            seed[:, k] = 1
            grads = self._backprop({target._key: (target, seed.reshape(target.shape))}, [source]).grads \
                if connected else {}
            rows.append(self._result(source, grads, unconnected))
        self._release()
        if any(r is None for r in rows):  # TF: a target that does not depend on the source gives zeros here
            rows = [Tensor(np.zeros(source._value.shape, source._value.dtype)) for _ in rows]
        shape = tuple(target.shape) + tuple(source.shape[1:])
        if not rows:
            return Tensor(np.zeros(shape, source._value.dtype))
        B = TENSORS  # (recorded, so an outer tape can differentiate the result)
        column = (batch, 1) + tuple(source.shape[1:])
        return B.reshape(B.concat(*[B.reshape(r, shape=column) for r in rows], axis=1), shape=shape)

    def _reshapes(self, target):
        """Whether the tape can differentiate ``target`` as jacobian() sees it. TF's jacobians first reshape the target
        on the tape, so a target the tape does not track (not watched, not computed from what it watches) gives no
        gradient at all, not even to itself (``tape.gradient(x, x)`` is ones; ``tape.jacobian(x, x)`` is None). A
        trainable Variable that reshape reads is watched then, as any Variable read while recording."""
        if target._key not in self._tracked and isinstance(target, Variable) and not self._paused:
            self._read(target)
        return target._key in self._tracked

    def _check_usable(self, what):
        if self._used:
            raise RuntimeError(
                spell(f"{what}(): a non-persistent GradientTape can only be used to compute one set of gradients "
                      "(or jacobians); this one already did and released what it recorded. To call gradient() "
                      "more than once, create the tape with tl.GradientTape(persistent=True).")
            )

    def _flat_sources(self, sources, what):
        flat = nest.flatten(sources)
        for s in flat:
            if not isinstance(s, Tensor):
                where = next((f"sources{p} is" for p, leaf in nest.flatten_with_paths(sources)
                              if not isinstance(leaf, Tensor) and p), "got")
                raise TypeError(
                    spell(f"{what}(): every source must be a tensor or Variable, {where} {type(s).__name__} ({s!r}). "
                          "Gradients are taken with respect to values the tape saw: make it a tl.Variable (or "
                          "tl.constant and tape.watch it) and compute with that inside the tape.")
                )
        return flat

    def _warn_unseen(self, targets, sources, what):
        """TF gives None for a target or source the tape never saw; say so, since it is usually a mistake."""
        unseen = [k for k, t in enumerate(targets) if t._key not in self._tracked]  # (targets are tensors: checked)
        if unseen and any(s._value.dtype.kind == "f" for s in sources):  # (integer sources warn on their own)
            t = targets[unseen[0]]
            which = "the target" if len(targets) == 1 else f"target {unseen[0]} of {len(targets)}"
            how = " (it was computed inside stop_recording())" if t._key in self._stopped else ""
            warnings.warn(
                spell(f"{what}(): {which} ({t.dtype.name}, shape {tuple(t.shape)}) was not computed on this tape "
                      f"from anything it watches{how}, so no gradient can flow from it: every source gets None (TF's "
                      "behaviour). Compute the target inside `with tape:` from a trainable tl.Variable or a watched "
                      "tensor (tape.watch(x)); ops like argmax, comparisons and casts to int have no gradient."),
                stacklevel=stacklevel(),
            )
            return
        for k, s in enumerate(sources):
            if (not isinstance(s, Variable) and s._value.dtype.kind == "f" and s._key not in self._tracked
                    and s._key not in self._stopped):
                which = "the source" if len(sources) == 1 else f"source {k}"
                warnings.warn(
                    spell(f"{what}(): {which} ({s.dtype.name}, shape {tuple(s.shape)}) is a tensor this tape never "
                          "watched, so its gradient is None. Only trainable Variables are watched automatically: "
                          "call tape.watch(x) inside the `with` block before computing with x, or make it a "
                          "tl.Variable."),
                    stacklevel=stacklevel(),
                )

    def _seeds(self, target, targets, output_gradients):
        """The starting gradients: ones (so non-scalar targets are summed) or ``output_gradients``."""
        try:
            given = [None] * len(targets) if output_gradients is None else nest.flatten_up_to(target, output_gradients)
        except (ValueError, TypeError, KeyError):
            raise ValueError(
                f"gradient(): output_gradients must have the same structure as the target ({len(targets)} "
                "tensor(s)): one gradient per target tensor, each of its target's shape."
            ) from None
        seeds = {}
        for t, g in zip(targets, given):
            value = t._value
            if g is None:
                g = _ones(value)
            else:
                g = np.asarray(g, dtype=value.dtype)
            if g.shape != value.shape:
                raise ValueError(
                    f"gradient(): output_gradients has shape {g.shape} but its target has shape "
                    f"{tuple(t.shape)}; they must match."
                )
            if t._key in seeds:  # the same target twice: its seeds add up
                g = seeds[t._key][1] + g
            seeds[t._key] = (t, g)
        forgotten = self._forgotten
        if forgotten and any(k in forgotten and k not in self._tracked for k in seeds):
            raise RuntimeError(
                "gradient(): this tape was reset() after the target was computed, so the ops that produced it "
                "are gone. Compute the target again after reset(), inside the tape."
            )
        return seeds

    def _backprop(self, seeds, sources, on_step=None):
        """The backward pass from ``seeds`` ({key: (tensor, gradient)}) to ``sources``: a :class:`Walked`.

        Only entries on a path from a source to the target are visited. If another tape is recording, the
        VJPs run as recorded tensor ops so that tape can differentiate them again (and every gradient is kept,
        as the stepper keeps them); otherwise only the sources' gradients outlive the walk.
        """
        tracked = self._tracked
        keys = {s._key for s in sources}  # (the gradients a plain pass keeps)
        reaches = keys & tracked.keys()  # keys of tensors that depend on a watched source
        if self._watched.keys() <= reaches:  # every watched tensor is a source (the usual gradient(loss, variables)):
            # all that the tape tracked, with no scan over every entry's inputs
            reaches = tracked
        else:
            reaches = depending_on(self.entries, reaches)
        recorders = _state.recorders  # (usually none: gradient() is called after the `with` block)
        outer = any(r is not self and not r._paused for r in recorders) if recorders else False
        mode = Mode.of(self, keys, on_step, backend=TENSORS if outer else NUMPY)
        # the backward pass is not part of this tape's recording
        was = self._paused, self._walking
        self._paused = self._walking = True
        try:
            grads = walk(self.entries, seeds, reaches, mode)
        finally:
            self._paused, self._walking = was
        return Walked(grads, reaches, complete=mode.keep is None)

    def _result(self, source, grads, unconnected):
        g = grads.get(source._key)
        if g is None:
            return self._missing(source, unconnected)
        if source._value.dtype.kind != "f":  # no op sends an int a gradient: this is the seed (the target is the
            return Tensor(np.array(g, source._value.dtype))  # source itself), which TF gives back as it is
        if type(g) is np.ndarray and g.flags.writeable:
            return Tensor(g)
        if isinstance(g, Tensor):
            return g
        return Tensor(np.array(g))  # a numpy scalar, or a broadcast view, becomes a real array

    def _missing(self, source, unconnected):
        """The result for a source the gradient never reached: None or, with ``unconnected_gradients=ZERO``, zeros of
        its dtype (an integer source warns: it never has a gradient)."""
        zero = unconnected is UnconnectedGradients.ZERO
        if source._value.dtype.kind != "f":
            gets = f"zeros of dtype {source.dtype.name}" if zero else "None"
            warnings.warn(
                spell(f"gradient(): a source has dtype {source.dtype.name}; only float tensors have gradients, so its "
                      f"gradient is {gets}. To differentiate with respect to it, make it a float: "
                      f"tl.cast(x, tl.float32) or tl.Variable(3.0) instead of tl.Variable(3)."),
                stacklevel=stacklevel(),
            )
        if zero:
            return Tensor(np.zeros_like(source._value))
        return None

    def _release(self):
        if not self.persistent:  # what the last backward pass saw stays in last_backward, for display
            self._used = True
            self._clear_entries()
            self._tracked = {}
            self._stopped = {}
            self._stopped_from = {}

    # --- display ------------------------------------------------------------------------------
    def __repr__(self):
        kind = "persistent " if self.persistent else ""
        return f"<tapelab.GradientTape {kind}with {len(self.entries)} entries>"

    def __str__(self):  # print(tape): the listing of inputs, ops and gradients (tapelab.viz.format_tape)
        return recording.display.text(self) if recording.display.text else repr(self)

    def _repr_mimebundle_(self, include=None, exclude=None):  # Jupyter: the picture and the listing (tapelab.viz)
        if recording.display.mimebundle is None:
            return {"text/plain": repr(self)}
        return recording.display.mimebundle(self, include, exclude)


_SCALAR_ONES = {}  # dtype -> a read-only 1 of it: the seed of a scalar target (the usual loss), made once


def _ones(value):
    """Ones of ``value``'s shape and dtype: the seed dL/dL (read-only: a rule never writes into its g)."""
    if value.ndim:
        return np.ones(value.shape, value.dtype)
    one = _SCALAR_ONES.get(value.dtype)
    if one is None:
        one = _SCALAR_ONES[value.dtype] = np.ones((), value.dtype)
        one.flags.writeable = False
    return one


def _as_target(t, what):
    if not isinstance(t, Tensor):
        raise TypeError(
            f"{what}(): the target must be a tensor computed inside the tape, got {type(t).__name__} ({t!r})."
        )
    return t


def _unconnected(value):
    if isinstance(value, UnconnectedGradients):
        return value
    try:
        return UnconnectedGradients(str(value).lower())
    except ValueError:
        raise ValueError(
            spell(f"unconnected_gradients={value!r} is not understood. Use tl.UnconnectedGradients.NONE (the "
                  f"default: None for sources the target does not depend on) or tl.UnconnectedGradients.ZERO (zeros).")
        ) from None


class _Paused:
    """What ``tape.stop_recording()`` returns: a context that pauses the tape, then puts it back as it was."""

    def __init__(self, tape):
        self.tape = tape

    def __enter__(self):
        self.was_paused, self.tape._paused = self.tape._paused, True

    def __exit__(self, *exc):
        self.tape._paused = self.was_paused
        return False


class name_scope:
    """Group the ops recorded inside under a name, like ``tf.name_scope``; the graph draws each group.

    >>> x = tl.Variable(1.0)
    >>> with tl.GradientTape() as tape:
    ...     with tl.name_scope("layer1"):
    ...         y = x * 2.0
    >>> tape.entries[0].scope
    'layer1/'
    """

    def __init__(self, name):
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"name_scope: the name must be a non-empty string without '/', got {name!r}")
        self.name = name

    def __enter__(self):  # (the paths are kept per thread, so one name_scope object can be reused and nested)
        scopes = _state.scopes
        scope = f"{scopes[-1]}{self.name}/"
        scopes.append(scope)
        return scope

    def __exit__(self, *exc):
        _state.scopes.pop()
        return False


def gradients(*args, **kwargs):
    """Symbolic gradients do not exist in eager mode: use a GradientTape."""
    raise RuntimeError(
        spell("tl.gradients is not supported when eager execution is enabled. Use tl.GradientTape instead:\n"
              "    with tl.GradientTape() as tape:\n        loss = ...\n    grads = tape.gradient(loss, variables)")
    )
