"""Drawing in the browser: Graphviz compiled to WebAssembly (viz.js) lays out the DOT where the kernel has no ``dot``.

    draw(tape) --no Graphviz in the kernel--> BrowserDrawing(source=DOT) --the page: viz.js--> SVG (sent back: .svg)

``vizjs/viz.js`` is @viz-js/viz from npm, unchanged and checked by sha256 (``scripts/fetch_vizjs.py``); it holds
Graphviz 16.1.0, the version graphviz-pure ports, so both paths draw the same SVG. A page gets it once: the first
picture asks its kernel for it by a message (``vizloader.js``) and the page keeps it for every later picture.
Imported only when a picture is drawn this way (``import tapelab`` needs no widget library).
"""

import pathlib

import anywidget
import traitlets

from tapelab.viz.dot import edge_count
from tapelab.viz.limits import VIZJS, check_size

HERE = pathlib.Path(__file__).parent


class DrawsInBrowser(anywidget.AnyWidget):
    """A widget whose front end may lay out DOT with viz.js: it answers the page's one request for the library."""

    vizjs_sent = 0  # how many times this kernel has sent viz.js to a page (once per page that drew here)

    @staticmethod
    def module(name):
        """The widget's ES module: the shared loader (``vizloader.js``), then its own ``name``."""
        return (HERE / "vizloader.js").read_text(encoding="utf-8") + (HERE / name).read_text(encoding="utf-8")

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.on_msg(self._send_vizjs)

    def _send_vizjs(self, widget, content, buffers):
        if content.get("need") != "vizjs":
            return
        try:
            self.send({"vizjs": VIZJS.read_text(encoding="utf-8")})
            DrawsInBrowser.vizjs_sent += 1
        except OSError as e:  # an installation without the file: the picture says so
            self.send({"vizjs": "", "error": f"{VIZJS} could not be read ({e}); reinstall tapelab"})


class BrowserDrawing(DrawsInBrowser):
    """A tape drawn by Graphviz in the browser, where the kernel cannot run ``dot`` (what :func:`tapelab.viz.draw`
    returns there). Shows inline; after it has been shown, ``.svg`` holds the picture and ``.save("tape.svg")``
    writes it. Attributes: ``source`` (the DOT text), ``svg``, ``error`` (what went wrong in the browser, if
    anything)."""

    _esm = DrawsInBrowser.module("browserdrawing.js")
    source = traitlets.Unicode("").tag(sync=True)
    svg = traitlets.Unicode("").tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)

    def __init__(self, source):
        check_size(source)
        super().__init__(source=source)

    def __repr__(self):
        return f"<tapelab.viz.BrowserDrawing: {edge_count(self.source)} edges, drawn in the browser>"

    def save(self, filename):
        """Write the picture to ``filename``: ``.svg`` (once the browser has drawn it) or ``.dot``/``.gv``."""
        path = pathlib.Path(filename)
        suffix = path.suffix.lower()
        if suffix in (".dot", ".gv"):
            path.write_text(self.source, encoding="utf-8")
        elif suffix == ".svg":
            if not self.svg:
                raise RuntimeError(
                    "save: the browser has not drawn this picture yet" + (f" ({self.error})" if self.error else "")
                    + ". Show it first (make it the last line of a cell), then save.")
            path.write_text(self.svg, encoding="utf-8")
        else:
            raise ValueError(f"save: a picture drawn in the browser saves as .svg or .dot, not {path.name!r} (a PNG "
                             "needs Graphviz in the kernel: apt-get install graphviz, or pip install graphviz-pure).")
        return path
