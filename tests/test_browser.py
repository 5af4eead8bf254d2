"""The BackwardStepper in a real browser: JupyterLab on a free local port, headless Chromium via Playwright.

    .venv/bin/python -m pytest tests/test_browser.py -m browser -o addopts=""

Debian's Chromium (/usr/bin/chromium) is driven by Playwright's Python package; Playwright's own
browser download (``playwright install``) is never used. Without Chromium or Playwright the test is
skipped, unless the environment variable CI is set: then it fails, so CI cannot pass without it.
The screenshot goes to build/screenshots/stepper.png (ignored by git), or to the folder named by the environment
variable TAPELAB_SCREENSHOTS: ``python docs/make_pictures.py --stepper`` uses that to refresh docs/stepper.png.
"""

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("TAPELAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
ROOT = Path(__file__).resolve().parent.parent
SCREENSHOT = Path(os.environ.get("TAPELAB_SCREENSHOTS") or ROOT / "build" / "screenshots") / "stepper.png"

CELLS = [
    "import tapelab as tl\n"
    "x = tl.Variable(tl.ones((2, 2)), name='x')\n"
    "y = tl.Variable([[2, 2], [2, 2]], dtype=tl.float32, name='y')\n"
    "with tl.GradientTape() as tape:\n"
    "    z = tl.matmul(x, y)\n"
    "    loss = tl.reduce_mean(z)",
    "stepper = tl.viz.BackwardStepper(tape, loss, [x, y])\n"
    "stepper",
]


def _missing(reason):
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so the browser test must run)")
    pytest.skip(reason)


def _requirements():
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        _missing(f"no Chromium at {CHROMIUM}: apt-get install chromium (or set TAPELAB_CHROMIUM)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Playwright's Python package is missing: pip install 'tapelab[test]' (never `playwright install`)")
    for module in ("jupyterlab", "ipywidgets", "nbformat"):
        try:
            __import__(module)
        except ImportError:
            _missing(f"{module} is not installed: pip install 'tapelab[lab]'")
    return sync_playwright


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _notebook(path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server on a free port, with its own config/runtime/settings dirs; yields (url, token)."""
    port, token = _free_port(), secrets.token_hex(16)
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    _notebook(notebooks / "stepper.ipynb")
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "config"), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
               IPYTHONDIR=str(tmp_path / "ipython"), JUPYTER_PLATFORM_DIRS="1")
    log = open(tmp_path / "lab.log", "w")
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           "--port-retries=0", f"--IdentityProvider.token={token}", f"--notebook-dir={notebooks}",
           "--LabApp.expose_app_in_browser=True", f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}",
           f"--LabApp.user_settings_dir={tmp_path / 'settings'}", "--LabApp.news_url=",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # containers and CI runners often run as root
        cmd.append("--allow-root")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"JupyterLab exited early:\n{(tmp_path / 'lab.log').read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as r:
                    json.load(r)
                break
            except OSError:
                if time.monotonic() > deadline:
                    log_text = (tmp_path / "lab.log").read_text()[-3000:]
                    raise AssertionError(f"JupyterLab did not start:\n{log_text}") from None
                time.sleep(0.3)
        yield url, token
    finally:
        _stop(proc)
        log.close()


def _stop(proc):
    """End the server we started and the kernels it started (they share its process group)."""
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


KERNEL_STATUS = """() => {
    const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
    return k ? k.status : null;
}"""

HIGHLIGHTED = """() => Array.from(document.querySelectorAll('.tapelab-stepper-graph g.node.tapelab-current > title'))
    .map(t => t.textContent)"""


def test_stepper_in_jupyterlab_with_headless_chromium(lab):
    sync_playwright = _requirements()
    url, token = lab
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1000})
            page.set_default_timeout(60_000)
            page.goto(f"{url}/lab/tree/stepper.ipynb?token={token}")
            page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget "
                                   "&& window.jupyterapp.shell.currentWidget.sessionContext", timeout=60_000)
            page.wait_for_function(f"() => ({KERNEL_STATUS})() === 'idle'", timeout=60_000)
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")

            panel = page.locator(".tapelab-stepper-panel")
            panel.wait_for(state="visible", timeout=60_000)  # the widget rendered from the kernel's model
            assert panel.get_attribute("data-position") == "0"
            assert "Start: the backward pass begins at the target b" in panel.inner_text()
            assert page.evaluate(HIGHLIGHTED) == ["t_b"]
            assert page.locator(".tapelab-stepper-graph svg").count() == 1

            next_button = page.locator("button.tapelab-stepper-next")
            prev_button = page.locator("button.tapelab-stepper-prev")
            expected = {1: ("op_1", "Backward step 1 of 2 - op 1: b = reduce_mean(a)"),
                        2: ("op_0", "Backward step 2 of 2 - op 0: a = matmul(x, y)")}
            for position in (1, 2):
                next_button.click()
                page.wait_for_selector(f'.tapelab-stepper-panel[data-position="{position}"]')
                op, title = expected[position]
                assert page.evaluate(HIGHLIGHTED) == [op]
                assert title in panel.inner_text()
            text = panel.inner_text()
            assert "upstream g = da = [[0.25, 0.25], [0.25, 0.25]]" in text and "0.25 per element" in text
            assert "dx = g @ y.T = [[1, 1], [1, 1]]" in text and "dy = x.T @ g = [[0.5, 0.5], [0.5, 0.5]]" in text
            table = page.locator(".tapelab-stepper-table").inner_text()
            assert "[[0.5, 0.5], [0.5, 0.5]]" in table and "final" in table
            assert next_button.is_disabled()  # the last step: nothing further back

            prev_button.click()
            page.wait_for_selector('.tapelab-stepper-panel[data-position="1"]')
            assert page.evaluate(HIGHLIGHTED) == ["op_1"]
            assert "not reached yet" in page.locator(".tapelab-stepper-table").inner_text()
            next_button.click()
            page.wait_for_selector('.tapelab-stepper-panel[data-position="2"]')
            assert page.evaluate(HIGHLIGHTED) == ["op_0"]

            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            page.locator(".tapelab-stepper").screenshot(path=str(SCREENSHOT))
            assert SCREENSHOT.stat().st_size > 10_000
        finally:
            browser.close()

