"""``tl.cond``: a branch on a tensor, eagerly and inside ``tl.function`` (TF's control-flow op)."""

from tapelab.array_ops import where
from tapelab.engine import nest
from tapelab.engine.function import SymbolicTensor


def cond(pred, true_fn, false_fn, name=None):
    """``true_fn()`` if ``pred`` else ``false_fn()`` — also inside ``tl.function``.

    Eagerly, only the chosen branch runs. While tracing, ``pred`` has no value yet, so both branches
    are traced and the result is picked with :func:`tl.where` (both must return tensors of the same
    structure; keep side effects such as ``assign`` out of them).
    """
    if not isinstance(pred, SymbolicTensor):
        return true_fn() if bool(pred) else false_fn()

    a, b = true_fn(), false_fn()
    flat_a, flat_b = nest.flatten(a), nest.flatten(b)
    if _structure(a) != _structure(b):
        raise ValueError(f"cond: true_fn and false_fn must return the same structure (the same lists, tuples and dicts "
                         f"with the same keys; _ marks a tensor), but true_fn returned {_structure(a)} and false_fn "
                         f"returned {_structure(b)}. Make both branches return the same kind of result.")
    return nest.pack_like(a, [where(pred, x, y) for x, y in zip(flat_a, flat_b)])


class _Leaf:
    def __repr__(self):
        return "_"


def _structure(x):
    """``x``'s nesting of lists, tuples and dicts, each leaf shown as ``_``: ``{'a': _}``, ``(_,)``."""
    return repr(nest.pack_like(x, [_Leaf()] * len(nest.flatten(x))))
