"""Graphviz inside Pyodide's own worker (JupyterLite without widgets): the kernel runs viz.js itself.

    render(dot_text, vizjs_text) -> SVG text        (only in Pyodide, where ``available()``)

Pyodide's kernel runs in a web worker, which can load an ES module and run WebAssembly; ``run_sync`` (JavaScript
promise integration) lets this synchronous code wait for viz.js to start. The first call imports viz.js (the text
of ``tapelab/viz/vizjs/viz.js``) from a blob URL; later calls reuse it. Self-contained: no numpy and no other part
of tapelab, so it can be checked in a browser where Pyodide has no numpy (tests/e2e/test_lite.py).
"""

import sys

_viz = None  # the started viz.js instance, once made


def available():
    """Whether this is Pyodide and it can wait for a JavaScript promise here."""
    if sys.platform != "emscripten":
        return False
    try:
        from pyodide.ffi import can_run_sync
    except ImportError:
        return False
    return can_run_sync()


def render(source, vizjs):
    """Lay out DOT text ``source`` with viz.js (its module text ``vizjs``); the SVG text, or RuntimeError with
    Graphviz's own message (a syntax error names its line)."""
    global _viz
    import js
    from pyodide.ffi import run_sync, to_js

    def obj(d):
        return to_js(d, dict_converter=js.Object.fromEntries)

    if _viz is None:
        url = js.URL.createObjectURL(js.Blob.new(to_js([vizjs]), obj({"type": "text/javascript"})))
        try:
            _viz = run_sync(run_sync(js.eval(f"import({url!r})")).instance())
        finally:
            js.URL.revokeObjectURL(url)
    try:
        result = _viz.render(source, obj({"format": "svg"}))
    except Exception:  # Graphviz itself gave up (out of memory): its instance may be unusable, start afresh
        _viz = None
        raise
    if result.status != "success":
        raise RuntimeError("Graphviz (viz.js) failed: " + "; ".join(str(e.message) for e in result.errors))
    return str(result.output)
