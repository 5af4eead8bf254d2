"""Every lesson in notebooks/ follows the lesson skeleton and is committed as a clean top-to-bottom run.

The skeleton (see the existing lessons): a numbered file ``NN-title.ipynb``; a first cell that opens with the heading
``# NN · Title`` and a "What you will see" paragraph; numbered sections; ``## Summary``; ``## Exercises`` followed by
a code cell that checks the learner's answers. Stored outputs are what nbval compares, so every code cell was run in
order in one kernel, none ended in an error, and the recorded cell times fit the lesson budget.
"""

import json
import re
from datetime import datetime
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "notebooks").glob("*.ipynb"))
LESSON_BUDGET_S = 60  # a whole lesson, top to bottom, on a 2-core machine
NAME = re.compile(r"(?P<number>\d\d)-[a-z0-9]+(-[a-z0-9]+)*\.ipynb")
RERUN = "re-run it top to bottom: `jupyter nbconvert --to notebook --execute --inplace notebooks/{name}`"


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def source(cell):
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


def code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code" and source(c).strip()]


def test_there_are_lessons():
    assert LESSONS, "no notebooks in notebooks/"


def test_lesson_numbers_are_unique():
    numbers = [p.name[:2] for p in LESSONS]
    assert len(numbers) == len(set(numbers)), f"two lessons share a number: {[p.name for p in LESSONS]}"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_lesson_follows_the_skeleton(path):
    match = NAME.fullmatch(path.name)
    assert match, f"{path.name}: lessons are named NN-title.ipynb (two digits, lowercase words joined by '-')"
    nb = load(path)
    cells = nb["cells"]
    kernelspec = nb.get("metadata", {}).get("kernelspec", {})
    assert kernelspec.get("name") == "python3", (
        f"{path.name}: kernelspec should be python3 (the kernel Binder, nbval and the test simulation start)")
    assert kernelspec.get("display_name") == "Python 3 (ipykernel)", (
        f"{path.name}: the kernelspec's display_name should be 'Python 3 (ipykernel)', as JupyterLab writes it: any "
        f"other ({kernelspec.get('display_name')!r}) is rewritten on opening, so the untouched lesson shows as unsaved "
        "and asks to be saved when closed")

    first = source(cells[0]) if cells and cells[0]["cell_type"] == "markdown" else ""
    heading = first.splitlines()[0] if first else ""
    assert re.fullmatch(rf"# {match['number']} · \S.*", heading), (
        f"{path.name}: the first cell must be markdown opening with '# {match['number']} · Title'; it opens with "
        f"{heading or source(cells[0])[:60]!r}")
    assert re.search(r"what you will see", first, re.IGNORECASE), (
        f"{path.name}: the first cell needs a 'What you will see' paragraph (what the lesson shows, in a list)")

    markdown = [(i, source(c)) for i, c in enumerate(cells) if c["cell_type"] == "markdown"]

    def heading_cell(title):
        found = [i for i, text in markdown if re.search(rf"^## {title}\s*$", text, re.MULTILINE)]
        assert found, f"{path.name}: no '## {title}' section"
        return found[0]

    summary, exercises = heading_cell("Summary"), heading_cell("Exercises")
    assert summary <= exercises, f"{path.name}: '## Summary' comes before '## Exercises'"
    if summary == exercises:
        text = cells[summary]["source"]
        text = "".join(text) if isinstance(text, list) else text
        assert text.index("## Summary") < text.index("## Exercises"), f"{path.name}: Summary before Exercises"
    after = [c for c in cells[exercises + 1:] if c["cell_type"] == "code" and source(c).strip()]
    assert after, f"{path.name}: '## Exercises' must be followed by a code cell that checks the answers"
    assert after[-1].get("outputs"), f"{path.name}: the self-check cell after Exercises has no stored output"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_lesson_is_committed_as_one_clean_run(path):
    nb = load(path)
    counts = [c.get("execution_count") for c in code_cells(nb)]
    assert counts == list(range(1, len(counts) + 1)), (
        f"{path.name}: execution counts are {counts}; stored outputs must come from one run in order, so "
        + RERUN.format(name=path.name))
    errors = [(i, o.get("ename"), o.get("evalue")) for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, f"{path.name}: cells with error outputs (cell index, exception, message): {errors}"


def _cell_seconds(cell):
    timing = cell.get("metadata", {}).get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not (start and end):
        return None
    parse = lambda t: datetime.fromisoformat(t.replace("Z", "+00:00"))  # noqa: E731
    return (parse(end) - parse(start)).total_seconds()


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_lesson_fits_the_time_budget(path):
    cells = code_cells(load(path))
    seconds = [_cell_seconds(c) for c in cells]
    untimed = [i for i, s in enumerate(seconds) if s is None]
    assert not untimed, (
        f"{path.name}: code cells {untimed} have no recorded execution time (metadata.execution), so the lesson's "
        "time cannot be checked; " + RERUN.format(name=path.name)
        + " (it records timings; JupyterLab does only with Settings > Notebook > 'Record cell timing' on)")
    total = sum(seconds)
    slowest = sorted(zip(seconds, (source(c).splitlines()[0][:50] for c in cells)), reverse=True)[:3]
    assert total < LESSON_BUDGET_S, (
        f"{path.name}: its cells took {total:.1f} s in all (budget {LESSON_BUDGET_S} s); slowest: {slowest}")


def test_readme_lists_every_lesson():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in LESSONS if f"notebooks/{p.name}" not in readme]
    assert not missing, f"README.md's lesson list does not link {missing}"


CELL_PX = 900  # a notebook cell's width in JupyterLab at a usual window size
LEGIBLE_SCALE = 0.75  # shrunk to fit the cell, 10 pt text stays 10 px


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_every_saved_picture_fits_a_cell_legibly(path):
    """Jupyter shrinks a PNG with a given width to a narrower cell (never a horizontal scroll bar); shrunk, a
    tape's text must stay legible. (An SVG it would show at full size, past the cell's edge: none is saved.)"""
    for i, cell in enumerate(load(path)["cells"]):
        for out in cell.get("outputs", []):
            assert "image/svg+xml" not in out.get("data", {}), f"{path.name} cell {i}: an SVG output overflows"
            width = out.get("metadata", {}).get("image/png", {}).get("width")
            if width is not None:  # (tapelab's pictures say their width; matplotlib's plots have their own size)
                assert width * LEGIBLE_SCALE <= CELL_PX, (
                    f"{path.name} cell {i}: the picture is {width} px wide; in a {CELL_PX} px cell its text would "
                    f"shrink below 10 px. Draw it top to bottom (rankdir='TB'), collapse its scopes, or cap max_ops.")


# JupyterLab 4 in a 1024-px-wide window, with the file browser open as it starts: a code cell's editor is 590 px
# wide, and its 13-px monospace font fits 75 characters in it; a longer line scrolls sideways, hiding its end
# (often the comment that explains it).
CODE_LINE_CHARS = 75
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_code_lines_fit_a_cell(path):
    """Every line of every code cell, and of every ```python block in markdown (the solutions a learner pastes
    into a cell), is at most CODE_LINE_CHARS long: move a long comment above its line, or break the line inside
    its brackets."""
    too_long = []
    for i, cell in enumerate(load(path)["cells"]):
        text = source(cell)
        blocks = [text] if cell["cell_type"] == "code" else PYTHON_BLOCK.findall(text)
        for block in blocks:
            too_long += [f"cell {i} ({cell['cell_type']}), line {n}: {len(line)} characters: {line.strip()[:60]!r}"
                         for n, line in enumerate(block.splitlines(), 1) if len(line) > CODE_LINE_CHARS]
    assert not too_long, (
        f"{path.name}: code lines longer than {CODE_LINE_CHARS} characters scroll sideways in JupyterLab:\n"
        + "\n".join(too_long))
