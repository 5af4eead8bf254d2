"""Render the DOT text with Graphviz: the ``graphviz`` package, imported only when drawing.

Which ``dot`` runs: the system Graphviz (``dot`` on PATH) when there is one; otherwise the
``graphviz-pure`` wheel's static program (on PATH, or beside this Python, as in a venv that is not
activated); otherwise :class:`GraphvizNotFound` explains how to get one. ``print(tape)`` always works.
"""

import base64
import os
import pathlib
import shutil
import sysconfig
import threading

from tapelab.viz.dot import to_dot

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

    ``prefer``: ``None`` (the system ``dot``, else ``graphviz-pure``), ``"system"``, ``"graphviz-pure"``,
    or the path of a ``dot``-compatible program. ``path`` is the search path (default: ``$PATH``, then
    the directory of this Python's scripts, where ``pip install graphviz-pure`` puts the program).

    >>> kind, exe = find_dot()
    >>> kind in ("system", "graphviz-pure")
    True
    """
    if prefer not in (None, "system", "graphviz-pure"):
        exe = pathlib.Path(prefer)
        if not (exe.is_file() and os.access(exe, os.X_OK)):
            raise GraphvizNotFound(f"draw: dot={prefer!r} is not an executable file.\n{INSTALL_HELP}")
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
    """Run Graphviz on DOT text; returns the output bytes (``format``: ``"svg"``, ``"png"``, ...)."""
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


PNG_SIZE_IN = "10.5,40"  # the PNG fallback is scaled down to fit this box (inches at 96 dpi): a cell, not a poster


class Drawing:
    """A rendered tape: shows inline in Jupyter; ``.save("tape.svg")`` or ``.save("tape.png")``.

    Jupyter gets the SVG (scaled down to the cell's width if it is wider) and a PNG of the same picture:
    a notebook opened without running it is "not trusted", and Jupyter then shows images but not SVG.
    Attributes: ``source`` (the DOT text), ``svg`` (the SVG text), ``dot`` (``(kind, path)`` of the
    Graphviz program used).
    """

    def __init__(self, source, dot=None):
        self.source = source
        self.dot = find_dot(dot)
        self.svg = fit_width(render_dot(source, "svg", self.dot[1]).decode("utf-8"))

    def _repr_svg_(self):
        return self.svg

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"image/svg+xml": self.svg, "image/png": base64.b64encode(self.png(cell=True)).decode("ascii"),
                "text/plain": repr(self)}

    def __repr__(self):
        n = self.source.count("->")
        return f"<tapelab.viz.Drawing: {n} edges; .save('tape.svg' or 'tape.png')>"  # (.dot says which Graphviz)

    def png(self, cell=False):
        """The picture as PNG bytes (``cell=True``: scaled down to fit a notebook cell)."""
        source = self.source.replace("{", f'{{\n  graph [size="{PNG_SIZE_IN}"];', 1) if cell else self.source
        return render_dot(source, "png", self.dot[1])

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


def fit_width(svg):
    """Let an SVG shrink to its container's width (never grow): no horizontal scrolling in a notebook cell."""
    return svg.replace("<svg ", '<svg style="max-width: 100%; height: auto" ', 1)


def draw(tape, target=None, sources=None, *, dot=None, **options):
    """Draw the tape with Graphviz; the result shows inline in Jupyter and can ``.save()`` SVG or PNG.

    Takes the same options as :func:`tapelab.viz.to_dot` (``detail``, ``highlight``, ``collapse``,
    ``expand``, ``max_ops``, ...). ``dot`` picks the Graphviz program: ``None`` (the system ``dot``,
    else ``graphviz-pure``), ``"system"``, ``"graphviz-pure"`` or a path.

    >>> x = tl.Variable(3.0, name="x")
    >>> with tl.GradientTape() as tape:
    ...     y = x * x
    >>> drawing = draw(tape)              # in a notebook, the last line of a cell shows the picture
    >>> drawing.save("tape.svg")          # doctest: +SKIP
    """
    return Drawing(to_dot(tape, target, sources, **options), dot=dot)


def tape_mimebundle(tape, include=None, exclude=None):
    """The tape's rich display: its picture as SVG and its listing as text (the listing alone without Graphviz)."""
    from tapelab.viz.text import format_tape

    bundle = {"text/plain": format_tape(tape)}
    if (include is not None and "image/svg+xml" not in include) or (exclude and "image/svg+xml" in exclude):
        return bundle
    try:
        drawing = draw(tape)
    except GraphvizNotFound:
        return bundle  # the text listing is shown instead
    pictures = drawing._repr_mimebundle_()
    return {**bundle, "image/svg+xml": pictures["image/svg+xml"], "image/png": pictures["image/png"]}
