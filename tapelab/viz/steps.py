"""A recorded tape prepared for stepping through: backward (the chain rule, op by op) or forward (a replay).

    walkthrough(tape, loss, [x, y])  -> Walkthrough: the steps, the names, the picture and its schedule (pure)
    step_view(through, k, mode)         -> StepView: what to show after k steps (pure, tested directly)
    step_text(through, mode)            -> every step as text

The picture is laid out once, with every gradient label it will ever show; a step only changes which
nodes and edges are current, done or pending. ``Walkthrough.schedules`` says so compactly, per edge, so the
stepper's front end can restyle the picture by itself: one number per edge, no Graphviz run per step.
"""

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from tapelab.engine.learner import spell
from tapelab.engine.tape import GradientTape
from tapelab.viz import fmt
from tapelab.viz.dot import HIGHLIGHT, MAX_OPS, DotGraph, NodeId, check_options, rule_symbols
from tapelab.viz.foreign import adopt, is_foreign
from tapelab.viz.tapedata import before_backward_data

MODES = ("backward", "forward")
CURRENT = HIGHLIGHT  # the op being processed and its edges (as graphview.css colours them)
GRADIENT = "#ea580c"  # edges a gradient already flowed along
FORWARD = "#2563eb"  # edges of ops already replayed forward
PENDING = "#d1d5db"  # edges still to come (dimmed)
GREY_TEXT = "#9ca3af"  # the text of nodes not computed yet, in a forward frame


class Schedule(NamedTuple):
    """When each part of the picture changes, in one mode: positions run from 0 (the start) to ``count``."""

    count: int
    current: list  # position -> node ids drawn as current (the op's node; the target at the start of backward)
    edge_start: dict  # edge id -> the first position it is active (pending before; its label shows from then on)
    edge_unit: dict  # edge id -> the node of the op (or box) it belongs to: the edge is current while that node is
    appears: dict  # node id -> the position it is computed at (forward: dimmed before); absent: always there
    step_of_node: dict  # node id -> the position a click on it jumps to


class TableRow(NamedTuple):
    name: str
    value: str
    status: str


@dataclass
class Walkthrough:
    """A tape's backward pass and forward replay as plain data, ready to be stepped through."""

    steps: list  # tape.backward_steps(...): one Step per op, in backward order
    seeds: dict  # target key -> the gradient the backward pass starts with (ones, or the output_gradients given)
    last_part: dict  # tensor key -> (position, input index) of the last contribution it receives
    data: object  # TapeData: names, values, ops of the recorded tape
    graph: object  # DotGraph: node ids and edges
    dot: str  # the picture as DOT text, with the final gradient label on every edge a gradient flows along
    labels: dict  # edge id -> that label
    schedules: dict  # mode -> Schedule
    rankdir: str  # the picture's direction ("TB" or "LR")

    def count(self, mode="backward"):
        """How many steps a mode has (positions run from 0, the start, to this number)."""
        return self.schedules[mode].count


def walkthrough(tape, target, sources, output_gradients=None, *, collapse=None, expand=(), detail="values",
                max_ops=MAX_OPS, rankdir=None):
    """Run the tape's backward pass as steps and prepare everything a stepper shows (no widget, no Graphviz).

    Like ``tape.gradient()``, this uses up a non-persistent tape; the collapse/expand/detail/max_ops/
    rankdir options are those of :func:`tapelab.viz.to_dot`.

    >>> x = tl.Variable(3.0, name="x")
    >>> with tl.GradientTape() as tape:
    ...     y = x * x + x
    >>> through = walkthrough(tape, y, x)
    >>> [through.data.ops[s.index].name for s in through.steps]
    ['add', 'multiply']
    """
    if is_foreign(tape):  # a tape of one's own, read into a tapelab tape
        tape, target, sources = adopt(tape, target, sources)
    _check_steppable(tape, target)
    watched = tape.watched  # (a one-shot tape lets go of some)
    steps = tape.backward_steps(target, sources, output_gradients)
    bw = tape.last_backward
    # the tape as the pass found it, with no gradients in its boxes: they appear on the edges, step by step
    check_options(detail, max_ops)
    graph = DotGraph(before_backward_data(tape, watched), detail, collapse, expand, max_ops)
    backward = _backward_schedule(steps, graph)
    labels = _edge_labels(steps, graph, backward)
    rankdir = rankdir or graph.rankdir()
    last_part = {}
    for p, s in enumerate(steps, start=1):
        for c in s.contributions:
            last_part[c.tensor._key] = (p, c.index)
    seeds = {k: g for k, (_, g) in bw.seeds.items()}  # as gradient() seeds: ones, or the output_gradients given
    return Walkthrough(steps, seeds, last_part, graph.data, graph, graph.source(edge_labels=labels, rankdir=rankdir),
                       labels, {"backward": backward, "forward": _forward_schedule(graph)}, rankdir)


def _check_steppable(tape, target):
    """A tape with ops left to step through, given as walkthrough() takes it (else a teaching error)."""
    if isinstance(target, Walkthrough):
        raise TypeError("walkthrough: give the tape, the target and the sources, e.g. walkthrough(tape, loss, [x, y]).")
    if not isinstance(tape, GradientTape):
        raise TypeError(f"walkthrough / BackwardStepper: {type(tape).__name__} is not a GradientTape. A traced graph "
                        "(tl.function) has no backward pass to step through: draw it with tl.viz.draw(graph), or "
                        "record the computation on a tl.GradientTape.")
    if tape.used:
        raise RuntimeError(spell(
            "walkthrough / BackwardStepper: this GradientTape was already used by gradient() (or another stepper), "
            "and a non-persistent tape releases its ops after one backward pass, so there is nothing left to step "
            "through. Record the computation again with\n"
            "    with tl.GradientTape(persistent=True) as tape:\n"
            "        ...\n"
            "to step through it and also call tape.gradient(), or build the stepper before gradient() "
            "(its table ends with the same gradients)."))


def _backward_schedule(steps, graph):
    position_of_op = {s.index: p for p, s in enumerate(steps, start=1)}
    current = [[graph.tensor_nodes[k] for k in graph.data.targets]]
    current += [[graph.op_nodes[s.index]] for s in steps]
    sends = {(s.index, c.index) for s in steps for c in s.contributions}  # (op, input) pairs a gradient flows along
    unit_ops = {}
    for k, node in graph.op_nodes.items():
        unit_ops.setdefault(node, []).append(k)
    edge_start, edge_unit = {}, {}
    for e in graph.edges:
        unit = e.head if e.arg is not None else e.tail
        if e.arg is None:  # op -> its output: the gradient arrives when the op's step begins
            when = [position_of_op.get(e.op)]
        elif unit.startswith("op_"):
            when = [position_of_op.get(e.op)] if (e.op, e.arg) in sends else []
        else:  # into a collapsed box: when the first of its ops sends something to this tensor
            when = [position_of_op.get(k) for k in unit_ops[unit] for i, t in enumerate(graph.data.ops[k].inputs)
                    if t == e.tensor and (k, i) in sends]
        when = [w for w in when if w is not None]
        if when:
            edge_start[e.id], edge_unit[e.id] = min(when), unit
    step_of_node = {node: min(position_of_op[k] for k in ks if k in position_of_op)
                    for node, ks in unit_ops.items() if any(k in position_of_op for k in ks)}
    for e in graph.edges:  # a tensor's node jumps to the step that sends it its gradient
        if e.id in edge_start and e.tail not in step_of_node:
            step_of_node[e.tail] = edge_start[e.id]
    for k in graph.data.targets:
        step_of_node[graph.tensor_nodes[k]] = 0
    return Schedule(len(steps), current, edge_start, edge_unit, {}, step_of_node)


def _forward_schedule(graph):
    ops = graph.data.ops
    current = [[]] + [[graph.op_nodes[op.index]] for op in ops]
    edge_start = {e.id: e.op + 1 for e in graph.edges}
    edge_unit = {e.id: e.head if e.arg is not None else e.tail for e in graph.edges}
    appears, step_of_node = {}, {}
    for op in ops:  # a box appears with its first op; a tensor when its op runs
        node = graph.op_nodes[op.index]
        appears.setdefault(node, op.index + 1)
        step_of_node.setdefault(node, op.index + 1)
        out = graph.tensor_nodes[op.output]
        appears.setdefault(out, op.index + 1)
        step_of_node.setdefault(out, op.index + 1)
    return Schedule(len(ops), current, edge_start, edge_unit, appears, step_of_node)


def _edge_labels(steps, graph, schedule):
    """Every edge a gradient flows along -> its label: ``∂loss/∂z = 0.25`` for the gradient arriving at an op's
    output, ``∂loss/∂x = ...`` (or ``+= ...`` when x gets several parts, a target's seed among them) for what an
    op sends to an input."""
    data = graph.data
    sent = {}  # (op index, input index) -> contribution
    upstream = {}
    for s in steps:
        upstream[s.index] = s.upstream
        for c in s.contributions:
            sent[(s.index, c.index)] = c.value
    by_unit = {}  # (unit, tensor) -> summed contributions of the unit's ops to that tensor
    for (k, i), c in sent.items():
        key = (graph.op_nodes[k], data.ops[k].inputs[i])
        by_unit[key] = c if key not in by_unit else by_unit[key] + c
    labels = {}
    for e in graph.edges:
        if e.id not in schedule.edge_start:
            continue
        if e.arg is None:
            labels[e.id] = f"{data.grad_of(e.tensor)}\n= {_short(upstream[e.op])}"
        else:
            unit = schedule.edge_unit[e.id]
            value = sent[(e.op, e.arg)] if unit.startswith("op_") else by_unit[(unit, e.tensor)]
            whole = data.tensors[e.tensor].parts == 1 or (not unit.startswith("op_") and np.array_equal(
                value, _total_of(steps, e.tensor)))
            labels[e.id] = f"{data.grad_of(e.tensor)}\n{'=' if whole else '+='} {_short(value)}"
    return labels


def _total_of(steps, key):
    for s in reversed(steps):
        if key in s.totals:
            return s.totals[key]
    return None


def _plus(a, b):
    """``1 + 3``; ``1 − 0.1353`` when a single number is negative."""
    b = np.asarray(b)
    if b.size == 1 and b.reshape(()) < 0:
        return f"{_values(a)} − {_values(-b)}"
    return f"{_values(a)} + {_values(b)}"


def _values(v):
    """A value in the stepper's text: the numbers of an array of up to ``fmt.PANEL_SMALL``, else its norm. A small
    array of three or more axes, some of size 1, is written without those, and says so: a (3, 3, 1, 1) kernel's
    gradient reads as the 3x3 grid it is."""
    v = np.asarray(v)
    squeezed = v.reshape([n for n in v.shape if n != 1])
    if v.ndim > 2 and squeezed.ndim < v.ndim and v.size <= fmt.PANEL_SMALL:
        numbers = fmt.value_text(squeezed, fmt.PANEL_SMALL)
        return f"{numbers} (shape {fmt.shape_text(v.shape)}, its axes of size 1 left out)"
    return fmt.array_text(v, small=fmt.PANEL_SMALL)


def _short(v):
    """An edge label's value: up to 4 numbers, else the norm."""
    return fmt.array_text(v, small=4, shape=False)


def _constant_note(v):
    """For a gradient written as its norm (too many numbers to show) that is one number everywhere, that number (a
    norm of 0 says all zeros already)."""
    v = np.asarray(v)
    if v.size > fmt.PANEL_SMALL and v.dtype.kind == "f" and v.flat[0] != 0 and np.all(v == v.flat[0]):
        return f"   ({fmt.value_text(v.reshape(-1)[:1].reshape(()))} per element)"
    return ""


@dataclass
class StepView:
    """Everything a stepper shows at one position: pure data, no widgets, no Graphviz.

    ``position`` runs from 0 (the start) to ``count``; ``op_index`` is the tape entry being processed
    (``None`` at the start). ``edges`` maps each drawn edge id to ``"current"``, ``"done"`` or
    ``"pending"``; ``labels`` holds the edges whose gradient label shows; ``dimmed`` the nodes not computed
    yet (forward). ``table`` rows are :class:`TableRow`.
    """

    mode: str
    position: int
    count: int
    op_index: int
    current: list  # node ids drawn as current
    dimmed: set
    edges: dict
    labels: set
    panel: list  # lines of text: the step written out
    table_title: str
    table: list

    @property
    def text(self):
        """The step as plain text: the panel, then the table."""
        lines = list(self.panel)
        if self.table:
            lines.append(self.table_title)
            width = max(len(row.name) for row in self.table)
            for row in self.table:
                lines.append(f"  {row.name.ljust(width)}  {row.value}" + (f"    ({row.status})" if row.status else ""))
        return "\n".join(lines)


def step_view(through, position, mode="backward"):
    """What to show after ``position`` steps of ``through`` (a :class:`Walkthrough`), backward or forward.

    >>> x = tl.Variable(3.0, name="x")
    >>> with tl.GradientTape() as tape:
    ...     y = x * x + x
    >>> print(step_view(walkthrough(tape, y, x), 2).text)
    Backward step 2 of 2 - op 0: %0 = multiply(x, x)
      upstream gradient at %0:  ∂y/∂%0 = 1
      to x (input 0):  ∂y/∂x += ∂y/∂%0 * x = 3
          ∂y/∂x so far: 1 + 3 = 4
      to x (input 1):  ∂y/∂x += ∂y/∂%0 * x = 3
          ∂y/∂x: 4 + 3 = 7, final
    gradients of y with respect to the sources:
      x  7    (final)
    """
    if mode not in MODES:
        raise ValueError(f"step_view: mode={mode!r} should be 'backward' or 'forward'.")
    schedule = through.schedules[mode]
    count = schedule.count
    if isinstance(position, bool) or not isinstance(position, (int, np.integer)) or not 0 <= position <= count:
        raise ValueError(
            f"step_view: position={position!r} is outside 0..{count} ({mode} has {count} step"
            f"{'s' if count != 1 else ''}; 0 is the start, before the first one)."
        )
    p = int(position)
    current = schedule.current[p]
    edges = {}
    for e in through.graph.edges:
        start = schedule.edge_start.get(e.id)
        if start is None or start > p:
            edges[e.id] = "pending"
        else:
            edges[e.id] = "current" if schedule.edge_unit[e.id] in current else "done"
    labels = {i for i, state in edges.items() if state != "pending"} if mode == "backward" else set()
    dimmed = {node for node, when in schedule.appears.items() if when > p}
    view = StepView(mode, p, count, None, current, dimmed, edges, labels, [], "", [])
    return _backward_text(through, view) if mode == "backward" else _forward_text(through, view)


def _backward_text(through, view):
    """The panel and the table of backward position ``view.position``: the start, or one op's chain-rule step."""
    if view.position == 0:
        view.panel = _start_lines(through, view.count)
    else:
        view.op_index = through.steps[view.position - 1].index
        view.panel = _step_lines(through, view.position, view.count)
    view.table_title = f"gradients of {through.data.target_name} with respect to the sources:"
    view.table = _sources_table(through, view.position)
    return view


def _start_lines(through, count):
    """Where the backward pass begins: the targets and their seeds, and how many ops it goes back through."""
    data, seeds = through.data, [through.seeds[k] for k in through.data.targets]
    target = data.target_name
    if all(np.all(g == 1) for g in seeds):
        every = ", for every element" if any(g.size > 1 for g in seeds) else ""
        start = (f"the target {target} with ∂{target}/∂{target} = 1{every}" if len(seeds) == 1 else
                 f"the targets {', '.join(data.name(k) for k in data.targets)} with 1 at each{every} "
                 f"({target} is their sum)")
    elif len(seeds) == 1:
        start = f"the target {target} with the output_gradients given as its gradient: {_values(seeds[0])}"
    else:
        start = "the targets with the output_gradients given as their gradients: " + ", ".join(
            f"{data.name(k)} gets {_values(through.seeds[k])}" for k in data.targets)
    lines = [f"Start: the backward pass begins at {start}."]
    if count:
        lines.append(f"  {count} op{'s' if count != 1 else ''} to go back through, from the "
                     "last one recorded to the first. Press Next.")
    else:
        lines.append(_nothing_to_step(through))
    return lines


def _step_lines(through, p, count):
    """Backward step ``p``: the op, the gradient arriving at its output, and what it sends each input."""
    data, s = through.data, through.steps[p - 1]
    op = data.ops[s.index]
    scope = f"   [in {op.scope}]" if op.scope else ""
    lines = [f"Backward step {p} of {count} - op {s.index}: {data.call_text(s.index)}{scope}",
             f"  upstream gradient at {data.name(op.output)}:  {data.grad_of(op.output)} = {_values(s.upstream)}"
             + _constant_note(s.upstream)]
    symbols = rule_symbols(data, op)
    before = dict(through.steps[p - 2].totals) if p >= 2 else dict(through.seeds)  # (the totals start from the seeds)
    for c in s.contributions:
        lines += _contribution_lines(through, p, s, op, symbols, c, before.get(c.tensor._key))
        before[c.tensor._key] = c.total
    return lines


def _contribution_lines(through, p, s, op, symbols, c, prev):
    """What step ``p`` sends input ``c.index``: the rule in the code's names and its value; with several parts, the
    sum so far (``prev``: the input's total before this part)."""
    data, key = through.data, c.tensor._key
    name, grad = data.name(key), data.grad_of(key)
    expr = fmt.rule_rhs(c.formula, symbols)
    if s.entry.op.broadcasts and np.shape(c.value) != data.tensors[op.output].shape:
        expr = f"sum of {expr} over the broadcast axes"  # (the one helper, unbroadcast, did this)
    rhs = f"{expr} = {_values(c.value)}{_constant_note(c.value)}"
    which = f" (input {c.index})" if op.inputs.count(key) > 1 else ""
    if data.tensors[key].parts == 1:  # its only part (not a target: no seed): the whole gradient
        return [f"  to {name}{which}:  {grad} = {rhs}"]
    last = through.last_part[key] == (p, c.index)
    if prev is None:
        total = _values(c.total)
    elif np.asarray(c.total).size > fmt.PANEL_SMALL:
        total = f"earlier parts + this one = {_values(c.total)}"
    else:
        total = f"{_plus(prev, c.value)} = {_values(c.total)}"
    lines = [f"  to {name}{which}:  {grad} += {rhs}",
             f"      {grad}{':' if last else ' so far:'} {total}{', final' if last else ''}"]
    if prev is not None and not _adds_up(prev, c.value, c.total):  # (a tape of one's own that did not add its parts)
        lines.append(f"      ⚠ not the sum: the pass replaced {grad} instead of adding this part to it (+=)")
    return lines


def _adds_up(prev, part, total):
    """Whether ``total`` is ``prev + part`` (up to rounding)."""
    try:
        return bool(np.allclose(np.asarray(prev) + np.asarray(part), total))
    except ValueError:  # (shapes that do not even broadcast)
        return False


def _sources_table(through, p):
    """Each source's gradient after ``p`` steps: final, partial, not reached yet, or None (and why)."""
    data = through.data
    totals = through.steps[p - 1].totals if p else through.seeds
    rows = []
    for key in data.sources:
        info = data.tensors[key]
        g = totals.get(key)
        if key not in through.last_part and key not in through.seeds:
            rows.append(TableRow(info.name, "None", info.none_reason or "no gradient reaches it"))
        elif g is None:
            rows.append(TableRow(info.name, "-", "not reached yet"))
        else:
            done = through.last_part.get(key, (0,))[0] <= p
            rows.append(TableRow(info.name, _values(g), "final" if done else "partial: more to come"))
    return rows


def _nothing_to_step(through):
    """The start's second line when no op lies between the sources and the targets."""
    data = through.data
    line = "  No recorded op lies between the sources and the target: there is nothing to step through"
    own = [data.name(k) for k in data.sources if k in through.seeds]  # sources that are targets too
    if not own:
        return line + ", and every source's gradient is None (the table says why)."
    which = "the target" if len(data.targets) == 1 else "a target"
    line += (f"; {', '.join(own)} {'is' if len(own) == 1 else 'are'} {which} itself, so "
             f"{'its' if len(own) == 1 else 'their'} gradient is the one the pass starts from")
    return line + (", and every other source's is None." if len(own) < len(data.sources) else ".")


def _forward_text(through, view):
    p, data = view.position, through.data
    inputs = ", ".join(t.name for t in data.named_inputs) or "none"
    if p == 0:
        view.panel = [f"Forward replay: the tape recorded {view.count} op{'s' if view.count != 1 else ''}, in this "
                      f"order. Inputs: {inputs}. Press Next to run them again one by one."]
        view.table_title = "inputs:"
        view.table = [TableRow(t.name, _values(t.value), t.kind) for t in data.named_inputs]
        return view
    k = p - 1
    view.op_index = k
    op = data.ops[k]
    scope = f"   [in {op.scope}]" if op.scope else ""
    out = data.tensors[op.output]
    view.panel = [f"Forward step {p} of {view.count} - op {k}: {data.call_text(k)}{scope}",
                  f"  {out.name} = {_values(out.value)}   {fmt.shape_text(out.shape)} {out.dtype}"]
    view.table_title = f"op {k} ({op.name}) read and produced:"
    for key in dict.fromkeys(op.inputs):
        t = data.tensors[key]
        view.table.append(TableRow(t.name, _values(t.value), "input"))
    view.table.append(TableRow(out.name, _values(out.value), "output"))
    return view


def step_text(through, mode="backward"):
    """Every step of a :class:`Walkthrough` as text, from the start to the end.

    >>> x = tl.Variable(3.0, name="x")
    >>> with tl.GradientTape() as tape:
    ...     y = x * x + x
    >>> print(step_text(walkthrough(tape, y, x)).splitlines()[5])
    Backward step 1 of 2 - op 1: y = add(%0, x)
    """
    return "\n\n".join(step_view(through, p, mode).text for p in range(through.count(mode) + 1))


def frame_dot(through, position, mode="backward"):
    """The DOT text of one step as a still picture (the stepper's static frame): the stepper's layout, every step
    the same (each gradient label is laid out, and hidden while it is not shown), coloured for this step."""
    view = step_view(through, position, mode)
    done = GRADIENT if mode == "backward" else FORWARD
    colors = {i: {"current": CURRENT, "done": done}.get(state, PENDING) for i, state in view.edges.items()}
    hidden = {i: {"fontcolor": "#ffffff00"} for i in through.labels if i not in view.labels}  # laid out, not shown
    dimmed = {node: {"color": PENDING, "fontcolor": GREY_TEXT} for node in view.dimmed}
    return through.graph.source(highlight=[NodeId(n) for n in view.current], edge_colors=colors,
                                edge_labels=through.labels, rankdir=through.rankdir, node_attrs=dimmed,
                                edge_attrs=hidden)
