"""The lessons' exercises are real exercises, and their solutions can never drift from their checks.

Each lesson ends with exercise cells (tagged ``exercise``) whose answers start as ``...``, a self-check cell
that prints one line per question (``tapelab.lessons.exercises.check``), and a folded ``<details>`` block of
solutions: one ```` ```python ```` block per exercise cell, a full replacement for it, in the same order and
opening with the same ``# Exercise N`` line.

As shipped, every self-check line says "not answered yet" (nbval re-runs the lesson and compares the stored
output, so this is also what running it shows). With the solutions filled in and the lesson executed top to
bottom, every line says "correct".
"""

import json
import re
from pathlib import Path

import pytest

from tapelab.lessons.exercises import CORRECT, MARKS, UNANSWERED
from tapelab.lessons.exercises import WRONG as WRONG_MARK

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SOLUTION_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
CHECK_LINE = re.compile(rf"^([{''.join(MARKS.values())}]) (.*)$", re.MULTILINE)


def source(cell):
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


def exercise_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code" and "exercise" in c.get("metadata", {}).get("tags", [])]


def solutions(nb, name):
    blocks = [source(c) for c in nb["cells"] if c["cell_type"] == "markdown" and "<summary><b>Solutions" in source(c)]
    assert len(blocks) == 1, f"{name}: expected one markdown cell with a folded Solutions block, found {len(blocks)}"
    assert "<details>" in blocks[0] and "</details>" in blocks[0], f"{name}: the solutions must sit in <details>"
    return SOLUTION_BLOCK.findall(blocks[0])


def self_check_lines(cell):
    text = "".join("".join(o.get("text", "")) for o in cell.get("outputs", []) if o.get("output_type") == "stream")
    return CHECK_LINE.findall(text)


def last_code_cell(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code" and source(c).strip()][-1]


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_exercises_start_unanswered_and_have_a_solution_each(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells, blocks = exercise_cells(nb), solutions(nb, path.name)
    assert cells, f"{path.name}: no exercise cells (code cells tagged 'exercise')"
    assert len(blocks) == len(cells), f"{path.name}: {len(cells)} exercise cells but {len(blocks)} solution blocks"
    for cell, block in zip(cells, blocks):
        first = source(cell).splitlines()[0]
        assert re.match(r"# Exercise \d", first), f"{path.name}: an exercise cell opens with {first!r}"
        assert block.splitlines()[0] == first, f"{path.name}: the solution for {first!r} opens with {block[:60]!r}"
        assert "..." in source(cell), f"{path.name}: {first!r} is not left for the learner to answer (no ...)"
    lines = self_check_lines(last_code_cell(nb))
    assert lines, f"{path.name}: the self-check cell printed no check lines"
    answered = [text for mark, text in lines if mark != MARKS[UNANSWERED]]
    assert not answered, f"{path.name}: as shipped, these self-checks do not say 'not answered yet': {answered}"


# One wrong answer per exercise cell (the cell's "# Exercise N" line is kept): each must get "not yet", never
# "not answered yet" or "correct". Among them the learner mistakes the self-checks must explain: a string for a
# number, a list for a number, a number for a list, a tensor where its shape is asked, a function without return.
WRONG = {
    "01": ['dtype_of_list = "int32"\ndtype_of_arange = "float32"\ndtype_of_division = "int32"',
           'def function_fixed(num):\n    print("hello")',
           "mean_fixed = float(tf.reduce_mean([1, 2, 3, 4]))"],
    "02": ["first_derivative = 8.0\nsecond_derivative = 6.0",
           "dy_by_hand = [1.0, 1.0, 1.5, 1.5]",
           "def record(x, c):\n    with tf.GradientTape() as tape:\n        tape.watch(x)\n"
           "        target = x * c\n    return tape, target"],
    "03": ['dd_da = np.exp(2.0 * -1.0) * -1.0\ndd_db = "0.27"', "number_of_contributions = 2\ncontributions = 12",
           'reason = "c"'],
    "04": ["final_B_prediction = 2 + 8 * 0.98 ** 200", "W_prediction = [4.9]", 'op_sending_to_B = "multiply"'],
    "05": ["untrained_loss = 1 / 10", 'model_without_relu = "nonlinear"', "parameter_count = 784 * 256 + 256 * 10"],
    "06": ['retraces = "yes"', "@tf.function\ndef clip(x):\n    tf.where(x > 0, x, tf.zeros_like(x))",
           "trace_count_prediction = 5"],
    "07": ["conv_output_shape = Conv2D(32, 3)(np.zeros((1, 28, 28, 1), 'float32'))",
           "conv_parameters = 16 * 5 * 5 + 16", "same_height = 26"],
    "08": ["sigmoid_slope_max = 1.0", "clipped = [3.0, 4.0]", 'smallest_gradient_layer = "last"'],
    "09": ["ops_in_30_steps = 4 * 30", "gradient_at_h0 = 0.9 * 20", 'copying_gate = "r"'],
    "10": ["parts_of_err = 1", 'wrong_value = "B"', "ratio = 0.5"],
    "11": ["score_std = 64", "position_1_looks_at = 1", "softmax_part = [0.5, -0.5]"],
}


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_solutions_say_correct_and_wrong_answers_say_not_yet(path):
    """The lesson runs with the solutions filled in (every self-check line says correct), then the same kernel runs
    one wrong answer per exercise cell and the self-check again (every line says not yet)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    checker = last_code_cell(nb)
    shipped = self_check_lines(checker)
    cells = exercise_cells(nb)
    for cell, block in zip(cells, solutions(nb, path.name)):
        cell.source = block
    wrong = WRONG[path.name[:2]]
    assert len(wrong) == len(cells), f"{path.name}: WRONG has {len(wrong)} answers for {len(cells)} exercise cells"
    again = nbformat.v4.new_code_cell(checker.source)
    nb.cells += [nbformat.v4.new_code_cell(f"{source(c).splitlines()[0]}\n{w}") for c, w in zip(cells, wrong)]
    nb.cells.append(again)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    lines = self_check_lines(checker)
    assert len(lines) == len(shipped), (
        f"{path.name}: {len(lines)} self-check lines with the solutions, {len(shipped)} as shipped")
    wrong_lines = "\n".join(f"{mark} {text}" for mark, text in lines if mark != MARKS[CORRECT])
    assert not wrong_lines, f"{path.name}: with the solutions filled in, these are not correct:\n{wrong_lines}"
    lines = self_check_lines(again)
    assert len(lines) == len(shipped)
    not_wrong = "\n".join(f"{mark} {text}" for mark, text in lines if mark != MARKS[WRONG_MARK])
    assert not not_wrong, f"{path.name}: these wrong answers were not judged wrong:\n{not_wrong}"
    assert all("Hint: " in text for _, text in lines), f"{path.name}: a wrong answer without a hint"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_no_answer_is_in_sight_in_the_self_check_cell(path):
    """The self-check cell is one ``self_check(lesson, answers..., lesson objects...)`` call of bare names: no
    expected value, no hint and no judging code in the lesson (they are in tapelab.lessons.answer_key)."""
    import ast

    nb = json.loads(path.read_text(encoding="utf-8"))
    tree = ast.parse(source(last_code_cell(nb)))
    calls = [node for node in tree.body if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)]
    others = [node for node in tree.body if not isinstance(node, (ast.Expr, ast.ImportFrom))]
    assert len(calls) == 1 and not others, f"{path.name}: the self-check cell should be one self_check(...) call"
    call = calls[0].value
    assert getattr(call.func, "id", None) == "self_check" and call.args[0].value == path.name[:2]
    named = [a for a in call.args[1:]] + [k.value for k in call.keywords]
    literals = [ast.unparse(a) for a in named if not isinstance(a, ast.Name)]
    assert not literals, f"{path.name}: the self-check passes {literals}: pass the learner's names only"


def test_check_compares_tuples_numpy_booleans_and_explains_a_word_for_a_number(capsys):
    import numpy as np

    from tapelab.lessons.exercises import check

    check("a shape", (2, 3), (2, 3))
    check("a test returning numpy's True", 1, test=lambda a: np.array([1, 2]).all())
    check("a word for a number", "four", 4)
    check("a word", " Linear ", ("linear", "affine"))
    lines = capsys.readouterr().out.splitlines()
    assert [line[0] for line in lines] == ["✓", "✓", "✗", "✓"]
    assert lines[2].endswith("your answer is the text 'four': one number is expected")


def test_check_compares_a_dtype_with_numpy_dtypes_as_dtypes(capsys):
    import numpy as np

    import tapelab as tl
    from tapelab.lessons.exercises import check

    check("np.float32", "float32", np.float32)  # np.float32 also has __array__: it is still a dtype here
    check("np.float32 again", tl.float32, np.float32)
    check("a numpy dtype", "float32", np.dtype("float32"))
    check("another dtype", "int32", np.float32)
    check("not a dtype", "fast", np.float32)
    lines = capsys.readouterr().out.splitlines()
    assert [line[0] for line in lines] == ["✓", "✓", "✓", "✗", "✗"]
    assert lines[3].endswith("your answer is 'int32'")
    assert lines[4].endswith("your answer is 'fast', not a dtype: write it like 'float32' or tf.float32")


def test_check_accepts_numbers_within_tol_as_the_lessons_say_and_no_strings_or_booleans(capsys):
    from tapelab.lessons.exercises import check

    check("within 0.05 of 4.923", 4.95, 4.923, tol=0.05)
    check("the naive 5 is not within 0.05 of 4.923", 5.0, 4.923, tol=0.05)  # (a relative tolerance let it pass)
    check("a count off by the 10 output biases", 203_520, 203_530)
    check("a number written as a string", "2.5", 2.5)
    check("True is not 1", True, 1)
    lines = capsys.readouterr().out.splitlines()
    assert [line[0] for line in lines] == ["✓", "✗", "✗", "✗", "✗"]
    assert lines[3].endswith("your answer is the text '2.5' (in quotes): write the number itself, without the quotes")
    assert lines[4].endswith("your answer is True: one number is expected, not True or False")


def test_a_verdict_for_each_kind_of_bad_input(capsys):
    """A string, a list for a number, a tensor of the wrong shape, a tensor where a shape is asked: each says what
    is wrong, in the learner's terms; numbers echo as written (2, not np.int32(2))."""
    import numpy as np

    import tapelab as tl
    from tapelab.lessons.exercises import check, compare_shape

    check("a list for a number", [1, 2], 2.5)
    check("a tensor of the wrong shape", tl.ones((4,)), [[1.0, 1.0], [1.5, 1.5]])
    check("a numpy number", np.int32(2), 3)
    check("a tensor for a number", tl.constant(0.1353352832366127, tl.float64), 0.5)
    check("a ragged list", [[1, 2], [3]], [[1, 2], [3, 4]])
    check("NaN", float("nan"), 1.0)
    check("a shape as a list", [26, 26, 32], test=lambda a: compare_shape(a, (26, 26, 32)))
    check("a TensorShape", tl.ones((26, 26, 32)).shape, test=lambda a: compare_shape(a, (26, 26, 32)))
    check("a tensor for a shape", tl.ones((1, 26, 26, 32)), test=lambda a: compare_shape(a, (26, 26, 32)))
    check("a shape with the batch axis", (1, 26, 26, 32), test=lambda a: compare_shape(a, (26, 26, 32)))
    check("a string for a shape", "26x26x32", test=lambda a: compare_shape(a, (26, 26, 32)))
    check("a number for a list", 3.0, [3.0, 4.0])
    lines = capsys.readouterr().out.splitlines()
    assert [line[0] for line in lines] == ["✗", "✗", "✗", "✗", "✗", "✗", "✓", "✓", "✗", "✗", "✗", "✗"]
    assert lines[0].endswith("your answer is a list of shape (2,) ([1, 2]): one number is expected")
    assert lines[1].endswith("your answer is a tensor of shape (4,): numbers of shape (2, 2) are expected")
    assert lines[2].endswith("your answer is 2")
    assert lines[3].endswith("your answer is 0.1353352832366127")
    assert "numbers of shape (2, 2) are expected" in lines[4]
    assert lines[5].endswith("it holds NaN (not a number)")
    assert lines[8].endswith("your answer is a tensor of shape (1, 26, 26, 32), not a shape: write the shape "
                             "itself, a tuple of sizes like (2, 3) (a list or a TensorShape works too, as in "
                             "TensorFlow)")
    assert lines[9].endswith("your shape (1, 26, 26, 32) has 4 axes; the answer has 3")
    assert lines[10].endswith("your answer is '26x26x32': a shape is a tuple of sizes like (2, 3) (or a list, as in "
                              "TensorFlow)")
    assert lines[11].endswith("your answer is one number (3.0): numbers of shape (2,) are expected")


def test_unanswered_is_only_the_placeholder(capsys):
    """``...`` and a function whose body is still ``...`` are not answered yet; None, a function returning None and
    a failing function are answers (wrong ones)."""
    from tapelab.lessons.exercises import check

    def stub(x):
        ...  # your code

    def forgot_return(x):
        x + 1

    def fails(x):
        raise ValueError("no")

    def line_left(x):
        y = x + 1
        ...  # your line
        return y

    namespace = {}
    exec("def no_source(x):\n    pass", namespace)  # (no file to read its source from)
    check("the placeholder", ..., 1)
    check("a stub", stub, test=lambda f: f(1) == 2)
    check("a function with its ... line still in it", line_left, test=lambda f: f(1) == 2)
    check("a function without source that does nothing", namespace["no_source"], test=lambda f: f(1) == 2)
    check("None", None, 1)
    check("no return", forgot_return, test=lambda f: f(1) == 2)
    check("raises", fails, test=lambda f: f(1) == 2)
    lines = capsys.readouterr().out.splitlines()
    assert [line[0] for line in lines] == ["○", "○", "○", "○", "✗", "✗", "✗"]
    assert lines[4].endswith("your answer is None: one number is expected")
    assert lines[6].endswith("it raised ValueError: no")


def test_self_check_says_what_it_needs(capsys):
    from tapelab.lessons.exercises import self_check

    with pytest.raises(TypeError, match=r"self_check\('01'\) takes 5 answers, one per question \(1a, 1b, 1c, 2, "
                                        r"3\), in that order; got 2"):
        self_check("01", ..., ...)
    with pytest.raises(TypeError, match=r"question 1 is checked against the lesson's loss: pass loss=loss"):
        self_check("04", 2.0, ..., ...)
    with pytest.raises(ValueError, match="there is no lesson '99'"):
        self_check("99")


def test_lesson_04s_first_answer_needs_the_remainder_not_only_the_limit():
    """B ends at 2.0023 after 200 steps of learning rate 0.02: the limit 2 is not yet the answer, the prediction
    2 + 8 * 0.96 ** 200 (and 2.002, rounded) is."""
    import tapelab as tl
    from tapelab.lessons.answer_key import LESSONS

    tl.random.set_seed(0)
    x = tl.random.normal([1000])
    y = x * 5 + 2
    lesson = {"loss": lambda W, B: tl.reduce_mean(tl.square(x * W + B - y))}
    judge = LESSONS["04"][0].judge
    assert judge(2 + 8 * (1 - 2 * 0.02) ** 200, lesson) is True
    assert judge(2.002, lesson) is True
    assert judge(2, lesson) is False  # (the self-check then says "not yet", with the hint)


def test_a_lesson_saved_before_the_move_still_finds_its_self_check():
    from tapelab.exercises import self_check as saved  # (the import line of a lesson saved before 2026-12-02)
    from tapelab.lessons.exercises import self_check

    assert saved is self_check
