"""The lessons as a static JupyterLite site (scripts/build_lite.sh), opened in headless Chromium.

    .venv/bin/python -m pytest tests/e2e/test_lite.py -m browser -o addopts=""

Built from the registries (npm's pyodide, PyPI's wheels) and served from a local folder, as a teacher would publish
it. What this checks: the site builds; JupyterLab loads from it; the Pyodide kernel starts from the site alone;
tapelab's wheel installs from the site into that kernel; tapelab's Pyodide renderer (tapelab/viz/worker.py, from
the installed wheel) lays out a DOT string with the wheel's viz.js in the kernel's worker, and reports a DOT syntax
error. What it cannot check here: a lesson running in the site. numpy and matplotlib for Pyodide come from
Pyodide's CDN, which this machine cannot reach (a published site loads them in the learner's browser).
"""

import functools
import http.server
import json
import threading
import urllib.parse

import pytest

from tests import browser

pytestmark = pytest.mark.browser

# run in the site's kernel: tapelab from the site (its numpy would come from Pyodide's CDN: not here), then the
# wheel's own tapelab/viz/worker.py (it imports no numpy) lays out a small graph with the wheel's viz.js
KERNEL_CODE = '''
import importlib.metadata as md, sys
import piplite
await piplite.install("tapelab", deps=False)
files = {str(f): f for f in md.files("tapelab")}
worker = {}
exec(files["tapelab/viz/worker.py"].read_text(), worker)
svg = worker["render"]('digraph tape { "x" -> "op_0" -> "y" }', files["tapelab/viz/vizjs/viz.js"].read_text())
try:
    worker["render"]('digraph tape { "x" -> }', "")
except RuntimeError as e:
    error = str(e)
print("tapelab", md.version("tapelab"), "on", sys.platform, "- viz.js drew", svg.count('class="node"'), "nodes;",
      worker["available"](), "-", error)
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    browser.require(("jupyterlite_core", "test"), ("jupyterlite_pyodide_kernel", "test"))
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_lite", browser.ROOT / "scripts" / "build_lite.py")
    build_lite = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_lite)
    out = tmp_path_factory.mktemp("lite") / "site"
    build_lite.main([str(out)])
    handler = functools.partial(_QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield out, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_the_site_holds_the_lessons_pyodide_and_the_wheels(site):
    out, _ = site
    config = json.loads((out / "jupyter-lite.json").read_text())["jupyter-config-data"]
    kernel = config["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    assert kernel["pyodideUrl"] == "./static/pyodide/pyodide.mjs"  # Pyodide from the site, not a CDN
    assert (out / "static" / "pyodide" / "pyodide.asm.wasm").stat().st_size > 1_000_000
    lessons = sorted(p.name for p in (browser.ROOT / "notebooks").glob("*.ipynb"))
    assert sorted(p.name for p in (out / "files").glob("*.ipynb")) == lessons
    first = json.loads((out / "files" / lessons[0]).read_text())["cells"][0]
    assert "%pip install" in "".join(first["source"]) and "tapelab" in "".join(first["source"])
    wheels = json.loads((out / "pypi" / "all.json").read_text())
    assert {"tapelab", "ipywidgets", "anywidget"} <= set(wheels)


def test_the_kernel_starts_from_the_site_installs_tapelab_and_viz_js_draws(site):
    out, url = site
    with browser.chromium() as page:
        requested = []
        page.on("request", lambda r: requested.append(r.url))
        page.goto(f"{url}/lab/index.html?path={urllib.parse.quote(sorted((out / 'files').glob('*.ipynb'))[0].name)}")
        page.wait_for_selector(".jp-Notebook .jp-Cell >> nth=0", timeout=60_000)
        assert "%pip install" in page.locator(".jp-Notebook .jp-Cell").first.inner_text()  # the lesson, opened
        page.goto(f"{url}/repl/index.html?kernel=python&code={urllib.parse.quote(KERNEL_CODE)}")
        output = page.locator(".jp-OutputArea-output").first
        output.wait_for(timeout=120_000)
        page.wait_for_timeout(500)
        text = output.inner_text()
        browser.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(browser.SCREENSHOTS / "jupyterlite_kernel.png"))
    import importlib.metadata

    version = importlib.metadata.version("tapelab")  # (the site's wheel is built from this checkout)
    assert f"tapelab {version} on emscripten - viz.js drew 3 nodes; True - Graphviz (viz.js) failed: " in text, text
    assert "syntax error" in text, text
    left = [u for u in requested if not u.startswith((url, "blob:", "data:"))]
    assert not left, f"requests that left the site: {left}"
