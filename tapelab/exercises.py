"""Self-checks for the lessons' exercises: each answer is not answered yet, correct, or wrong with a hint.

An exercise cell starts with ``...`` where the answer goes; the self-check cell calls :func:`check`
once per question and prints one line each::

    ○ 1. dtype of tf.constant([1, 2.5]): not answered yet (replace the ... above)
    ✓ 1. dtype of tf.constant([1, 2.5]): correct
    ✗ 1. dtype of tf.constant([1, 2.5]): not yet: your answer is int32. Hint: a list with a float in it ...
"""

import contextlib
import io
import numbers

import numpy as np

from tapelab import dtypes

UNANSWERED, CORRECT, WRONG = "not answered yet", "correct", "not yet"
MARKS = {UNANSWERED: "○", CORRECT: "✓", WRONG: "✗"}


def check(question, answer, expected=None, *, test=None, hint="", tol=1e-4):
    """Print one line: whether ``answer`` is right (correct), wrong (not yet, with what is wrong), or not answered yet.

    ``answer`` is unanswered while it is ``...`` or ``None``. It is compared with ``expected``: a dtype
    with a dtype (``"float32"``, ``tf.float32`` and ``np.float32`` are the same), a number or array with a
    number or array (each entry within ``tol`` of the expected one; a tuple of numbers is an array), a ``bool``
    with a ``bool``, a string with a string or any string of a tuple of strings (case and surrounding spaces
    ignored). (So ``None`` is never an
    answer: ask for a string such as ``"None"`` instead.) For anything else pass ``test``, a function of the answer
    that returns ``True`` when it is right, a string saying what is wrong, or ``None`` when the answer does
    nothing yet. ``hint`` is printed when the answer is wrong.

    >>> check("2 + 2", ..., 4)
    ○ 2 + 2: not answered yet (replace the ... above)
    >>> check("2 + 2", 5, 4, hint="count on your fingers")
    ✗ 2 + 2: not yet: your answer is 5. Hint: count on your fingers
    >>> check("2 + 2", 4.0, 4)
    ✓ 2 + 2: correct
    """
    if answer is ... or answer is None:
        status, why = UNANSWERED, ""
    else:
        if test is None:
            verdict = _compare(answer, expected, tol)
        else:
            try:
                verdict = test(answer)
            except Exception as err:  # the learner's code failed: that is what is wrong
                verdict = f"it raised {type(err).__name__}: {err}"
        if verdict is None:
            status, why = UNANSWERED, ""
        elif isinstance(verdict, (bool, np.bool_)) and verdict:
            status, why = CORRECT, ""
        else:
            status = WRONG
            why = verdict if isinstance(verdict, str) else f"your answer is {_text(answer)}"
    line = f"{MARKS[status]} {question}: {status}"
    if status == UNANSWERED:
        line += " (replace the ... above)"
    elif status == WRONG:
        line += f": {why}" + (f". Hint: {hint}" if hint else "")
    print(line)


def _compare(answer, expected, tol):
    want = _as_dtype(expected)
    if want is not None:  # (before numbers: np.float32 is a type that numpy would also read as an array)
        try:
            return dtypes.as_dtype(answer) == want
        except (TypeError, ValueError):
            return f"{answer!r} is not a dtype (write it like 'float32' or tf.float32)"
    if isinstance(expected, bool):
        return answer is expected or (isinstance(answer, (bool, np.bool_)) and bool(answer) == expected) or (
            f"your answer is {answer!r}; answer True or False")
    if isinstance(expected, str) or (isinstance(expected, tuple) and expected and
                                     all(isinstance(a, str) for a in expected)):
        allowed = (expected,) if isinstance(expected, str) else expected
        return isinstance(answer, str) and answer.strip().lower() in {a.lower() for a in allowed}
    if isinstance(expected, (numbers.Number, list, tuple)) or hasattr(expected, "__array__"):
        if isinstance(answer, (str, bool, np.bool_)):  # ("2.5" and True are not numbers, though numpy reads them)
            return f"your answer is {answer!r}; a number (or a list of numbers) is expected"
        try:
            got = np.asarray(answer, dtype=np.float64)
        except (TypeError, ValueError):
            return f"your answer is {answer!r}; a number (or a list of numbers) is expected"
        want = np.asarray(expected, dtype=np.float64)
        if got.shape != want.shape:
            return f"your answer has shape {got.shape}, the answer has shape {want.shape}"
        return bool(np.all(np.abs(got - want) <= tol))  # within tol, as the lessons say: an absolute tolerance
    raise TypeError(f"check: cannot compare with {type(expected).__name__}; pass test=")


def _as_dtype(expected):
    """``expected`` as a DType when it is one (``tl.float32``, ``np.float32``, ``np.dtype("float32")``), else None."""
    if not isinstance(expected, (dtypes.DType, np.dtype, type)):
        return None
    try:
        return dtypes.as_dtype(expected)
    except (TypeError, ValueError):
        return None


def _text(answer):
    if isinstance(answer, dtypes.DType):
        return answer.name
    if hasattr(answer, "numpy"):
        answer = answer.numpy()
    if isinstance(answer, np.ndarray):
        return np.array2string(answer, separator=", ")
    return repr(answer)


def printed(fn, *args):
    """The lines ``fn(*args)`` prints (for checking a function the learner wrote).

    >>> printed(lambda n: print(*range(n), sep="\\n"), 3)
    ['0', '1', '2']
    """
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fn(*args)
    return out.getvalue().splitlines()
