"""Drawing with Graphviz in the browser (viz.js) where the kernel has none: JupyterLab + headless Chromium.

    .venv/bin/python -m pytest tests/e2e/test_browser_render.py -m browser -o addopts=""

The kernel runs with no ``dot`` on its PATH and ``TAPELAB_DOT=browser`` (which also keeps it from the graphviz-pure
program beside its Python): every picture and the stepper are laid out by viz.js in the page. Skipped without
Chromium or Playwright, unless CI is set (tests/e2e/test_browser.py says how).
"""

import os
import re
import shutil

import pytest

from tapelab.viz.browser import VIZJS
from tests import browser
from tests.e2e.test_browser import CHAIN, MLP, SEED, assert_followed, at, stepper, walk_every_step

pytestmark = pytest.mark.browser

DRAW = ("import tapelab as tl\n"
        "x = tl.Variable(tl.ones((2, 2)), name='x')\n"
        "y = tl.Variable([[2, 2], [2, 2]], dtype=tl.float32, name='y')\n"
        "with tl.GradientTape(persistent=True) as tape:\n"
        "    z = tl.matmul(x, y)\n"
        "    loss = tl.reduce_mean(z)\n"
        "drawing = tl.viz.draw(tape)\n"
        "drawing")
BAD_DOT = "tl.viz.render.drawing('digraph tape {\\n  a -> \\n}')"
LONG = ("w = tl.Variable(1.0, name='w')\n"
        "with tl.GradientTape() as long_tape:\n"
        "    v = w\n"
        "    for _ in range(5000):\n"
        "        v = tl.tanh(v * 0.5)      # 10,000 entries\n"
        "tl.viz.draw(long_tape)            # the first 100 ops, as everywhere")
TOO_LONG = "tl.viz.draw(long_tape, max_ops=None)"
LISTING = "tape"  # the tape's own display: its picture (drawn here) and its listing


def no_dot_path():
    """$PATH without any directory that holds a `dot` or `graphviz-pure` program."""
    return os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if d and not any(os.path.exists(os.path.join(d, exe)) for exe in ("dot", "graphviz-pure")))


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    browser.require()
    home = tmp_path_factory.mktemp("lab-no-dot")
    notebooks = home / "notebooks"
    notebooks.mkdir()
    browser.write_notebook(notebooks / "draw.ipynb", [DRAW, LISTING, BAD_DOT, LONG, TOO_LONG])
    browser.write_notebook(notebooks / "seed.ipynb", [SEED])
    browser.write_notebook(notebooks / "steppers.ipynb", [MLP, CHAIN])
    browser.write_notebook(notebooks / "busy.ipynb", [DRAW, "import time\ntime.sleep(15)  # the kernel is busy",
                                                      "tl.viz.draw(tape)"])
    browser.write_notebook(notebooks / "broken.ipynb", [
        "import pathlib, tapelab as tl, tapelab.viz.browser\n"
        "tl.viz.browser.VIZJS = pathlib.Path('/nonexistent/viz.js')  # as if the file were missing\n"
        "x = tl.Variable(2.0, name='x')\n"
        "with tl.GradientTape() as tape:\n"
        "    y = x * x\n"
        "tl.viz.draw(tape)"])
    assert shutil.which("dot", path=no_dot_path()) is None
    with browser.jupyterlab(notebooks, home, env={"PATH": no_dot_path(), "TAPELAB_DOT": "browser"}) as server:
        yield server


def outputs(page):
    """The text of each cell's outputs, and whether each holds an SVG picture."""
    return page.evaluate("""() => window.jupyterapp.shell.currentWidget.content.widgets.map(cell => {
        const outs = [...cell.node.querySelectorAll('.jp-OutputArea-output')];
        return {text: outs.map(o => o.innerText).join('\\n'), svg: outs.some(o => o.querySelector('svg g.node'))};
    })""")


def run_in_kernel(page, code):
    """Run ``code`` in the notebook's kernel and return what it printed."""
    return page.evaluate("""async (code) => {
        const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
        let text = '';
        const future = kernel.requestExecute({code});
        future.onIOPub = (msg) => {
            if (msg.header.msg_type === 'stream') text += msg.content.text;
            if (msg.header.msg_type === 'error') text += msg.content.ename + ': ' + msg.content.evalue;
        };
        await future.done;
        return text;
    }""", code)


def test_draw_and_the_tape_display_lay_out_in_the_browser(lab):
    url, token = lab
    with browser.chromium() as page:
        browser.open_notebook(page, url, token, "draw.ipynb", run=True)
        page.wait_for_selector(".tapelab-drawing svg g.node >> nth=0")
        page.wait_for_function(  # the drawing, the tape's display, the 10,000-entry tape's first 100 ops, the error
            "() => document.querySelectorAll('.tapelab-drawing svg, .tapelab-draw-error').length >= 4", timeout=60_000)
        cells = outputs(page)
        assert cells[0]["svg"], cells[0]
        titles = page.evaluate("() => [...document.querySelectorAll('.tapelab-drawing')[0]"
                               ".querySelectorAll('g.node text')].map(t => t.textContent)")
        assert "x (Variable)" in titles and any("matmul" in t for t in titles), titles
        assert cells[1]["svg"], cells[1]  # the tape's own display: its picture, drawn here too
        # the SVG went back to the kernel: it can be saved
        said = run_in_kernel(page, "print('<svg' in drawing.svg, drawing.error == '', 'matmul' in drawing.svg, "
                                   "tl.viz.browser.DrawsInBrowser.vizjs_sent)")
        assert said.split() == ["True", "True", "True", "1"], said  # (and viz.js came once, for four pictures)
        # a DOT syntax error: Graphviz's own message, in the cell
        error = page.locator(".tapelab-draw-error").first.inner_text()
        assert "Could not draw the tape in the browser" in error and "syntax error" in error, error
        # 10,000 entries: the first 100 ops draw; all of them is refused with a message that says what to do
        assert cells[3]["svg"], cells[3]
        assert "too many to lay out in the browser" in cells[4]["text"] and "max_ops" in cells[4]["text"], cells[4]
        browser.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.locator(".tapelab-drawing").first.screenshot(path=str(browser.SCREENSHOTS / "draw_in_browser.png"))


def test_the_stepper_follows_the_step_with_graphviz_in_the_browser(lab):
    url, token = lab
    with browser.chromium() as page:
        browser.open_notebook(page, url, token, "seed.ipynb", run=True)
        page.wait_for_selector(".tapelab-graph svg g.node >> nth=0")
        assert_followed(page, 0, "seed start (drawn in the browser)")
        panel = page.locator(".tapelab-stepper-panel")
        for position in (1, 2):
            stepper(page, 0).locator("button.tapelab-stepper-next").click()
            at(page, 0, position, "backward")
            current = assert_followed(page, 0, f"seed step {position} (drawn in the browser)")
            assert current["id"] == f"op_{2 - position}"
        assert "to y:  ∂loss/∂y = x.T @ ∂loss/∂z = [[0.5, 0.5], [0.5, 0.5]]" in panel.inner_text()
        page.wait_for_timeout(400)
        browser.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        stepper(page, 0).screenshot(path=str(browser.SCREENSHOTS / "stepper_in_browser.png"))
    with browser.chromium() as page:  # every step of both modes, from the start
        browser.open_notebook(page, url, token, "seed.ipynb", run=True)
        assert walk_every_step(page, 0, "seed (drawn in the browser)") == 2


def test_an_mlp_step_and_a_100_op_chain_follow_the_step_and_jump_on_a_click(lab):
    """The stepper's follow-the-step checks (tests/e2e/test_browser.py) on pictures laid out by viz.js."""
    url, token = lab
    with browser.chromium() as page:
        browser.open_notebook(page, url, token, "steppers.ipynb", run=True)
        page.wait_for_function("() => document.querySelectorAll('.tapelab-graph svg g.node').length > 0 && "
                               "[...document.querySelectorAll('.tapelab-graph')].every(g => g.querySelector('svg'))",
                               timeout=60_000)
        assert walk_every_step(page, 0, "MLP step (drawn in the browser)") == 7
        assert walk_every_step(page, 1, "100-op chain (drawn in the browser)") == 100
        chain = stepper(page, 1)
        chain.locator(".widget-toggle-button:text-is('backward')").click()
        at(page, 1, 0, "backward")
        chain.locator(".tapelab-graph g.node#op_90").click()  # backward: op 99 is step 1, so op 90 is step 10
        at(page, 1, 10, "backward")
        assert "Backward step 10 of 100 - op 90" in chain.locator(".tapelab-stepper-panel").inner_text()
        assert_followed(page, 1, "after a click (drawn in the browser)")


def test_a_busy_kernel_makes_a_picture_wait_not_fail(lab):
    """The page asks the kernel for viz.js, but the request queues behind running cells: the first picture says
    it is waiting, then draws; none fails."""
    url, token = lab
    with browser.chromium() as page:
        browser.open_notebook(page, url, token, "busy.ipynb")
        page.wait_for_function(browser.KERNEL_IDLE, timeout=60_000)
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        first = page.locator(".tapelab-drawing").first
        first.locator("text=still waiting for the kernel").wait_for(timeout=20_000)
        page.wait_for_function("() => document.querySelectorAll('.tapelab-drawing svg g.node').length > 0 && "
                               "[...document.querySelectorAll('.tapelab-drawing')].every(d => d.querySelector('svg'))"
                               " && document.querySelectorAll('.tapelab-drawing').length === 2", timeout=60_000)
        assert page.locator(".tapelab-draw-error").count() == 0


def test_viz_js_that_cannot_load_says_so_in_the_cell(lab):
    url, token = lab
    with browser.chromium() as page:
        browser.open_notebook(page, url, token, "broken.ipynb", run=True)
        error = page.locator(".tapelab-draw-error").first
        error.wait_for(state="visible")
        text = error.inner_text()
        assert "viz.js did not load" in text and "/nonexistent/viz.js" in text and "print(tape)" in text, text


def test_viz_js_and_graphviz_pure_draw_the_same_svg(tmp_path):
    """The lessons' tapes laid out by viz.js in Chromium and by graphviz-pure in the kernel: the same SVG, apart
    from the comment naming the program."""
    browser.require()
    import tapelab as tl
    from tapelab.viz.render import find_dot, render_dot

    try:
        exe = find_dot("graphviz-pure")[1]
    except tl.viz.GraphvizNotFound:
        pytest.skip("graphviz-pure is not installed")
    sources = [tl.viz.to_dot(tape) for tape in _lesson_tapes()]
    with browser.chromium() as page:
        page.goto("about:blank")
        drawn = page.evaluate("""async ([code, sources]) => {
            const url = URL.createObjectURL(new Blob([code], {type: 'text/javascript'}));
            const viz = await (await import(url)).instance();
            return sources.map(s => viz.renderString(s, {format: 'svg'}));
        }""", [VIZJS.read_text(encoding="utf-8"), sources])
    comment = re.compile(r"<!--.*?-->\n?", re.S)
    for source, svg in zip(sources, drawn):
        assert comment.sub("", svg) == comment.sub("", render_dot(source, "svg", exe).decode("utf-8"))


def _lesson_tapes():
    """The seed's matmul tape and an MLP training step's tape, as the lessons draw them."""
    import numpy as np

    import tapelab as tl

    x = tl.Variable(tl.ones((2, 2)), name="x")
    y = tl.Variable([[2, 2], [2, 2]], dtype=tl.float32, name="y")
    with tl.GradientTape() as seed:
        loss = tl.reduce_mean(tl.matmul(x, y))
    tl.random.set_seed(0)
    model = tl.keras.Sequential([tl.keras.layers.Dense(16, activation="relu"), tl.keras.layers.Dense(10)])
    images = np.random.default_rng(0).random((8, 784), dtype=np.float32)
    with tl.GradientTape() as mlp:
        loss = tl.keras.losses.SparseCategoricalCrossentropy(from_logits=True)(np.arange(8) % 10, model(images))
    mlp.gradient(loss, model.trainable_variables)
    return [seed, mlp]
