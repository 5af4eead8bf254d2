"""The backward pass: a tape's entries played in reverse, the chain rule one op at a time.

For the op ``out = f(x, y)`` and the gradient ``g = dL/dout`` that reached its output, the op's VJP rules give
one part per input, ``dL/dx += vjp_x(g)`` and ``dL/dy += vjp_y(g)``; a tensor read by several ops sums their parts.
Going from the last op to the first, every part an op needs has arrived by the time it runs (each op comes after
the ops it read from), so one walk gives the gradient of every source.

    walk(entries, seeds, reaches, mode) -> {tensor key: gradient}

The :class:`Mode` says how: on numpy arrays keeping only the sources' gradients (``gradient()``), as recorded tensor
ops (another tape differentiates this pass), reporting every op (``backward_steps()``), or as a replay (pictures).
"""

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from tapelab.engine import numerics
from tapelab.engine.errors import InvalidArgumentError
from tapelab.engine.learner import spell
from tapelab.engine.primitives import NUMPY, QUIET, Spec
from tapelab.engine.recording import switches
from tapelab.engine.retention import Released, keyed
from tapelab.engine.tensor import Tensor, to_numpy


class Mode(NamedTuple):
    """How one backward pass runs its rules and which gradients outlive it."""

    backend: object  # what the rules compute with: NUMPY, or the primitives run on tensors (recorded)
    keep: set = None  # keys whose gradients outlive the walk (None: every one)
    on_step: object = None  # on_step(entry, g, [(input index, part, total)], grads), after each op that sent parts
    tape: object = None  # the tape walked, for error messages and check-numerics (None: a replay, which ran once)

    @classmethod
    def of(cls, tape, keep, on_step=None, backend=NUMPY):
        """The pass a tape runs: recorded (``backend`` the tensor one, tape.TENSORS: an outer tape is recording) and
        stepped (on_step) keep every gradient."""
        if backend is not NUMPY:
            return cls(backend, None, on_step, tape)
        return cls(NUMPY, None if on_step else keep, on_step, tape)


REPLAY = Mode(NUMPY)  # the pass again, for a picture: every gradient kept, nothing checked


def depending_on(entries, keys):
    """``keys`` and the keys of every tensor computed from them on ``entries``: where a backward pass to the
    tensors of ``keys`` sends gradients."""
    keys = set(keys)
    for e in entries:
        for a in e.args:
            if a._key in keys:
                keys.add(e._key)
                break
    return keys


@QUIET  # inf/nan flow on through the backward pass silently, as in TF (numpy would warn); per call, so per thread
def walk(entries, seeds, reaches, mode=REPLAY):
    """Play ``entries`` backwards from ``seeds`` ({key: (tensor, dL/dtensor)}): each op whose output has a gradient
    sends one part to each input in ``reaches`` (the keys that depend on a source). Returns {key: gradient}."""
    B, keep, on_step, tape = mode
    recorded = B is not NUMPY
    check = tape is not None and switches.check_numerics
    grads = {k: Tensor(g) if recorded else g for k, (t, g) in seeds.items()}
    for e in reversed(entries):
        k = e._key  # (a tensor has one producer: after this op's rules, nothing reads its gradient again)
        g = grads.get(k) if keep is None or k in keep else grads.pop(k, None)  # g = dL/dout
        if g is None:  # nothing reached this op's output (its inputs need no gradient either)
            continue
        if recorded:
            values, out = operands(e)
        else:
            values, out = e.kept, e.out
        vjps = e.op.vjps
        params = e.params if e.residual is None else e.rule_params
        parts, i = None, -1  # (parts: what the op sent, for on_step; i counted by hand: cheaper than enumerate)
        for a in e.args:
            i += 1
            key = a._key
            if key not in reaches:
                continue
            rule = vjps[i]
            if rule is None:
                raise _no_rule(e, i)
            try:
                c = rule(B, g, out, *values, **params) if params else rule(B, g, out, *values)  # op's part of dL/dx_i
            except InvalidArgumentError as err:  # a recorded VJP op (higher order) produced NaN/Inf
                if err.phase != "forward":
                    raise
                raise numerics.backward_error(tape, e, i, g, None) from err
            if c is None:  # (a custom gradient's grad_fn may send nothing to an input)
                continue
            if check and not np.isfinite(to_numpy(c)).all():
                raise numerics.backward_error(tape, e, i, g, c)
            if c.shape != values[i].shape:
                raise _wrong_shape(e, i, c, values[i])
            prev = grads.get(key)
            grads[key] = c if prev is None else prev + c  # dL/dx_i += part
            if on_step is not None:
                parts = parts or []
                parts.append((i, c, grads[key]))
        if parts:
            on_step(e, g, parts, grads)
    return grads


def operands(entry):
    """``(input operands, output)`` for rules that an outer tape records: tensors under their own keys, a Spec
    for an input array not kept, None for an output not kept."""
    values = tuple([a if isinstance(a, Tensor) else v if v.__class__ is Spec else keyed(v, a._key)
                    for a, v in zip(entry.args, entry.kept)])
    return values, None if entry.out.__class__ is Released else keyed(entry.out, entry._key)


def _no_rule(e, i):
    return LookupError(
        spell(f"{e.op.name}: no gradient is defined for input {i}, but the gradient must flow "
              "through it (it was computed from a watched tensor). Wrap that input in "
              "tl.stop_gradient() if no gradient should flow there, or give the op a rule in "
              "tapelab/engine/primitives/table.py.")
    )


def _wrong_shape(e, i, c, value):
    return AssertionError(
        f"{e.op.name}: the gradient rule for input {i} returned shape {tuple(c.shape)} "
        f"but the input has shape {tuple(value.shape)} (a bug in the rule)."
    )


class Walked(NamedTuple):
    """What a backward pass produced: gradients by tensor key, the keys it could reach, whether it kept them all."""

    grads: dict
    reaches: set
    complete: bool


class Backward:
    """What one ``gradient()`` call saw and produced (kept on the tape as ``last_backward``, for the pictures).

    The walk keeps only the sources' gradients: every other one is dropped as soon as the op that produced
    its tensor has used it, as a hand-written backward pass drops its temporaries. :meth:`replay_grads` gives
    them all, walking again over the same entries and seeds the first time it is called.
    """

    def __init__(self, entries, targets, sources, seeds, reaches, tracked_keys, stopped_from, grads, complete,
                 unconnected=None):
        self.entries = entries  # the tape's entries, in execution order
        self.targets = targets  # the target tensors
        self.sources = sources  # the source tensors, flattened
        self.seeds = seeds  # target key -> (target, the gradient the walk started from)
        self.reaches = reaches  # keys of the tensors that depend on a source: where the walk sends gradients
        self.tracked_keys = tracked_keys  # keys of the tensors the tape tracked (watched, or computed from those)
        self.stopped_from = stopped_from  # key -> keys it came from, for what was computed in stop_recording()
        # the walk's gradients: all of them (``complete``: a stepped or recorded walk), or only the sources'
        self.kept_grads, self.complete = grads, complete
        self.unconnected = unconnected  # gradient()'s unconnected_gradients (None: backward_steps, which gives none)

    def replay_grads(self):
        """tensor key -> gradient (numpy array) for every tensor the gradient reached: the walk replayed from the
        seeds the first time if it kept only the sources' (theirs stay the very arrays gradient() returned)."""
        if not self.complete:
            kept, self.complete = self.kept_grads, True
            self.kept_grads = walk(self.entries, self.seeds, self.reaches)
            self.kept_grads.update(kept)
        return self.kept_grads


class Contribution(NamedTuple):
    """What one op's rule sent to one of its inputs during the backward pass."""

    index: int  # which input of the op (0 for x, 1 for y in the rule's formulas)
    tensor: Tensor  # the input tensor
    formula: str  # the rule, e.g. "dx = g @ y.T"
    value: np.ndarray  # what the rule sent: this op's part of the input's gradient
    total: np.ndarray  # the input's gradient summed so far, this part included


@dataclass
class Step:
    """One op of the backward pass: the gradient arriving at its output and what it sent to each input.

    ``contributions`` holds one :class:`Contribution` per input the gradient flows into;
    ``totals`` maps a tensor's key -> its accumulated gradient after this step.
    """

    index: int  # the entry's position on the tape
    entry: object  # the tape.Entry
    upstream: np.ndarray
    contributions: list
    totals: dict

    def total(self, tensor):
        """``tensor``'s gradient summed so far (None if nothing has reached it yet)."""
        return self.totals.get(tensor._key)
