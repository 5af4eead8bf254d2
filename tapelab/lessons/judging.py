"""The judges of the lessons' answers: each takes a learner's answer and returns None when it is right, or what
is wrong with it (a sentence the self-check prints after "not yet: "). :mod:`tapelab.lessons.answer_key` builds its
questions from them; :func:`tapelab.lessons.exercises.check` runs one."""

import contextlib
import io
import numbers

import numpy as np

from tapelab.engine import dtypes


def compare(answer, expected, tol=1e-4):
    """``True`` when ``answer`` matches ``expected`` (as :func:`check` describes), else what is wrong, in words."""
    want = _as_dtype(expected)
    if want is not None:  # (before numbers: np.float32 is a type that numpy would also read as an array)
        try:
            return dtypes.as_dtype(answer) == want
        except (TypeError, ValueError):
            return f"your answer is {echo(answer)}, not a dtype: write it like 'float32' or tf.float32"
    if isinstance(expected, bool):
        if isinstance(answer, (bool, np.bool_)):
            return bool(answer) == expected
        return f"your answer is {echo(answer)}: answer True or False"
    if isinstance(expected, str) or (isinstance(expected, tuple) and expected and
                                     all(isinstance(a, str) for a in expected)):
        allowed = (expected,) if isinstance(expected, str) else expected
        return isinstance(answer, str) and answer.strip().lower() in {a.lower() for a in allowed}
    if isinstance(expected, (numbers.Number, list, tuple)) or hasattr(expected, "__array__"):
        return compare_numbers(answer, np.asarray(expected, dtype=np.float64), tol)
    raise TypeError(f"check: cannot compare with {type(expected).__name__}; pass test=")


def compare_numbers(answer, want, tol):
    """``True`` when ``answer`` is numbers of ``want``'s shape, each within ``tol``; else what is wrong."""
    expected = "one number is expected" if want.ndim == 0 else f"numbers of shape {want.shape} are expected"
    if isinstance(answer, str):
        try:
            float(answer)
        except ValueError:
            return f"your answer is the text {answer!r}: {expected}"
        return f"your answer is the text {answer!r} (in quotes): write the number itself, without the quotes"
    if isinstance(answer, (bool, np.bool_)):  # (numpy would read True as 1)
        return f"your answer is {answer}: {expected}, not True or False"
    if answer is None:  # (numpy would read None as NaN)
        return f"your answer is None: {expected}"
    try:
        got = np.asarray(_values(answer), dtype=np.float64)
    except (TypeError, ValueError):
        return f"your answer is {echo(answer)}: {expected}"
    if got.shape != want.shape:
        kind = _kind(answer)
        if got.ndim == 0:  # (a number, or a tensor or array of one)
            return f"your answer is one number ({echo(answer)}): {expected}"
        if want.ndim == 0:
            return f"your answer is {kind} of shape {got.shape} ({echo(answer)}): {expected}"
        return f"your answer is {kind} of shape {got.shape}: {expected}"
    if np.isnan(got).any():
        return f"your answer is {echo(answer)}: it holds NaN (not a number)"
    return bool(np.all(np.abs(got - want) <= tol))  # within tol, as the lessons say: an absolute tolerance


def compare_shape(answer, want):
    """``True`` when ``answer`` is the shape ``want`` written as TensorFlow accepts a shape (a tuple, a list or a
    TensorShape of sizes); else what is wrong."""
    if hasattr(answer, "shape") and not isinstance(answer, (tuple, list)):  # a tensor or an array, not its shape
        return (f"your answer is {_kind(answer)} of shape {tuple(answer.shape)}, not a shape: write the shape itself, "
                f"a tuple of sizes like (2, 3) (a list or a TensorShape works too, as in TensorFlow)")
    if not isinstance(answer, (tuple, list)) or not all(
            isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in answer):
        return f"your answer is {echo(answer)}: a shape is a tuple of sizes like (2, 3) (or a list, as in TensorFlow)"
    got = tuple(int(n) for n in answer)
    if len(got) != len(want):
        return f"your shape {got} has {len(got)} axes; the answer has {len(want)}"
    return got == tuple(want)


def echo(answer):
    """``answer`` written as the learner would write it: ``2`` not ``np.int32(2)``, a tensor by its value."""
    if isinstance(answer, dtypes.DType):
        return answer.name
    if hasattr(answer, "numpy") and callable(answer.numpy):
        answer = answer.numpy()
    if isinstance(answer, np.generic):
        return repr(answer.item())
    if isinstance(answer, np.ndarray):
        return np.array2string(answer, separator=", ")
    return repr(answer)


def _values(answer):
    return answer.numpy() if hasattr(answer, "numpy") and callable(answer.numpy) else answer


def _kind(answer):
    if hasattr(answer, "numpy") and callable(answer.numpy):
        return "a tensor"
    return {list: "a list", tuple: "a tuple", np.ndarray: "an array"}.get(type(answer), type(answer).__name__)


def _as_dtype(expected):
    """``expected`` as a DType when it is one (``tl.float32``, ``np.float32``, ``np.dtype("float32")``), else None."""
    if not isinstance(expected, (dtypes.DType, np.dtype, type)):
        return None
    try:
        return dtypes.as_dtype(expected)
    except (TypeError, ValueError):
        return None


def printed(fn, *args):
    """The lines ``fn(*args)`` prints (for checking a function the learner wrote).

    >>> printed(lambda n: print(*range(n), sep="\\n"), 3)
    ['0', '1', '2']
    """
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fn(*args)
    return out.getvalue().splitlines()
