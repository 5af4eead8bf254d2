"""The lessons' exercises are real exercises, and their solutions can never drift from their checks.

Each lesson ends with exercise cells (tagged ``exercise``) whose answers start as ``...``, a self-check cell
that prints one line per question (``tapelab.exercises.check``), and a folded ``<details>`` block of
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

from tapelab.exercises import CORRECT, MARKS, UNANSWERED

ROOT = Path(__file__).resolve().parents[1]
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


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_with_the_solutions_filled_in_every_self_check_says_correct(path):
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    shipped = self_check_lines(last_code_cell(nb))
    for cell, block in zip(exercise_cells(nb), solutions(nb, path.name)):
        cell.source = block
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    lines = self_check_lines(last_code_cell(nb))
    assert len(lines) == len(shipped), (
        f"{path.name}: {len(lines)} self-check lines with the solutions, {len(shipped)} as shipped")
    wrong = "\n".join(f"{mark} {text}" for mark, text in lines if mark != MARKS[CORRECT])
    assert not wrong, f"{path.name}: with the solutions filled in, these self-checks are not correct:\n{wrong}"


def test_check_compares_tuples_numpy_booleans_and_explains_a_word_for_a_number(capsys):
    import numpy as np

    from tapelab.exercises import check

    check("a shape", (2, 3), (2, 3))
    check("a test returning numpy's True", 1, test=lambda a: np.array([1, 2]).all())
    check("a word for a number", "four", 4)
    check("a word", " Linear ", ("linear", "affine"))
    lines = capsys.readouterr().out.splitlines()
    assert [line[0] for line in lines] == ["✓", "✓", "✗", "✓"]
    assert lines[2].endswith("your answer is 'four'; a number (or a list of numbers) is expected")


def test_check_compares_a_dtype_with_numpy_dtypes_as_dtypes(capsys):
    import numpy as np

    import tapelab as tl
    from tapelab.exercises import check

    check("np.float32", "float32", np.float32)  # np.float32 also has __array__: it is still a dtype here
    check("np.float32 again", tl.float32, np.float32)
    check("a numpy dtype", "float32", np.dtype("float32"))
    check("another dtype", "int32", np.float32)
    check("not a dtype", "fast", np.float32)
    lines = capsys.readouterr().out.splitlines()
    assert [line[0] for line in lines] == ["✓", "✓", "✓", "✗", "✗"]
    assert lines[3].endswith("your answer is 'int32'")
    assert lines[4].endswith("'fast' is not a dtype (write it like 'float32' or tf.float32)")


def test_check_accepts_numbers_within_tol_as_the_lessons_say_and_no_strings_or_booleans(capsys):
    from tapelab.exercises import check

    check("within 0.05 of 4.923", 4.95, 4.923, tol=0.05)
    check("the naive 5 is not within 0.05 of 4.923", 5.0, 4.923, tol=0.05)  # (a relative tolerance let it pass)
    check("a count off by the 10 output biases", 203_520, 203_530)
    check("a number written as a string", "2.5", 2.5)
    check("True is not 1", True, 1)
    lines = capsys.readouterr().out.splitlines()
    assert [line[0] for line in lines] == ["✓", "✗", "✗", "✗", "✗"]
    assert lines[3].endswith("your answer is '2.5'; a number (or a list of numbers) is expected")
