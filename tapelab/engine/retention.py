"""What a tape keeps of each op it records, and how a picture gets the whole op back.

An entry keeps the arrays its op's gradient rules read (``Op.reads``), as a hand-written backward pass keeps just
what it needs, and every small one. A large array no rule reads is let go: the rules see a stand-in with its shape
and dtype (:class:`~tapelab.engine.primitives.Spec` for an input; :class:`Released` for an output, which also
remembers the array weakly, for as long as the learner's code holds it). A tape records every entry whole and
applies this policy in sweeps (:func:`let_go`): once the outputs recorded since its last sweep add up to
``SWEEP`` bytes, and when a persistent tape stops recording. A one-shot recording of small arrays (a training
step of a small model) never pays for it; a long or large one holds about ``SWEEP`` bytes more than its rules
read while it records. :class:`Retention` gives a picture every input and output back, from what was kept, from
what the code still holds, or by running the op again.
"""

import weakref

import numpy as np

from tapelab.engine.primitives import Spec
from tapelab.engine.tensor import Tensor

# an array under a page is kept even where no rule reads it: letting it go saves less than its Spec costs
SMALL = 4096  # bytes
# a tape sweeps once the outputs it recorded since its last sweep add up to this much
SWEEP = 1 << 20  # bytes


class Released(Spec):
    """What a rule sees of an output array the tape let go (its shape and dtype); pictures find the array through
    ``ref`` while the learner's code holds it, and recompute it otherwise."""

    __slots__ = ("ref",)

    def __init__(self, array):
        super().__init__(array)
        self.ref = weakref.ref(array)


def let_go(entries, start):
    """Apply the policy to ``entries[start:]``, recorded whole: a large output no rule reads becomes a Released,
    a large input no rule reads that the tape computed (its arg an entry, not a tensor) a Spec."""
    for k in range(start, len(entries)):
        e = entries[k]
        op, out = e.op, e.out
        if not op.reads_out and out.__class__ is np.ndarray and out.nbytes >= SMALL:
            e.out = Released(out)
        kept = e.kept
        for i in op.unread:
            v = kept[i]
            if v.__class__ is np.ndarray and v.nbytes >= SMALL and not isinstance(e.args[i], Tensor):
                kept = kept[:i] + (Spec(v),) + kept[i + 1:]
        e.kept = kept


def keyed(value, key):
    """A tensor of ``value`` under ``key``: the tensor it stands for, to every tape."""
    t = Tensor(value)
    t._key = key
    return t


class Retention:
    """One picture's view of a recording's entries: each op whole, what was let go recomputed once and shared.

    ``tensors`` (key -> tensor) are the recording's own, when it keeps them all (a traced graph): those are given
    back as they are. Everything else is computed at most once per Retention, and let go with it.
    """

    __slots__ = ("memo",)

    def __init__(self, tensors=None):
        self.memo = dict(tensors) if tensors else {}  # key -> tensor, recomputed (or kept) for this picture

    def inputs(self, entry):
        """The input tensors (one the tape computed and let go comes back recomputed, under its own key)."""
        return tuple([a if isinstance(a, Tensor) else self.output(a) for a in entry.args])

    def values(self, entry):
        """The input arrays, as the op saw them."""
        return tuple([self.output(a)._value if v.__class__ is Spec else v for a, v in zip(entry.args, entry.kept)])

    def output(self, entry):
        """The output tensor: the array the entry kept or the learner's code still holds, else the op run again on
        its inputs, computed again first if need be (in a loop: a chain of 10,000 ops is fine)."""
        memo, todo = self.memo, [entry]
        while todo:
            e = todo[-1]
            if e._key not in memo:
                value = e.out.ref() if e.out.__class__ is Released else e.out
                if value is None:  # let go: compute it again, from its inputs
                    waiting = [a for a, v in zip(e.args, e.kept) if v.__class__ is Spec and a._key not in memo]
                    if waiting:
                        todo.extend(waiting)
                        continue
                    value = e.op.forward(*self.values(e), **e.params)
                    value = np.asarray(value[0] if e.op.saves else value)
                memo[e._key] = keyed(value, e._key)
            todo.pop()
        return memo[entry._key]
