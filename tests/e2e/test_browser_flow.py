"""The gradient-flow view, ``tl.viz.draw(tape, collapse=True, flow=True)``, in JupyterLab + headless Chromium.

    .venv/bin/python -m pytest tests/e2e/test_browser_flow.py -m browser -o addopts=""

In a laptop's 1024-px-wide window (the file browser open, as JupyterLab opens): the PNG a deep sigmoid MLP's flow
view shows has every FLOW_RAMP colour on its edges, the darkest thick, and under them the legend's six swatches as
solid blocks, light to dark; a 50-step SimpleRNN's flow view draws, is not shrunk below legible text, and shows
the legend too. Screenshots (pytest's tmp_path) are checked pixel by pixel.
Skipped without Chromium or Playwright, unless CI is set (tests/e2e/test_browser.py says how).
"""

import numpy as np
import pytest

from tapelab.viz import render
from tapelab.viz.dot import FLOW_RAMP
from tests import browser
from tests.e2e.test_browser import LEGIBLE_PX, SMALL_WINDOW
from tests.e2e.test_browser_render import run_in_kernel

pytestmark = pytest.mark.browser

LEGEND = "gradient norm on each edge (log scale)"
DEEP_SIGMOID = ("import numpy as np\nimport tapelab as tl\n"
                "tl.random.set_seed(0)\n"
                "model = tl.keras.Sequential([tl.keras.layers.Dense(16, activation='sigmoid') for _ in range(8)]\n"
                "                            + [tl.keras.layers.Dense(10)])\n"
                "x, y = tl.random.normal([16, 20]), tl.constant(np.arange(16) % 10)\n"
                "with tl.GradientTape() as tape:\n"
                "    logits = model(x)\n"
                "    loss = tl.reduce_mean(tl.keras.losses.sparse_categorical_crossentropy(y, logits, "
                "from_logits=True))\n"
                "grads = tape.gradient(loss, model.trainable_variables)\n"
                "drawing = tl.viz.draw(tape, collapse=True, flow=True)\n"
                "drawing")
RNN = ("import tapelab as tl\n"
       "tl.random.set_seed(0)\n"
       "model = tl.keras.Sequential([tl.keras.layers.SimpleRNN(8), tl.keras.layers.Dense(1)])\n"
       "x, y = tl.ones([4, 50, 1]) * 0.5, tl.zeros([4, 1])   # 4 sequences of 50 steps\n"
       "with tl.GradientTape() as tape:\n"
       "    loss = tl.reduce_mean(tl.square(model(x) - y))\n"
       "grads = tape.gradient(loss, model.trainable_variables)\n"
       "drawing = tl.viz.draw(tape, collapse=True, flow=True)\n"
       "drawing")

# the first cell's picture once it has loaded: its size on screen and its natural size, in the page
PICTURE = """() => {
    const cell = window.jupyterapp.shell.currentWidget.content.widgets[0];
    const out = cell.node.querySelector('.jp-OutputArea-output[data-mime-type="image/png"]');
    const img = out && out.querySelector('img');
    if (!img || !img.complete || !img.naturalWidth) return null;
    const files = document.querySelector('#filebrowser');
    return {shown: img.clientWidth, shownHeight: img.clientHeight, natural: img.naturalWidth,
            width: Number(img.getAttribute('width')), output: out.getBoundingClientRect().width,
            fileBrowser: !!files && files.getBoundingClientRect().width > 0};
}"""
# the first cell's picture scrolled to the middle of the window: whether it is all in view
IN_WINDOW = """() => {
    const img = window.jupyterapp.shell.currentWidget.content.widgets[0].node
        .querySelector('.jp-OutputArea-output img');
    img.scrollIntoView({block: 'center'});
    const r = img.getBoundingClientRect();
    return r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth;
}"""
# the part of the first cell's picture in view: its rectangle cut by each scrolling box around it and the window
VISIBLE = """() => {
    const img = window.jupyterapp.shell.currentWidget.content.widgets[0].node
        .querySelector('.jp-OutputArea-output img');
    let {top, left, bottom, right} = img.getBoundingClientRect();
    for (let e = img.parentElement; e && e !== document.body; e = e.parentElement) {  // (body: the window)
        if (getComputedStyle(e).overflow === 'visible') continue;
        const r = e.getBoundingClientRect();
        top = Math.max(top, r.top); left = Math.max(left, r.left);
        bottom = Math.min(bottom, r.bottom); right = Math.min(right, r.right);
    }
    return [top, left, Math.min(bottom, innerHeight), Math.min(right, innerWidth)].map(Math.round);
}"""
TOLERANCE = 12  # per RGB channel: the PNG's antialiasing and the browser's scaling of it


def rgb(colour):
    return np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])


def near(pixels, colour):
    """Which pixels (an H x W x 3 array) are ``colour`` within TOLERANCE."""
    return np.all(np.abs(pixels.astype(int) - rgb(colour)) <= TOLERANCE, axis=-1)


def blocks(mask, height, width):
    """Where a solid ``height`` x ``width`` block of True fits in ``mask``: its top-left corners, as (row, column)
    pairs (by an integral image)."""
    s = np.pad(mask.astype(np.int32), ((1, 0), (1, 0))).cumsum(0).cumsum(1)
    area = s[height:, width:] - s[:-height, width:] - s[height:, :-width] + s[:-height, :-width]
    return np.argwhere(area == height * width)


def legend_swatches(picture, zoom):
    """Each FLOW_RAMP colour's swatch in the foot of a picture (the bottom 15%): where its solid block starts
    ((row, column), of the first place one fits), or None where there is none. A swatch is 44 pt wide; this asks
    for 60% of that, 2 px tall (the first is 4 pt tall)."""
    width = int(44 * 96 / 72 * zoom * 0.6)
    foot = int(picture.shape[0] * 0.85)
    found = {}
    for colour in FLOW_RAMP:
        at = blocks(near(picture[foot:], colour), 2, width)
        found[colour] = (int(at[0][0]) + foot, int(np.median(at[:, 1]))) if len(at) else None
    return found


def assert_legend(picture, zoom):
    """The legend's six swatches are in the foot of ``picture``, solid blocks side by side, light to dark."""
    swatches = legend_swatches(picture, zoom)
    assert all(swatches.values()), f"legend swatches (colour: (row, column)): {swatches}"
    columns = [column for _, column in swatches.values()]
    assert columns == sorted(columns), f"the swatches should go light to dark, left to right: {swatches}"
    return swatches


def screenshot(page, path, part=None):
    """The window as a screenshot, or its ``part`` ([top, left, bottom, right] in CSS px, as VISIBLE gives),
    saved to ``path`` and returned as an H x W x 3 array."""
    from PIL import Image

    clip = None if part is None else {"x": part[1], "y": part[0], "width": part[3] - part[1],
                                      "height": part[2] - part[0]}
    page.screenshot(path=str(path), clip=clip)
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


def run(page, url, token, name, timeout=60_000):
    """Open a notebook, run it, and wait (up to ``timeout`` ms) until its first cell shows a loaded picture."""
    browser.open_notebook(page, url, token, name)
    page.wait_for_function(browser.KERNEL_IDLE, timeout=60_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(PICTURE, timeout=timeout)
    shown = page.evaluate(PICTURE)
    assert shown["fileBrowser"], "the file browser should be open, as JupyterLab opens in a new workspace"
    return shown


def zoom(shown):
    """How much a picture is shrunk on screen: its width shown / its natural width in screen pixels (the PNG
    drawn at CELL_DPI)."""
    return shown["shown"] / (shown["natural"] * 96 / render.CELL_DPI)


def text_px(shown):
    """The smallest text's size on screen: SMALLEST_TEXT_PT at the picture's zoom."""
    return render.SMALLEST_TEXT_PT * 96 / 72 * zoom(shown)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    browser.require(("PIL", "lab"))
    home = tmp_path_factory.mktemp("lab-flow")
    notebooks = home / "notebooks"
    notebooks.mkdir()
    browser.write_notebook(notebooks / "deep_sigmoid.ipynb", [DEEP_SIGMOID])
    browser.write_notebook(notebooks / "rnn.ipynb", [RNN])
    with browser.jupyterlab(notebooks, home) as server:
        yield server


def test_a_deep_sigmoid_mlp_s_flow_view_shows_the_ramp_s_colours_and_its_legend(lab, tmp_path):
    url, token = lab
    with browser.chromium(*SMALL_WINDOW) as page:
        shown = run(page, url, token, "deep_sigmoid.ipynb")
        said = run_in_kernel(page, f"print({LEGEND!r} in drawing.source, '\"legend\"' in drawing.source)")
        assert said.split() == ["True", "True"], said
        assert shown["width"] == round(shown["natural"] * 96 / render.CELL_DPI), shown
        assert shown["shown"] <= shown["output"] + 1 and text_px(shown) >= LEGIBLE_PX - 0.01, shown
        # the whole picture in view at once: a taller window, as wide (the cell's width goes with the width only)
        page.set_viewport_size({"width": SMALL_WINDOW[0], "height": shown["shownHeight"] + 400})
        page.wait_for_function(IN_WINDOW, timeout=10_000)  # (once JupyterLab has laid itself out anew)
        picture = screenshot(page, tmp_path / "deep_sigmoid_flow.png", page.evaluate(VISIBLE))
    height, width = picture.shape[:2]  # all of it (to the pixel: the picture starts part of the way into one)
    assert abs(height - shown["shownHeight"]) <= 1 and abs(width - shown["shown"]) <= 1, (picture.shape, shown)
    # the legend: the six swatches, solid blocks side by side, lightest to darkest, under the graph
    swatches = assert_legend(picture, zoom(shown))
    # the edges, above it: the gradient falls five decades through the sigmoids, so every colour of the ramp is
    # on some edge, from the lightest (the first layers' vanishing gradient) to the darkest (the last's)
    edges = picture[:min(row for row, _ in swatches.values()) - 5]
    counts = {c: int(near(edges, c).sum()) for c in FLOW_RAMP}
    assert all(n >= 100 for n in counts.values()) and counts[FLOW_RAMP[-1]] >= 1000, f"edge pixels: {counts}"
    assert len(blocks(near(edges, FLOW_RAMP[-1]), 12, 4)), "the darkest edges (6 pt wide) should be thick"


def test_a_50_step_rnn_s_flow_view_draws_with_legible_text(lab, tmp_path):
    url, token = lab
    with browser.chromium(*SMALL_WINDOW) as page:
        shown = run(page, url, token, "rnn.ipynb")
        assert shown["width"] == round(shown["natural"] * 96 / render.CELL_DPI), shown
        assert text_px(shown) >= LEGIBLE_PX - 0.01, f"text of {text_px(shown):.1f} px: {shown}"
        said = run_in_kernel(page, f"print({LEGEND!r} in drawing.source, 'simple_rnn/t49/' in drawing.source)")
        assert said.split() == ["True", "True"], said  # the legend, and a box for each of the 50 steps
        # the legend, at the foot of the picture (its middle): scrolled into view in the 1024 x 768 window
        page.evaluate("""() => window.jupyterapp.shell.currentWidget.content.widgets[0].node
                         .querySelector('.jp-OutputArea-output img')
                         .scrollIntoView({block: 'end', inline: 'center'})""")
        page.wait_for_timeout(300)
        foot = screenshot(page, tmp_path / "rnn_flow_legend.png", page.evaluate(VISIBLE))
        page.evaluate("""() => window.jupyterapp.shell.currentWidget.content.widgets[0].node
                         .querySelector('.jp-OutputArea-output img').scrollIntoView({block: 'start'})""")
        page.wait_for_timeout(300)
        screenshot(page, tmp_path / "rnn_flow_top.png")
    assert_legend(foot, zoom(shown))
