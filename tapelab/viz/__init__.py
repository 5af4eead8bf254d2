"""See the tape: a text listing, a DOT graph (pure text), a Graphviz picture, and a stepper that walks through it.

    print(tape)                          # the listing (also tapelab.viz.format_tape(tape))
    tapelab.viz.to_dot(tape)             # DOT text, no Graphviz needed
    tapelab.viz.draw(tape)               # a picture: inline in Jupyter, .save("tape.svg" / "tape.png")
    tapelab.viz.BackwardStepper(tape, loss, [x, y])   # step through the backward pass (or a forward replay)
    print(tapelab.viz.gradient_flow(tape))  # the gradient's size per layer (name scope) after gradient()

Flow, one way: tape -> tape_data (plain data, the code's names) -> listing text / DOT graph -> Graphviz
(imported only when drawing) -> walkthrough (steps, pure) -> stepper widget (imported only when made).
"""

from tapelab.engine import recording
from tapelab.viz.dot import DotGraph, build, to_dot  # noqa: F401
from tapelab.viz.flow import GradientFlow, ScopeFlow, gradient_flow  # noqa: F401
from tapelab.viz.render import Drawing, GraphvizNotFound, draw, find_dot, render_dot, tape_mimebundle  # noqa: F401
from tapelab.viz.stepper import BackwardStepper  # noqa: F401
from tapelab.viz.steps import StepView, Walkthrough, step_text, step_view, walkthrough  # noqa: F401
from tapelab.viz.tapedata import TapeData, tape_data  # noqa: F401
from tapelab.viz.text import format_tape  # noqa: F401

# the one hook by which the engine's tapes (and traced graphs) print and draw themselves
recording.display.text, recording.display.mimebundle = format_tape, tape_mimebundle

__all__ = ["to_dot", "build", "DotGraph", "draw", "format_tape", "find_dot", "render_dot", "Drawing",
           "GraphvizNotFound", "tape_data", "TapeData", "BackwardStepper", "walkthrough", "Walkthrough", "step_view",
           "StepView", "step_text", "gradient_flow", "GradientFlow", "ScopeFlow"]
