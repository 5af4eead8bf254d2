"""Tensor and Variable: immutable values and mutable model state, shaped like TF's eager tensors."""

import itertools
import sys
import weakref

import numpy as np

from tapelab.engine import dtypes, recording
from tapelab.engine.learner import spell

_PRINT_OPTIONS = dict(precision=8, suppress=False, threshold=1000)


class TensorShape(tuple):
    """A tensor's shape: a tuple with TF's ``as_list()`` and ``rank``."""

    __slots__ = ()

    @property
    def rank(self):
        return len(self)

    def as_list(self):
        return list(self)

    def num_elements(self):
        return int(np.prod(self, dtype=np.int64))

    def __repr__(self):
        return f"TensorShape({list(self)})"

    def __str__(self):
        return str(tuple(self))  # as TF prints a shape: (784, 128)

    def __eq__(self, other):  # as TF: a shape equals the list or tuple of its sizes
        return isinstance(other, (tuple, list)) and tuple(self) == tuple(other)

    def __ne__(self, other):
        return not self == other

    __hash__ = tuple.__hash__

    def __getitem__(self, key):  # a slice of a shape is a shape
        item = tuple.__getitem__(self, key)
        return TensorShape(item) if isinstance(key, slice) else item


_keys = itertools.count(1)  # every tensor's key: tapes know tensors by it, so a tape need not keep them alive


class Tensor:
    """An immutable n-d array produced by a tapelab op; ``numpy()`` gives its value."""

    __slots__ = ("_value", "_key", "__weakref__")
    _traced = False  # True for a tensor of a graph tl.function is tracing (a SymbolicTensor): it has no value yet
    __array_priority__ = 100  # `ndarray + tensor` defers to Tensor.__radd__, as in TF

    def __init__(self, value):
        self._value = value
        self._key = next(_keys)  # unique for the whole run (an id() is reused once its object is gone)

    def __setstate__(self, state):  # copy.copy, copy.deepcopy, pickle: a copy is another tensor, with its own key
        attributes, slots = state if isinstance(state, tuple) else (state, None)
        for name, value in {**(attributes or {}), **(slots or {})}.items():
            setattr(self, name, value)
        self._key = next(_keys)

    # --- reading the value -------------------------------------------------------------
    def numpy(self):
        """The value as a numpy array (a 0-d tensor gives a numpy scalar, as in TF)."""
        v = self._value
        return v[()] if v.ndim == 0 else v

    @property
    def shape(self):
        return TensorShape(self._value.shape)

    @property
    def dtype(self):
        return dtypes.of_array(self._value)

    @property
    def ndim(self):
        return self._value.ndim

    @property
    def device(self):
        """Where the value lives, in TF's words: tapelab computes with numpy, always on the CPU."""
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    def get_shape(self):
        return self.shape

    def __array__(self, dtype=None, copy=None):
        if dtype is not None and np.dtype(dtype) != self._value.dtype:
            return self._value.astype(dtype)
        return self._value.copy() if copy else self._value

    def __len__(self):
        if self._value.ndim == 0:
            raise TypeError("len() of a 0-d (scalar) tensor is undefined; it has no first axis")
        return len(self._value)

    def __iter__(self):
        if self._value.ndim == 0:
            raise TypeError("cannot iterate over a 0-d (scalar) tensor")
        return (self[i] for i in range(len(self._value)))

    def _scalar(self, kind):
        if self._value.size != 1:
            raise (ValueError if kind == "bool" else TypeError)(
                spell(f"{kind}() needs a tensor with exactly one element, but this one has shape "
                      f"{tuple(self._value.shape)}. Reduce it first (e.g. tl.reduce_sum) or index one element.")
            )
        return self._value.reshape(()).item()

    def __bool__(self):
        return bool(self._scalar("bool"))

    def __int__(self):
        return int(self._scalar("int"))

    def __float__(self):
        return float(self._scalar("float"))

    def __index__(self):
        if not self.dtype.is_integer:
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype.name}")
        return int(self._scalar("index"))

    def __format__(self, spec):
        return format(self._value.item() if self._value.ndim == 0 else self._value, spec)

    def __hash__(self):
        raise TypeError(
            "Tensor is unhashable (== compares element by element). Use tensor.ref() as a dict key or set member."
        )

    def ref(self):
        """A hashable reference to this tensor, usable as a dict key (``.deref()`` gives it back)."""
        return _Ref(self)

    def _text(self, as_repr):
        v = self._value
        with np.printoptions(**_PRINT_OPTIONS):
            text = repr(v) if as_repr and v.ndim else str(v)
        return "\n" + text if "\n" in text else text  # TF starts a multi-line value on its own line

    def __str__(self):
        return f"tapelab.Tensor({self._text(False)}, shape={tuple(self.shape)}, dtype={self.dtype.name})"

    def __repr__(self):
        return f"<tapelab.Tensor: shape={tuple(self.shape)}, dtype={self.dtype.name}, numpy={self._text(True)}>"

    # --- operators: each one is a recorded op ------------------------------------------------
    def __add__(self, other):
        return _ops.add(self, other)

    def __radd__(self, other):
        return _ops.add(other, self)

    def __sub__(self, other):
        return _ops.subtract(self, other)

    def __rsub__(self, other):
        return _ops.subtract(other, self)

    def __mul__(self, other):
        return _ops.multiply(self, other)

    def __rmul__(self, other):
        return _ops.multiply(other, self)

    def __truediv__(self, other):
        return _ops.divide(self, other)

    def __rtruediv__(self, other):
        return _ops.divide(other, self)

    def __floordiv__(self, other):
        return _ops.floordiv(self, other)

    def __rfloordiv__(self, other):
        return _ops.floordiv(other, self)

    def __mod__(self, other):
        return _ops.floormod(self, other)

    def __rmod__(self, other):
        return _ops.floormod(other, self)

    def __pow__(self, other):
        return _ops.pow(self, other)

    def __rpow__(self, other):
        return _ops.pow(other, self)

    def __matmul__(self, other):
        return _ops.matmul(self, other)

    def __rmatmul__(self, other):
        return _ops.matmul(other, self)

    def __neg__(self):
        return _ops.negative(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _ops.abs(self)

    def __getitem__(self, key):
        return _ops.getitem(self, key)

    def __eq__(self, other):
        if other is None:
            return False
        if isinstance(other, Tensor) and not _broadcastable(self, other):
            return Tensor(np.asarray(False))  # TF's ==: tensors that cannot line up are simply not equal
        return _ops.equal(self, other)

    def __ne__(self, other):
        if other is None:
            return True
        if isinstance(other, Tensor) and not _broadcastable(self, other):
            return Tensor(np.asarray(True))
        return _ops.not_equal(self, other)

    def __lt__(self, other):
        return _ops.less(self, other)

    def __le__(self, other):
        return _ops.less_equal(self, other)

    def __gt__(self, other):
        return _ops.greater(self, other)

    def __ge__(self, other):
        return _ops.greater_equal(self, other)

    def __and__(self, other):
        return _ops.logical_and(self, other)

    def __or__(self, other):
        return _ops.logical_or(self, other)

    def __xor__(self, other):
        return _ops.logical_xor(self, other)

    def __rand__(self, other):
        return _ops.logical_and(other, self)

    def __ror__(self, other):
        return _ops.logical_or(other, self)

    def __rxor__(self, other):
        return _ops.logical_xor(other, self)

    def __invert__(self):
        return _ops.logical_not(self)

    # --- a slice of a Variable writes back into it -------------------------------------------
    @property
    def assign(self):
        """``v[1, 2].assign(9)``: a slice of a Variable, read with ints, slices, ``...`` and ``tl.newaxis``, is an
        ordinary tensor that can also write a value back into that part of its Variable (TF's
        ``strided_slice_assign``); any other tensor has no ``assign``: its value never changes."""
        found = _SLICES.get(self._key)
        if found is None:
            raise AttributeError(spell(
                f"'{type(self).__name__}' object has no attribute 'assign': a tensor's value never changes. A "
                "tl.Variable can be assigned to (v.assign(value)), and so can a slice of one read with ints, slices, "
                "... and tl.newaxis (v[1, 2].assign(9), v[:, 0].assign(column)); a slice of a slice, or one picked by "
                "a list or a mask, cannot. To change a tensor, make a new one (tl.where(mask, new_values, x)), or "
                "keep the value in a tl.Variable."))
        return found[1]


_SLICES = {}  # a slice of a Variable, by its key -> (a weak reference to it, its assign): forgotten with the slice


def note_slice(tensor, assign):
    """``tensor`` is a slice of a Variable (``v[1, 2]``, ``v[:, 0]``): ``tensor.assign`` is now ``assign(value,
    name=None)``, which writes ``value`` into that part of the Variable (``tl.getitem`` calls this). The slice stays
    an ordinary tensor: its value (read when it was made, as in TF), its class and its gradient are unchanged."""
    key = tensor._key
    _SLICES[key] = (weakref.ref(tensor, lambda _, key=key: _SLICES.pop(key, None)), assign)


def _broadcastable(x, y):
    try:
        np.broadcast_shapes(x._value.shape, y._value.shape)
    except ValueError:
        return False
    return True


class _Ref:
    __slots__ = ("_tensor",)

    def __init__(self, tensor):
        self._tensor = tensor

    def deref(self):
        return self._tensor

    def __hash__(self):
        return id(self._tensor)

    def __eq__(self, other):
        return isinstance(other, _Ref) and other._tensor is self._tensor


# how a Variable's new array comes from the old one and the value (into ``out``, an array the caller gives away)
def alone(array):
    """Whether only its holder's two names refer to ``array`` (the holder's slot and the caller's local, besides
    this call's own two): no tape recorded it and no view of it is alive, so it may be written in place. (A 0-d
    Variable may hold a numpy scalar, as an update of 0-d arrays leaves it: never written to.)"""
    return array.__class__ is np.ndarray and sys.getrefcount(array) <= 4


_UPDATES = {"assign": lambda old, new, out=None: np.array(new) if out is None else new,
            "assign_add": np.add, "assign_sub": np.subtract}


class Variable(Tensor):
    """Mutable state, like ``tf.Variable``: the tape watches trainable float Variables automatically.

    >>> w = tl.Variable(5.0, name="w")
    >>> w.assign_sub(0.5)
    <tapelab.Variable 'w:0' shape=() dtype=float32, numpy=4.5>
    """

    __slots__ = ("_name", "trainable", "_uid")
    _created = itertools.count()  # creation order: TF lists watched variables in this order

    def __init__(self, initial_value, trainable=True, name=None, dtype=None):
        if callable(initial_value):
            initial_value = initial_value()
        value = convert_to_tensor(initial_value, dtype=dtype)._value
        super().__init__(np.array(value))  # own copy: nobody else can change our value
        self._name = name  # None: TF's default name, "Variable"
        self.trainable = bool(trainable)
        self._uid = next(Variable._created)
        if recording.state.recorders:
            recording.note_variable(self)

    @property
    def name(self):
        return f"{self._name or 'Variable'}:0"

    @property
    def given_name(self):
        """The ``name=`` it was created with (without TF's ``:0``), or ``None`` if it has the default name."""
        return self._name

    def value(self):
        """The current value as a plain Tensor (recorded like a read, so gradients flow to the Variable)."""
        return _ops.identity(self)

    read_value = value

    def numpy(self):
        """A copy of the current value: changing it does not change the Variable (use ``assign``)."""
        return super().numpy().copy()

    def __array__(self, dtype=None, copy=None):
        # np.asarray(variable) must not write into the Variable (or the arrays tapes recorded): a read-only view
        if copy or (dtype is not None and np.dtype(dtype) != self._value.dtype):
            return super().__array__(dtype, copy)
        view = self._value.view()
        view.flags.writeable = False
        return view

    def _of_its_dtype(self, value, how, what):
        """``value`` as a tensor of this Variable's dtype; one of another dtype says the Variable keeps its own."""
        try:
            return convert_to_tensor(value, dtype=self.dtype)
        except (TypeError, ValueError) as e:
            if type(e) not in (TypeError, ValueError):  # (a more precise error, e.g. UnsupportedError: as it is)
                raise
            raise type(e)(spell(
                f"{how}: Variable '{self.name}' has dtype {self.dtype.name} and keeps it, so {what} must be "
                f"{self.dtype.name} too. {e}")) from None

    def _update(self, how, value, read_value=False, given=False):
        """The one way a Variable changes: ``how`` is assign, assign_add or assign_sub of ``value``. The old array
        is never written to (tapes that recorded it keep it). ``given``: ``value`` is a new array that an optimizer
        made for this step and gives away, so the result is written into it: one array fewer per step."""
        if type(value) is np.ndarray and value.dtype == self._value.dtype:  # an array of its dtype: used as it is
            new = value
        else:
            new, given = self._of_its_dtype(value, how, "the value")._value, False
        if new.shape != self._value.shape:
            raise ValueError(
                f"{how}: shape mismatch for Variable '{self.name}': the variable has shape "
                f"{tuple(self.shape)} but the value has shape {tuple(new.shape)}. A Variable keeps its "
                "shape; reshape the value, or make a new Variable."
            )
        recorders = recording.state.recorders
        if given and not recorders:  # (while a function is traced, the update is recorded below instead)
            old = self._value
            if how != "assign" and alone(old):  # nothing else holds the old array (no tape, no view): in place
                _UPDATES[how](old, new, out=old)
            else:
                self._value = _UPDATES[how](old, new, out=new)
            return self if read_value else None
        old, self._value = self._value, _UPDATES[how](self._value, new)  # a new array
        if recorders:  # a function being traced records the update, to replay it
            recording.note_assign(self, how, value if isinstance(value, Tensor) else Tensor(new), old)
        return self if read_value else None

    def _step(self, ufunc, new):
        """``self = ufunc(self, new)`` (np.add or np.subtract) for ``new``, an array of this Variable's dtype and
        shape that an optimizer made for this step and gives away: ``_update(..., given=True)``, checked already."""
        if recording.state.recorders or new.__class__ is not np.ndarray:  # (a function being traced records the
            # update; a 0-d step may be a numpy scalar): the general path
            self._update("assign_add" if ufunc is np.add else "assign_sub", new, given=True)
            return
        old = self._value
        if alone(old):  # nothing else holds the old array (no tape, no view): in place
            ufunc(old, new, out=old)
        else:
            self._value = ufunc(old, new, out=new)

    def assign(self, value, read_value=True):
        """Replace the value (same shape and dtype); tapes that recorded the old value keep it."""
        return self._update("assign", value, read_value)

    def assign_add(self, delta, read_value=True):
        """``self = self + delta``."""
        return self._update("assign_add", delta, read_value)

    def assign_sub(self, delta, read_value=True):
        """``self = self - delta``."""
        return self._update("assign_sub", delta, read_value)

    def __str__(self):
        return self.__repr__()

    def __repr__(self):
        return (
            f"<tapelab.Variable '{self.name}' shape={tuple(self.shape)} dtype={self.dtype.name}, "
            f"numpy={self._text(True)}>"
        )


def to_numpy(x):
    """The numpy value of a tensor (no copy), or ``np.asarray`` of anything else."""
    return x._value if isinstance(x, Tensor) else np.asarray(x)


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """Turn a Python number, nested list, numpy array or tensor into a Tensor (TF's dtype rules).

    Python floats become float32 and ints int32; numpy arrays keep their dtype.

    >>> tl.convert_to_tensor([1, 2]).dtype
    tapelab.int32
    """
    if type(value) is np.ndarray and value.dtype in dtypes.SUPPORTED and (
            dtype is None or dtypes.as_dtype(dtype).as_numpy_dtype == value.dtype):
        return Tensor(value)  # the common case, kept fast: an array of a supported dtype needs no conversion
    if isinstance(value, Tensor):
        if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
            raise ValueError(
                spell(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for a tensor with dtype "
                      f"{value.dtype.name}. Use tl.cast(x, tl.{dtypes.as_dtype(dtype).name}) to convert it.")
            )
        return value
    why = getattr(type(value), "_not_a_tensor", None)  # (an object that can never be a tensor says why itself)
    if why is not None:
        raise ValueError(why)
    if dtype is None and dtype_hint is not None and not isinstance(value, (np.ndarray, np.generic)):
        dtype = dtype_hint
    if dtype is None:
        np_dtype = dtypes.infer_numpy_dtype(value)
    else:
        np_dtype = dtypes.as_dtype(dtype).as_numpy_dtype
        if isinstance(value, (str, bytes)) or getattr(value, "dtype", np_dtype).kind in "USO":
            raise TypeError(  # (numpy would parse "1" as 1.0)
                f"Cannot convert {value!r} to a {np_dtype} tensor: it is text (or Python objects), not numbers. "
                "Convert the data to numbers first, e.g. float(s), or np.asarray(values, dtype=np.float32)."
            )
        _check_lossless(value, np_dtype)
    try:
        array = np.asarray(value, dtype=np_dtype)
    except OverflowError:  # TF wraps a Python int into a narrower integer dtype: constant(2**31, tl.int32) is -2**31
        try:
            array = np.asarray(value, dtype=np.int64).astype(np_dtype)
        except OverflowError:
            info = np.iinfo(np_dtype) if np_dtype.kind in "iu" else np.finfo(np_dtype) if np_dtype.kind == "f" else None
            limits = f" ({info.min} .. {info.max})" if info is not None else ""
            raise ValueError(
                f"cannot make a {np_dtype} tensor from {value!r}: the value is outside the range of {np_dtype}{limits}"
                " and of int64 (-2**63 .. 2**63 - 1). Use smaller numbers"
                + (", or a float dtype for numbers this large." if np_dtype.kind in "iu" else ".")
            ) from None
    except (ValueError, TypeError) as e:
        raise TypeError(f"cannot make a {np_dtype} tensor from {value!r}: {e}") from None
    return Tensor(array)


def _check_lossless(value, np_dtype):
    # TF refuses to turn 2.5 into an int32 tensor (or 1 into a bool) instead of silently converting.
    if np_dtype.kind in "iub" and isinstance(value, (np.ndarray, np.generic)):
        if value.dtype.kind in ("fiu" if np_dtype.kind == "b" else "f"):
            fix = ("compare instead, e.g. x != 0" if np_dtype.kind == "b" else
                   f"round first, np.round(x).astype(np.{np_dtype}), or tl.cast(x, tl.{np_dtype}) to truncate")
            raise TypeError(
                spell(f"Cannot convert a numpy {value.dtype} value to a tensor of dtype {np_dtype}: numpy "
                      f"{value.dtype} values are not silently converted to {np_dtype}. To convert explicitly, {fix}.")
            )
    elif np_dtype.kind in "iub":
        if np_dtype.kind == "b" and np.size(value) and np.asarray(value).dtype.kind in "fiu":
            raise TypeError(
                spell(f"Cannot convert {value!r} to a tensor of dtype bool: Python numbers are not silently turned "
                      f"into booleans. Write True / False, or compare, e.g. tl.constant({value!r}) != 0.")
            )
        if np.size(value) and np.asarray(value).dtype.kind == "f":
            raise TypeError(
                spell(f"Cannot convert {value!r} to a tensor of dtype {np_dtype}: Python floats are not silently "
                      f"truncated. Use a float tensor, or tl.cast(tl.constant({value!r}), tl.{np_dtype}) to truncate.")
            )


def constant(value, dtype=None, shape=None, name=None):
    """A new constant tensor, like ``tf.constant``.

    >>> tl.constant([[1, 2], [3, 4]])
    <tapelab.Tensor: shape=(2, 2), dtype=int32, numpy=
    array([[1, 2],
           [3, 4]], dtype=int32)>
    """
    t = convert_to_tensor(value, dtype=dtype)
    array = np.array(t._value)
    if shape is not None:
        shape = tuple(shape)
        if array.size == 1:
            array = np.full(shape, array.reshape(()), dtype=array.dtype)
        elif array.size == int(np.prod(shape)):
            array = array.reshape(shape)
        else:
            raise TypeError(
                f"constant: cannot give {array.size} values the shape {shape} ({int(np.prod(shape))} elements). "
                "Give one value (it fills the shape) or exactly as many values as the shape holds."
            )
    return Tensor(array)


_ops = None  # tapelab.tensor_operators puts the ops here: a tensor's operators are ops, and ops build on Tensor
