"""Self-checks for the lessons' exercises: each answer is not answered yet, correct, or not right yet with a hint.

An exercise cell starts with ``...`` where the answer goes; the lesson's self-check cell is one call that
prints one line per question::

    self_check("01", dtype_of_list, dtype_of_arange, dtype_of_division, function_fixed, mean_fixed)

    ○ 1a. dtype of tf.constant([1, 2.5]): not answered yet (replace the ... above)
    ✓ 1b. dtype of tf.constant(np.arange(3)): correct
    ✗ 1c. dtype of tf.constant(3) / tf.constant(2): not yet: your answer is 'int32'. Hint: ...

The questions live in :mod:`tapelab.lessons.answer_key`, out of the learner's sight: expected values are computed
there (with tapelab itself, or from the lesson's own objects passed to ``self_check`` by keyword) and the few
literal answers are stored encoded, so no lesson cell shows an answer. An answer is "not answered yet" only
while it is still the ``...`` (or a function with its ``...`` line still in it); anything else gets a verdict.

:func:`check` is the one-question building block, for exercises of your own.
"""

import contextlib
import inspect
import io
import numbers

import numpy as np

from tapelab.engine import dtypes

UNANSWERED, CORRECT, WRONG = "not answered yet", "correct", "not yet"
MARKS = {UNANSWERED: "○", CORRECT: "✓", WRONG: "✗"}


def self_check(lesson, *answers, **lesson_objects):
    """Check a lesson's exercises: ``answers`` in the order of its questions; ``lesson_objects``, by keyword, the
    lesson's own functions or data that some answers are checked against (the lesson's self-check cell passes them).

    >>> self_check("01", "float32", ..., "int32", ..., 2.5)    # doctest: +ELLIPSIS
    ✓ 1a. dtype of tf.constant([1, 2.5]): correct
    ○ 1b. dtype of tf.constant(np.arange(3)): not answered yet (replace the ... above)
    ✗ 1c. dtype of tf.constant(3) / tf.constant(2): not yet: your answer is 'int32'. Hint: ...
    ○ 2. function_fixed(16) prints hello for multiples of 4: not answered yet (replace the ... above)
    ✓ 3. the mean of [1, 2, 3, 4]: correct
    """
    from tapelab.lessons.answer_key import LESSONS

    key = str(lesson)[:2]
    if key not in LESSONS:
        raise ValueError(f"self_check: there is no lesson {lesson!r}; the lessons are {', '.join(sorted(LESSONS))}.")
    questions = LESSONS[key]
    if len(answers) != len(questions):
        raise TypeError(f"self_check({key!r}) takes {len(questions)} answers, one per question "
                        f"({', '.join(q.label.split('.')[0] for q in questions)}), in that order; got {len(answers)}.")
    for question in questions:  # (before any line is printed)
        missing = [name for name in question.needs if name not in lesson_objects]
        if missing:
            raise TypeError(f"self_check({key!r}): question {question.label.split('.')[0]} is checked against the "
                            f"lesson's {', '.join(missing)}: pass {', '.join(f'{m}={m}' for m in missing)}.")
    for question, answer in zip(questions, answers):
        check(question.label, answer, test=lambda a, q=question: q.judge(a, lesson_objects), hint=question.hint)


def check(question, answer, expected=None, *, test=None, hint="", tol=1e-4):
    """Print one line: whether ``answer`` is right (correct), wrong (not yet, with what is wrong), or not answered yet.

    ``answer`` is unanswered while it is ``...`` (or a function with a ``...`` line still in it). It is compared with
    ``expected``: a dtype with a dtype (``"float32"``, ``tf.float32`` and ``np.float32`` are the same), a number
    or array with a number or array (each entry within ``tol`` of the expected one), a ``bool`` with a ``bool``, a
    string with a string or any string of a tuple of strings (case and surrounding spaces ignored). For anything
    else pass ``test``, a function of the answer that returns ``True`` when it is right or a string saying what is
    wrong (anything else: the answer is shown). ``hint`` is printed when the answer is wrong.

    >>> check("2 + 2", ..., 4)
    ○ 2 + 2: not answered yet (replace the ... above)
    >>> check("2 + 2", 5, 4, hint="count on your fingers")
    ✗ 2 + 2: not yet: your answer is 5. Hint: count on your fingers
    >>> check("2 + 2", 4.0, 4)
    ✓ 2 + 2: correct
    """
    if _is_placeholder(answer):
        status, why = UNANSWERED, ""
    else:
        try:
            verdict = test(answer) if test is not None else compare(answer, expected, tol)
        except Exception as err:  # the learner's code failed: that is what is wrong
            verdict = f"it raised {type(err).__name__}: {err}"
        if verdict is True or (isinstance(verdict, np.bool_) and verdict):
            status, why = CORRECT, ""
        else:
            status = WRONG
            why = verdict if isinstance(verdict, str) else f"your answer is {echo(answer)}"
    line = f"{MARKS[status]} {question}: {status}"
    if status == UNANSWERED:
        line += " (replace the ... above)"
    elif status == WRONG:
        line += f": {why}" + (f". Hint: {hint}" if hint else "")
    print(line)


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


def _is_placeholder(answer):
    """Whether ``answer`` is still the exercise's ``...``, or a function with a ``...`` line the learner has not
    replaced yet (read from its source; a function whose source is gone counts while it does nothing)."""
    if answer is ...:
        return True
    function = getattr(answer, "python_function", answer)  # (a tf.function: its Python function)
    if not callable(function) or not hasattr(function, "__code__"):
        return False
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return function.__code__.co_code == _does_nothing.__code__.co_code
    return any(line.split("#")[0].strip() == "..." for line in source.splitlines())


def _does_nothing():
    ...


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
