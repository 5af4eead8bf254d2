"""dtypes named as in TensorFlow (``tl.float32`` ...) and TF's rules for inferring them."""

import numpy as np


class DType:
    """A tensor element type, like ``tf.DType``; compares equal to its name and numpy dtype."""

    __slots__ = ("name", "as_numpy_dtype")

    def __init__(self, name):
        self.name = name
        self.as_numpy_dtype = np.dtype(name)

    @property
    def is_floating(self):
        return self.as_numpy_dtype.kind == "f"

    @property
    def is_integer(self):
        return self.as_numpy_dtype.kind in "iu"

    @property
    def is_bool(self):
        return self.as_numpy_dtype.kind == "b"

    def __eq__(self, other):
        try:
            return self.as_numpy_dtype == as_dtype(other).as_numpy_dtype
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f"tapelab.{self.name}"

    def __str__(self):
        return f"<dtype: '{self.name}'>"


float16, float32, float64 = DType("float16"), DType("float32"), DType("float64")
int8, int16, int32, int64 = DType("int8"), DType("int16"), DType("int32"), DType("int64")
uint8 = DType("uint8")
bool = DType("bool")  # noqa: A001  (TF's name, shadowing the builtin inside this module only)

_BY_NUMPY = {d.as_numpy_dtype: d for d in (float16, float32, float64, int8, int16, int32, int64, uint8, bool)}
SUPPORTED = frozenset(_BY_NUMPY)  # the numpy dtypes a tensor may have


def as_dtype(value):
    """Turn ``tl.float32``, ``"float32"``, ``np.float32`` or ``np.dtype`` into a :class:`DType`."""
    if isinstance(value, DType):
        return value
    try:
        return _BY_NUMPY[np.dtype(value)]
    except (TypeError, KeyError):
        names = ", ".join(d.name for d in _BY_NUMPY.values())
        raise TypeError(f"{value!r} is not a dtype tapelab supports; use one of: {names}") from None


def of_array(array):
    """The DType of a numpy array."""
    return _BY_NUMPY[array.dtype]


def infer_numpy_dtype(value):
    """TF's inference for Python values: float -> float32, int -> int32, bool -> bool.

    numpy arrays and numpy scalars keep their own dtype.
    """
    is_numpy = isinstance(value, (np.ndarray, np.generic))
    try:
        raw = value if is_numpy else np.asarray(value)
    except OverflowError:
        raise ValueError(f"cannot make a tensor from {value!r}: the integer is too large for int64") from None
    except ValueError:
        raise ValueError(
            f"convert_to_tensor: cannot make a tensor from {value!r}: the nested lists have different lengths, but "
            "a tensor is a rectangular grid (shape (rows, columns, ...)). Pad the short rows, or make one tensor each."
        ) from None
    if raw.dtype.kind == "O" and not is_numpy and isinstance(value, int):
        raise ValueError(f"cannot make a tensor from {value!r}: the integer is too large for int64")
    kind = raw.dtype.kind
    if is_numpy and raw.dtype in _BY_NUMPY:
        return raw.dtype
    if kind == "f" and not is_numpy:
        return np.dtype("float32")
    if kind in "iu" and not is_numpy:  # int32, unless a value needs more bits
        fits = raw.size == 0 or (raw.min() >= -(2**31) and raw.max() < 2**31)
        return np.dtype("int32" if fits else "int64")
    if kind == "b":
        return np.dtype("bool")
    raise TypeError(
        f"convert_to_tensor: cannot make a tensor from {value!r}: tapelab tensors hold numbers or booleans "
        f"(nested lists of them, or numpy arrays of a numeric dtype), not {raw.dtype}. Convert the data to numbers "
        "first, e.g. np.asarray(values, dtype=np.float32) or [float(s) for s in strings]."
    )
