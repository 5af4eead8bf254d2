"""Watching training: a live loss-curve plot, a live plot of each layer's gradient norm, progress bars.

    plot = tl.plots.LossPlot()                  # one figure, redrawn in place in a notebook
    for epoch in tl.plots.progress(range(num_epochs), desc="epoch"):
        steps = tl.plots.progress(train_batches, desc="steps", leave=False)
        for x, y in steps:
            ...
            steps.log(loss=loss)                # the current loss appears in the bar
            plot.update(loss=loss)
        plot.update(test_loss=test_loss, test_accuracy=acc)
    plot.close()                                # final drawing (and a PNG outside notebooks)

In a notebook the figure is shown once and then replaced in place through an IPython display
handle (no flicker, no pile of figures). In a plain script it is saved as a PNG instead. The
figure is a bare ``matplotlib.figure.Figure`` that pyplot never sees, so it cannot leak.
matplotlib and tqdm are imported only when a plot or bar is made.
"""

import io
import math
import sys
import time
from pathlib import Path

import numpy as np

from tapelab.engine.learner import spell
from tapelab.engine.tensor import to_numpy


def in_notebook():
    """True inside a Jupyter kernel (where rich output can be displayed and updated)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _number(value, name="value"):
    array = to_numpy(value)
    if np.size(array) != 1:
        raise ValueError(spell(f"{name} must be one number, got an array of shape {np.shape(array)}. A loss per "
                               "example needs reducing first, e.g. tl.reduce_mean(loss)."))
    return float(array.reshape(()))  # nan/inf stay: plotted as a gap, shown in the bar so the learner notices


class LossPlot:
    """A live plot of training curves: losses on the left, accuracies (any name with "acc") on the right.

    ``update(step=None, **values)`` adds one point per named curve (``loss=``, ``test_loss=``,
    ``accuracy=``, ``test_accuracy=``, or any other name) and redraws at most every
    ``min_interval`` seconds; ``close()`` (or leaving a ``with`` block) draws the final state.
    Without ``step`` each curve counts its own points 0, 1, 2, ...

    ``display``: ``"auto"`` (update a notebook output in place when in Jupyter, else save to
    ``path``), ``"notebook"`` or ``"file"``. ``path`` defaults to ``loss_curve.png`` outside
    notebooks; in a notebook the PNG is written only if ``path`` is given.

    >>> plot = tl.plots.LossPlot(display="file", path="curve.png")
    >>> for step in range(3):
    ...     plot.update(loss=1.0 / (step + 1))
    >>> plot.close()
    """

    default_path = "loss_curve.png"  # where a plot outside a notebook is saved when no path is given

    def __init__(self, title="Training", xlabel="step", path=None, min_interval=0.5, logy=False,
                 display="auto", figsize=(6.0, 3.0), dpi=96):  # 576 px: never shrunk, its smallest text 11 px
        if display not in ("auto", "notebook", "file"):
            raise ValueError(f"LossPlot: display must be 'auto', 'notebook' or 'file', got {display!r}")
        self.notebook = in_notebook() if display == "auto" else display == "notebook"
        self.path = Path(path) if path is not None else (None if self.notebook else Path(self.default_path))
        self.title, self.xlabel, self.logy = title, xlabel, bool(logy)
        self.min_interval = float(min_interval)
        self.figsize, self.dpi = figsize, dpi
        self.history = {}  # curve name -> ([steps], [values])
        self.draws = 0  # how many times the figure was rendered
        self._handle = None
        self._last_draw = -math.inf
        self._figure = None
        self.closed = False

    # --- data --------------------------------------------------------------------------------
    def update(self, step=None, draw=None, **values):
        """Add a point to each named curve; redraw if ``draw`` is True or enough time has passed."""
        if self.closed:
            raise RuntimeError("LossPlot.update: this plot is closed; make a new LossPlot()")
        if not values:
            raise ValueError("LossPlot.update: give at least one named value, e.g. plot.update(loss=loss)")
        self._add(step, draw, values)

    def _add(self, step, draw, values):
        """One point per ``{curve name: value}``; a redraw when ``draw`` or ``min_interval`` says so."""
        for name, value in values.items():
            steps, vals = self.history.setdefault(name, ([], []))
            steps.append(len(steps) if step is None else float(step))
            vals.append(_number(value, f"{type(self).__name__}.update: {name}"))
        if draw or (draw is None and time.monotonic() - self._last_draw >= self.min_interval):
            self.draw()

    # --- drawing -------------------------------------------------------------------------------
    def _build(self):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=self.figsize, dpi=self.dpi)  # not registered with pyplot: nothing to leak
        FigureCanvasAgg(fig)
        return fig

    def render(self):
        """The figure as PNG bytes."""
        if self._figure is None:
            self._figure = self._build()
        fig = self._figure
        fig.clear()
        accuracy = [n for n in self.history if "acc" in n.lower()]
        losses = [n for n in self.history if n not in accuracy]
        panels = [(p, names) for p, names in (("loss", losses), ("accuracy", accuracy)) if names]
        for k, (label, names) in enumerate(panels or [("loss", [])]):
            ax = fig.add_subplot(1, max(len(panels), 1), k + 1)
            for name in names:
                steps, vals = self.history[name]
                style = "o-" if len(vals) < 30 else "-"
                ax.plot(steps, vals, style, markersize=3, label=f"{name}: {vals[-1]:.4g}")
            if label == "loss" and self.logy and names:
                ax.set_yscale("log")
            ax.set_xlabel(self.xlabel)
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
            if names:
                ax.legend(loc="best", fontsize="small")
        return _png(fig, self.title)

    def draw(self):
        """Render now: replace the notebook output in place, or (re)write the PNG file."""
        png = self.render()
        self.draws += 1
        self._last_draw = time.monotonic()
        if self.notebook:
            from IPython.display import Image, display

            image = Image(data=png, format="png")
            if self._handle is None:
                self._handle = display(image, display_id=True)  # one output area, updated below
            else:
                self._handle.update(image)
        if self.path is not None and (not self.notebook or self.closed):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_bytes(png)
        return png

    def close(self):
        """Draw the final state (saving the PNG if there is a ``path``) and free the figure."""
        if self.closed:
            return
        self.closed = True
        if self.history:
            self.draw()
        if self._figure is not None:
            self._figure.clear()
            self._figure = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _repr_png_(self):  # showing the plot object itself shows the current figure
        return self.render() if self.history else None


def _png(fig, title):
    fig.suptitle(title)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


class FlowPlot(LossPlot):
    """A live plot of each layer's gradient norm over training, on a log scale: one line per name scope (a Keras
    layer, a time step), read off each step's backward pass by :func:`tapelab.viz.gradient_flow`.

    ``update(tape, step=None)`` after the step's ``tape.gradient(...)`` adds one point per scope that reads a
    trainable Variable; ``which``: ``"weights"`` (|dL/dW| of the scope's weights, the size of its update) or
    ``"output"`` (|dL/d output|, the gradient arriving from above); ``depth`` as ``gradient_flow``'s. The lines go
    from light (the first layer) to dark (the last), as in ``draw(tape, flow=True)``. ``model.fit(..., flow=True)``
    draws one. Display and ``close()`` as :class:`LossPlot`'s.

    >>> plot = tl.plots.FlowPlot(display="file", path="flow.png")
    >>> w = tl.Variable([[2.0]], name="w")
    >>> for step in range(3):
    ...     with tl.GradientTape() as tape:
    ...         with tl.name_scope("layer"):
    ...             loss = tl.reduce_sum(w * w)
    ...     grad = tape.gradient(loss, w)
    ...     plot.update(tape)
    >>> plot.history["layer"][1]
    [4.0, 4.0, 4.0]
    >>> plot.close()
    """

    default_path = "gradient_flow.png"

    def __init__(self, which="weights", depth=1, title=None, xlabel="training step", **options):
        if which not in ("weights", "output"):
            raise ValueError(f"FlowPlot: which must be 'weights' (|dL/dW| per layer) or 'output' (|dL/d output| "
                             f"per layer), got {which!r}")
        what = "|dL/dW|, the gradient of each layer's weights" if which == "weights" else \
            "|dL/d output|, the gradient arriving at each layer"
        super().__init__(title=title or what, xlabel=xlabel, logy=True, **options)
        self.which, self.depth = which, depth

    def update(self, tape, step=None, draw=None):
        """Add each scope's norm in ``tape``'s latest backward pass (call it after ``tape.gradient``)."""
        from tapelab.viz.flow import gradient_flow  # (the layer below: the data this plot draws)

        if self.closed:
            raise RuntimeError("FlowPlot.update: this plot is closed; make a new FlowPlot()")
        rows = [r for r in gradient_flow(tape, self.depth) if r.weight_norm is not None]
        if not rows:
            raise ValueError("FlowPlot.update: no name scope of this backward pass reads a trainable Variable, so "
                             "there is no layer to plot. Use Keras layers (each records under its name) or wrap "
                             "each layer's ops in `with tl.name_scope('layer_1'):`.")
        self._add(step, draw, {r.scope: r.weight_norm if self.which == "weights" else r.output_norm for r in rows})

    def render(self):
        """The figure as PNG bytes: every layer's line on one log-scale axis, light (first) to dark (last)."""
        from matplotlib import colormaps

        if self._figure is None:
            self._figure = self._build()
        fig = self._figure
        fig.clear()
        ax = fig.add_subplot(1, 1, 1)
        names = list(self.history)
        ramp = colormaps["viridis_r"]
        for n, name in enumerate(names):
            steps, vals = self.history[name]
            ax.plot(steps, vals, "o-" if len(vals) < 30 else "-", markersize=3, color=ramp(0.15 + 0.85 * n / max(
                len(names) - 1, 1)), label=f"{name}: {vals[-1]:.2g}")
        ax.set_yscale("log")
        ax.set_xlabel(self.xlabel)
        ax.set_ylabel("gradient norm")
        ax.grid(alpha=0.3)
        if names:
            ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize="small", ncols=1 + len(names) // 13)
        return _png(fig, self.title)


def layer_graph(boxes, arrows, rankdir="TB"):
    """A model's layer graph drawn by Graphviz (``keras.utils.plot_model``): ``boxes`` are ``(key, text, is_layer)``
    (a layer a rounded box, an operator such as ``add`` an ellipse), ``arrows`` ``(from key, to key)``."""
    from tapelab.viz.dot import quote
    from tapelab.viz.render import drawing

    lines = ["digraph model {", f'  graph [rankdir={rankdir}, fontname="Helvetica", nodesep=0.3, ranksep=0.35];',
             '  node [shape=box, style="rounded,filled", fillcolor="#eef3fb", fontname="Helvetica", fontsize=10];',
             '  edge [color="#555555", arrowsize=0.7];']
    operator = ', shape=ellipse, fillcolor="#ffffff"'
    lines += [f"  n{key} [label={quote(text)}{'' if is_layer else operator}];" for key, text, is_layer in boxes]
    lines += [f"  n{a} -> n{b};" for a, b in arrows] + ["}"]
    return drawing("\n".join(lines))


class progress:
    """A ``tqdm.auto`` progress bar (a widget in Jupyter, text in a terminal) that can show the loss.

    Iterate over it like the iterable it wraps; ``log(loss=..., acc=...)`` puts the current values
    in the bar. In Jupyter, a finished bar becomes its last line of text (or nothing, with
    ``leave=False``): a saved notebook shows how far the run went, not a widget stuck at 0%.

    >>> steps = tl.plots.progress(range(3), desc="steps")
    >>> for step in steps:
    ...     steps.log(loss=1.0 / (step + 1))
    """

    def __init__(self, iterable=None, desc=None, total=None, leave=True, **tqdm_kwargs):
        from tqdm.auto import tqdm

        if sys.platform == "emscripten":  # Pyodide (JupyterLite) starts no threads: no monitor thread, no warning
            tqdm.monitor_interval = 0
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            try:
                total = len(iterable)
            except TypeError:  # (a dataset whose length is unknown, e.g. filtered: a bar without an end)
                total = None
        widget = _is_notebook_tqdm(tqdm)
        if widget:
            tqdm_kwargs.setdefault("display", False)  # shown below, through a handle that can replace it
        self.bar = tqdm(iterable, desc=desc, total=total, leave=leave, **tqdm_kwargs)
        self.values = {}
        self._leave, self._handle = leave, None
        if widget:
            from IPython.display import display

            self._handle = display(self.bar.container, display_id=True)

    def __iter__(self):
        yield from self.bar
        self._finish()

    def _finish(self):
        if self._handle is not None:
            from IPython.display import Pretty

            self._handle.update(Pretty(str(self.bar) if self._leave else ""))
            self._handle = None

    def __len__(self):
        return len(self.bar)

    def log(self, **values):
        """Show named values (tensors or numbers) in the bar, e.g. ``log(loss=loss)``."""
        for name, value in values.items():
            self.values[name] = _number(value, f"progress.log: {name}")
        self.bar.set_postfix({k: f"{v:.4f}" for k, v in self.values.items()}, refresh=False)

    def update(self, n=1):
        """Advance a bar made without an iterable by ``n`` steps."""
        self.bar.update(n)

    def close(self):
        self.bar.close()
        self._finish()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _is_notebook_tqdm(cls):
    """Whether ``tqdm.auto`` chose the Jupyter widget bar (it did if IPython and ipywidgets are there)."""
    try:
        from tqdm.notebook import tqdm as notebook_tqdm
    except ImportError:
        return False
    return issubclass(cls, notebook_tqdm)
