"""Step through a recorded tape, backward (the chain rule, one op at a time) or forward (a replay).

    replay(tape, loss, [x, y])        -> Replay: the steps, the names, the graph's DOT text (pure)
    step_view(rep, k)                 -> StepView: what to show after k steps (pure, tested directly)
    BackwardStepper(tape, loss, [x, y])   the Jupyter widget: a thin shell that maps k to a view

The graph is laid out by Graphviz once, with every gradient label it will ever show; each step only
restyles that SVG (current op red, processed edges coloured and labelled, pending ones dimmed), so
nodes never jump between steps and a step costs milliseconds instead of a Graphviz run.
"""

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

from tapelab.learner import spell
from tapelab.tensor import Tensor
from tapelab.viz import fmt
from tapelab.viz.dot import COLLAPSE_OVER, MAX_OPS, to_dot
from tapelab.viz.trace import trace

MODES = ("backward", "forward")
CURRENT = "#dc2626"  # the op being processed and its edges (the same red as to_dot's highlight)
GRADIENT = "#ea580c"  # edges a gradient already flowed along
FORWARD = "#2563eb"  # edges of ops already replayed forward
PENDING = "#d1d5db"  # edges still to come (dimmed)
DIM_OPACITY = "0.3"  # nodes not computed yet in a forward replay

_SVG = "http://www.w3.org/2000/svg"
_XLINK = "http://www.w3.org/1999/xlink"


class _Recorded:
    """What ``trace()`` reads from a tape (entries, watched, stopped, tracks()), frozen before the
    backward pass consumed it.

    It carries no gradient record, so the graph's tensor boxes show forward values only: the
    gradients appear on the edges, step by step, instead of all at once.
    """

    last_backward = None

    def __init__(self, entries, watched, stopped, stopped_from, tracked):
        self.entries = entries
        self.watched = tuple(watched)
        self.stopped = tuple(stopped)
        self.stopped_from = stopped_from
        self._tracked = set(tracked)  # ids

    def tracks(self, tensor):
        return id(tensor) in self._tracked


@dataclass
class Replay:
    """A tape's backward pass as plain data, ready to be stepped through (see :func:`replay`)."""

    steps: list  # tape.backward_steps(...): one Step per op, in backward order
    entries: list  # the tape's entries, in execution (forward) order
    trace: object  # tapelab.viz.trace.Trace: names, values, ops (OpInfo) of the recorded tape
    targets: list  # keys (id) of the target tensors
    sources: list  # keys (id) of the sources, in the order given
    dot: str  # the graph as DOT text, with the final gradient label on every edge it will flow along
    unit_of_op: dict  # op index -> id of the DOT node that draws it ("op_3", "scope_0" or "more")
    edges: list  # the DOT's edges as (from id, to id), in order
    edge_grads: dict  # (from id, to id) -> (position of the step sending the gradient, label, label per copy)

    def count(self, mode="backward"):
        """How many steps a mode has (positions run from 0, the start, to this number)."""
        return len(self.steps) if mode == "backward" else len(self.entries)

    def name(self, tensor_or_key):
        key = id(tensor_or_key) if isinstance(tensor_or_key, Tensor) else tensor_or_key
        return self.trace.tensors[key].name

    def node_id(self, key):
        """The DOT id of a tensor's node (``to_dot`` names them ``t_<listing name>``)."""
        return f"t_{self.trace.tensors[key].name}"


def replay(tape, target, sources, output_gradients=None, *, collapse=None, expand=(), detail="values",
           max_ops=MAX_OPS, rankdir="TB"):
    """Run the tape's backward pass as steps and prepare everything a stepper shows (no widget, no Graphviz).

    Like ``tape.gradient()``, this uses up a non-persistent tape; the collapse/expand/detail/max_ops/
    rankdir options are those of :func:`tapelab.viz.to_dot`.

    >>> x = tl.Variable(3.0, name="x")
    >>> with tl.GradientTape() as tape:
    ...     y = x * x + x
    >>> rep = replay(tape, y, x)
    >>> [rep.trace.ops[s.index].name for s in rep.steps]
    ['add', 'multiply']
    """
    if isinstance(target, Replay):
        raise TypeError("replay: give the tape, the target and the sources, e.g. replay(tape, loss, [x, y]).")
    if tape.used:
        raise RuntimeError(
            spell("BackwardStepper: this GradientTape was already used by gradient() (or another stepper), and a "
                  "non-persistent tape releases its ops after one backward pass, so there is nothing left to step "
                  "through. Record the computation again with\n"
                  "    with tl.GradientTape(persistent=True) as tape:\n"
                  "        ...\n"
                  "to step through it and also call tape.gradient(), or build the stepper before gradient() "
                  "(its table ends with the same gradients).")
        )
    entries, watched, stopped = list(tape.entries), tape.watched, tape.stopped  # a one-shot tape lets go of them
    steps = tape.backward_steps(target, sources, output_gradients)
    bw = tape.last_backward
    recorded = _Recorded(entries, watched, stopped, bw.stopped, bw.tracked)
    targets = list(bw.targets)
    flat_sources = list(bw.sources)
    if collapse is None:
        collapse = len(entries) > COLLAPSE_OVER
    options = dict(detail=detail, collapse=collapse, expand=expand, max_ops=max_ops, rankdir=rankdir)
    plain = to_dot(recorded, targets, flat_sources, **options)
    nodes, edges = _parse_dot(plain)
    edges = list(dict.fromkeys(edges))  # x * x draws x -> multiply twice: one key, styled together
    unit_of_op = _units(nodes, len(entries))
    tr = trace(recorded, targets, flat_sources)
    edge_grads = _edge_gradients(steps, tr, unit_of_op, set(edges))
    first_of = {}  # a representative (tensor or op index) pair for each drawn edge, as to_dot accepts them
    for k, e in enumerate(entries):
        u = unit_of_op[k]
        for x in e.inputs:
            first_of.setdefault((f"t_{tr.tensors[id(x)].name}", u), (x, k))
        first_of.setdefault((u, f"t_{tr.tensors[id(e.output)].name}"), (k, e.output))
    labels = [(first_of[edge], max(copies, key=len))  # the widest copy: the layout leaves room for every one
              for edge, (_, _, copies) in edge_grads.items() if edge in first_of]
    dot = to_dot(recorded, targets, flat_sources, edge_labels=labels, **options)
    return Replay(steps, entries, tr, [id(t) for t in targets], [id(s) for s in flat_sources], dot,
                  unit_of_op, edges, edge_grads)


_ID = r'"((?:[^"\\]|\\.)*)"'
_NODE_LINE = re.compile(r"^\s*" + _ID + r" \[")
_EDGE_LINE = re.compile(r"^\s*" + _ID + r" -> " + _ID)


def _unquote(s):
    return s.replace('\\"', '"').replace("\\\\", "\\")


def _parse_dot(dot):
    """Node ids and edges of ``to_dot``'s output, in order."""
    nodes, edges = [], []
    for line in dot.splitlines():
        m = _EDGE_LINE.match(line)
        if m:
            edges.append((_unquote(m.group(1)), _unquote(m.group(2))))
            continue
        m = _NODE_LINE.match(line)
        if m:
            nodes.append(_unquote(m.group(1)))
    return nodes, edges


def _units(nodes, n_ops):
    """op index -> the node that draws it: its own ``op_k``, the collapsed box it is in, or ``more``.

    Boxes (``scope_j``) hold a contiguous run of ops starting at j, and ops hidden by ``max_ops`` are
    the earliest ones, so an op is drawn by the nearest unit starting at or before it.
    """
    starts = {}
    for n in nodes:
        m = re.fullmatch(r"(op|scope)_(\d+)", n)
        if m:
            starts[int(m.group(2))] = n
    unit, current = {}, "more"
    for k in range(n_ops):
        current = starts.get(k, current)
        unit[k] = current
    return unit


def _edge_gradients(steps, tr, unit_of_op, drawn):
    """Every drawn edge a gradient flows along -> (step position, label of the sum, label of each copy).

    An op's output edge carries the upstream ``g``; an input edge the contribution sent to that input.
    ``to_dot`` draws one edge per argument, so ``x * x`` has two edges x -> multiply, each with its own
    part; an edge into a collapsed box carries the sum of what the box's ops sent along it.
    """
    parts, first = {}, {}
    unit_values = set(unit_of_op.values())
    for pos, s in enumerate(steps, start=1):
        u = unit_of_op[s.index]
        out = (u, f"t_{tr.tensors[id(s.entry.output)].name}")
        if out in drawn:
            parts.setdefault(out, [s.upstream])
            first.setdefault(out, pos)
        inputs = s.entry.inputs
        for i, x, _formula, c, _total in s.contributions:
            edge = (f"t_{tr.tensors[id(x)].name}", u)
            if edge not in drawn:
                continue
            first.setdefault(edge, pos)
            if u.startswith("op_"):  # one drawn edge per argument: the j-th use of x in this op
                copies = parts.setdefault(edge, [None] * sum(1 for t in inputs if t is x))
                copies[sum(1 for t in inputs[:i] if t is x)] = c
            else:
                copies = parts.setdefault(edge, [None])
                copies[0] = c if copies[0] is None else copies[0] + c
    out = {}
    for (a, b), copies in parts.items():
        name = "g" if a in unit_values else _d(a[2:])  # output edges carry g, input edges d<input>
        given = [c for c in copies if c is not None]
        total = given[0] if len(given) == 1 else sum(given[1:], given[0])
        out[(a, b)] = (first[(a, b)], f"{name} = {_short(total)}",
                       [f"{name} = {_short(c)}" if c is not None else "" for c in copies])
    return out


def _d(name):
    """``dx``; ``d(dense/kernel)`` for a name that is not a plain identifier."""
    return f"d{name}" if name.isidentifier() else f"d({name})"


def _rhs(formula):
    return formula.split("=", 1)[1].strip() if formula and "=" in formula else "its contribution"


def _short(v):
    """An edge label's value: up to 4 numbers, else the norm."""
    return fmt.array_text(v, small=4, shape=False)


def _constant_note(v):
    v = np.asarray(v)
    if v.size > 1 and v.dtype.kind == "f" and np.all(v == v.flat[0]):
        return f"; {fmt.value_text(v.reshape(-1)[:1].reshape(()))} per element"
    return ""


@dataclass
class StepView:
    """Everything a stepper shows at one position: pure data, no widgets, no Graphviz.

    ``position`` runs from 0 (the start) to ``count``; ``op_index`` is the tape entry being
    processed (``None`` at the start). ``edges`` maps each drawn edge ``(from id, to id)`` to
    ``"current"``, ``"done"`` or ``"pending"``; ``labels`` holds the edges whose gradient label
    shows. ``table`` rows are ``(name, value text, status)``.
    """

    mode: str
    position: int
    count: int
    op_index: int = None
    highlight: set = field(default_factory=set)  # DOT node ids drawn in red
    dimmed: set = field(default_factory=set)  # DOT node ids drawn faint (not computed yet)
    edges: dict = field(default_factory=dict)
    labels: set = field(default_factory=set)
    panel: list = field(default_factory=list)  # lines of text: the step written out
    table_title: str = ""
    table: list = field(default_factory=list)

    @property
    def text(self):
        """The step as plain text: the panel, then the table."""
        lines = list(self.panel)
        if self.table:
            lines.append(self.table_title)
            width = max(len(name) for name, _, _ in self.table)
            for name, value, status in self.table:
                lines.append(f"  {name.ljust(width)}  {value}" + (f"    ({status})" if status else ""))
        return "\n".join(lines)


def step_view(rep, position, mode="backward"):
    """What to show after ``position`` steps of ``rep`` (a :class:`Replay`), backward or forward.

    >>> x = tl.Variable(3.0, name="x")
    >>> with tl.GradientTape() as tape:
    ...     y = x * x + x
    >>> rep = replay(tape, y, x)
    >>> print(step_view(rep, 2).text)
    Backward step 2 of 2 - op 0: a = multiply(x, x)
      the rule multiply(x, y) here has x = x, y = x
      upstream g = da = 1
          (the gradient arriving at a)
      input x:  dx = g * y = 3
          grad x: 1 + 3 = 4
      input x (as y of the rule):  dy = g * x = 3
          grad x: 4 + 3 = 7
    gradients of b with respect to the sources:
      x  7    (final)
    """
    if mode not in MODES:
        raise ValueError(f"step_view: mode={mode!r} should be 'backward' or 'forward'.")
    count = rep.count(mode)
    if isinstance(position, bool) or not isinstance(position, (int, np.integer)) or not 0 <= position <= count:
        raise ValueError(
            f"step_view: position={position!r} is outside 0..{count} ({mode} has {count} step"
            f"{'s' if count != 1 else ''}; 0 is the start, before the first one)."
        )
    position = int(position)
    view = StepView(mode, position, count)
    return _backward(rep, view) if mode == "backward" else _forward(rep, view)


def _call_text(rep, k):
    op = rep.trace.ops[k]
    args = [rep.trace.name(key) for key in op.inputs]
    params = fmt.params_text(op.params)
    return f"{rep.trace.name(op.output)} = {op.name}({', '.join(args + ([params] if params else []))})"


def _target_names(rep):
    return ", ".join(rep.trace.name(k) for k in rep.targets) or "the target"


def _backward(rep, view):
    p = view.position
    tr = rep.trace
    for edge in rep.edges:
        sent = rep.edge_grads.get(edge)
        if sent is None or sent[0] > p:
            view.edges[edge] = "pending"
        else:
            view.edges[edge] = "current" if sent[0] == p else "done"
            view.labels.add(edge)
    if p == 0:
        view.highlight = {rep.node_id(k) for k in rep.targets}
        names = _target_names(rep)
        view.panel = [f"Start: the backward pass begins at the target {names} with g = 1 "
                      f"(d{names}/d{names} = 1{', for every element' if _any_big_target(rep) else ''})."]
        if view.count:
            view.panel.append(f"  {view.count} op{'s' if view.count != 1 else ''} to go back through, from the "
                              f"last one recorded to the first. Press Next.")
        else:
            view.panel.append("  No recorded op lies between the sources and the target: there is nothing to step "
                              "through, and every source's gradient is None.")
    else:
        s = rep.steps[p - 1]
        view.op_index = s.index
        view.highlight = {rep.unit_of_op[s.index]}
        out_name = tr.name(id(s.entry.output))
        op = tr.ops[s.index]
        scope = f"   [in {op.scope}]" if op.scope else ""
        view.panel = [f"Backward step {p} of {view.count} - op {s.index}: {_call_text(rep, s.index)}{scope}"]
        rule_args = [fmt.arg_name(f, i) for i, f in enumerate(op.formulas)]
        actual = [tr.name(key) for key in op.inputs]
        if len(actual) > 1 and rule_args != actual:
            binding = ", ".join(f"{r} = {a}" for r, a in zip(rule_args, actual))
            view.panel.append(f"  the rule {op.name}({', '.join(rule_args)}) here has {binding}")
        view.panel.append(f"  upstream g = {_d(out_name)} = {fmt.array_text(s.upstream)}")
        view.panel.append(f"      (the gradient arriving at {out_name}{_constant_note(s.upstream)})")
        before = _totals_before(rep, p)
        for i, x, formula, c, total in s.contributions:
            xname = tr.name(id(x))
            arg = fmt.arg_name(formula, i)
            role = "" if arg == xname else f" (as {arg} of the rule)"
            prev = before.get(id(x))
            if prev is None:
                sofar = f"grad {xname}: {fmt.array_text(total)}"
            elif np.asarray(total).size <= fmt.SMALL:
                sofar = f"grad {xname}: {fmt.array_text(prev)} + {fmt.array_text(c)} = {fmt.array_text(total)}"
            else:
                sofar = f"grad {xname}: earlier terms + this one = {fmt.array_text(total)}"
            before[id(x)] = total
            view.panel.append(f"  input {xname}{role}:  d{arg} = {_rhs(formula)} = {fmt.array_text(c)}")
            view.panel.append(f"      {sofar}")
    view.table_title = f"gradients of {_target_names(rep)} with respect to the sources:"
    totals = rep.steps[p - 1].totals if p else {}
    last = {}  # source key -> the last position that adds to it
    for pos, s in enumerate(rep.steps, start=1):
        for _i, x, *_ in s.contributions:
            last[id(x)] = pos
    for key in rep.sources:
        info = tr.tensors[key]
        g = totals.get(key)
        if key not in last:
            status = info.none_reason or "no gradient reaches it"
            view.table.append((info.name, "None", status))
        elif g is None:
            view.table.append((info.name, "-", "not reached yet"))
        else:
            status = "final" if last[key] <= p else "partial: more terms to come"
            view.table.append((info.name, fmt.array_text(g), status))
    return view


def _any_big_target(rep):
    return any(rep.trace.tensors[k].value.size > 1 for k in rep.targets)


def _totals_before(rep, p):
    """Every tensor's accumulated gradient before step ``p`` (1-based) runs."""
    return dict(rep.steps[p - 2].totals) if p >= 2 else {}


def _forward(rep, view):
    p = view.position
    tr = rep.trace
    units = set(rep.unit_of_op.values())
    started = {rep.unit_of_op[k] for k in range(p)}
    current = rep.unit_of_op[p - 1] if p else None
    for a, b in rep.edges:
        unit = b if b in units else a  # the op (or box) an edge leads into or out of
        view.edges[(a, b)] = "current" if unit == current else ("done" if unit in started else "pending")
    computed = set()
    for k in range(p):
        computed.add(id(rep.entries[k].output))
    for k, op in enumerate(tr.ops):
        u = rep.unit_of_op[k]
        if u not in started:
            view.dimmed.add(u)
        if op.output not in computed:
            view.dimmed.add(rep.node_id(op.output))
    inputs = ", ".join(t.name for t in tr.inputs) or "none"
    if p == 0:
        view.panel = [f"Forward replay: the tape recorded {view.count} op{'s' if view.count != 1 else ''}, in this "
                      f"order. Inputs: {inputs}. Press Next to run them again one by one."]
        view.table_title = "inputs:"
        view.table = [(t.name, fmt.array_text(t.value), t.kind) for t in tr.inputs]
        return view
    k = p - 1
    view.op_index = k
    view.highlight = {rep.unit_of_op[k]}
    op = tr.ops[k]
    scope = f"   [in {op.scope}]" if op.scope else ""
    out = tr.tensors[op.output]
    view.panel = [f"Forward step {p} of {view.count} - op {k}: {_call_text(rep, k)}{scope}",
                  f"  {out.name} = {fmt.array_text(out.value)}   {fmt.shape_text(out.shape)} {out.dtype}"]
    view.table_title = f"op {k} ({op.name}) read and produced:"
    seen = set()
    for key in op.inputs:
        if key not in seen:
            seen.add(key)
            t = tr.tensors[key]
            view.table.append((t.name, fmt.array_text(t.value), "input"))
    view.table.append((out.name, fmt.array_text(out.value), "output"))
    return view


# --- drawing a view: one Graphviz layout, restyled per step ---------------------------------------------

def _register_namespaces():
    """Write the restyled SVG as Graphviz did (``<svg xmlns=...>``, ``xlink:title``), not ``ns0:svg``.

    ElementTree's prefixes are process-wide, so this runs when a stepper restyles a picture, not
    when tapelab is imported.
    """
    ET.register_namespace("", _SVG)
    ET.register_namespace("xlink", _XLINK)


class Restyler:
    """Restyles the one SVG layout of a replay for each :class:`StepView` (milliseconds per step).

    ``labels`` maps an edge to ``(label of the sum, [label of each drawn copy])`` (``Replay.edge_grads``):
    the copies of an edge drawn more than once (``x * x``) each get their own part.
    """

    def __init__(self, svg, labels=None):
        _register_namespaces()
        text = svg.decode("utf-8") if isinstance(svg, bytes) else svg
        self.root = ET.fromstring(text[text.index("<svg"):])
        self.root.set("style", "max-width: 100%; height: auto")
        self.nodes, self.edges = {}, {}
        for g in self.root.iter(f"{{{_SVG}}}g"):
            kind = g.get("class")
            title = g.find(f"{{{_SVG}}}title")
            if kind not in ("node", "edge") or title is None:
                continue
            shapes = [el for el in g.iter() if el.tag.rsplit("}", 1)[-1] in ("path", "polygon", "ellipse", "polyline")]
            texts = [el for el in g.iter() if el.tag.rsplit("}", 1)[-1] == "text"]
            saved = [(el, dict(el.attrib)) for el in [g] + shapes + texts]
            if kind == "node":
                self.nodes[title.text] = (g, shapes, texts, saved)
            else:
                a, _, b = (title.text or "").partition("->")
                self.edges.setdefault((a, b), []).append((g, shapes, texts, saved))
        for edge, (total, copies) in (labels or {}).items():
            drawn = [texts for _, _, texts, _ in self.edges.get(edge, [])]
            if not all(len(texts) == 1 for texts in drawn):
                continue  # a wrapped label: keep what Graphviz drew
            for texts, text in zip(drawn, copies if len(copies) == len(drawn) else [total] * len(drawn)):
                texts[0].text = text

    @classmethod
    def of(cls, rep, dot=None):
        """Lay ``rep``'s graph out with Graphviz (the one run per stepper) and get ready to restyle it."""
        from tapelab.viz.render import render_dot

        labels = {edge: (total, copies) for edge, (_, total, copies) in rep.edge_grads.items()}
        return cls(render_dot(rep.dot, "svg", dot), labels)

    def svg(self, view):
        """The SVG text for one view."""
        for parts in list(self.nodes.values()) + [c for copies in self.edges.values() for c in copies]:
            for el, attrib in parts[3]:
                el.attrib.clear()
                el.attrib.update(attrib)
        for node in view.dimmed:
            if node in self.nodes:
                self.nodes[node][0].set("opacity", DIM_OPACITY)
        for node in view.highlight:
            if node in self.nodes:
                g, shapes, _, _ = self.nodes[node]
                g.set("class", "node tapelab-current")
                g.attrib.pop("opacity", None)
                for el in shapes[:1]:
                    el.set("stroke", CURRENT)
                    el.set("stroke-width", "3")
        done = GRADIENT if view.mode == "backward" else FORWARD
        for edge, copies in self.edges.items():
            state = view.edges.get(edge, "pending")
            color = {"current": CURRENT, "done": done}.get(state, PENDING)
            for g, shapes, texts, _ in copies:
                self._edge(view, edge, state, color, g, shapes, texts)
        return ET.tostring(self.root, encoding="unicode")

    @staticmethod
    def _edge(view, edge, state, color, g, shapes, texts):
        g.set("class", f"edge tapelab-{state}")
        for el in shapes:
            el.set("stroke", color)
            if el.get("fill") not in (None, "none"):
                el.set("fill", color)
            el.set("stroke-width", "2.5" if state == "current" else ("1.8" if state == "done" else "1"))
        labelled = view.mode == "backward" and edge in view.labels
        for el in texts:
            if labelled:
                el.set("fill", color)
                if state == "current":
                    el.set("font-weight", "bold")
            else:
                el.set("visibility", "hidden")


# --- the widget ----------------------------------------------------------------------------------------

def _ipywidgets():
    try:
        import ipywidgets
    except ImportError:
        raise ImportError(
            "BackwardStepper is a Jupyter widget and needs ipywidgets: pip install ipywidgets (or "
            "pip install 'tapelab[lab]'). Without it, every step prints as text:\n"
            "    print(tapelab.viz.step_text(tapelab.viz.replay(tape, loss, sources)))"
        ) from None
    return ipywidgets


def _html_escape(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _table_html(view):
    if not view.table:
        return ""
    rows = "".join(
        f'<tr><td style="padding: 2px 8px 2px 0"><b>{_html_escape(n)}</b></td>'
        f'<td style="padding: 2px 8px"><code>{_html_escape(v)}</code></td>'
        f'<td style="padding: 2px 0 2px 8px"><i>{_html_escape(s)}</i></td></tr>' for n, v, s in view.table)
    return (f'<div class="tapelab-stepper-table"><div>{_html_escape(view.table_title)}</div>'
            f'<table style="border-collapse: collapse">{rows}</table></div>')


def _panel_html(view):
    op = "" if view.op_index is None else f' data-op="{view.op_index}"'
    return (f'<div class="tapelab-stepper-panel" data-mode="{view.mode}" data-position="{view.position}"{op}>'
            f'<pre style="white-space: pre-wrap; word-break: normal; overflow-wrap: break-word; margin: 0; '
            f'font-size: 12px; line-height: 1.35">'
            f'{_html_escape(chr(10).join(view.panel))}</pre></div>')


class BackwardStepper:
    """Step through the backward pass of a recorded tape, one op at a time, in Jupyter.

    Play, Prev, Next, a slider and Reset move through the steps; the graph highlights the op being
    processed, colours the edges a gradient already flowed along (labelled with that gradient) and
    dims those still to come; the panel writes the chain-rule step out with the actual numbers, and
    the table shows each source's gradient accumulated so far. ``mode="forward"`` (or the toggle)
    replays the recorded ops in order instead. The last table equals ``tape.gradient(...)``.

    Like ``gradient()``, it uses up a non-persistent tape: record with ``persistent=True`` to call
    ``gradient()`` as well. Other options (``collapse``, ``expand``, ``detail``, ``max_ops``,
    ``rankdir``) are those of :func:`tapelab.viz.to_dot`; an MLP's layers collapse into boxes.

    >>> x = tl.Variable(tl.ones((2, 2)), name="x")
    >>> y = tl.Variable([[2, 2], [2, 2]], dtype=tl.float32, name="y")
    >>> with tl.GradientTape() as tape:
    ...     loss = tl.reduce_mean(tl.matmul(x, y))
    >>> stepper = tl.viz.BackwardStepper(tape, loss, [x, y])   # in a notebook: the widget
    >>> stepper.next_button.click(); stepper.next_button.click()
    >>> stepper.view.table
    [('x', '[[1, 1], [1, 1]]', 'final'), ('y', '[[0.5, 0.5], [0.5, 0.5]]', 'final')]
    >>> print(stepper)       # every step as text (also what a notebook shows without a live kernel)  # doctest: +SKIP
    """

    def __init__(self, tape, target, sources, output_gradients=None, *, mode="backward", collapse=None, expand=(),
                 detail="values", max_ops=MAX_OPS, rankdir="TB", interval=1200):
        if mode not in MODES:
            raise ValueError(f"BackwardStepper: mode={mode!r} should be 'backward' or 'forward'.")
        widgets = _ipywidgets()  # before the backward pass: a missing ipywidgets must not use up the tape
        self.replay = replay(tape, target, sources, output_gradients, collapse=collapse, expand=expand,
                             detail=detail, max_ops=max_ops, rankdir=rankdir)
        self._views = {}  # (mode, position) -> StepView
        self._svgs = {}  # (mode, position) -> SVG text, rendered on first display
        self._restyler = None
        self._graph_error = None
        self.renders = 0  # how many step pictures were made (the cache keeps each one)

        n = self.replay.count(mode)
        self.mode_buttons = widgets.ToggleButtons(options=list(MODES), value=mode, description="",
                                                  tooltips=["step back through the chain rule",
                                                            "replay the recorded ops in order"])
        self.play = widgets.Play(value=0, min=0, max=n, step=1, interval=interval, description="Play",
                                 show_repeat=False)
        self.prev_button = widgets.Button(description="◀ Prev", tooltip="one step back", icon="")
        self.next_button = widgets.Button(description="Next ▶", tooltip="one step further")
        self.reset_button = widgets.Button(description="Reset", tooltip="back to the start")
        self.slider = widgets.IntSlider(value=0, min=0, max=n, step=1, description="step", continuous_update=True,
                                        readout=True)
        widgets.link((self.play, "value"), (self.slider, "value"))
        for b in (self.prev_button, self.next_button, self.reset_button):
            b.layout = widgets.Layout(width="auto")
        self.prev_button.add_class("tapelab-stepper-prev")
        self.next_button.add_class("tapelab-stepper-next")
        self.reset_button.add_class("tapelab-stepper-reset")
        self.graph = widgets.HTML(layout=widgets.Layout(flex="0 1 auto", overflow="auto", max_height="640px",
                                                        margin="0 16px 0 0"))
        self.panel = widgets.HTML(layout=widgets.Layout(width="100%"))
        self.table = widgets.HTML(layout=widgets.Layout(width="100%"))
        self.graph.add_class("tapelab-stepper-graph")
        self.prev_button.on_click(lambda _: self.step(-1))
        self.next_button.on_click(lambda _: self.step(+1))
        self.reset_button.on_click(lambda _: self.reset())
        self.slider.observe(lambda change: self._show(), names="value")
        self.mode_buttons.observe(lambda change: self._set_mode(change["new"]), names="value")
        controls = widgets.HBox([self.mode_buttons, self.play, self.prev_button, self.next_button, self.slider,
                                 self.reset_button], layout=widgets.Layout(flex_flow="row wrap", align_items="center"))
        side = widgets.VBox([self.panel, self.table], layout=widgets.Layout(flex="1 1 360px", min_width="320px"))
        body = widgets.HBox([self.graph, side], layout=widgets.Layout(flex_flow="row wrap", align_items="flex-start"))
        self.widget = widgets.VBox([controls, body])
        self.widget.add_class("tapelab-stepper")
        self._show()

    # --- state: an index and a mode; everything else is derived -----------------------------------------
    @property
    def mode(self):
        return self.mode_buttons.value

    @property
    def position(self):
        return self.slider.value

    @property
    def count(self):
        return self.replay.count(self.mode)

    @property
    def view(self):
        """The :class:`StepView` now on screen."""
        return self.view_at(self.position)

    def view_at(self, position, mode=None):
        mode = mode or self.mode
        key = (mode, position)
        if key not in self._views:
            self._views[key] = step_view(self.replay, position, mode)
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
        n = self.replay.count(mode)
        self.slider.value = 0
        self.slider.max = self.play.max = n
        self._show()

    def _show(self):
        view = self.view
        self.graph.value = self.graph_html(view.position, view.mode)
        self.panel.value = _panel_html(view)
        self.table.value = _table_html(view)
        self.prev_button.disabled = view.position == 0
        self.next_button.disabled = view.position == view.count

    # --- pictures ----------------------------------------------------------------------------------------
    def svg(self, position=None, mode=None):
        """The graph at one step as SVG text (Graphviz lays the graph out once; each step restyles it)."""
        mode = mode or self.mode
        position = self.position if position is None else position
        key = (mode, position)
        if key not in self._svgs:
            if self._restyler is None:
                self._restyler = Restyler.of(self.replay)
            self._svgs[key] = self._restyler.svg(self.view_at(position, mode))
            self.renders += 1
        return self._svgs[key]

    def graph_html(self, position=None, mode=None):
        if self._graph_error is None:
            try:
                return self.svg(position, mode)
            except Exception as e:  # no Graphviz (GraphvizNotFound) or a failing dot: the text still teaches
                self._graph_error = f"{type(e).__name__}: {e}"
        return (f'<pre style="color: #6b7280">(no graph: {_html_escape(self._graph_error)})\n\n'
                f'{_html_escape(self.replay.dot)}</pre>')

    # --- text and static display ---------------------------------------------------------------------------
    def text(self, position=None, mode=None):
        """One step written out as text (default: the step on screen)."""
        mode = mode or self.mode
        return self.view_at(self.position if position is None else position, mode).text

    def __str__(self):
        return step_text(self.replay, self.mode)

    def __repr__(self):
        return (f"<tapelab.viz.BackwardStepper: {self.count} {self.mode} steps, at step {self.position}; "
                f"print() it for every step as text>")

    def static_html(self):
        """What a notebook shows without a live kernel: the last step's picture, its text, and every step."""
        mode = self.mode
        last = self.view_at(self.count, mode)
        return ('<div class="tapelab-stepper-static">'
                f'<div style="max-width: 720px">{self.graph_html(self.count, mode)}</div>'
                f"{_panel_html(last)}{_table_html(last)}"
                f"<details><summary>every {mode} step as text</summary><pre>{_html_escape(str(self))}</pre>"
                "</details></div>")

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = self.widget._repr_mimebundle_()  # the live widget (its view model), for a running kernel
        bundle["text/plain"] = str(self)  # nbval and plain frontends: every step as text
        bundle["text/html"] = self.static_html()  # GitHub, nbviewer: the final picture and the chain rule
        return bundle


def step_text(rep, mode="backward"):
    """Every step of a :class:`Replay` as text, from the start to the end.

    >>> x = tl.Variable(3.0, name="x")
    >>> with tl.GradientTape() as tape:
    ...     y = x * x + x
    >>> print(step_text(replay(tape, y, x)).splitlines()[5])
    Backward step 1 of 2 - op 1: b = add(a, x)
    """
    parts = [step_view(rep, p, mode).text for p in range(rep.count(mode) + 1)]
    return "\n\n".join(parts)

