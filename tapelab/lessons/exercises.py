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

import inspect

import numpy as np

from tapelab.lessons.answer_key import LESSONS
from tapelab.lessons.judging import compare, compare_numbers, compare_shape, echo, printed  # noqa: F401

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
    >>> check("a clip", "x", test=lambda a: "it raised TracingError: ... outside the traced function.", hint="tl.where")
    ✗ a clip: not yet: it raised TracingError: ... outside the traced function. Hint: tl.where
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
        line += f": {why}" + (f"{'' if why.endswith('.') else '.'} Hint: {hint}" if hint else "")
    print(line)


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
