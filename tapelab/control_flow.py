"""``tl.cond`` (a branch on a tensor, eagerly and inside ``tl.function``) and ``tl.map_fn`` (a function of each
slice), TF's control-flow ops."""

from tapelab.array_ops import stack, where, zeros
from tapelab.engine import dtypes, nest
from tapelab.engine.errors import InvalidArgumentError
from tapelab.engine.function import SymbolicTensor
from tapelab.engine.tensor import convert_to_tensor


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


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False, infer_shape=True,
           name=None, fn_output_signature=None):
    """``fn`` of each slice of ``elems`` along its first axis, the results stacked:
    ``map_fn(lambda x: x * x, tl.constant([1., 2., 3.]))`` is ``[1., 4., 9.]``.

    ``elems`` may be a tuple (or list, dict) of tensors with the same first size: ``fn`` then gets one slice of
    each, in that structure. ``fn`` must return what ``fn_output_signature`` says (a dtype, or a structure of
    them): by default, ``elems``'s own structure and dtypes, as in TF. The slices and the stack are recorded ops,
    so gradients flow through ``fn`` as through any Python loop over ``x[k]``.
    """
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat or any(x.ndim == 0 for x in flat):
        raise ValueError("map_fn: Elements in elems must be 1+ dimensional Tensors, not scalars: fn is applied to "
                         "each slice along the first axis. For a list of numbers, pass tl.constant([...]).")
    n = flat[0]._value.shape[0]
    if any(x._value.shape[0] != n for x in flat):
        raise ValueError(f"map_fn: the tensors of elems must have the same first size, got "
                         f"{[x._value.shape[0] for x in flat]}.")
    signature = fn_output_signature if fn_output_signature is not None else dtype
    if signature is None:  # (TF: fn returns what elems holds)
        signature = nest.pack_like(elems, [x.dtype for x in flat])
    wanted = [dtypes.as_dtype(getattr(s, "dtype", s)) for s in nest.flatten(signature)]
    expected = _structure(signature)
    columns = [[] for _ in wanted]
    for k in range(n):
        out = fn(nest.pack_like(elems, [x[k] for x in flat]))
        if _structure(out) != expected:
            raise ValueError(
                f"map_fn: fn returned {_structure(out)} but the output signature is {expected} (_ marks "
                "a tensor; by default it is elems's own structure). The two structures don't have the same nested "
                "structure: pass fn_output_signature=..., e.g. tl.float32 or (tl.float32, tl.float32).")
        for column, leaf, want in zip(columns, nest.flatten(out), wanted):
            leaf = convert_to_tensor(leaf)
            if leaf.dtype != want:
                raise InvalidArgumentError(
                    f"map_fn: fn returned a tensor of dtype {leaf.dtype.name} where the output signature says "
                    f"{want.name} (by default, the dtype of elems). Pass fn_output_signature=tl.{leaf.dtype.name}.")
            column.append(leaf)
    stacked = [stack(column) if n else zeros((0,), want) for column, want in zip(columns, wanted)]
    return nest.pack_like(signature, stacked)
