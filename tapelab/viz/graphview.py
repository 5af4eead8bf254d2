"""The stepper's picture as an anywidget: the SVG goes to the browser once, each step restyles it there.

Imported only when a stepper is made (``import tapelab`` needs no widget library). The front end is
``graphview.js`` and ``graphview.css`` beside this file, plain ES module and CSS (no build step).
"""

import pathlib

import anywidget
import traitlets

HERE = pathlib.Path(__file__).parent


class GraphView(anywidget.AnyWidget):
    """Shows ``svg``; at each ``position`` in ``mode`` it styles nodes and edges by ``schedules`` (see
    :class:`tapelab.viz.steps.Schedule`), keeps the current op in view and jumps to a clicked node's step."""

    _esm = HERE / "graphview.js"
    _css = HERE / "graphview.css"
    svg = traitlets.Unicode("").tag(sync=True)
    schedules = traitlets.Dict().tag(sync=True)
    position = traitlets.Int(0).tag(sync=True)
    mode = traitlets.Unicode("backward").tag(sync=True)
