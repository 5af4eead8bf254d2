"""The array ops TF has at its top level only (``tl.reshape``, ``tl.concat``, ``tl.where``, ``tl.zeros``, ...):
shapes and axes, joining and padding, picking, making tensors, dtypes. Each converts its arguments, checks them
(the ``_check_...`` validators: the learner's error, before any arithmetic) and runs a primitive of the table."""

import builtins
import math

import numpy as np

from tapelab.engine import dtypes
from tapelab.engine.errors import InvalidArgumentError
from tapelab.engine.learner import spell
from tapelab.engine.primitives import OPS
from tapelab.engine.recording import tracing_graph
from tapelab.engine.tape import run
from tapelab.engine.tensor import Tensor, Variable, convert_to_tensor, note_slice, to_numpy
from tapelab.op_wrappers import axes, pair, shape_deciding, shape_tuple

newaxis = None  # x[tl.newaxis] adds an axis of size 1, as x[None] does


# --- the same values ------------------------------------------------------------------------------------------------
def stop_gradient(input, name=None):
    """``input`` itself, but no gradient flows back through it."""
    return run(OPS["stop_gradient"], (convert_to_tensor(input),))


def identity(input, name=None):
    """The same values as a new tensor (a Variable gives its current value); gradients pass straight through."""
    return run(OPS["identity"], (convert_to_tensor(input),))


def cast(x, dtype, name=None):
    """Convert to another dtype (float -> int truncates toward zero)."""
    x = convert_to_tensor(x)
    dtype = dtypes.as_dtype(dtype)
    return x if x.dtype == dtype else run(OPS["cast"], (x,), dtype=dtype)


# --- shapes and axes ------------------------------------------------------------------------------------------------
def transpose(a, perm=None, conjugate=False, name=None):
    """Permute the axes (default: reverse them)."""
    a = convert_to_tensor(a)
    return run(OPS["transpose"], (a,), perm=_permutation(a, perm))


def _permutation(a, perm):
    given = tuple(reversed(builtins.range(a.ndim))) if perm is None else tuple(int(p) for p in perm)
    perm = tuple(p % max(a.ndim, 1) if -a.ndim <= p < a.ndim else p for p in given)  # -1 means the last axis
    if sorted(perm) != list(builtins.range(a.ndim)):
        raise InvalidArgumentError(
            f"transpose: perm {given} is not a permutation of the {a.ndim} axes of a tensor of shape "
            f"{tuple(a.shape)}; give each axis 0..{a.ndim - 1} exactly once."
        )
    return perm


def reshape(tensor, shape, name=None):
    """The same values in a new shape (one dimension may be -1: worked out from the rest)."""
    tensor = convert_to_tensor(tensor)
    shape = _target_shape(tensor, shape)
    try:
        return run(OPS["reshape"], (tensor,), shape=shape)
    except InvalidArgumentError:
        raise InvalidArgumentError(
            f"reshape: cannot reshape a tensor with {tensor._value.size} elements (shape {tuple(tensor.shape)}) "
            f"into shape {shape}. The number of elements must stay the same; use -1 for one dimension to let "
            "tapelab work it out."
        ) from None


def _target_shape(tensor, shape):
    shape = tuple(int(n) for n in (shape.numpy() if isinstance(shape, Tensor) else np.atleast_1d(shape)))
    if -1 in shape and tensor._value.size == 0 and 0 in shape:  # numpy refuses -1 next to a 0; TF works it out
        # from the non-zero sizes: (0, 28, 28) -> (0, -1) is (0, 784)
        known = math.prod(n for n in shape if n not in (0, -1))
        shape = tuple(max(math.prod(n for n in tensor._value.shape if n) // max(known, 1), 1) if n == -1 else n
                      for n in shape)
    return shape


def expand_dims(input, axis, name=None):
    """Insert a dimension of size 1 at ``axis``."""
    x = convert_to_tensor(input)
    shape = list(x.shape)
    axis = _check_new_axis(shape, int(axis))
    shape.insert(axis if axis >= 0 else len(shape) + 1 + axis, 1)
    return reshape(x, shape)


def _check_new_axis(shape, axis):
    if not -len(shape) - 1 <= axis <= len(shape):
        raise InvalidArgumentError(
            f"expand_dims: axis {axis} is out of range for a tensor of shape {tuple(shape)}: a new axis can go at "
            f"positions {-len(shape) - 1}..{len(shape)}."
        )
    return axis


def squeeze(input, axis=None, name=None):
    """Remove axes of size 1 (all of them, or those in ``axis``)."""
    x = convert_to_tensor(input)
    removed = _squeezed_axes(x, axis)
    return reshape(x, [n for i, n in enumerate(x.shape) if i not in removed])


def _squeezed_axes(x, axis):
    if axis is not None and x.ndim == 0:
        raise InvalidArgumentError(f"squeeze: a scalar has no axes to remove, but axis={axis!r} was given. Leave out "
                                   "axis (or squeeze a tensor with axes of size 1).")
    removed = axes(x, axis, "squeeze") if axis is not None else tuple(i for i, n in enumerate(x.shape) if n == 1)
    if any(x.shape[a] != 1 for a in removed):
        raise InvalidArgumentError(f"squeeze: can only remove axes of size 1, but shape {tuple(x.shape)} has "
                                   f"{[x.shape[a] for a in removed]} at axes {list(removed)}.")
    return removed


def broadcast_to(input, shape, name=None):
    """Repeat ``input`` along size-1 (or missing leading) axes to reach ``shape``."""
    x = convert_to_tensor(input)
    shape = tuple(int(n) for n in shape)
    try:
        return run(OPS["broadcast_to"], (x,), shape=shape)
    except InvalidArgumentError:
        raise InvalidArgumentError(
            f"broadcast_to: cannot broadcast shape {tuple(x.shape)} to {shape}; each dimension must match or be 1."
        ) from None


def shape(input, out_type=dtypes.int32, name=None):
    """The shape as an int32 tensor: ``tl.shape(tl.zeros((2, 3)))`` is [2 3] (``x.shape`` gives a TensorShape)."""
    return Tensor(np.asarray(convert_to_tensor(input)._value.shape, dtypes.as_dtype(out_type).as_numpy_dtype))


def size(input, out_type=dtypes.int32, name=None):
    """The number of elements, as an int32 tensor."""
    return Tensor(np.asarray(convert_to_tensor(input)._value.size, dtypes.as_dtype(out_type).as_numpy_dtype))


def rank(input, name=None):
    """The number of axes, as an int32 tensor."""
    return Tensor(np.asarray(convert_to_tensor(input)._value.ndim, np.int32))


# --- joining and padding --------------------------------------------------------------------------------------------
def concat(values, axis, name=None):
    """Join tensors along an existing axis."""
    values = [convert_to_tensor(v) for v in values]
    _check_concat(values)
    if len(values) == 1:  # as TF: one tensor joined with nothing is itself (whatever the axis)
        return identity(values[0])
    try:
        return run(OPS["concat"], tuple(values), axis=int(axis))
    except InvalidArgumentError as e:
        shapes = ", ".join(str(tuple(v.shape)) for v in values)
        raise InvalidArgumentError(
            f"concat: cannot join shapes {shapes} along axis {axis}: all dimensions except axis {axis} must "
            f"match, and all dtypes too. ({e})"
        ) from None


def _check_concat(values):
    if not values:
        raise ValueError("concat: needs at least one tensor")
    if len(values) > 1 and any(v.ndim == 0 for v in values):
        raise InvalidArgumentError(
            f"concat: cannot join 0-d (scalar) tensors, shapes {', '.join(str(tuple(v.shape)) for v in values)}: "
            "they have no axis to join along. Use tl.stack(values) to make a new axis."
        )


def stack(values, axis=0, name=None):
    """Join tensors of equal shape along a new axis."""
    values = [convert_to_tensor(v) for v in values]
    _check_stack(values)
    return concat([expand_dims(v, axis) for v in values], axis)


def _check_stack(values):
    if not values:
        raise ValueError("stack: needs at least one tensor to stack, got an empty list.")
    shapes = {tuple(v.shape) for v in values}
    if len(shapes) > 1:
        raise InvalidArgumentError(f"stack: every tensor must have the same shape, got {sorted(shapes)}. stack adds "
                                   "a new axis; to join tensors along an existing axis whose sizes differ, use "
                                   "tl.concat.")


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """Add ``paddings[i] = [before, after]`` entries around axis ``i``: zeros (or ``constant_values``), or with
    ``mode="REFLECT"`` / ``"SYMMETRIC"`` mirrored copies of the edge."""
    x = convert_to_tensor(tensor)
    paddings = _paddings(x, paddings)
    mode = _pad_mode(x, paddings, mode)
    value = convert_to_tensor(constant_values, dtype=x.dtype)._value.item() if mode == "constant" else 0
    return run(OPS["pad"], (x,), paddings=paddings, mode=mode, constant_values=value)


def _paddings(x, paddings):
    """``paddings`` as one (before, after) pair of non-negative ints per axis of ``x``."""
    given = to_numpy(paddings)
    if given.size == 0:  # (no pairs: a scalar has no axes to pad)
        given = given.reshape(0, 2)
    if given.ndim != 2 or given.shape[1:] != (2,):
        raise InvalidArgumentError(f"pad: paddings must be one [before, after] pair per axis of shape "
                                   f"{tuple(x.shape)}, i.e. of shape ({x.ndim}, 2), got {given.tolist()}. E.g. "
                                   "[[1, 1]] pads a vector by one entry at each end.")
    paddings = tuple(tuple(int(n) for n in p) for p in given.tolist())
    if len(paddings) != x.ndim or any(n < 0 for p in paddings for n in p):
        raise InvalidArgumentError(f"pad: paddings must be one non-negative [before, after] pair per axis of shape "
                                   f"{tuple(x.shape)}, got {[list(p) for p in paddings]}.")
    return paddings


def _pad_mode(x, paddings, mode):
    """``mode`` in lower case; a mirror (REFLECT, SYMMETRIC) copies at most the axis (less its edge entry)."""
    mode = str(mode).lower()
    if mode not in ("constant", "reflect", "symmetric"):
        raise ValueError(f"pad: mode must be 'CONSTANT', 'REFLECT' or 'SYMMETRIC', got {mode.upper()!r}")
    widest = {"reflect": 1, "symmetric": 0}.get(mode)
    for axis, (p, n) in enumerate(zip(paddings, x.shape)):
        if widest is not None and max(p) > n - widest:
            raise InvalidArgumentError(
                f"pad: {mode.upper()} mode mirrors the tensor's own entries, so each padding of axis {axis} (size {n}) "
                f"must be at most {n - widest}, got {list(p)}. Pad less, or use mode='CONSTANT'.")
    return mode


# --- picking --------------------------------------------------------------------------------------------------------
def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """The slices of ``params`` at ``indices`` along ``axis`` (default 0): ``gather([a, b, c], [2, 0])`` is ``[c, a]``.

    The result has shape ``params.shape[:axis] + indices.shape + params.shape[axis + 1:]``. Every index
    must be in ``0..n-1`` (no wrapping from the end, as in TF). The gradient adds ``g`` back at each
    picked index (twice for an index picked twice).
    """
    params, indices = convert_to_tensor(params), convert_to_tensor(indices)
    _check_gather(params, indices, batch_dims)
    axis = axes(params, 0 if axis is None else axis, "gather")[0]
    return run(OPS["gather"], (params, indices), axis=axis)


def _check_gather(params, indices, batch_dims):
    if batch_dims:
        raise NotImplementedError("gather: batch_dims is not supported; loop over the batch, or use tl.einsum "
                                  "with a one-hot matrix.")
    if not indices.dtype.is_integer:
        raise InvalidArgumentError(f"gather: indices must be integers, got {indices.dtype.name}; use "
                                   "tl.cast(indices, tl.int32).")
    if params.ndim == 0:
        raise InvalidArgumentError("gather: params is a 0-d tensor (shape (), one number): there is nothing to pick "
                                   "from.")


def repeat(input, repeats, axis=None, name=None):
    """Each slice along ``axis`` ``repeats`` times in a row (``axis=None``: each element of the flattened tensor):
    ``repeat([1, 2], 2)`` is ``[1, 1, 2, 2]``; ``repeats`` may give one count per slice,
    ``repeat([[1, 2], [3, 4]], [1, 2], axis=1)`` is ``[[1, 2, 2], [3, 4, 4]]``. It is a :func:`gather` of each
    slice's index repeated, so the gradient adds each copy's part back to its slice."""
    x = convert_to_tensor(input)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = _one_axis(x, axis, "repeat")
    counts = shape_deciding(repeats, "repeat's repeats (the result's length is their sum)")
    n = x._value.shape[axis]
    if counts.ndim > 1 or (counts.ndim == 1 and counts.size not in (1, n)):
        raise ValueError(
            f"repeat: repeats must be one count, or one count per slice along axis {axis} ({n} of them), got shape "
            f"{counts.shape}. For example tl.repeat(x, 2, axis={axis}) or tl.repeat(x, [counts...], axis={axis}).")
    if counts.dtype.kind not in "iu" or (counts < 0).any():
        raise InvalidArgumentError(f"repeat: repeats must be whole numbers >= 0, got {counts.tolist()}.")
    return gather(x, np.repeat(np.arange(n), counts), axis=axis)


def _one_axis(x, axis, name):
    """``axis`` as a non-negative int, or TF's ValueError naming the valid range."""
    rank = max(x.ndim, 1)
    if not -rank <= int(axis) < rank:
        raise ValueError(f"{name}: axis={int(axis)} out of bounds: expected {-rank}<=axis<{rank} for a tensor of "
                         f"shape {tuple(x.shape)}.")
    return int(axis) % rank


def meshgrid(*args, indexing="xy", name=None):
    """Coordinate grids from 1-D ``args``: output ``i`` holds ``args[i]`` along its own axis, repeated along the
    others. ``indexing="xy"`` (the default, as for plotting) swaps the first two axes: with ``x`` of length 3 and
    ``y`` of length 2 both outputs have shape (2, 3); ``"ij"`` gives (3, 2). Each output is a reshape and a
    :func:`broadcast_to`, so a gradient sums back over the repeats."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: Argument `indexing` parameter must be either 'xy' or 'ij', got {indexing!r}.")
    xs = [reshape(convert_to_tensor(a), (-1,)) for a in args]
    if len({x.dtype for x in xs}) > 1:
        raise InvalidArgumentError(
            f"meshgrid: all inputs must have one dtype, got {', '.join(x.dtype.name for x in xs)}. Convert them "
            f"first, e.g. tl.cast(x, tl.{xs[0].dtype.name}).")
    where = list(builtins.range(len(xs)))
    if indexing == "xy" and len(xs) > 1:  # x runs along the columns, y along the rows
        where[0], where[1] = 1, 0
    shape = [0] * len(xs)
    for x, axis in zip(xs, where):
        shape[axis] = x._value.shape[0]
    grids = []
    for x, axis in zip(xs, where):
        along = [1] * len(xs)
        along[axis] = -1
        grids.append(broadcast_to(reshape(x, along), shape))
    return grids


def boolean_mask(tensor, mask, axis=None, name=None):
    """The entries of ``tensor`` where ``mask`` is True: ``boolean_mask([1, 2, 3], [True, False, True])`` is
    ``[1, 3]``. ``mask`` covers the axes ``axis, axis + 1, ...`` (default 0) and must have their shape; those
    axes become one, holding the picked entries in order. A :func:`gather` of the True positions, so the gradient
    goes back to the picked entries (zero elsewhere)."""
    x = convert_to_tensor(tensor)
    m = shape_deciding(mask, "boolean_mask's mask (the result's length is its number of True values; tl.where(mask, "
                              "x, 0) keeps x's shape)")
    if m.ndim == 0:
        raise ValueError("boolean_mask: mask cannot be scalar. Give one True/False per entry along the masked axes, "
                         "e.g. x > 0 for a mask of x's own shape.")
    axis = 0 if axis is None else _one_axis(x, axis, "boolean_mask")
    shape = x._value.shape
    covered = shape[axis:axis + m.ndim]
    if covered != m.shape:
        raise ValueError(
            f"boolean_mask: Shapes {covered} and {m.shape} are incompatible: the mask must have the shape of the "
            f"axes it covers, tensor.shape[{axis}:{axis + m.ndim}] = {covered}.")
    flat = reshape(x, shape[:axis] + (math.prod(covered),) + shape[axis + m.ndim:])
    return gather(flat, np.flatnonzero(m), axis=axis)


def is_tensor(x):
    """Whether ``x`` is a tapelab tensor (a Variable is one too), like ``tf.is_tensor``: numpy arrays, lists and
    numbers are not. (matplotlib asks this of TensorFlow's module to convert tensors it plots.)"""
    return isinstance(x, Tensor)


def getitem(tensor, key):
    """``tensor[key]``: numpy-style indexing and slicing (recorded; the gradient scatters back).

    An index that is itself a tensor is read as its value; inside ``tl.function`` (where it has no value
    yet) an integer tensor index becomes a :func:`gather`, so the graph picks anew on every run.
    """
    parts = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, Tensor) for k in parts):
        traced = [i for i, k in enumerate(parts) if isinstance(k, Tensor) and k._traced]
        if traced:
            return _traced_index(tensor, parts, traced[0])
    if isinstance(key, tuple):
        key = tuple(k._value if isinstance(k, Tensor) else k for k in key)
    elif isinstance(key, Tensor):
        key = key._value
    try:
        out = run(OPS["getitem"], (tensor,), key=key)
    except InvalidArgumentError as e:
        raise InvalidArgumentError(
            f"{e}. Index a tensor of shape {tuple(tensor.shape)} with at most {tensor.ndim} indices, each in "
            "0..size-1 (or -size..-1) of its axis."
        ) from None
    if isinstance(tensor, Variable) and all(_strided(k) for k in (key if isinstance(key, tuple) else (key,))):
        def assign(value, name=None):
            """Write ``value`` into this slice of its Variable (TF's strided_slice_assign); returns the Variable."""
            return _assign_slice(tensor, key, value)

        note_slice(out, assign)  # v[1, 2].assign(9), as in TF
    return out


def _strided(k):
    # a part of an index TF's strided slice takes (so its slice of a Variable can be assigned to): an int, a slice,
    # ... or tl.newaxis (not a list, an array or a mask, which pick elements)
    if k is None or k is Ellipsis or isinstance(k, slice):
        return True
    if isinstance(k, np.ndarray):
        return k.ndim == 0 and k.dtype.kind in "iu"
    return isinstance(k, (int, np.integer)) and not isinstance(k, (builtins.bool, np.bool_))


def _index_text(key):
    """``key`` as it is written between brackets: ``1, ::2, tl.newaxis``."""
    def number(n):
        return "" if n is None else str(int(n))

    def part(k):
        if k is Ellipsis:
            return "..."
        if k is None:
            return "tl.newaxis"
        if isinstance(k, slice):
            return f"{number(k.start)}:{number(k.stop)}" + ("" if k.step is None else f":{number(k.step)}")
        return number(k)
    return ", ".join(part(k) for k in (key if isinstance(key, tuple) else (key,)))


def _assign_slice(variable, key, value):
    """``variable[key].assign(value)``, TF's ``strided_slice_assign``: ``value`` (of the Variable's dtype, of the
    slice's shape or broadcasting to it) goes into that part of the Variable, through the Variable's own update (an
    ``assign`` of the whole new value), so tapes and ``tl.function`` see an ordinary assign. Returns the Variable."""
    slice_text = f"{variable.given_name or 'Variable'}[{_index_text(key)}]"
    old = np.asarray(variable._value)
    target = old[key].shape  # (basic indexing: a view, nothing copied)
    new = variable._of_its_dtype(value, f"{slice_text}.assign", f"the value for its slice {slice_text}")
    shape = tuple(new.shape)
    while len(shape) > len(target) and shape[0] == 1:  # (leading axes of size 1 drop away, as in TF and numpy)
        shape = shape[1:]
    try:
        fits = np.broadcast_shapes(shape, target) == target
    except ValueError:
        fits = False
    if not fits:
        raise InvalidArgumentError(spell(
            f"{slice_text}.assign: Cannot broadcast input shape {list(new.shape)} into final shape {list(target)}: "
            f"the slice {slice_text} of Variable '{variable.name}' (shape {tuple(variable.shape)}) has shape "
            f"{target}, and the value must have that shape or broadcast to it (a scalar fills the whole slice). Give "
            f"a value of shape {target}, or choose the slice the value is shaped for."))
    if tracing_graph() is None:  # eager: the new value made with numpy (the old array stays as tapes recorded it)
        array = np.array(old)
        array[key] = new._value.reshape(shape)
        variable._update("assign", array, given=True)
        return variable
    # while tl.function traces: made by ops, so the graph computes it anew from the value on every call
    mask = np.zeros(old.shape, dtype=builtins.bool)
    mask[key] = True
    spread = run(OPS["scatter"], (broadcast_to(reshape(new, shape), target),), key=key, shape=old.shape)
    variable._update("assign", where(Tensor(mask), spread, variable))
    return variable


def _traced_index(tensor, parts, position):
    # x[..., i, ...] with a traced integer tensor i among full slices: a gather along that axis
    index = parts[position]
    others = [k for i, k in enumerate(parts) if i != position]
    if not index.dtype.is_integer or any(not (isinstance(k, slice) and k == slice(None)) for k in others):
        index.__index__()  # refused, with the tracing error that says what to write instead
    return gather(tensor, index, axis=position)


def scatter(g, key, shape):
    """Zeros of ``shape`` with ``g`` added at ``key`` (getitem's transpose: its gradient)."""
    return run(OPS["scatter"], (g,), key=key, shape=shape)


def where(condition, x=None, y=None, name=None):
    """Pick from ``x`` where ``condition`` is true, else from ``y`` (broadcasting)."""
    if x is None or y is None:
        raise NotImplementedError("where: give both x and y (the index-returning form is not supported)")
    condition = convert_to_tensor(condition)
    if not condition.dtype.is_bool:
        raise InvalidArgumentError(f"where: condition must be a bool tensor, got {condition.dtype.name}")
    x, y = pair(x, y, "where")
    _check_where(condition, x, y)
    return run(OPS["where"], (condition, x, y))


def _check_where(condition, x, y):
    if x.dtype != y.dtype:
        raise InvalidArgumentError(f"where: x and y must have the same dtype, got {x.dtype.name} and {y.dtype.name}; "
                                   "use tl.cast.")
    try:
        np.broadcast_shapes(condition._value.shape, x._value.shape, y._value.shape)
    except ValueError:
        raise InvalidArgumentError(
            f"where: condition, x and y have shapes {tuple(condition.shape)}, {tuple(x.shape)} and {tuple(y.shape)}, "
            "which cannot be broadcast together (lined up from the right, each dimension must be equal or 1). "
            "Reshape the condition or the values (tl.reshape, tl.broadcast_to) so they line up."
        ) from None


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """A vector of length ``depth`` per index: ``on_value`` at the index, ``off_value`` elsewhere.

    The new axis goes last (or at ``axis``); the dtype is ``dtype``, else that of ``on_value`` or
    ``off_value``, else float32.
    """
    indices = convert_to_tensor(indices)
    if not indices.dtype.is_integer:
        raise InvalidArgumentError(
            f"one_hot: indices must be integer class ids, got {indices.dtype.name} {tuple(indices.shape)}. "
            "Use tl.cast(indices, tl.int32)."
        )
    values, dtype = _on_off(on_value, off_value, dtype)
    out = run(OPS["one_hot"], (indices,), depth=int(depth),
              on_value=values["on_value"]._value if "on_value" in values else 1,
              off_value=values["off_value"]._value if "off_value" in values else 0, dtype=dtype)
    if axis is None or axis == -1 or axis == indices.ndim:
        return out
    if not 0 <= axis < indices.ndim:
        raise InvalidArgumentError(f"one_hot: axis {axis} is out of range for indices of rank {indices.ndim}; "
                                   f"use -1 (last) or 0..{indices.ndim}.")
    perm = list(builtins.range(indices.ndim))
    perm.insert(axis, indices.ndim)
    return transpose(out, perm)


def _on_off(on_value, off_value, dtype):
    """The given on / off values as tensors of one dtype, and the output's dtype."""
    values = {k: convert_to_tensor(v, dtype=dtype) for k, v in (("on_value", on_value), ("off_value", off_value))
              if v is not None}
    kinds = {v.dtype for v in values.values()}
    if len(kinds) > 1:
        raise TypeError(f"one_hot: on_value is {values['on_value'].dtype.name} but off_value is "
                        f"{values['off_value'].dtype.name}; give both the same dtype (e.g. 1.0 and 0.0).")
    return values, dtypes.as_dtype(dtype) if dtype is not None else (kinds.pop() if kinds else dtypes.float32)


def einsum(equation, *inputs, **kwargs):
    """Einstein summation: ``tl.einsum('ij,jk->ik', a, b)`` is ``a @ b``; letters in no output are summed."""
    inputs = [convert_to_tensor(x) for x in inputs]
    try:
        return run(OPS["einsum"], tuple(inputs), equation=str(equation))
    except InvalidArgumentError as e:
        shapes = ", ".join(str(tuple(x.shape)) for x in inputs)
        raise InvalidArgumentError(
            f"einsum: '{equation}' does not fit the inputs' shapes {shapes}: each input needs one letter per axis, "
            f"and a letter must have the same size wherever it appears. ({str(e).split(': ', 2)[-1]})"
        ) from None


# --- making tensors -------------------------------------------------------------------------------------------------
def zeros(shape, dtype=dtypes.float32, name=None):
    """A tensor of zeros (float32 unless ``dtype`` says otherwise)."""
    return Tensor(np.zeros(shape_tuple(shape), dtypes.as_dtype(dtype).as_numpy_dtype))


def ones(shape, dtype=dtypes.float32, name=None):
    """A tensor of ones (float32 unless ``dtype`` says otherwise)."""
    return Tensor(np.ones(shape_tuple(shape), dtypes.as_dtype(dtype).as_numpy_dtype))


def zeros_like(input, dtype=None, name=None):
    """Zeros with the shape (and dtype, unless given) of ``input``."""
    x = convert_to_tensor(input)
    return zeros(x.shape, dtype or x.dtype)


def ones_like(input, dtype=None, name=None):
    """Ones with the shape (and dtype, unless given) of ``input``."""
    x = convert_to_tensor(input)
    return ones(x.shape, dtype or x.dtype)


def fill(dims, value, name=None):
    """A tensor of shape ``dims`` filled with ``value`` (an op: a gradient reaches ``value``, summed)."""
    return broadcast_to(convert_to_tensor(value), shape_tuple(dims))


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """The identity matrix (``num_rows`` x ``num_columns``, square by default), optionally a batch of them."""
    matrix = np.eye(int(num_rows), int(num_rows if num_columns is None else num_columns),
                    dtype=dtypes.as_dtype(dtype).as_numpy_dtype)
    if batch_shape is not None:
        matrix = np.broadcast_to(matrix, shape_tuple(batch_shape) + matrix.shape).copy()
    return Tensor(matrix)


def range(start, limit=None, delta=1, dtype=None, name=None):  # noqa: A001
    """Like Python's range, as a tensor: ``tl.range(5)`` is [0 1 2 3 4]; floats step too (``tl.range(0, 1, 0.25)``)."""
    if limit is None:
        start, limit = 0, start
    bounds = [v.numpy().item() if isinstance(v, Tensor) else v for v in (start, limit, delta)]  # (traced: refused)
    kind = (dtypes.infer_numpy_dtype(bounds) if dtype is None else dtypes.as_dtype(dtype).as_numpy_dtype)
    start, limit, delta = _check_range(bounds, kind)
    if np.dtype(kind).kind == "f":  # TF computes each entry as start + i * delta in the dtype (no accumulated error)
        count = int(np.ceil(abs((limit - start) / delta)))
        return Tensor(np.asarray(start, kind) + np.arange(count).astype(kind) * np.asarray(delta, kind))
    return Tensor(np.arange(start, limit, delta, dtype=kind))


def _check_range(bounds, kind):
    for v in bounds:
        convert_to_tensor(v, dtype=kind)  # TF refuses range(0.0, dtype=tl.int32): a float is not truncated
    start, limit, delta = bounds
    if delta == 0:
        raise InvalidArgumentError("range: delta must not be 0 (the range would never reach its limit).")
    if (limit - start) * delta < 0:
        raise InvalidArgumentError(
            f"range: requires start <= limit when delta > 0 (and start >= limit when delta < 0): got start "
            f"{start}, limit {limit}, delta {delta}. Swap start and limit, or change delta's sign."
        )
    return bounds


def linspace(start, stop, num, name=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop``, both included (float64 for integer ends).

    As in TF it is made of ops (start + i * step, joined with the ends), so a gradient can reach
    ``start`` and ``stop``.
    """
    start = convert_to_tensor(start)
    if not start.dtype.is_floating:
        start = cast(start, dtypes.float64)
    stop = convert_to_tensor(stop, dtype=start.dtype) if not isinstance(stop, Tensor) else cast(stop, start.dtype)
    num = int(to_numpy(num))
    if num < 0:
        raise InvalidArgumentError(f"linspace: num must be >= 0, got {num}.")
    if axis not in (0, -1) or start.ndim:
        raise NotImplementedError("linspace: only scalar start and stop are supported (axis 0)")
    if num <= 1:
        return reshape(start, (1,))[:num]
    step = (stop - start) / Tensor(np.asarray(num - 1, start._value.dtype))
    middle = start + Tensor(np.arange(1, num - 1).astype(start._value.dtype)) * step
    return concat([reshape(start, (1,)), middle, reshape(stop, (1,))], 0)
