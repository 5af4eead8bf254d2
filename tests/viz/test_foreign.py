"""A tape of one's own (tapelab/viz/foreign.py) listed, drawn and stepped by tapelab's tools: lesson 10's reference
tape, a second tape written another way, a tape whose backward overwrites a fan-out gradient, and broken ones."""

from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import pytest

import tapelab as tl
from tapelab.lessons import own_tape as ref
from tapelab.viz import foreign


def seed_001_tape():
    """Lesson 10's program on the reference tape: the mean squared error of x * W + B against y (seed 001's)."""
    tape = ref.Tape()
    x = ref.Var(np.linspace(-1, 1, 5), name="x")
    y = ref.Var(3 * np.linspace(-1, 1, 5) + 2, name="y")
    W, B = ref.Var(5.0, name="W"), ref.Var(10.0, name="B")
    err = ref.subtract(tape, ref.add(tape, ref.multiply(tape, x, W), B), y)
    loss = ref.mean(tape, ref.multiply(tape, err, err))
    return tape, loss, W, B, (x, y)


def test_the_reference_tape_is_listed_drawn_and_stepped():
    tape, loss, W, B, _ = seed_001_tape()
    listing = tl.viz.format_tape(tape, loss, [W, B])
    assert listing.startswith("Tape: 5 ops")
    assert "= multiply(x, W)" in listing and "subtract(" in listing and "= mean(" in listing
    svg = tl.viz.draw(tape, loss, [W, B]).svg  # (real Graphviz)
    assert svg.count("<svg") == 1 and ">multiply(x, W)<" in svg and ">W (watched, source)<" in svg
    through = tl.viz.walkthrough(tape, loss, [W, B])
    tape.backward(loss)  # (the stepper ran the tape's own backward; once more here, to read its gradients)
    last = tl.viz.step_view(through, through.count())
    assert [row.name for row in last.table] == ["W", "B"]
    final = through.steps[-1].totals
    keys = {row.name: k for k, row in zip(through.data.sources, last.table)}
    assert np.allclose(final[keys["W"]], W.grad) and np.allclose(final[keys["B"]], B.grad)
    # and they are tapelab's gradients of the same program
    Wt, Bt = tl.Variable(5.0, dtype=tl.float64), tl.Variable(10.0, dtype=tl.float64)
    xs = tl.constant(np.linspace(-1, 1, 5))
    with tl.GradientTape() as t:
        e = xs * Wt + Bt - tl.constant(3 * np.linspace(-1, 1, 5) + 2)
        L = tl.reduce_mean(e * e)
    dW, dB = t.gradient(L, [Wt, Bt])
    assert np.allclose(W.grad, dW.numpy()) and np.allclose(B.grad, dB.numpy())


def test_the_widget_steps_a_tape_of_ones_own():
    tape, loss, W, B, _ = seed_001_tape()
    stepper = tl.viz.BackwardStepper(tape, loss, [W, B])
    stepper.step(stepper.count)
    assert [row.status for row in stepper.view.table] == ["final", "final"]
    assert "to W:" in stepper.panel.value and "multiply(x, W)" in stepper.panel.value


@dataclass(eq=False)
class Leaf:  # a second tape, written differently: a dataclass value, entries as namedtuples with formulas,
    value: np.ndarray  # no backward of its own (tapelab's walk over its VJPs), gradients in a dict
    name: str = None


Record = namedtuple("Record", "op inputs output vjps formulas")


class DictTape:
    def __init__(self):
        self.entries = []

    def matmul(self, a, b):
        out = Leaf(a.value @ b.value)
        self.entries.append(Record("matmul", (a, b), out, (lambda g: g @ b.value.T, lambda g: a.value.T @ g),
                                   ("dx = g @ y.T", "dy = x.T @ g")))
        return out

    def tanh(self, a):
        out = Leaf(np.tanh(a.value))
        self.entries.append(Record("tanh", (a,), out, (lambda g: g * (1 - out.value ** 2),), ("dx = g * (1 - out²)",)))
        return out

    def total(self, a):
        out = Leaf(a.value.sum())
        self.entries.append(Record("sum", (a,), out, (lambda g: np.full(a.value.shape, g),), ("dx = g",)))
        return out

    def gradients(self, target):
        grads = {id(target): np.ones_like(target.value)}
        for e in reversed(self.entries):
            g = grads.get(id(e.output))
            for x, vjp in zip(e.inputs, e.vjps):
                grads[id(x)] = grads.get(id(x), 0) + vjp(g)
        return grads


def test_a_second_tape_written_differently_is_stepped_by_tapelabs_walk():
    rng = np.random.default_rng(0)
    tape = DictTape()
    X, W1 = Leaf(rng.normal(size=(4, 3)), "X"), Leaf(rng.normal(size=(3, 2)), "W1")
    W2 = Leaf(rng.normal(size=(2, 1)), "W2")
    h = tape.tanh(tape.matmul(X, W1))
    loss = tape.total(tape.matmul(h, W2))
    listing = tl.viz.format_tape(tape)
    assert listing.startswith("DictTape: 4 ops") and "%0 = matmul(X, W1)" in listing and "= tanh(%0)" in listing
    through = tl.viz.walkthrough(tape, loss, [W1, W2])
    own = tape.gradients(loss)
    final = through.steps[-1].totals
    data = through.data
    by_name = {data.name(k): k for k in data.sources}
    assert np.allclose(final[by_name["W1"]], own[id(W1)]) and np.allclose(final[by_name["W2"]], own[id(W2)])
    text = tl.viz.step_text(through)
    assert "∂%3/∂W1 = X.T @ ∂%3/∂%0" in text, text  # (its own formula, in the picture's names)


OverwritingTape = ref.OverwritingTape


def test_an_overwritten_fan_out_shows_as_a_wrong_sum_at_its_step():
    tape = OverwritingTape()
    x, W = ref.Var([1.0, 2.0], name="x"), ref.Var(3.0, name="W")
    err = ref.multiply(tape, x, W)
    loss = ref.mean(tape, ref.multiply(tape, err, err))  # err read twice: its gradient has two parts
    err.name, loss.name = "err", "loss"  # (a notebook's names are found by themselves; a test's locals are not)
    through = tl.viz.walkthrough(tape, loss, [W])
    step = next(p for p, s in enumerate(through.steps, start=1) if s.entry.op.name == "multiply" and
                len(s.contributions) == 2)
    panel = "\n".join(tl.viz.step_view(through, step).panel)
    part = 2 * np.array([3.0, 6.0]) / 2 / 2  # dloss/d(err * err) = 1/2, times err
    assert "∂loss/∂err: [1.5, 3] + [1.5, 3] = [1.5, 3], final" in panel, panel
    assert "⚠ not the sum" in panel
    assert np.allclose(part, [1.5, 3.0])
    # the correct tape shows the right sum at the same step, with no warning
    good = ref.Tape()
    x, W = ref.Var([1.0, 2.0], name="x"), ref.Var(3.0, name="W")
    err = ref.multiply(good, x, W)
    loss = ref.mean(good, ref.multiply(good, err, err))
    err.name, loss.name = "err", "loss"
    panel = "\n".join(tl.viz.step_view(tl.viz.walkthrough(good, loss, [W]), step).panel)
    assert "[1.5, 3] + [1.5, 3] = [3, 6], final" in panel and "not the sum" not in panel


def test_random_programs_match_tapelab():
    assert ref.matches_tapelab(ref.OPS, ref.Tape) is True
    assert isinstance(ref.matches_tapelab(ref.OPS, OverwritingTape), str)  # (some program reads a value twice)


def test_a_broken_tape_gets_an_error_naming_what_is_missing():
    with pytest.raises(TypeError, match="no .entries"):
        tl.viz.format_tape(object())

    class NoVjps:
        entries = [namedtuple("E", "op inputs output")("add", [], None)]

    with pytest.raises(TypeError, match=r"entries\[0\] \(E\) has no \.vjps"):
        tl.viz.draw(NoVjps())
    tape = ref.Tape()
    a = ref.Var(1.0)
    tape.entries.append(ref.Entry("neg", [a], ref.Var(-1.0), []))
    with pytest.raises(TypeError, match="1 inputs but 0 vjps"):
        tl.viz.to_dot(tape)
    tape.entries[0].vjps = [lambda g: -g]
    tape.entries[0].inputs = [3.0]
    with pytest.raises(TypeError, match=r"inputs\[0\] is a float with no \.value"):
        tl.viz.to_dot(tape)


def test_a_source_not_on_the_tape_and_an_unbroadcast_vjp_are_explained():
    tape, loss, W, B, _ = seed_001_tape()
    with pytest.raises(ValueError, match="not a value of this Tape"):
        tl.viz.walkthrough(tape, loss, [ref.Var(5.0)])

    class NoUnbroadcast(ref.Tape):
        backward = None  # (tapelab's walk: the shape is checked where the part is made)

    bad = NoUnbroadcast()
    x, b = ref.Var([1.0, 2.0, 3.0], name="x"), ref.Var(1.0, name="b")
    s = bad.record("add", [x, b], x.value + b.value, [lambda g: g, lambda g: g])  # forgot to sum for b
    loss = ref.mean(bad, s)
    with pytest.raises(ValueError, match=r"vjps\[1\] returned a part of shape \(3,\).*sum the part over the broadcast"):
        tl.viz.walkthrough(bad, loss, [b])


def test_is_foreign():
    assert foreign.is_foreign(ref.Tape()) and not foreign.is_foreign(tl.GradientTape())


def test_tapelabs_own_tape_follows_the_protocol():
    """A GradientTape's entries, read as a foreign tape's (op, inputs, output, vjps), step to tape.gradient's."""
    W, B = tl.Variable(4.0, name="W"), tl.Variable(10.0, name="B")
    x, y = tl.constant([1.0, 2.0, 3.0]), tl.constant([7.0, 12.0, 17.0])
    with tl.GradientTape(persistent=True) as tape:
        err = x * W + B - y
        loss = tl.reduce_mean(err * err)
    dW, dB = tape.gradient(loss, [W, B])

    class Plain:  # (the entries alone: read through the protocol, not as a tapelab tape)
        entries = tape.entries

    through = tl.viz.walkthrough(Plain(), loss, [W, B])
    final = through.steps[-1].totals
    assert np.allclose(final[through.data.sources[0]], dW) and np.allclose(final[through.data.sources[1]], dB)
    assert [through.data.ops[s.index].name for s in through.steps] == [
        s.entry.op.name for s in tape.backward_steps(loss, [W, B])]
    text = tl.viz.step_text(through)
    assert "  W  22.67    (final)" in text and "= ∂%4/∂%0 * %in0 = 22.67" in text, text  # (multiply's own formula)
