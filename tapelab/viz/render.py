"""Render the DOT text with Graphviz: the ``graphviz`` package, imported only when drawing.

Which Graphviz draws: the system Graphviz (``dot`` on PATH) when there is one; otherwise the
``graphviz-pure`` wheel's static program (on PATH, or beside this Python, as in a venv that is not
activated); otherwise, in Jupyter, Graphviz in the browser (viz.js, :mod:`tapelab.viz.browser`);
otherwise :class:`GraphvizNotFound` explains how to get one. ``print(tape)`` always works.
The environment variable ``TAPELAB_DOT`` gives the default choice: ``system``, ``graphviz-pure``, a path,
or ``browser`` (always draw in the browser, as where no program can run).
"""

import base64
import os
import pathlib
import re
import shutil
import sys
import sysconfig
import threading
import weakref

from tapelab.viz import worker
from tapelab.viz.dot import edge_count, to_dot
from tapelab.viz.limits import VIZJS

_lock = threading.Lock()  # the graphviz package keeps its executable in a module global


class GraphvizNotFound(RuntimeError):
    """No Graphviz ``dot`` program (nor ``graphviz-pure``) was found, or the ``graphviz`` package is missing."""


INSTALL_HELP = (
    "Install one of them:\n"
    "    apt-get install graphviz        (Debian/Ubuntu; conda install graphviz; brew install graphviz)\n"
    "    pip install graphviz-pure       (no root needed: a self-contained dot, which tapelab finds by itself)\n"
    "Meanwhile print(tape) shows the same tape as text, and tapelab.viz.to_dot(tape) gives the DOT source."
)


def _scripts_dir():
    return sysconfig.get_path("scripts")


def find_dot(prefer=None, path=None):
    """The Graphviz program to run, as ``(kind, path)`` with kind ``"system"`` or ``"graphviz-pure"``.

    ``prefer``: ``None`` (``$TAPELAB_DOT``, else the system ``dot``, else ``graphviz-pure``), ``"system"``,
    ``"graphviz-pure"``, or the path of a ``dot``-compatible program; ``"browser"`` finds none. ``path`` is
    the search path (default: ``$PATH``, then the directory of this Python's scripts, where
    ``pip install graphviz-pure`` puts the program).

    >>> kind, exe = find_dot()
    >>> kind in ("system", "graphviz-pure")
    True
    """
    prefer, asked = choice(prefer)
    if prefer == "browser":
        raise GraphvizNotFound(f"{asked}: pictures are drawn in the browser, not by a Graphviz program in the kernel.")
    if prefer not in (None, "system", "graphviz-pure"):
        exe = pathlib.Path(prefer)
        if not (exe.is_file() and os.access(exe, os.X_OK)):
            raise GraphvizNotFound(f"draw: {asked} is not an executable file (nor system, graphviz-pure or browser)."
                                   f"\n{INSTALL_HELP}")
        return ("graphviz-pure" if "graphviz-pure" in exe.name else "system"), str(exe.absolute())
    if path is None:
        path = os.pathsep.join(p for p in (os.environ.get("PATH", ""), _scripts_dir()) if p)
    if prefer in (None, "system"):
        exe = shutil.which("dot", path=path)
        if exe:
            return "system", exe
    if prefer in (None, "graphviz-pure"):
        exe = shutil.which("graphviz-pure", path=path)
        if exe:
            return "graphviz-pure", exe
    wanted = {"system": "the system Graphviz program `dot`", "graphviz-pure": "the program `graphviz-pure`"}.get(
        prefer, "Graphviz: neither `dot` nor `graphviz-pure`")
    raise GraphvizNotFound(f"Cannot draw the tape: {wanted} was not found (searched {path!r}).\n{INSTALL_HELP}")


def choice(dot=None):
    """The Graphviz asked for, and where the asking was (for messages): ``dot`` when given, else ``$TAPELAB_DOT``
    (``system``, ``graphviz-pure``, ``browser`` in any case, or a path), else ``(None, None)``: whatever is found."""
    if dot is not None:
        return dot, f"dot={dot!r}"
    value = os.environ.get("TAPELAB_DOT", "").strip()
    if not value:
        return None, None
    keyword = value.lower()
    return (keyword if keyword in ("system", "graphviz-pure", "browser") else value), f"TAPELAB_DOT={value}"


def _graphviz():
    try:
        import graphviz
    except ImportError:
        raise GraphvizNotFound(
            "Cannot draw the tape: the Python package `graphviz` is not installed. "
            "pip install graphviz graphviz-pure (or pip install 'tapelab[lab]').\n"
            "Meanwhile print(tape) shows the same tape as text."
        ) from None
    return graphviz


def render_dot(source, format="svg", dot=None):
    """Run Graphviz on DOT text; returns the output bytes (``format``: ``"svg"``, ``"png"``, ...). In Pyodide,
    where no program runs, viz.js lays out SVG inside the kernel (:mod:`tapelab.viz.worker`)."""
    if format == "svg" and choice(dot)[0] is None and worker.available():
        return worker.render(source, VIZJS.read_text(encoding="utf-8")).encode("utf-8")
    graphviz = _graphviz()
    from graphviz.backend import dot_command

    kind, exe = find_dot(dot)
    with _lock:  # point the graphviz package at the program we found, for this call only
        saved = dot_command.DOT_BINARY
        dot_command.DOT_BINARY = pathlib.Path(exe)
        try:
            return graphviz.pipe("dot", format, source.encode("utf-8"))
        except graphviz.CalledProcessError as e:
            raise RuntimeError(f"Graphviz ({kind}: {exe}) failed on the tape's graph: {e.stderr!r}") from None
        finally:
            dot_command.DOT_BINARY = saved


# No text in a picture is shown smaller than LEGIBLE_PX: a picture may shrink to a narrow notebook cell only by
# LEGIBLE_ZOOM at most; a wider one is shown at its natural size, and the cell scrolls sideways.
SMALLEST_TEXT_PT = 10  # the smallest text in tapelab's pictures (dot.py: the labels of nodes and edges)
LEGIBLE_PX = 11
LEGIBLE_ZOOM = LEGIBLE_PX / (SMALLEST_TEXT_PT * 96 / 72)  # 0.825
NARROW_CELL_PX = 592  # the output width of a JupyterLab 4 notebook in a 1024-px-wide window, its file browser open
CELL_DPI = 144  # pictures are drawn at 1.5 pixels per screen pixel, so that their text stays sharp


class Drawing:
    """A rendered tape: shows inline in Jupyter; ``.save("tape.svg")`` or ``.save("tape.png")``.

    Jupyter gets it as a sharp PNG with its size in screen pixels, which Jupyter shrinks to the cell's width
    when the cell is narrower (an SVG it would show at full size, past the cell's edge) and shows whether or
    not the notebook is trusted. Attributes: ``source`` (the DOT text), ``svg`` (the SVG text), ``dot``
    (``(kind, path)`` of the Graphviz program used).
    """

    def __init__(self, source, dot=None):
        self.source = source
        in_pyodide = choice(dot)[0] is None and worker.available()  # Graphviz inside the kernel (viz.js): SVG only
        self.dot = ("viz.js", "the kernel's own worker") if in_pyodide else find_dot(dot)
        self.svg = fit_width(render_dot(source, "svg", None if in_pyodide else self.dot[1]).decode("utf-8"))
        self._shown = None  # the PNG and its width, made on the first display

    def _repr_mimebundle_(self, include=None, exclude=None):
        if self.dot[0] == "viz.js":  # no PNG without a Graphviz program
            return {"image/svg+xml": self.svg, "text/plain": repr(self)}
        if self._shown is None:
            self._shown = cell_png(self.source, self.dot[1])
        png, metadata = self._shown
        return {"image/png": png, "text/plain": repr(self)}, {"image/png": metadata}

    def __repr__(self):
        # (.dot says which Graphviz)
        return f"<tapelab.viz.Drawing: {edge_count(self.source)} edges; .save('tape.svg' or 'tape.png')>"

    def png(self):
        """The picture as PNG bytes, at its natural size."""
        if self.dot[0] == "viz.js":
            raise GraphvizNotFound("png: viz.js draws SVG only; a PNG needs a Graphviz program. Save .svg instead.")
        return render_dot(self.source, "png", self.dot[1])

    def save(self, filename):
        """Write the picture to ``filename``: ``.svg``, ``.png`` or ``.dot``/``.gv`` (the DOT text)."""
        path = pathlib.Path(filename)
        suffix = path.suffix.lower()
        if suffix == ".svg":
            path.write_text(self.svg, encoding="utf-8")
        elif suffix == ".png":
            path.write_bytes(self.png())
        elif suffix in (".dot", ".gv"):
            path.write_text(self.source, encoding="utf-8")
        else:
            raise ValueError(f"save: cannot write {path.name!r}; use a name ending in .svg, .png or .dot.")
        return path


def cell_png(source, dot=None):
    """``(base64 PNG, its output metadata)`` of DOT text, for Jupyter: drawn at ``CELL_DPI``, its width in screen
    pixels, and ``unconfined`` (shown at its natural size) when shrinking it to a narrow cell would make its text
    too small to read."""
    png = render_dot(source.replace("{", f"{{\n  graph [dpi={CELL_DPI}];", 1), "png", dot)
    width = round(int.from_bytes(png[16:20], "big") * 96 / CELL_DPI)  # (the PNG header's width field)
    metadata = {"width": width} if shrinks_legibly(width) else {"width": width, "unconfined": True}
    return base64.b64encode(png).decode("ascii"), metadata


def shrinks_legibly(width_px):
    """Whether a picture this wide (in screen pixels) keeps its text legible shrunk to the narrowest cell."""
    return width_px * LEGIBLE_ZOOM <= NARROW_CELL_PX


def svg_width_px(svg):
    """The width Graphviz gave an SVG (``width="123pt"``), in screen pixels; 0 if there is none."""
    match = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', svg)
    return float(match[1]) * 96 / 72 if match else 0.0


def fit_width(svg):
    """Let an SVG shrink to its container's width (never grow) where its text stays legible: no horizontal
    scrolling in a notebook cell, unless the picture is too wide to shrink that far."""
    if not shrinks_legibly(svg_width_px(svg)):
        return svg
    return svg.replace("<svg ", '<svg style="max-width: 100%; height: auto" ', 1)


def drawing(source, dot=None):
    """DOT text as a picture for Jupyter. A Graphviz program in the kernel draws it (a :class:`Drawing`); where
    none was asked for and none is found (or the browser was asked for), in a notebook, Graphviz in the browser
    does (a :class:`tapelab.viz.browser.BrowserDrawing`). A program asked for by name draws, or says why not."""
    try:
        return Drawing(source, dot=dot)
    except GraphvizNotFound as missing:
        if choice(dot)[0] not in (None, "browser"):  # a program asked for by name: its error says why
            raise
        if not in_notebook():  # a script or a terminal: no browser to draw in
            raise GraphvizNotFound(f"{missing}\nDrawing in the browser needs a Jupyter notebook; here print(tape) "
                                   "shows the tape as text.") from None
        try:
            from tapelab.viz.browser import BrowserDrawing
        except ImportError:  # no anywidget (or ipywidgets): nowhere to draw
            raise GraphvizNotFound(f"{missing}\nTo draw in the browser instead, install anywidget: "
                                   "pip install anywidget (or pip install 'tapelab[lab]').") from None
        return BrowserDrawing(source)


def in_notebook():
    """Whether this runs in a Jupyter kernel (JupyterLab, Notebook, JupyterLite), whose front end can draw."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return shell is not None and type(shell).__name__ != "TerminalInteractiveShell"


def draw(tape, target=None, sources=None, *, dot=None, **options):
    """Draw the tape with Graphviz; the result shows inline in Jupyter and can ``.save()`` SVG (or PNG).

    Takes the same options as :func:`tapelab.viz.to_dot` (``detail``, ``highlight``, ``collapse``,
    ``expand``, ``max_ops``, ...). ``dot`` picks the Graphviz: ``None`` (``$TAPELAB_DOT``, else the system
    ``dot``, else ``graphviz-pure``, else Graphviz in the browser), ``"system"``, ``"graphviz-pure"``, a path,
    or ``"browser"``.

    >>> x = tl.Variable(3.0, name="x")
    >>> with tl.GradientTape() as tape:
    ...     y = x * x
    >>> drawing = draw(tape)              # in a notebook, the last line of a cell shows the picture
    >>> drawing.save("tape.svg")          # doctest: +SKIP
    """
    return drawing(to_dot(tape, target, sources, **options), dot=dot)


_shown = weakref.WeakKeyDictionary()  # tape -> (DOT text, its picture): showing a tape again reuses the picture


def tape_mimebundle(tape, include=None, exclude=None):
    """The tape's rich display: its picture (PNG, or drawn in the browser) and its listing as text (the listing
    alone where nothing can draw). Showing an unchanged tape again reuses its picture (and its widget)."""
    from tapelab.viz.text import format_tape

    bundle = {"text/plain": format_tape(tape)}
    if (include is not None and "image/png" not in include) or (exclude and "image/png" in exclude):
        return bundle
    try:
        source = to_dot(tape)
        source_before, picture = _shown.get(tape, (None, None))
        if source != source_before:
            picture = drawing(source)
            _shown[tape] = source, picture
    except (RuntimeError, ValueError):  # no Graphviz anywhere, a dot that fails, a tape too big for the browser
        return bundle
    shown = picture._repr_mimebundle_()
    data, metadata = shown if isinstance(shown, tuple) else (shown, {})
    return {**data, **bundle}, metadata
