"""JupyterLab (or Notebook 7) on a free local port and Debian's headless Chromium driven by Playwright: for the
browser tests (tests/e2e/test_browser*.py, tests/e2e/test_saved_notebooks.py) and the browser benchmark
(benchmarks/bench_stepper_browser.py).

Playwright's own browser download (``playwright install``) is never used: Chromium comes from apt.
"""

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat

CHROMIUM = os.environ.get("TAPELAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = Path(os.environ.get("TAPELAB_SCREENSHOTS") or ROOT / "build" / "screenshots")

KERNEL_IDLE = """() => {
    const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
    return k && k.status === 'idle';
}"""


def missing(*more):
    """Why the browser tests cannot run here, or None; ``more``: further ``(module, extra)`` a test needs."""
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"no Chromium at {CHROMIUM}: apt-get install chromium (or set TAPELAB_CHROMIUM)"
    for module, extra in (("playwright", "test"), ("jupyterlab", "lab"), ("ipywidgets", "lab"), ("anywidget", "lab"),
                          *more):
        try:
            __import__(module)
        except ImportError:
            return f"{module} is not installed: pip install 'tapelab[{extra}]' (never `playwright install`)"
    return None


def require(*more):
    """Skip the calling test where the browser tests cannot run; under CI (the variable CI set), fail instead, so
    CI cannot pass without them. ``more`` as for :func:`missing`."""
    import pytest

    reason = missing(*more)
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set, so the browser tests must run)")
        pytest.skip(reason)


def write_notebook(path, cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def jupyterlab(notebooks, home, env=None, app="lab"):
    """A JupyterLab server on ``notebooks`` with its own config, settings and runtime in ``home``; yields its URL
    with the token. Every cell is attached to the page (no windowing), so tests can look at any output. ``env``:
    environment variables to change for the server and its kernels. ``app="notebook"``: Notebook 7 instead (its
    settings as JupyterLab's; open a notebook there with ``open_notebook(..., app="notebook")``)."""
    if app not in ("lab", "notebook"):
        raise ValueError(f"jupyterlab: app={app!r} should be 'lab' or 'notebook'")
    port, token = _free_port(), secrets.token_hex(16)
    for extension, name, value in (("notebook-extension", "tracker", {"windowingMode": "none"}),
                                   ("apputils-extension", "notification", {"fetchNews": "false"})):  # no news toast
        settings = home / "settings" / "@jupyterlab" / extension
        settings.mkdir(parents=True, exist_ok=True)
        (settings / f"{name}.jupyterlab-settings").write_text(json.dumps(value))
    # a data dir of its own holds a new notebook-signing secret: the lessons open untrusted, as for a new learner
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               JUPYTER_DATA_DIR=str(home / "data"), IPYTHONDIR=str(home / "ipython"), JUPYTER_PLATFORM_DIRS="1",
               **(env or {}))
    cls = "LabApp" if app == "lab" else "JupyterNotebookApp"
    cmd = [sys.executable, "-m", "jupyter", app, "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           "--port-retries=0", f"--IdentityProvider.token={token}", f"--notebook-dir={notebooks}",
           f"--{cls}.expose_app_in_browser=True", f"--{cls}.workspaces_dir={home / 'workspaces'}",
           f"--{cls}.user_settings_dir={home / 'settings'}"]
    if app == "lab":
        cmd += ["--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # containers and CI runners often run as root
        cmd.append("--allow-root")
    log_path = home / f"{app}.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                if proc.poll() is not None:
                    raise AssertionError(f"jupyter {app} exited early:\n{log_path.read_text()[-3000:]}")
                try:
                    with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as r:
                        json.load(r)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise AssertionError(f"jupyter {app} did not start:\n{log_path.read_text()[-3000:]}") from None
                    time.sleep(0.3)
            yield url, token
        finally:
            _stop(proc)


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


@contextlib.contextmanager
def chromium(width=1500, height=1000, **context_options):
    """A page of headless Chromium (Debian's, driven by Playwright)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_context(viewport={"width": width, "height": height}, **context_options).new_page()
            page.set_default_timeout(60_000)
            yield page
        finally:
            browser.close()


def open_notebook(page, url, token, name, run=False, app="lab", timeout=120_000):
    """Open a notebook in JupyterLab (not run: its outputs are as saved, and it is not trusted unless this server
    saved it); ``run=True`` runs every cell and waits (up to ``timeout`` ms) until the kernel is idle again.
    ``app="notebook"``: in Notebook 7 (a server started with ``jupyterlab(..., app="notebook")``)."""
    if app == "lab":
        page.goto(f"{url}/lab/tree/{name}?reset&token={token}")  # reset: no tabs restored from an earlier page
    else:
        page.goto(f"{url}/notebooks/{name}?token={token}")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget "
                           "&& window.jupyterapp.shell.currentWidget.sessionContext", timeout=60_000)
    page.wait_for_selector(".jp-Notebook >> visible=true")
    if run:
        page.wait_for_function(KERNEL_IDLE, timeout=60_000)
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait_for_timeout(500)
        page.wait_for_function(KERNEL_IDLE, timeout=timeout)


def save_notebook(page):
    """Save the open notebook as its Save button does (``docmanager:save``) and wait until it is written."""
    page.evaluate("""async () => {
        const w = window.jupyterapp.shell.currentWidget;
        await window.jupyterapp.commands.execute('docmanager:save');
        while (w.context.model.dirty) await new Promise(r => setTimeout(r, 100));
    }""")


def shut_down_kernel(page, url, token):
    """Shut the open notebook's kernel down as the Kernel menu does, and wait until the server no longer runs it."""
    kernel = page.evaluate("""async () => {
        const session = window.jupyterapp.shell.currentWidget.sessionContext;
        const id = session.session.kernel.id;
        await session.shutdown();
        return id;
    }""")
    deadline = time.monotonic() + 30
    while True:
        with urllib.request.urlopen(f"{url}/api/kernels?token={token}", timeout=5) as r:
            if kernel not in {k["id"] for k in json.load(r)}:
                return
        if time.monotonic() > deadline:
            raise AssertionError("the kernel did not shut down")
        time.sleep(0.3)


def close_notebook(page):
    """Close the open notebook's tab (it must be saved: an unsaved one would ask)."""
    page.evaluate("""async () => {
        const w = window.jupyterapp.shell.currentWidget;
        if (w.context.model.dirty) throw new Error('the notebook has unsaved changes');
        w.close();
        while (!w.isDisposed) await new Promise(r => setTimeout(r, 100));
    }""")


def copy_lessons(to):
    for lesson in sorted((ROOT / "notebooks").glob("*.ipynb")):
        shutil.copy(lesson, to / lesson.name)
