"""The tape as a Graphviz DOT graph, as plain text: no graphviz import, so it works (and is tested) anywhere.

    to_dot(tape) -> 'digraph tape { ... }'        (render it with tapelab.viz.draw)
    build(tape)  -> DotGraph: the nodes and edges, with the map from tensors and ops to node ids

Tensor nodes are rounded boxes (Variables gold, watched tensors yellow, constants grey, the target red),
op nodes are blue ellipses labelled with the call in the learner's names (``matmul(x, y)``). Data flows
top to bottom, or left to right when that fits a notebook cell better. Name scopes become clusters, or
single boxes when collapsed; a source whose gradient is None is greyed out with the reason.
"""

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from tapelab.engine.learner import spell
from tapelab.engine.tensor import Tensor
from tapelab.viz import fmt
from tapelab.viz.limits import MAX_OPS
from tapelab.viz.tapedata import tape_data

DETAILS = ("names", "shapes", "values")
COLLAPSE_OVER = 40  # collapse=None collapses name scopes when the tape has more ops than this
CELL_WIDTH_IN = 10.0  # a notebook cell's width, in Graphviz inches (96 px each)
NODE_WIDTH_IN = 1.9  # a typical tensor box with its values, side by side with its neighbours
LABEL_WIDTH = 22  # characters on a box's line before it wraps: narrow boxes make a picture that fits a cell
SHARED_OVER = 3  # a Variable (or watched tensor) more drawn ops read than this is drawn again beside each of them

FILL = {"variable": "#fde68a", "watched": "#fef9c3", "placeholder": "#fef9c3", "constant": "#eeeeee",
        "stopped": "#e5e7eb", "intermediate": "#ffffff", "target": "#fecaca", "op": "#dbeafe", "box": "#ede9fe",
        "more": "#f5f5f5"}
EMPTY_TITLE = ("nothing recorded yet: compute with a trainable Variable, or a tensor you tape.watch(), "
               "inside `with tl.GradientTape() as tape:`")
HIGHLIGHT = "#dc2626"
GREY = "#9ca3af"


INVISIBLE = '[style="invis"]'  # edges that only steer the layout (DotGraph._below_target)


def edge_count(source):
    """How many edges a DOT text made here draws (its layout-only edges left out)."""
    return source.count("->") - source.count(INVISIBLE)


class NodeId(str):
    """A DOT node id (``"t3"``, ``"op_2"``) given as such: never read as a tensor's name (a learner may call a
    tensor ``t3``)."""


@dataclass(frozen=True)
class DotEdge:
    """One drawn edge: a tensor into an op (``arg`` = which input) or an op out to its tensor (``arg`` None)."""

    id: str  # "e0", "e1", ... (also the SVG element's id)
    tail: str  # node ids
    head: str
    op: int  # the index of the op at one end (for a collapsed box: the first op in it that uses the edge)
    tensor: int  # the key of the tensor at the other end
    arg: int = None


def to_dot(tape, target=None, sources=None, *, detail="values", highlight=(), edge_colors=None, edge_labels=None,
           collapse=None, expand=(), max_ops=MAX_OPS, rankdir=None, title=None, flow=False):
    """The tape as DOT text (no Graphviz needed): tensors, ops and the edges between them.

    Args:
        tape: a ``GradientTape`` (after ``gradient()`` too: it then shows the gradients).
        target, sources: what the gradient is of, and with respect to what; default: those of the
            tape's last ``gradient()`` call. Sources whose gradient is ``None`` are greyed out with the
            reason (integer dtype, not watched, not connected, computed while recording was stopped).
        detail: ``"names"`` (names and ops), ``"shapes"`` (+ shape and dtype) or ``"values"`` (+ values
            of small tensors and the gradient that reached each tensor).
        highlight: nodes and edges to draw in red. A node is a tensor, an op's index on the tape (int),
            a tensor's name as drawn (``"x"``, ``"loss"``) or a DOT node id (``"op_0"``); an edge is a pair
            of nodes, e.g. ``(x, 0)`` (x into op 0) or ``(0, "z")`` (op 0 to its output z), or an edge id.
        edge_colors, edge_labels: per-edge colour / label text, as a dict keyed by edge or a list of
            ``(edge, value)`` pairs (use a list when the edge contains tensors: they are unhashable).
        collapse: draw each name scope as one box: ``True``, ``False``, a list of scope names, or
            ``None`` (default: collapse when the tape has more than ``COLLAPSE_OVER`` ops).
        expand: scope names to keep open even when collapsing.
        max_ops: at most this many op nodes (collapsed scopes count as one); the earliest others are
            summarised in one "N more ops" node. ``None`` draws them all.
        rankdir: ``"TB"`` (top to bottom), ``"LR"`` (left to right), or ``None`` (default): whichever
            fits a notebook cell's width.
        title: a caption for the graph.
        flow: after ``gradient()``, colour and thicken each edge by the size (L2 norm) of the gradient that flows
            back along it, on a log scale from the smallest to the largest, with a legend: out of an op, all of
            dloss/d(its output); into an op, the part of dloss/d(input) that op sent (into a collapsed box, its
            ops' parts together: a time step's share of a shared weight's gradient). Where a gradient vanishes
            the edges fade, where it explodes they darken. With ``collapse=True`` it shows the gradient between
            layers or time steps.

    >>> x = tl.Variable(3.0, name="x")
    >>> with tl.GradientTape() as tape:
    ...     y = x * x
    >>> print(to_dot(tape).splitlines()[0])
    digraph tape {
    """
    graph = build(tape, target, sources, detail=detail, collapse=collapse, expand=expand, max_ops=max_ops, flow=flow)
    return graph.source(highlight=highlight, edge_colors=edge_colors, edge_labels=edge_labels, rankdir=rankdir,
                        title=title, flow=flow)


def build(tape, target=None, sources=None, *, detail="values", collapse=None, expand=(), max_ops=MAX_OPS,
          flow=False):
    """The tape's nodes and edges as a :class:`DotGraph` (options as :func:`to_dot`'s); ``.source()`` writes DOT."""
    check_options(detail, max_ops)
    return DotGraph(tape_data(tape, target, sources, parts=flow), detail, collapse, expand, max_ops)


def check_options(detail, max_ops):
    """Refuse a ``detail`` or ``max_ops`` that :class:`DotGraph` cannot draw."""
    if detail not in DETAILS:
        raise ValueError(f"to_dot: detail={detail!r} is not one of {', '.join(map(repr, DETAILS))}.")
    if max_ops is not None and max_ops < 1:
        raise ValueError(f"to_dot: max_ops={max_ops!r} must be at least 1 (or None to draw every op).")


def quote(s):
    """A DOT double-quoted string; newlines become line breaks in labels."""
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _wrap(text, width=30, sep=" "):
    words, lines, line = text.split(sep), [], ""
    for w in words:
        if line and len(line) + len(sep) + len(w) > width:
            lines.append(line + sep.rstrip())
            line = w
        else:
            line = f"{line}{sep}{w}" if line else w
    return lines + [line] if line else lines


class _Unit:
    """One drawn op: a single op, or a run of ops in one collapsed scope (a box)."""

    def __init__(self, ops, box_scope=None):
        self.ops = ops
        self.box_scope = box_scope
        self.id = f"op_{ops[0].index}" if box_scope is None else f"box_{ops[0].index}"


class DotGraph:
    """The drawing of one tape: which nodes and edges there are, and which node draws each tensor and op.

    ``tensor_nodes`` maps a tensor's key to its node id (``t0``, ``t1``, ... in :class:`TapeData` order;
    a constant read by several drawn ops has a copy beside each, ``t1_op_4``, listed in ``copies``),
    ``op_nodes`` an op's index to the node that draws it (``op_3``, a collapsed box ``box_0``, or ``more``
    for ops left out by ``max_ops``); ``edges`` lists every :class:`DotEdge` (into an op, one per argument:
    ``x * x`` has two edges from x; into a box, one per tensor). ``source()`` writes the DOT text.
    """

    def __init__(self, data, detail="values", collapse=None, expand=(), max_ops=MAX_OPS):
        self.data, self.detail = data, detail
        collapse = len(data.ops) > COLLAPSE_OVER if collapse is None else collapse
        expand = [expand] if isinstance(expand, str) else expand  # one scope's name
        _check_scope_names(data, "expand", expand)
        if not isinstance(collapse, bool):
            _check_scope_names(data, "collapse", [collapse] if isinstance(collapse, str) else collapse)
        self.collapse_of = _collapser(collapse, expand)
        self.units = self._units()
        self.units_by_id = {u.id: u for u in self.units}
        self.hidden = []
        if max_ops is not None and len(self.units) > max_ops:  # keep the ops nearest the target
            self.hidden, self.units = self.units[:-max_ops], self.units[-max_ops:]
        self.op_nodes = {op.index: "more" for u in self.hidden for op in u.ops}
        self.op_nodes.update((op.index, u.id) for u in self.units for op in u.ops)
        self.tensor_nodes = {k: f"t{n}" for n, k in enumerate(data.tensors)}
        self.copies = {}  # tensor key -> the ids of its copies (a constant beside each unit that reads it)
        self.nodes, self.edges = self._layout()  # nodes: (node id, tensor key, scope it sits in)

    def _units(self):
        units = []
        for op in self.data.ops:
            key = self.collapse_of(op.scope)
            if key is not None and units and units[-1].box_scope == key:
                units[-1].ops.append(op)
            else:
                units.append(_Unit([op], key))
        return units

    # --- which tensors show, and where the edges go -------------------------------------------
    def _layout(self):
        """Tensor nodes and edges. Scalar constants nobody named are written inside the op's label instead
        (``multiply(x, 0.5)``), and a constant that several drawn ops (or boxes) read gets a node beside each
        of them: a constant shared along a chain would otherwise pull the whole chain into a diagonal."""
        data = self.data
        readers = Counter(k for u in self.units for k in {k for op in u.ops for k in op.inputs})
        used_outside = self._used_outside_boxes()
        shown, copies, edges = set(), [], []  # edges as (tail, head, op, tensor, arg), in drawing order
        for u in self.units:
            edges += self._input_edges(u, readers, shown, copies)
            edges += self._output_edges(u, used_outside, shown)
        shown.update(data.targets + data.sources)  # always drawn, even when unconnected (the greyed sources)
        # tensors made by hidden ops and used by drawn ones hang off the summary node
        edges += [("more", self.tensor_nodes[op.output], op.index, op.output, None)
                  for u in self.hidden for op in u.ops if op.output in shown]
        nodes = [(self.tensor_nodes[k], k, self._tensor_scope(k)) for k in data.tensors if k in shown]
        return nodes + copies, [DotEdge(f"e{i}", *e) for i, e in enumerate(edges)]  # in TapeData order: deterministic

    def _used_outside_boxes(self):
        """How often each tensor is read by a drawn op outside the collapsed box that hides it (if one does)."""
        inside = {op.output: u for u in self.units if u.box_scope is not None for op in u.ops}
        return Counter(k for u in self.units for op in u.ops for k in op.inputs if inside.get(k) is not u)

    def _input_edges(self, u, readers, shown, copies):
        """The edges into unit ``u``, one per argument (into a box, one per tensor from outside it)."""
        made = {op.output for op in u.ops}
        ins, edges = {}, []  # ins: tensor key -> its node beside this unit
        for op in u.ops:
            for i, k in enumerate(op.inputs):
                if self.data.tensors[k].literal or (u.box_scope is not None and (k in made or k in ins)):
                    continue
                if k not in ins:
                    ins[k] = self._input_node(k, u, readers, shown, copies)
                edges.append((ins[k], u.id, op.index, k, i))
        return edges

    def _input_node(self, k, u, readers, shown, copies):
        """The node of tensor ``k`` as ``u`` reads it. A constant that several units read gets a copy beside each;
        a leaf read by more than ``SHARED_OVER`` (an RNN's weights, read at every time step) is drawn where it is
        first read and again beside each later reader: edges from one node to fifty steps down the page would make
        the layout slow (Graphviz routes each through every rank between) and the picture a web of lines."""
        t = self.data.tensors[k]
        constant = t.kind == "constant" and not (t.is_source or t.is_target) and readers[k] > 1
        shared = t.producer is None and not t.is_target and readers[k] > SHARED_OVER and k in shown
        if constant or shared:
            copy = f"{self.tensor_nodes[k]}_{u.id}"
            copies.append((copy, k, self._unit_scope(u)))
            self.copies.setdefault(k, []).append(copy)
            return copy
        shown.add(k)
        return self.tensor_nodes[k]

    def _output_edges(self, u, used_outside, shown):
        """The edges out of unit ``u`` to the tensors it makes (a box's: only those seen outside it)."""
        edges = []
        for op in u.ops:
            k, t = op.output, self.data.tensors[op.output]
            if u.box_scope is None or used_outside[k] or t.is_target or t.is_source or op is u.ops[-1]:
                shown.add(k)
                edges.append((u.id, self.tensor_nodes[k], op.index, k, None))
        return edges

    # --- labels ---------------------------------------------------------------------------------
    def _tensor_attrs(self, t):
        kind = "target" if t.is_target else fmt.kind_text(t.kind, t.trainable, short=True)
        if t.is_source:
            kind = f"{kind}, source" if kind else "source"
        heading = f"{t.name} ({kind})" if kind else t.name
        lines = [heading] if len(heading) <= LABEL_WIDTH else [t.name] + _wrap(f"({kind})", LABEL_WIDTH, ", ")
        if self.detail != "names":
            lines.append(f"{fmt.shape_text(t.shape)} {t.dtype}")
        if self.detail == "values":
            v = fmt.value_text(t.value)
            if v is not None and v != t.name:  # (a constant named by its value shows it once)
                lines.append(v)
            if t.grad is not None:
                lines.append(f"grad {fmt.array_text(t.grad, shape=False)}")
        attrs = {"shape": "box", "style": "rounded,filled"}
        fill = FILL["target"] if t.is_target else FILL[t.kind]
        if t.none_reason:
            lines.append("gradient: None")
            lines += _wrap(t.none_reason, LABEL_WIDTH)
            attrs.update(style="rounded,filled,dashed", color=GREY, fontcolor="#6b7280")
            fill = "#f3f4f6"
        attrs["fillcolor"] = fill
        attrs["label"] = "\n".join(lines)
        attrs["tooltip"] = f"{t.name}: {fmt.shape_text(t.shape)} {t.dtype}" + (
            f"; gradient None: {t.none_reason}" if t.none_reason else "")
        return attrs

    def _is_again(self, node, k):
        """Whether ``node`` draws a shared leaf again (a copy of a constant shows all of it: it is small)."""
        return node != self.tensor_nodes[k] and self.data.tensors[k].kind != "constant"

    def _again_attrs(self, t):
        """A shared leaf drawn again beside a later reader: its name, in its colour, dashed (the first draws it all)."""
        return {"shape": "box", "style": "rounded,filled,dashed", "fillcolor": FILL[t.kind], "label": t.name,
                "tooltip": f"{t.name} again (drawn in full where first read): {fmt.shape_text(t.shape)} {t.dtype}"}

    def _op_attrs(self, u):
        if u.box_scope is None:
            op = u.ops[0]
            args = [self.data.name(k) for k in op.inputs]
            call = f"{op.name}({', '.join(args)})"
            label = call if len(call) <= 30 else "\n".join([op.name] + _wrap(f"({', '.join(args)})", 30, ", "))
            params = fmt.params_text(op.params) if self.detail != "names" else ""
            return {"shape": "ellipse", "style": "filled", "fillcolor": FILL["op"], "ordering": "in",
                    "label": label + (f"\n{params}" if params else ""), "tooltip": self._rules(op)}
        counts = Counter(op.name for op in u.ops)
        names = ", ".join(n if c == 1 else f"{n} ({c})" for n, c in counts.items())
        n = len(u.ops)
        label = "\n".join([u.box_scope, f"{n} op{'s' if n != 1 else ''}: " + "\n".join(_wrap(names, 36)),
                           f"(expand=[{u.box_scope.rstrip('/')!r}] opens it)"])
        return {"shape": "box3d", "style": "filled", "fillcolor": FILL["box"], "ordering": "in", "label": label,
                "margin": "0.15,0.1",  # (box3d draws its top face inside the box: room for the first line)
                "tooltip": f"name scope {u.box_scope}, collapsed"}

    def _rules(self, op):
        """The op's gradient rules for the inputs a gradient can reach, in the tensors' names: ``∂loss/∂x =
        ∂loss/∂z @ y.T`` (``grad x = grad z @ y.T`` before there is a target)."""
        data = self.data
        sends = data.tensors[op.output].reached  # (the backward pass sends parts to tracked inputs only)
        wanted = [(f, k) for f, k in zip(op.formulas, op.inputs) if f and sends and data.tensors[k].reachable]
        if not wanted:
            return f"{op.name}: no gradient flows back through it here"
        symbols = rule_symbols(data, op)
        return "; ".join(f"{data.grad_of(k)} {'+' if data.tensors[k].parts > 1 else ''}= {fmt.rule_rhs(f, symbols)}"
                         for f, k in wanted)

    def _more_attrs(self):
        ops = [op for u in self.hidden for op in u.ops]
        counts = Counter(op.name for op in ops).most_common(4)
        names = ", ".join(f"{n} ({c})" for n, c in counts)
        label = f"... {len(ops):,} more ops\n(earlier on the tape: {names})\nmax_ops=None draws them all"
        return {"shape": "note", "style": "filled,dashed", "fillcolor": FILL["more"], "label": label}

    # --- where things are -------------------------------------------------------------------------
    def node(self, x):
        """The node id of a tensor, an op index, a tensor's drawn name or a :class:`NodeId` (``highlight``'s forms)."""
        data = self.data
        if isinstance(x, NodeId):
            return x
        if isinstance(x, Tensor):
            if x._key not in data.tensors:
                raise ValueError("to_dot: a highlighted tensor is not on this tape.")
            return self._drawn(x._key)
        if isinstance(x, bool):
            raise TypeError(f"to_dot: cannot highlight {x!r}")
        if isinstance(x, int):
            if x not in self.op_nodes:
                raise ValueError(f"to_dot: there is no op {x} on this tape (it has {len(data.ops)} ops).")
            return self.op_nodes[x]
        if isinstance(x, str):
            by_name = {t.name: k for k, t in data.tensors.items()}
            if x in by_name:
                return self._drawn(by_name[x])
            if x in set(self.op_nodes.values()) | {node for node, *_ in self.nodes}:
                return x
            raise ValueError(f"to_dot: no tensor or node named {x!r}; tensors are {', '.join(sorted(by_name))}.")
        raise TypeError(f"to_dot: cannot find a node for {type(x).__name__}; use a tensor, an op index or a name.")

    def _drawn(self, key):
        """The node that draws a tensor (the first copy of a repeated constant), or why none does."""
        node = self.tensor_nodes[key]
        if any(n == node for n, *_ in self.nodes):
            return node
        if key in self.copies:
            return self.copies[key][0]
        t = self.data.tensors[key]
        why = ("it is written inside its op's label" if t.literal else
               "it is inside a collapsed box (expand=[...] opens it)" if t.producer is not None else
               "only ops left out by max_ops read it")
        raise ValueError(f"to_dot: {t.name} is not drawn as a node: {why}.")

    def _edge_ids(self, spec):
        """The ids of the edges a spec names: an edge id, or a pair of nodes (every edge between them)."""
        if isinstance(spec, str):
            return [e.id for e in self.edges if e.id == spec]
        if not (isinstance(spec, tuple) and len(spec) == 2):
            raise TypeError(f"to_dot: an edge is a pair (from, to) or an edge id, got {spec!r}")
        tail, head = self.node(spec[0]), self.node(spec[1])
        return [e.id for e in self.edges if (e.tail, e.head) == (tail, head)]

    def rankdir(self):
        """``"TB"`` (top to bottom) unless the graph would be wider than a notebook cell that way and narrower
        left to right. Estimated as Graphviz ranks it: each computed node one below what it reads, each
        input just above the first op that reads it."""
        rank = {}
        for e in self.edges:  # (in execution order: a computed node's inputs are ranked before it)
            rank[e.head] = max(rank.get(e.head, 0), rank.get(e.tail, 0) + 1)
        heads = set(rank)
        for e in self.edges:  # inputs: just above their first reader
            if e.tail not in heads:
                rank[e.tail] = min(rank.get(e.tail, rank[e.head]), rank[e.head] - 1)
        depth = max(rank.values(), default=0) + 1
        widest = max(Counter(rank.get(node, 0) for node, *_ in self.nodes).values(), default=1)
        return "TB" if widest * NODE_WIDTH_IN <= CELL_WIDTH_IN or widest <= depth else "LR"

    # --- assembling the text --------------------------------------------------------------------
    def source(self, *, highlight=(), edge_colors=None, edge_labels=None, rankdir=None, title=None, node_attrs=None,
               edge_attrs=None, flow=False):
        """The DOT text, with ``to_dot``'s highlight, edge colours and labels, direction, title and flow;
        ``node_attrs`` and ``edge_attrs`` add DOT attributes by node and edge id (the stepper's still frames use
        them)."""
        rankdir = self.rankdir() if rankdir is None else rankdir
        _check_rankdir(rankdir)
        if not self.data.ops and title is None:  # an empty picture teaches nothing: say why it is empty
            title = spell(EMPTY_TITLE)
        hi_nodes, hi_edges = self._highlighted(highlight)
        colors = {i: v for spec, v in _pairs(edge_colors) for i in self._edge_ids(spec)}
        labels = {i: v for spec, v in _pairs(edge_labels) for i in self._edge_ids(spec)}
        lines = _header(rankdir, title)
        lines += _clusters(self._node_lines(hi_nodes, node_attrs or {}))
        edge_attrs = edge_attrs or {}
        below = self._below_target()
        if flow:
            flow_attrs, legend = self._flow()
            edge_attrs = {i: {**flow_attrs.get(i, {}), **edge_attrs.get(i, {})} for i in {*flow_attrs, *edge_attrs}}
            lines.append(legend)
            target = self._target_node()
            below += [(target, "legend")] if target else []
        lines += self._edge_lines(hi_edges, colors, labels, edge_attrs)
        lines += [f"  {quote(tail)} -> {quote(head)} {INVISIBLE};" for tail, head in below]
        lines.append("}")
        return "\n".join(lines) + "\n"

    def _highlighted(self, highlight):
        """``highlight`` as the node ids and the edge ids to draw in red."""
        hi_nodes, hi_edges = set(), set()
        if isinstance(highlight, (str, int, Tensor)):  # one node (a name is not a list of letters)
            highlight = [highlight]
        for h in highlight:
            if isinstance(h, tuple) or (isinstance(h, str) and any(e.id == h for e in self.edges)):
                hi_edges.update(self._edge_ids(h))
            else:
                hi_nodes.add(self.node(h))
        return hi_nodes, hi_edges

    def _node_lines(self, hi_nodes, node_attrs):
        """``(scope path, node line)`` for every drawn node: tensors, ops (or boxes), then the summary node."""
        data = self.data
        drawn = [(node, self._again_attrs(data.tensors[k]) if self._is_again(node, k) else
                  self._tensor_attrs(data.tensors[k]), scope) for node, k, scope in self.nodes]
        drawn += [(u.id, self._op_attrs(u), self._unit_scope(u)) for u in self.units]
        if self.hidden:
            drawn.append(("more", self._more_attrs(), ""))
        placed = []
        for node, attrs, scope in drawn:
            _mark(attrs, node in hi_nodes)
            attrs.update(node_attrs.get(node, {}))
            placed.append((scope, f"  {quote(node)} [id={quote(node)}, {_attrs(attrs)}];"))
        return placed

    def _edge_lines(self, hi_edges, colors, labels, edge_attrs):
        """One DOT line per edge, with its tooltip, colour, label and highlight."""
        data = self.data
        leaves = {node for node, k, _ in self.nodes if data.tensors[k].producer is None}
        lines = []
        for e in self.edges:
            what = data.name(e.tensor)
            attrs = {"id": e.id, "tooltip": f"{what}, input {e.arg} of op {e.op}" if e.arg is not None
                     else f"{what}, made by op {e.op}"}
            if e.tail not in leaves:  # the chain of computed tensors stays straight; inputs join it from the side
                attrs["weight"] = "3"
            if e.id in colors:
                attrs.update(color=colors[e.id], fontcolor=colors[e.id], penwidth="2")
            if e.id in labels:
                attrs["label"] = labels[e.id]
            if e.id in hi_edges:
                attrs.update(color=HIGHLIGHT, penwidth="2.5")
            if e.tail == "more":
                attrs["style"] = "dashed"
            attrs.update(edge_attrs.get(e.id, {}))
            lines.append(f"  {quote(e.tail)} -> {quote(e.head)} [{_attrs(attrs)}];")
        return lines

    def _flow(self):
        """Each edge's DOT attributes by the norm of the gradient flowing back along it, and the legend's node.

        The colour and width go with log10 of the norm, from the smallest to the largest on the picture: a ramp
        from pale green (small) to dark purple (large), 1 to 6 points wide. An edge no gradient flows along
        (an integer tensor, a part the target does not depend on) is grey and dashed; one whose gradient is all
        zeros is grey."""
        if not self.data.has_gradient:
            raise ValueError("draw(flow=True): this tape has no gradient to show yet. Call tape.gradient(loss, "
                             "sources) first (the flow is read off that pass), then draw it.")
        norms = {}
        for e in self.edges:
            grad = self._flowing(e)
            if grad is not None:
                norms[e.id] = fmt.norm(grad)
        logs = [np.log10(n) for n in norms.values() if n > 0]
        low, high = (min(logs), max(logs)) if logs else (0.0, 0.0)
        attrs = {}
        for e in self.edges:
            norm = norms.get(e.id)
            if norm is None or norm == 0:
                attrs[e.id] = {"color": GREY, "style": "dashed" if norm is None else "solid", "tooltip": (
                    f"{self.data.name(e.tensor)}: " + ("no gradient flows here" if norm is None else "gradient 0"))}
                continue
            share = (np.log10(norm) - low) / (high - low) if high > low else 1.0
            attrs[e.id] = {"color": _ramp(share), "penwidth": f"{1 + 5 * share:.2f}",
                           "tooltip": f"|{self.data.grad_of(e.tensor)}| = {fmt.number_text(norm, 3)}"}
        return attrs, _legend(low, high)

    def _flowing(self, e):
        """The gradient that flows back along edge ``e``: into an op, the part the op sent that input (into a box,
        the sum of its ops' parts: a time step's share of dL/dW); out of an op, all of dL/d(its output)."""
        data = self.data
        if e.arg is None or e.tail == "more":
            return data.tensors[e.tensor].grad
        if data.sent is None:
            raise ValueError("DotGraph.source(flow=True) needs the parts of the pass: build(tape, flow=True).")
        unit = self.units_by_id[e.head]
        if unit.box_scope is None:  # (x * x: one edge per argument, each with its own part)
            return data.sent.get((e.op, e.arg))
        parts = [data.sent[op.index, i] for op in unit.ops for i, k in enumerate(op.inputs)
                 if k == e.tensor and (op.index, i) in data.sent]
        return sum(parts[1:], parts[0]) if parts else None

    def _target_node(self):
        return next((node for node, k, _ in self.nodes if self.data.tensors[k].is_target), None)

    def _below_target(self):
        """Invisible edges that hang what does not reach the target (unconnected parts, tensors no op read) below
        it, side by side, instead of beside the graph: a narrower picture, and the unconnected part set apart."""
        target = self._target_node()
        if target is None:
            return []
        links = {}
        for e in self.edges:
            links.setdefault(e.tail, set()).add(e.head)
            links.setdefault(e.head, set()).add(e.tail)
        reached, todo = {target}, [target]
        while todo:
            for n in links.get(todo.pop(), ()):
                if n not in reached:
                    reached.add(n)
                    todo.append(n)
        heads = {e.head for e in self.edges}
        return [(target, node) for node, *_ in self.nodes if node not in reached and node not in heads]

    def _unit_scope(self, u):
        """The scope a drawn op sits in: its own, or for a collapsed box the one around it."""
        return u.ops[0].scope if u.box_scope is None else _parent(u.box_scope)

    def _tensor_scope(self, k):
        t = self.data.tensors[k]
        scope = t.scope
        if t.producer is None:  # a leaf (Variable, constant) sits in a scope when every op reading it is there
            again = set(self.copies.get(k, ()))  # (the readers of its copies read those, not it)
            scopes = {op.scope for u in self.units if f"{self.tensor_nodes[k]}_{u.id}" not in again
                      for op in u.ops if k in op.inputs}
            scope = next(iter(scopes)) if len(scopes) == 1 else ""
        box = self.collapse_of(scope)
        return scope if box is None else _parent(box)  # tensors of a collapsed scope sit beside its box


def rule_symbols(data, op):
    """What a rule's symbols stand for at this op: its inputs' and output's names, ``g`` as ``∂loss/∂z``, ``n``."""
    symbols = {fmt.arg_name(f, i): fmt.operand(data.name(k)) for i, (f, k) in enumerate(zip(op.formulas, op.inputs))}
    symbols["out"] = fmt.operand(data.name(op.output))
    symbols["g"] = data.grad_of(op.output)
    if op.name == "reduce_mean":  # n: how many elements each mean averages
        size_in, size_out = (math.prod(data.tensors[k].shape) for k in (op.inputs[0], op.output))
        symbols["n"] = str(size_in // max(size_out, 1))
    return symbols


FLOW_RAMP = ("#b5de2b", "#6ece58", "#1f9e89", "#31688e", "#482878", "#440154")  # viridis: small -> large gradients


def _ramp(share):
    """The colour ``share`` (0..1) of the way along ``FLOW_RAMP``."""
    return FLOW_RAMP[min(int(share * len(FLOW_RAMP)), len(FLOW_RAMP) - 1)]


def _legend(low, high):
    """The flow view's legend: a node with a swatch and a norm under each colour of the ramp (log10 low..high)."""
    n = len(FLOW_RAMP)
    values = [10 ** (low + (high - low) * (i + 0.5) / n) for i in range(n)] if high > low else [10 ** high] * n
    swatches = "".join(f'<TD BGCOLOR="{c}" WIDTH="44" HEIGHT="{4 + 3 * i}"></TD>' for i, c in enumerate(FLOW_RAMP))
    numbers = "".join(f"<TD>{fmt.number_text(v)}</TD>" for v in values)
    label = (f'<<TABLE BORDER="0" CELLSPACING="2"><TR><TD COLSPAN="{n}">gradient norm on each edge '
             f"(log scale)</TD></TR><TR>{swatches}</TR><TR>{numbers}</TR></TABLE>>")
    return f'  "legend" [id="legend", shape="plaintext", label={label}];'


def _check_scope_names(data, what, names):
    """A scope name that matches nothing (a typo, or Keras's dense_7 after a re-run) would be ignored silently."""
    known = set()
    for op in data.ops:
        parts = op.scope.split("/")[:-1]
        known.update("/".join(parts[:i]) + "/" for i in range(1, len(parts) + 1))
        known.update(part + "/" for part in parts)
    unknown = [n for n in names if (n if n.endswith("/") else n + "/") not in known]
    if unknown:
        scopes = sorted({op.scope for op in data.ops if op.scope})
        listed = ", ".join(scopes[:SCOPES_LISTED]) or "none"
        more = f" and {len(scopes) - SCOPES_LISTED:,} more (tape.entries[k].scope names each)" if len(
            scopes) > SCOPES_LISTED else ""
        raise ValueError(f"to_dot: {what}={unknown!r} names no name scope on this tape; its scopes are "
                         f"{listed}{more}.")


SCOPES_LISTED = 12  # an error that lists a 500-layer tape's scopes is a wall of text


def _collapser(collapse, expand):
    """scope path -> the scope prefix it collapses into, or None (drawn op by op)."""
    opened = {e if e.endswith("/") else e + "/" for e in expand}
    if collapse is True:
        names = None
    elif collapse is False or collapse is None:
        return lambda scope: None
    else:
        if isinstance(collapse, str):
            collapse = [collapse]
        names = [c if c.endswith("/") else c + "/" for c in collapse]

    def of(scope):
        if not scope or scope in opened:
            return None
        if names is None:
            return scope
        parts = scope.split("/")[:-1]
        for i in range(1, len(parts) + 1):  # the outermost matching prefix (or last component) collapses
            prefix = "/".join(parts[:i]) + "/"
            if (prefix in names or parts[i - 1] + "/" in names) and prefix not in opened:
                return prefix
        return None

    return of


def _parent(scope):
    parts = scope.split("/")[:-1]
    return "/".join(parts[:-1]) + "/" if len(parts) > 1 else ""


def _clusters(placed):
    """Emit node lines inside nested ``subgraph cluster_...`` blocks, one per scope."""
    tree = {}  # scope -> lines
    for scope, line in placed:
        tree.setdefault(scope, []).append(line)
    every = set()
    for s in tree:
        parts = s.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            every.add("/".join(parts[:i]) + "/")
    out = list(tree.get("", []))
    cluster_id = {s: f"cluster_{i}" for i, s in enumerate(sorted(every))}

    def emit(scope, depth):
        pad = "  " * depth
        res = [f"{pad}subgraph {cluster_id[scope]} {{",
               f"{pad}  label={quote(scope)}; style=\"rounded,dashed\"; color=\"#7c3aed\"; fontcolor=\"#5b21b6\";"]
        res += [pad + line for line in tree.get(scope, [])]
        for child in sorted(c for c in every if _parent(c) == scope):
            res += emit(child, depth + 1)
        res.append(f"{pad}}}")
        return res

    for top in sorted(c for c in every if _parent(c) == ""):
        out += emit(top, 1)
    return out


def _check_rankdir(rankdir):
    if rankdir not in ("TB", "LR", "BT", "RL"):
        raise ValueError(f"to_dot: rankdir={rankdir!r} should be 'TB' (top to bottom) or 'LR' (left to right).")


def _header(rankdir, title):
    """The DOT text's first lines: the graph's direction, spacing and title, and the nodes' and edges' fonts."""
    return ["digraph tape {",
            f"  graph [rankdir={rankdir}, fontname=\"Helvetica\", fontsize=11, nodesep=0.3, ranksep=0.35"
            + (f", label={quote(title)}, labelloc=t" if title else "") + "];",
            '  node [fontname="Helvetica", fontsize=10, margin="0.12,0.05"];',
            '  edge [fontname="Helvetica", fontsize=10, color="#555555", arrowsize=0.7];']


def _pairs(spec):
    if spec is None:
        return []
    return list(spec.items() if isinstance(spec, Mapping) else spec)


def _mark(attrs, on):
    if on:
        attrs.update(color=HIGHLIGHT, penwidth="3")


def _attrs(attrs):
    return ", ".join(f"{k}={quote(v)}" for k, v in attrs.items())
