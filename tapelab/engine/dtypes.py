"""dtypes named as in TensorFlow (``tl.float32`` ...) and TF's rules for inferring them."""

import builtins

import numpy as np

from tapelab.engine.learner import spell


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

    @property
    def as_datatype_enum(self):
        """TF's integer code for this dtype (its ``DataType`` enum): 1 float32, 2 float64, 3 int32, ..."""
        return next(code for code, dtype in _BY_CODE.items() if dtype is self)

    def __eq__(self, other):
        if other is None:  # (np.dtype(None) is float64; TF: tl.float64 == None is False)
            return False
        try:
            return self.as_numpy_dtype == as_dtype(other).as_numpy_dtype
        except (TypeError, NotImplementedError):  # (not a dtype, or one tapelab leaves to TF: tl.float32 == 7)
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
_NAMES = ", ".join(d.name for d in _BY_NUMPY.values())  # (for the messages that list them)

# TF's integer codes (its DataType enum): tl.zeros(3, 1) is tl.zeros(3, tl.float32), as in TF
_BY_CODE = {1: float32, 2: float64, 3: int32, 4: uint8, 5: int16, 6: int8, 9: int64, 10: bool, 19: float16}
_CODES = ", ".join(f"{code} {dtype.name}" for code, dtype in sorted(_BY_CODE.items()))
_TF_ONLY_CODES = {  # the codes of TF's other dtypes, which tapelab leaves out
    11: "qint8", 12: "quint8", 13: "qint32", 14: "bfloat16", 15: "qint16", 16: "quint16", 17: "uint16",
    20: "resource", 21: "variant", 22: "uint32", 23: "uint64", 24: "float8_e5m2", 25: "float8_e4m3fn",
    26: "float8_e4m3fnuz", 27: "float8_e4m3b11fnuz", 28: "float8_e5m2fnuz", 29: "int4", 30: "uint4", 31: "int2",
    32: "uint2", 33: "float4_e2m1fn"}


def as_dtype(type_value):
    """Turn ``tl.float32``, ``"float32"``, ``np.float32``, ``np.dtype`` or TF's integer code (``1``: float32, as
    ``tl.float32.as_datatype_enum`` says) into a :class:`DType`."""
    value = type_value
    if isinstance(value, DType):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, (builtins.bool, np.bool_)):
        return _from_code(int(value))
    if value is builtins.float or (isinstance(value, str) and value == "float"):  # TF: float32 ("double": float64)
        return float32
    if hasattr(type(value), "error") and type(value).__name__ == "Unsupported":  # tl.string, tl.complex64
        raise value.error()
    kind = getattr(np.dtype(value), "kind", None) if isinstance(value, (str, type, np.dtype)) and _is_dtype(value) \
        else None
    if kind in ("U", "S", "O", "c"):
        raise _unsupported_kind(kind)
    try:
        return _BY_NUMPY[np.dtype(value)]
    except (TypeError, KeyError):
        raise TypeError(f"{value!r} is not a dtype tapelab supports; use one of: {_NAMES}") from None


def _from_code(code):
    """The dtype TF's integer code names (TF's ``DataType`` enum), or an error that says which codes there are."""
    if code in _BY_CODE:
        return _BY_CODE[code]
    if code == 7:  # (TF's string)
        raise _unsupported_kind("U")
    if code in (8, 18):  # (complex64, complex128)
        raise _unsupported_kind("c")
    codes = f"The codes of tapelab's dtypes are: {_CODES}; or name the dtype, e.g. tl.float32."
    if code in _TF_ONLY_CODES or (code > 100 and code - 100 in {**_BY_CODE, **_TF_ONLY_CODES}):  # (x_ref: TF 1)
        name = _TF_ONLY_CODES.get(code) or (_TF_ONLY_CODES.get(code - 100) or _BY_CODE[code - 100].name) + "_ref"
        raise TypeError(spell(f"{code} is TensorFlow's code for the dtype {name}, which tapelab does not have. "
                              f"{codes}"))
    raise TypeError(spell(f"Cannot convert the argument `type_value`: {code} to a TensorFlow DType: no dtype has the "
                          f"integer code {code}. {codes}"))


def of_array(array):
    """The DType of a numpy array."""
    return _BY_NUMPY[array.dtype]


def infer_numpy_dtype(value):
    """TF's inference for Python values: float -> float32, int -> int32, bool -> bool.

    numpy arrays and numpy scalars keep their own dtype.
    """
    is_numpy = isinstance(value, (np.ndarray, np.generic))
    raw = value if is_numpy else _as_array(value)
    _check_convertible(value, raw, is_numpy)
    kind = raw.dtype.kind
    if is_numpy and raw.dtype in _BY_NUMPY:
        return raw.dtype
    if is_numpy and kind in "iuf":
        raise TypeError(
            f"convert_to_tensor: numpy dtype {raw.dtype} is not supported by tapelab tensors; the supported dtypes "
            f"are: {_NAMES}. Convert the array first, e.g. x.astype(np.{'float32' if kind == 'f' else 'int32'})."
        )
    kept = {np.asarray(leaf).dtype for leaf in _leaves(value) if _is_array(leaf)} if isinstance(value, (list, tuple)) \
        else set()  # (arrays or tensors inside a list)
    if len(kept) == 1 and kept <= SUPPORTED and kind == next(iter(kept)).kind:  # TF keeps their dtype
        return next(iter(kept))
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


def _as_array(value):
    """A Python value (number, bool, nested lists) as numpy reads it, or a ValueError that says what is wrong."""
    try:
        raw = np.asarray(value)
    except OverflowError:
        raise ValueError(f"cannot make a tensor from {value!r}: the integer is too large for int64") from None
    except ValueError:
        raise ValueError(
            f"convert_to_tensor: cannot make a tensor from {value!r}: the nested lists have different lengths, but "
            "a tensor is a rectangular grid (shape (rows, columns, ...)). Pad the short rows, or make one tensor each."
        ) from None
    if raw.dtype.kind == "O" and isinstance(value, int):
        raise ValueError(f"cannot make a tensor from {value!r}: the integer is too large for int64")
    return raw


def _check_convertible(value, raw, is_numpy):
    """Refuse strings and complex numbers (left to TF), integers past int64, and bools mixed with numbers."""
    kind = raw.dtype.kind
    if kind in ("U", "S", "c") or (kind == "O" and any(isinstance(v, (str, bytes, complex)) for v in raw.flat)):
        raise _unsupported_kind("c" if kind == "c" or any(isinstance(v, complex) for v in raw.flat) else "U")
    if kind in "uf" and not is_numpy and _huge_ints(value):
        raise ValueError(f"Can't convert Python sequence with out-of-range integer to Tensor: {value!r} holds an "
                         "integer outside int64 (-2**63 .. 2**63 - 1). Use floats for numbers this large.")
    if kind in "iuf" and not is_numpy and _mixes_bools(value):
        raise ValueError(f"Can't convert Python sequence with mixed types to Tensor: {value!r} mixes True/False with "
                         "numbers. Use one kind: [0, 1] (numbers) or [False, True] (booleans).")


def _is_dtype(value):
    try:
        np.dtype(value)
    except TypeError:
        return False
    return True


def _is_array(value):
    # an ndarray or a tensor (duck-typed: tapelab.engine.tensor imports this module), not a numpy scalar
    return isinstance(value, np.ndarray) or (hasattr(value, "__array__") and hasattr(value, "dtype")
                                             and not isinstance(value, np.generic))


def _leaves(value):
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        else:
            yield v


def _huge_ints(value):
    # numpy turns [0, 2**63] into uint64 or floats; TF refuses integers outside int64
    return isinstance(value, (list, tuple)) and any(
        isinstance(v, int) and not -(2**63) <= v < 2**63 for v in _leaves(value))


def _mixes_bools(value):
    # TF refuses [False, 0]; numpy would quietly make it [0, 0]
    if not isinstance(value, (list, tuple)):
        return False
    kinds = set()
    for v in _leaves(value):
        kinds.add(isinstance(v, (builtins.bool, np.bool_)))
        if len(kinds) > 1:  # (stop at the first mix: a long list of numbers is read once at most)
            return True
    return False


def _unsupported_kind(kind):
    from tapelab.engine.errors import UnsupportedError

    if kind == "c":
        return UnsupportedError("complex numbers (complex64 / complex128 tensors)",
                                "split a complex value into its real and imaginary parts, two float tensors.")
    return UnsupportedError("string tensors (text, as in tl.constant('a') or tl.strings)",
                            "turn text into numbers first: [float(s) for s in strings] for numbers written as text, "
                            "np.asarray(values, dtype=np.float32) for arrays, one integer id per word (a "
                            "vocabulary) for words.")

__all__ = ["DType", "as_dtype", "bool", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8"]
