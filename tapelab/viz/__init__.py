"""See the tape: a text listing, a DOT graph (pure text) and a Graphviz rendering that Jupyter shows inline.

    print(tape)                          # the listing (also tapelab.viz.format_tape(tape))
    tapelab.viz.to_dot(tape)             # DOT text, no Graphviz needed
    tapelab.viz.draw(tape)               # a picture: inline SVG in Jupyter, .save("tape.svg" / "tape.png")

Flow: tape -> trace (plain data) -> listing / DOT text -> Graphviz (imported only when drawing).
"""

from tapelab.viz.dot import to_dot  # noqa: F401
from tapelab.viz.listing import format_tape  # noqa: F401
from tapelab.viz.render import Drawing, GraphvizNotFound, draw, find_dot, render_dot  # noqa: F401
from tapelab.viz.stepper import BackwardStepper, Replay, StepView, replay, step_text, step_view  # noqa: F401
from tapelab.viz.trace import Trace, trace  # noqa: F401

listing = format_tape  # the listing, by its other name

__all__ = ["to_dot", "draw", "format_tape", "listing", "find_dot", "render_dot", "Drawing", "GraphvizNotFound",
           "trace", "Trace", "BackwardStepper", "replay", "Replay", "step_view", "StepView", "step_text"]
