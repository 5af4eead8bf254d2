"""A learner's own saved notebook, reopened after its kernel is gone, still shows every stepper.

    .venv/bin/python -m pytest tests/e2e/test_saved_notebooks.py -m browser -o addopts=""

A notebook this server saved is trusted when it is opened again, so JupyterLab shows a stepper's widget, not the
still PNG beside it in the output, and a widget whose state the notebook did not save shows "Error displaying
widget: model not found". JupyterLab 4 and Notebook 7 save no widget state by default (the setting "Save Widget
State Automatically" is off, and stays off here); tapelab's pictures save it with the notebook instead
(``saveWidgetStateWithNotebook`` in tapelab/viz/vizloader.js). Each test runs a lesson (or reuses a saved one),
saves it, shuts the kernel down or restarts it, closes it, opens it again and looks at every stepper. Screenshots
go to build/screenshots/saved-*.png (or to TAPELAB_SCREENSHOTS). Lesson 07 trains a CNN first: about a minute.
"""

import json
import shutil

import pytest

from tests import browser

pytestmark = pytest.mark.browser

LESSONS = {"03": "03-tape-as-graph.ipynb", "04": "04-linear-regression.ipynb", "07": "07-cnn-quickstart.ipynb"}
VIEW = "application/vnd.jupyter.widget-view+json"
STATE = "application/vnd.jupyter.widget-state+json"
RUN_MS = 420_000  # lesson 07 trains for 30-60 s on a quiet machine; the machine may be shared

# every output of the open notebook: what it shows ({cell, output, model_id, stepper, nodes, image, error, text})
OUTPUTS = """() => {
    const cells = window.jupyterapp.shell.currentWidget.content.widgets;
    const out = [];
    for (let i = 0; i < cells.length; i++) {
        const outputs = cells[i].model.outputs, area = cells[i].outputArea;
        if (!outputs || !area) continue;
        for (let j = 0; j < outputs.length; j++) {
            const node = area.widgets[j] && area.widgets[j].node;
            if (!node) continue;
            const view = outputs.get(j).data['application/vnd.jupyter.widget-view+json'];
            const images = [...node.querySelectorAll('img')];
            out.push({cell: i, output: j, model_id: view ? view.model_id : null,
                      stepper: node.querySelectorAll('.tapelab-stepper').length,
                      nodes: node.querySelectorAll('.tapelab-stepper .tapelab-graph-box svg g.node').length,
                      image: images.some(img => img.naturalWidth > 0),
                      error: node.textContent.includes('Error displaying widget'),
                      text: node.textContent.slice(0, 200)});
        }
    }
    return out;
}"""


def stepper_ids(nb):
    """The model ids of the steppers a saved notebook's outputs show (their VBox has the class tapelab-stepper)."""
    state = nb["metadata"].get("widgets", {}).get(STATE, {}).get("state", {})
    return [out["data"][VIEW]["model_id"] for cell in nb["cells"] for out in cell.get("outputs", [])
            if VIEW in out.get("data", {})
            and "tapelab-stepper" in state.get(out["data"][VIEW]["model_id"], {}).get("state", {}).get(
                "_dom_classes", [])]


def shipped_steppers(key):
    """How many steppers the lesson as shipped shows (nbclient ran it and saved its widget state)."""
    return len(stepper_ids(json.loads((browser.ROOT / "notebooks" / LESSONS[key]).read_text(encoding="utf-8"))))


def saved_state(path):
    """What the notebook on disk holds: its widget-view outputs, the widget state, and that state's size in bytes
    as written (nbformat's one-space indent)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    views = [out["data"][VIEW]["model_id"] for cell in nb["cells"] for out in cell.get("outputs", [])
             if VIEW in out.get("data", {})]
    widgets = nb["metadata"].get("widgets")
    return nb, views, (widgets or {}).get(STATE, {}).get("state", {}), len(json.dumps(widgets, indent=1))


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    browser.require()
    home = tmp_path_factory.mktemp("saved")
    notebooks = home / "notebooks"
    for folder in ("run", "restarted", "shipped"):
        (notebooks / folder).mkdir(parents=True)
    for name in LESSONS.values():
        shutil.copy(browser.ROOT / "notebooks" / name, notebooks / "run" / name)
        shutil.copy(browser.ROOT / "notebooks" / name, notebooks / "shipped" / name)
    shutil.copy(browser.ROOT / "notebooks" / LESSONS["04"], notebooks / "restarted" / LESSONS["04"])
    with browser.jupyterlab(notebooks, home) as (url, token):  # default settings: saveState is off
        yield url, token, notebooks


@pytest.fixture(scope="module")
def page():
    browser.require()
    with browser.chromium() as page:
        yield page


def steppers_shown(page, count, where, timeout=90_000):
    """Wait until ``count`` stepper outputs show a picture (a widget with its graph drawn, or a still image), then
    check that no output anywhere says "Error displaying widget"; returns the outputs."""
    try:
        page.wait_for_function(f"""() => {{
            const out = ({OUTPUTS})();
            return out.some(o => o.error) || out.filter(o => o.nodes > 0 || (o.model_id && o.image)).length >= {count};
        }}""", timeout=timeout, polling=500)
    except Exception as e:  # noqa: BLE001 - the assertions below say what is on screen instead
        print(f"{where}: {e}")
    outputs = page.evaluate(OUTPUTS)
    errors = [(o["cell"], o["text"]) for o in outputs if o["error"]]
    assert not errors, f"{where}: outputs say 'Error displaying widget' (cell, text): {errors}"
    assert page.locator("text=Error displaying widget").count() == 0, f"{where}: 'Error displaying widget' shows"
    pictures = [o for o in outputs if o["nodes"] > 0 or (o["model_id"] and o["image"])]
    assert len(pictures) == count, (
        f"{where}: {len(pictures)} stepper pictures, not {count}: "
        f"{[(o['cell'], o['stepper'], o['nodes'], o['image'], o['text'][:60]) for o in outputs if o['model_id']]}")
    return pictures


def screenshot_steppers(page, outputs, prefix):
    browser.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for k, o in enumerate(outputs, 1):
        node = page.locator(".jp-Notebook .jp-Cell").nth(o["cell"]).locator(".jp-OutputArea-child").nth(o["output"])
        node.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        node.screenshot(path=str(browser.SCREENSHOTS / f"{prefix}-stepper{k}.png"))


def assert_saved_with_state(path, where):
    """Every widget an output of the notebook on disk shows is in the widget state saved with it."""
    nb, views, state, size = saved_state(path)
    missing = [v for v in views if v not in state]
    assert not missing, f"{where}: the saved notebook shows widgets its saved state lacks: {missing}"
    return size


@pytest.mark.parametrize("key", list(LESSONS))
def test_a_run_saved_and_reopened_lesson_shows_every_stepper(lab, page, key):
    """Run, save, shut the kernel down, close, open again: the steppers come back from the saved widget state."""
    url, token, notebooks = lab
    name, count = f"run/{LESSONS[key]}", shipped_steppers(key)
    assert count >= 1
    before = (notebooks / name).stat().st_size
    browser.open_notebook(page, url, token, name, run=True, timeout=RUN_MS)
    screenshot_steppers(page, steppers_shown(page, count, f"lesson {key}, run"), f"saved-{key}-before")
    browser.save_notebook(page)
    browser.shut_down_kernel(page, url, token)
    browser.close_notebook(page)
    browser.open_notebook(page, url, token, name)
    screenshot_steppers(page, steppers_shown(page, count, f"lesson {key}, reopened"), f"saved-{key}-reopened")
    # the reopened picture is the widget itself, restored (not the still PNG): the notebook is trusted now
    assert page.locator(".tapelab-stepper .tapelab-graph-box svg").count() == count
    size = assert_saved_with_state(notebooks / name, f"lesson {key}, saved")
    print(f"lesson {key}: widget state saved with the notebook {size / 1024:.0f} KiB; "
          f"the file {before / 1024:.0f} -> {(notebooks / name).stat().st_size / 1024:.0f} KiB")


def test_a_lesson_saved_after_a_kernel_restart_and_saved_again_reopened_shows_its_stepper(lab, page):
    """Run, restart the kernel (outputs kept), save, close, reopen: the stepper shows; saved again without running
    (the restored widgets are not live then), its kernel shut down, reopened: it still shows."""
    url, token, notebooks = lab
    name, count = f"restarted/{LESSONS['04']}", shipped_steppers("04")
    browser.open_notebook(page, url, token, name, run=True, timeout=RUN_MS)
    steppers_shown(page, count, "lesson 04, run")
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.restartKernel()")
    page.wait_for_timeout(1000)
    page.wait_for_function(browser.KERNEL_IDLE, timeout=60_000)
    browser.save_notebook(page)
    browser.close_notebook(page)  # (its kernel, restarted, keeps running)
    browser.open_notebook(page, url, token, name)
    steppers_shown(page, count, "lesson 04, reopened after a restart")
    assert_saved_with_state(notebooks / name, "lesson 04, saved after a restart")
    page.wait_for_function(browser.KERNEL_IDLE, timeout=60_000)
    page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.setMetadata('tapelab_test', 1)")
    browser.save_notebook(page)  # the second save (after an edit): none of the widgets it shows is live
    browser.shut_down_kernel(page, url, token)
    browser.close_notebook(page)
    browser.open_notebook(page, url, token, name)
    screenshot_steppers(page, steppers_shown(page, count, "lesson 04, reopened after a second save"),
                        "saved-04-restarted-saved-twice")
    assert_saved_with_state(notebooks / name, "lesson 04, saved twice")
    # the links between Play, the slider and the picture came back too: Play moves the picture, in the browser
    page.locator(".tapelab-stepper .widget-play button").first.click()
    page.wait_for_selector(".tapelab-stepper .tapelab-graph[data-position='2']", timeout=20_000)
    screenshot_steppers(page, steppers_shown(page, count, "lesson 04, played"), "saved-04-restarted-played")


@pytest.mark.parametrize("key", list(LESSONS))
def test_a_shipped_lesson_opened_untrusted_shows_its_steppers_stills(lab, page, key):
    """The lessons as shipped, opened and not run (untrusted: this server did not save them): each stepper shows
    its still PNG, and no widget error."""
    url, token, _ = lab
    count = shipped_steppers(key)
    browser.open_notebook(page, url, token, f"shipped/{LESSONS[key]}")
    pictures = steppers_shown(page, count, f"lesson {key} as shipped")
    assert all(o["image"] and not o["stepper"] for o in pictures), f"lesson {key}: a stepper shows no still PNG"


def test_notebook_7_a_run_saved_and_reopened_lesson_shows_its_stepper(page, tmp_path):
    """The same in Notebook 7 (its default settings: no widget state saved either) with lesson 04."""
    browser.require(("notebook", "test"))
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    name, count = LESSONS["04"], shipped_steppers("04")
    shutil.copy(browser.ROOT / "notebooks" / name, notebooks / name)
    with browser.jupyterlab(notebooks, tmp_path, app="notebook") as (url, token):
        browser.open_notebook(page, url, token, name, run=True, app="notebook", timeout=RUN_MS)
        steppers_shown(page, count, "Notebook 7, lesson 04, run")
        browser.save_notebook(page)
        assert_saved_with_state(notebooks / name, "Notebook 7, lesson 04, saved")
        browser.shut_down_kernel(page, url, token)
        page.goto("about:blank")  # the tab closed
        browser.open_notebook(page, url, token, name, app="notebook")
        outputs = steppers_shown(page, count, "Notebook 7, lesson 04, reopened")
        assert page.locator(".tapelab-stepper .tapelab-graph-box svg").count() == count
        screenshot_steppers(page, outputs, "saved-nb7-04-reopened")
