"""The backward stepper widget: a thin shell that maps a position and a mode to what :mod:`steps` prepared.

    BackwardStepper(tape, loss, [x, y])     in Jupyter: Prev / Next / Play / slider / mode, the picture, the panel

Controls are ipywidgets; the picture is an anywidget (``GraphView``) that restyles one Graphviz layout in
the browser and follows the current op. Without anywidget the picture is each step's still frame, drawn
by Graphviz in the kernel (slower, and it does not scroll to the current op); without either, or for a picture
too big for the browser, the picture says why and the panel and table alone show the steps. A notebook that is
not trusted (the lessons as shipped, GitHub, nbviewer) shows a still frame of the last step as PNG, and every step
as text; a learner's own saved copy, reopened, shows the widget restored from the state saved with the notebook, at
the step it was saved at (Play and the slider move the picture; the panel waits for the kernel).
"""

import html
import re

from tapelab.viz.dot import MAX_OPS
from tapelab.viz.render import LEGIBLE_ZOOM, cell_png, svg_width_px
from tapelab.viz.steps import MODES, frame_dot, step_text, step_view, walkthrough


def _ipywidgets():
    try:
        import ipywidgets
    except ImportError:
        raise ImportError(
            "BackwardStepper is a Jupyter widget and needs ipywidgets: pip install ipywidgets anywidget (or "
            "pip install 'tapelab[lab]'). Without it, every step prints as text:\n"
            "    print(tapelab.viz.step_text(tapelab.viz.walkthrough(tape, loss, sources)))"
        ) from None
    return ipywidgets


def _picture(widgets, through, mode):
    """The picture's widget: the anywidget ``GraphView`` (one layout, restyled in the browser), else ``FramesView``."""
    from tapelab.viz.limits import check_size
    from tapelab.viz.render import GraphvizNotFound, render_dot

    dot = ""  # the DOT for the browser to lay out, when the kernel has no Graphviz
    try:
        svg = render_dot(through.dot, "svg").decode("utf-8")
    except GraphvizNotFound as e:  # the browser lays it out (graphview.js), if it is not too big for it
        try:
            check_size(through.dot, "BackwardStepper")
            svg, dot = _no_graph(e, through.dot), through.dot
        except ValueError as too_big:  # (the tape is used up by now: no error, the panel and table still teach)
            svg = _no_graph(too_big)
    except Exception as e:  # a failing dot: the text still teaches
        svg = _no_graph(e, through.dot)
    width = svg_width_px(svg) * LEGIBLE_ZOOM if not dot else 520  # a wide picture takes the whole row
    layout = widgets.Layout(flex=f"1 1 {max(360, min(width, 900)):.0f}px", min_width="300px", margin="0 16px 0 0")
    try:
        from tapelab.viz.graphview import GraphView
    except ImportError:  # no anywidget: the Python-only picture
        return _frames_view(widgets)(through, mode=mode, layout=layout)
    return GraphView(svg="" if dot else svg, dot=dot, schedules={m: s._asdict() for m, s in through.schedules.items()},
                     mode=mode, layout=layout)


def _no_graph(error, dot="", note=""):
    """What shows instead of the picture: why there is none (and what to do), then the DOT text if given."""
    return (f'<pre style="color: #6b7280">(no graph: {html.escape(f"{type(error).__name__}: {error}")})'
            + (f"\n{html.escape(note)}" if note else "") + (f"\n\n{html.escape(dot)}" if dot else "") + "</pre>")


NO_FRAMES = ("Without anywidget the stepper's picture is drawn by Graphviz in the kernel, and there is none here. "
             "To draw it in the browser instead: pip install anywidget (or pip install 'tapelab[lab]'). The panel "
             "and the table show every step meanwhile.")


def _frames_view(widgets):
    import traitlets

    class FramesView(widgets.HTML):
        """The picture without anywidget: each step's still frame, drawn by Graphviz in the kernel (kept once made)."""

        position = traitlets.Int(0)
        mode = traitlets.Unicode("backward")

        def __init__(self, through, **kwargs):
            self._walkthrough, self._svgs = through, {}
            super().__init__(**kwargs)
            self._draw()

        @traitlets.observe("position", "mode")
        def _draw(self, change=None):
            from tapelab.viz.render import GraphvizNotFound, fit_width, render_dot

            key = (self.mode, self.position)
            if key not in self._svgs:
                try:
                    dot = frame_dot(self._walkthrough, *key[::-1])
                    self._svgs[key] = fit_width(render_dot(dot, "svg").decode("utf-8"))
                except GraphvizNotFound as e:  # no Graphviz either: the panel still teaches
                    self._svgs[key] = _no_graph(e, note=NO_FRAMES)
                except Exception as e:  # noqa: BLE001 - a failing dot: the panel still teaches
                    self._svgs[key] = _no_graph(e)
            self.value = f'<div style="max-height: 620px; overflow: auto">{self._svgs[key]}</div>'

    return FramesView


TEXT_STEPS = 12  # the text a notebook stores of a stepper: the first and last this many steps


def _table_html(view):
    if not view.table:
        return ""
    rows = "".join(
        f'<tr><td style="padding: 2px 8px 2px 0"><b>{html.escape(r.name)}</b></td>'
        f'<td style="padding: 2px 8px"><code>{_nowrap(r.value)}</code></td>'
        f'<td style="padding: 2px 0 2px 8px"><i>{html.escape(r.status)}</i></td></tr>' for r in view.table)
    return (f'<div class="tapelab-stepper-table" style="overflow-x: auto"><div>{html.escape(view.table_title)}</div>'
            f'<table style="border-collapse: collapse">{rows}</table></div>')


def _nowrap(text):
    """``text`` as HTML in which a wrapped panel never splits a short value: each ``[[1, 2], [3, 4]]`` (up to
    ``NOWRAP_CHARS``) and ``norm 0.5`` sits in a span that does not break; a longer value wraps after its commas."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "[" and depth == 0:
            out.append(html.escape(text[start:i]))
            start = i
        depth += (ch == "[") - (ch == "]")
        if ch == "]" and depth == 0:
            value = html.escape(text[start:i + 1])
            out.append(f'<span style="white-space: nowrap">{value}</span>' if i + 1 - start <= NOWRAP_CHARS else value)
            start = i + 1
    out.append(html.escape(text[start:]))
    return re.sub(r"norm ([-\d.e+]+)", r'<span style="white-space: nowrap">norm \1</span>', "".join(out))


NOWRAP_CHARS = 40  # longer values may wrap: a value wider than the panel would widen it past the screen


def _panel_html(view):
    op = "" if view.op_index is None else f' data-op="{view.op_index}"'
    return (f'<div class="tapelab-stepper-panel" data-mode="{view.mode}" data-position="{view.position}"{op}>'
            f'<pre style="white-space: pre-wrap; word-break: normal; overflow-wrap: break-word; margin: 0; '
            f'font-size: 12px; line-height: 1.35">'
            f'{_nowrap(chr(10).join(view.panel))}</pre></div>')


class BackwardStepper:
    """Step through the backward pass of a recorded tape, one op at a time, in Jupyter.

    Play, Prev, Next, a slider and Reset move through the steps; the picture marks the op being processed
    in red, colours the edges a gradient already flowed along (labelled with it: ``∂loss/∂z = 0.25``),
    dims those still to come and scrolls to keep the current op in view; a click on a node jumps to its
    step. The panel writes the chain-rule step out with the actual numbers, in the code's names, and the
    table shows each source's gradient accumulated so far. ``mode="forward"`` (or the toggle) replays the
    recorded ops in order instead. The last table equals ``tape.gradient(...)``.

    Like ``gradient()``, it uses up a non-persistent tape: record with ``persistent=True`` to call
    ``gradient()`` as well. Other options (``collapse``, ``expand``, ``detail``, ``max_ops``,
    ``rankdir``) are those of :func:`tapelab.viz.to_dot`; an MLP's layers collapse into boxes.

    >>> x = tl.Variable(tl.ones((2, 2)), name="x")
    >>> y = tl.Variable([[2, 2], [2, 2]], dtype=tl.float32, name="y")
    >>> with tl.GradientTape() as tape:
    ...     loss = tl.reduce_mean(tl.matmul(x, y))
    >>> stepper = tl.viz.BackwardStepper(tape, loss, [x, y])   # in a notebook: the widget
    >>> stepper.next_button.click(); stepper.next_button.click()
    >>> [tuple(row) for row in stepper.view.table]
    [('x', '[[1, 1], [1, 1]]', 'final'), ('y', '[[0.5, 0.5], [0.5, 0.5]]', 'final')]
    >>> print(stepper)       # every step as text (also what a notebook shows without a live kernel)  # doctest: +SKIP
    """

    def __init__(self, tape, target, sources, output_gradients=None, *, mode="backward", collapse=None, expand=(),
                 detail="values", max_ops=MAX_OPS, rankdir=None, interval=1200):
        if mode not in MODES:
            raise ValueError(f"BackwardStepper: mode={mode!r} should be 'backward' or 'forward'.")
        widgets = _ipywidgets()  # before the backward pass: a missing library must not use up the tape
        self.walkthrough = walkthrough(tape, target, sources, output_gradients, collapse=collapse, expand=expand,
                                       detail=detail, max_ops=max_ops, rankdir=rankdir)
        self._views = {}  # (mode, position) -> StepView
        self._make_controls(widgets, self.walkthrough.count(mode), mode, interval)
        self.graph = _picture(widgets, self.walkthrough, mode)
        self.graph.add_class("tapelab-stepper-graph")
        # (the side's full width less the widgets' own margins: a width of 100% plus them cut the table's last
        # column, "final", at the output's edge)
        self.panel = widgets.HTML(layout=widgets.Layout(width="auto"))
        self.table = widgets.HTML(layout=widgets.Layout(width="auto"))
        self._connect(widgets)
        controls = widgets.HBox([self.mode_buttons, self.play, self.prev_button, self.next_button, self.slider,
                                 self.reset_button], layout=widgets.Layout(flex_flow="row wrap", align_items="center"))
        side = widgets.VBox([self.panel, self.table], layout=widgets.Layout(flex="1 1 360px", min_width="300px"))
        body = widgets.HBox([self.graph, side], layout=widgets.Layout(flex_flow="row wrap", align_items="flex-start"))
        self.widget = widgets.VBox([controls, body])
        self.widget.add_class("tapelab-stepper")
        self._show()

    def _make_controls(self, widgets, n, mode, interval):
        """The mode buttons, Play, Prev / Next / Reset and the step slider, over steps 0..n."""
        self.mode_buttons = widgets.ToggleButtons(options=list(MODES), value=mode, description="",
                                                  tooltips=["step back through the chain rule",
                                                            "replay the recorded ops in order"])
        self.play = widgets.Play(value=0, min=0, max=n, step=1, interval=interval, description="Play",
                                 show_repeat=False)
        self.prev_button = widgets.Button(description="◀ Prev", tooltip="one step back")
        self.next_button = widgets.Button(description="Next ▶", tooltip="one step further")
        self.reset_button = widgets.Button(description="Reset", tooltip="back to the start")
        self.slider = widgets.IntSlider(value=0, min=0, max=n, step=1, description="step", continuous_update=True,
                                        readout=True)
        for b, name in ((self.prev_button, "prev"), (self.next_button, "next"), (self.reset_button, "reset")):
            b.layout = widgets.Layout(width="auto")
            b.add_class(f"tapelab-stepper-{name}")

    def _connect(self, widgets):
        """Who drives whom: in the browser Play and the slider drive the picture directly (no round trip); Python
        follows the slider and the buttons."""
        widgets.jslink((self.play, "value"), (self.slider, "value"))
        if "position" in self.graph.keys:  # (the anywidget's position is synced; FramesView follows from Python)
            widgets.jslink((self.slider, "value"), (self.graph, "position"))
        self.prev_button.on_click(lambda _: self.step(-1))
        self.next_button.on_click(lambda _: self.step(+1))
        self.reset_button.on_click(lambda _: self.reset())
        self.slider.observe(lambda change: self._show(), names="value")
        self.mode_buttons.observe(lambda change: self._set_mode(change["new"]), names="value")

    # --- state: a position and a mode; everything else is derived -----------------------------------------
    @property
    def mode(self):
        return self.mode_buttons.value

    @property
    def position(self):
        return self.slider.value

    @property
    def count(self):
        return self.walkthrough.count(self.mode)

    @property
    def view(self):
        """The :class:`StepView` now on screen."""
        return self.view_at(self.position)

    def view_at(self, position, mode=None):
        mode = mode or self.mode
        key = (mode, position)
        if key not in self._views:
            self._views[key] = step_view(self.walkthrough, position, mode)
        return self._views[key]

    def step(self, delta):
        """Move ``delta`` steps (the Prev/Next buttons), staying within 0..count."""
        self.slider.value = min(max(self.position + delta, 0), self.count)

    def reset(self):
        """Back to the start (and stop playing)."""
        self.play.playing = False
        self.slider.value = 0

    def _set_mode(self, mode):
        self.play.playing = False
        with self.graph.hold_sync():  # position and mode change together: never a step the new mode lacks
            self.slider.value = 0
            self.slider.max = self.play.max = self.walkthrough.count(mode)
            self.graph.mode = mode
            self._show()

    def _show(self):
        view = self.view
        self.graph.position = view.position
        self.panel.value = _panel_html(view)
        self.table.value = _table_html(view)
        self.prev_button.disabled = view.position == 0
        self.next_button.disabled = view.position == view.count

    # --- pictures and text ---------------------------------------------------------------------------------
    def frame(self, position=None, mode=None):
        """One step as a still picture (a :class:`tapelab.viz.Drawing`: shows inline,
        ``.save("step.png")``; drawn in the browser where the kernel has no Graphviz)."""
        from tapelab.viz.render import drawing

        mode = mode or self.mode
        return drawing(frame_dot(self.walkthrough, self.position if position is None else position, mode))

    def text(self, position=None, mode=None):
        """One step written out as text (default: the step on screen)."""
        mode = mode or self.mode
        return self.view_at(self.position if position is None else position, mode).text

    def __str__(self):
        return step_text(self.walkthrough, self.mode)

    def __repr__(self):
        return (f"<tapelab.viz.BackwardStepper: {self.count} {self.mode} steps, at step {self.position}; "
                f"print() it for every step as text>")

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = self.widget._repr_mimebundle_()  # the live widget (its view model), for a running kernel
        bundle["text/plain"] = self._stored_text()  # nbval and plain front ends: the steps as text
        try:  # a notebook opened without running it (not trusted, no kernel), GitHub, nbviewer: the last step
            bundle["image/png"], metadata = cell_png(frame_dot(self.walkthrough, self.count, self.mode))
        except RuntimeError:  # no Graphviz, or a failing dot: the text is there
            return bundle
        return bundle, {"image/png": metadata}

    def _stored_text(self):
        """Every step as text, or for a long walk the first and last ``TEXT_STEPS`` (``print(stepper)`` has all)."""
        count = self.count
        if count <= 2 * TEXT_STEPS:
            return str(self)
        views = [self.view_at(p).text for p in range(TEXT_STEPS + 1)]
        views.append(f"... steps {TEXT_STEPS + 1} to {count - TEXT_STEPS} of {count} (print(stepper) shows them all)")
        views += [self.view_at(p).text for p in range(count - TEXT_STEPS + 1, count + 1)]
        return "\n\n".join(views)
