"""The stepper's picture as an anywidget: the SVG goes to the browser once, each step restyles it there.

Imported only when a stepper is made (``import tapelab`` needs no widget library). The front end is
``graphview.js`` and ``graphview.css`` beside this file, plain ES module and CSS (no build step), after
``vizloader.js`` (Graphviz in the browser, for a kernel without ``dot``).
"""

import traitlets

from tapelab.viz.browser import HERE, DrawsInBrowser
from tapelab.viz.render import LEGIBLE_ZOOM


class GraphView(DrawsInBrowser):
    """Shows ``svg`` (or lays out ``dot`` in the browser when the kernel has no Graphviz); at each ``position`` in
    ``mode`` it styles nodes and edges by ``schedules`` (see :class:`tapelab.viz.steps.Schedule`), keeps the current
    op in view and jumps to a clicked node's step."""

    _esm = DrawsInBrowser.module("graphview.js")
    _css = HERE / "graphview.css"
    svg = traitlets.Unicode("").tag(sync=True)
    dot = traitlets.Unicode("").tag(sync=True)
    schedules = traitlets.Dict().tag(sync=True)
    position = traitlets.Int(0).tag(sync=True)
    mode = traitlets.Unicode("backward").tag(sync=True)
    legible_zoom = traitlets.Float(LEGIBLE_ZOOM).tag(sync=True)  # the first zoom never shrinks its text below 11 px
