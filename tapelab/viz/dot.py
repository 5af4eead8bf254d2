"""The tape as a Graphviz DOT graph, as plain text: no graphviz import, so it works (and is tested) anywhere.

    to_dot(tape) -> 'digraph tape { ... }'        (render it with tapelab.viz.draw)

Tensor nodes are rounded boxes (Variables gold, watched tensors yellow, constants grey, the target red),
op nodes are blue ellipses, data flows top to bottom. Name scopes become clusters, or single boxes
when collapsed; a source whose gradient is None is greyed out with the reason.
"""

from collections import Counter
from collections.abc import Mapping

from tapelab.learner import spell
from tapelab.tensor import Tensor
from tapelab.viz import fmt
from tapelab.viz.trace import trace

DETAILS = ("names", "shapes", "values")
COLLAPSE_OVER = 60  # collapse=None collapses name scopes when the tape has more ops than this
MAX_OPS = 100  # default cap on drawn op nodes (collapsed scopes count as one)

FILL = {"variable": "#fde68a", "watched": "#fef9c3", "placeholder": "#fef9c3", "constant": "#eeeeee",
        "stopped": "#e5e7eb", "intermediate": "#ffffff", "target": "#fecaca", "op": "#dbeafe", "box": "#ede9fe",
        "more": "#f5f5f5"}
EMPTY_TITLE = ("nothing recorded yet: compute with a trainable Variable, or a tensor you tape.watch(), "
               "inside `with tl.GradientTape() as tape:`")
HIGHLIGHT = "#dc2626"
GREY = "#9ca3af"


def to_dot(tape, target=None, sources=None, *, detail="values", highlight=(), edge_colors=None, edge_labels=None,
           collapse=None, expand=(), max_ops=MAX_OPS, rankdir="TB", title=None):
    """The tape as DOT text (no Graphviz needed): tensors, ops and the edges between them.

    Args:
        tape: a ``GradientTape`` (after ``gradient()`` too: it then shows the gradients).
        target, sources: what the gradient is of, and with respect to what; default: those of the
            tape's last ``gradient()`` call. Sources whose gradient is ``None`` are greyed out with the
            reason (integer dtype, not watched, not connected, computed while recording was stopped).
        detail: ``"names"`` (names and ops), ``"shapes"`` (+ shape and dtype) or ``"values"`` (+ values
            of small tensors and the gradient that reached each tensor).
        highlight: nodes and edges to draw in red. A node is a tensor, an op's index on the tape (int),
            a name from the listing (``"x"``, ``"a"``) or a DOT node id (``"op_0"``); an edge is a pair
            of nodes, e.g. ``(x, 0)`` (x into op 0) or ``(0, "a")`` (op 0 to its output a).
        edge_colors, edge_labels: per-edge colour / label text, as a dict keyed by edge or a list of
            ``(edge, value)`` pairs (use a list when the edge contains tensors: they are unhashable).
        collapse: draw each name scope as one box: ``True``, ``False``, a list of scope names, or
            ``None`` (default: collapse when the tape has more than ``COLLAPSE_OVER`` ops).
        expand: scope names to keep open even when collapsing.
        max_ops: at most this many op nodes (collapsed scopes count as one); the earliest others are
            summarised in one "N more ops" node. ``None`` draws them all.
        rankdir: ``"TB"`` (top to bottom) or ``"LR"`` (left to right).
        title: a caption for the graph.

    >>> x = tl.Variable(3.0, name="x")
    >>> with tl.GradientTape() as tape:
    ...     y = x * x
    >>> print(to_dot(tape).splitlines()[0])
    digraph tape {
    """
    if detail not in DETAILS:
        raise ValueError(f"to_dot: detail={detail!r} is not one of {', '.join(map(repr, DETAILS))}.")
    if rankdir not in ("TB", "LR", "BT", "RL"):
        raise ValueError(f"to_dot: rankdir={rankdir!r} should be 'TB' (top to bottom) or 'LR' (left to right).")
    if max_ops is not None and max_ops < 1:
        raise ValueError(f"to_dot: max_ops={max_ops!r} must be at least 1 (or None to draw every op).")
    tr = trace(tape, target, sources)
    if not tr.ops and title is None:  # an empty picture teaches nothing: say why it is empty
        title = spell(EMPTY_TITLE)
    return _Graph(tr, detail, collapse, expand, max_ops).dot(highlight, edge_colors, edge_labels, rankdir, title)


def quote(s):
    """A DOT double-quoted string; newlines become line breaks in labels."""
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _wrap(text, width=30):
    words, lines, line = text.split(), [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    return lines + [line] if line else lines


class _Unit:
    """One drawn op: a single op, or a run of ops in one collapsed scope (a box)."""

    def __init__(self, ops, box_scope=None):
        self.ops = ops
        self.box_scope = box_scope
        self.id = f"op_{ops[0].index}" if box_scope is None else f"scope_{ops[0].index}"


class _Graph:
    def __init__(self, tr, detail, collapse, expand, max_ops):
        self.tr, self.detail = tr, detail
        collapse = len(tr.ops) > COLLAPSE_OVER if collapse is None else collapse
        self.collapse_of = _collapser(collapse, expand)
        self.units = self._units()
        self.hidden = []
        if max_ops is not None and len(self.units) > max_ops:  # keep the ops nearest the target
            self.hidden, self.units = self.units[:-max_ops], self.units[-max_ops:]
        self.node_of_op = {}  # op index -> id of the node that draws it
        for u in self.hidden:
            for op in u.ops:
                self.node_of_op[op.index] = "more"
        for u in self.units:
            for op in u.ops:
                self.node_of_op[op.index] = u.id

    def _units(self):
        units = []
        for op in self.tr.ops:
            key = self.collapse_of(op.scope)
            if key is not None and units and units[-1].box_scope == key:
                units[-1].ops.append(op)
            else:
                units.append(_Unit([op], key))
        return units

    # --- which tensors show, and where the edges go -------------------------------------------
    def _layout(self):
        tr = self.tr
        inside = {}  # tensor key -> box unit that hides it
        for u in self.units:
            if u.box_scope is not None:
                made = {op.output for op in u.ops}
                for k in made:
                    inside[k] = u
        shown, edges = {}, []  # tensor key -> True (in order); edges (from id, to id, role)
        used_outside = Counter()
        for u in self.units:
            for op in u.ops:
                for k in op.inputs:
                    if inside.get(k) is not u:
                        used_outside[k] += 1
        for u in self.units:
            made = {op.output for op in u.ops}
            ins = []
            for op in u.ops:
                for i, k in enumerate(op.inputs):
                    if u.box_scope is None:  # one edge per argument: w * w has two
                        edges.append((k, u.id, i))
                        ins.append(k)
                    elif k not in made and k not in ins:
                        ins.append(k)
                        edges.append((k, u.id, None))
            for k in ins:
                shown[k] = True
            for op in u.ops:
                k = op.output
                keep = (u.box_scope is None or used_outside[k] or tr.tensors[k].is_target
                        or tr.tensors[k].is_source or op is u.ops[-1])
                if keep:
                    shown[k] = True
                    edges.append((u.id, k, None))
        for k in tr.targets + tr.sources:  # always drawn, even when unconnected (the greyed sources)
            shown[k] = True
        if self.hidden:  # tensors made by hidden ops and used by drawn ones hang off the summary node
            hidden_made = {op.output for u in self.hidden for op in u.ops}
            for k in list(shown):
                if k in hidden_made:
                    edges.append(("more", k, None))
        # draw tensors in trace order (inputs first), so the output is deterministic
        order = [k for k in tr.tensors if k in shown]
        return order, edges

    # --- labels ---------------------------------------------------------------------------------
    def _tensor_attrs(self, t):
        title = t.name
        kind = "target" if t.is_target else fmt.kind_text(t.kind, t.trainable, short=True)
        if t.is_source:
            kind = f"{kind}, source" if kind else "source"
        lines = [f"{title} ({kind})" if kind else title]
        if self.detail != "names":
            lines.append(f"{fmt.shape_text(t.shape)} {t.dtype}")
        if self.detail == "values":
            v = fmt.value_text(t.value)
            if v is not None:
                lines.append(v)
            if t.grad is not None:
                lines.append(f"grad {fmt.array_text(t.grad, shape=False)}")
        attrs = {"shape": "box", "style": "rounded,filled"}
        fill = FILL["target"] if t.is_target else FILL[t.kind]
        if t.none_reason:
            lines.append("gradient: None")
            lines += _wrap(t.none_reason)
            attrs.update(style="rounded,filled,dashed", color=GREY, fontcolor="#6b7280")
            fill = "#f3f4f6"
        attrs["fillcolor"] = fill
        attrs["label"] = "\n".join(lines)
        attrs["tooltip"] = f"{t.name}: {fmt.shape_text(t.shape)} {t.dtype}" + (
            f"; gradient None: {t.none_reason}" if t.none_reason else "")
        return attrs

    def _op_attrs(self, u):
        if u.box_scope is None:
            op = u.ops[0]
            params = fmt.params_text(op.params) if self.detail != "names" else ""
            label = op.name + (f"\n{params}" if params else "")
            return {"shape": "ellipse", "style": "filled", "fillcolor": FILL["op"], "label": label,
                    "tooltip": "; ".join(f for f in op.formulas if f) or op.name}
        counts = Counter(op.name for op in u.ops)
        names = ", ".join(n if c == 1 else f"{n} ({c})" for n, c in counts.items())
        n = len(u.ops)
        label = "\n".join([u.box_scope, f"{n} op{'s' if n != 1 else ''}: " + "\n".join(_wrap(names, 36)),
                           f"(expand=[{u.box_scope.rstrip('/')!r}] opens it)"])
        return {"shape": "box3d", "style": "filled", "fillcolor": FILL["box"], "label": label,
                "tooltip": f"name scope {u.box_scope}, collapsed"}

    def _more_attrs(self):
        ops = [op for u in self.hidden for op in u.ops]
        counts = Counter(op.name for op in ops).most_common(4)
        names = ", ".join(f"{n} ({c})" for n, c in counts)
        label = f"... {len(ops):,} more ops\n(earlier on the tape: {names})\nmax_ops=None draws them all"
        return {"shape": "note", "style": "filled,dashed", "fillcolor": FILL["more"], "label": label}

    # --- assembling the text --------------------------------------------------------------------
    def dot(self, highlight, edge_colors, edge_labels, rankdir, title):
        tr = self.tr
        order, edges = self._layout()
        tid = {k: f"t_{tr.tensors[k].name}" for k in tr.tensors}
        by_name = {t.name: k for k, t in tr.tensors.items()}
        node_ids = {tid[k] for k in order} | {u.id for u in self.units} | ({"more"} if self.hidden else set())

        def node(x):
            if isinstance(x, Tensor):
                if id(x) not in tr.tensors:
                    raise ValueError("to_dot: a highlighted tensor is not on this tape.")
                return tid[id(x)]
            if isinstance(x, bool):
                raise TypeError(f"to_dot: cannot highlight {x!r}")
            if isinstance(x, int):
                if x not in self.node_of_op:
                    raise ValueError(f"to_dot: there is no op {x} on this tape (it has {len(tr.ops)} ops).")
                return self.node_of_op[x]
            if isinstance(x, str):
                if x in by_name:
                    return tid[by_name[x]]
                if x in node_ids:
                    return x
                raise ValueError(f"to_dot: no tensor or node named {x!r}; tensors are {', '.join(sorted(by_name))}.")
            raise TypeError(f"to_dot: cannot find a node for {type(x).__name__}; use a tensor, an op index or a name.")

        hi_nodes, hi_edges = set(), set()
        for h in highlight:
            if isinstance(h, tuple) and len(h) == 2:
                hi_edges.add((node(h[0]), node(h[1])))
            else:
                hi_nodes.add(node(h))
        colors = {(node(a), node(b)): v for (a, b), v in _pairs(edge_colors)}
        labels = {(node(a), node(b)): v for (a, b), v in _pairs(edge_labels)}

        lines = ["digraph tape {",
                 f"  graph [rankdir={rankdir}, fontname=\"Helvetica\", fontsize=11, nodesep=0.3, ranksep=0.35"
                 + (f", label={quote(title)}, labelloc=t" if title else "") + "];",
                 '  node [fontname="Helvetica", fontsize=10, margin="0.12,0.05"];',
                 '  edge [fontname="Helvetica", fontsize=9, color="#555555", arrowsize=0.7];']
        # nodes, grouped by the scope cluster they belong to
        placed = []  # (scope path, node line)
        for k in order:
            attrs = self._tensor_attrs(tr.tensors[k])
            _mark(attrs, tid[k] in hi_nodes)
            placed.append((self._tensor_scope(k), f"  {quote(tid[k])} [{_attrs(attrs)}];"))
        for u in self.units:
            attrs = self._op_attrs(u)
            _mark(attrs, u.id in hi_nodes)
            scope = u.ops[0].scope if u.box_scope is None else _parent(u.box_scope)
            placed.append((scope, f"  {quote(u.id)} [{_attrs(attrs)}];"))
        if self.hidden:
            attrs = self._more_attrs()
            _mark(attrs, "more" in hi_nodes)
            placed.append(("", f"  {quote('more')} [{_attrs(attrs)}];"))
        lines += _clusters(placed)
        arity = {u.id: u.ops[0] for u in self.units if u.box_scope is None and len(u.ops[0].inputs) > 1}
        for a, b, role in edges:
            attrs = {}
            if role is not None and b in arity and self.detail != "names":  # which argument: matmul(x, y)
                attrs["label"] = fmt.arg_name(arity[b].formulas[role], role)
            a = tid.get(a, a)
            b = tid.get(b, b)
            if (a, b) in colors:
                attrs["color"] = colors[(a, b)]
                attrs["penwidth"] = "2"
            if (a, b) in labels:
                attrs["label"] = labels[(a, b)]
            if (a, b) in hi_edges:
                attrs.update(color=HIGHLIGHT, penwidth="2.5")
            if a == "more":
                attrs.setdefault("style", "dashed")
            lines.append(f"  {quote(a)} -> {quote(b)}" + (f" [{_attrs(attrs)}]" if attrs else "") + ";")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def _tensor_scope(self, k):
        t = self.tr.tensors[k]
        scope = t.scope
        if t.producer is None:  # a leaf (Variable, constant) sits in a scope when every op reading it is there
            scopes = {op.scope for u in self.units for op in u.ops if k in op.inputs}
            scope = next(iter(scopes)) if len(scopes) == 1 else ""
        box = self.collapse_of(scope)
        return scope if box is None else _parent(box)  # tensors of a collapsed scope sit beside its box


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
    scopes = sorted(tree, key=lambda s: (s.count("/"), s))
    every = set()
    for s in scopes:
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


def _pairs(spec):
    if spec is None:
        return []
    items = spec.items() if isinstance(spec, Mapping) else spec
    out = []
    for edge, value in items:
        if not (isinstance(edge, tuple) and len(edge) == 2):
            raise TypeError(f"to_dot: an edge is a pair (from, to), got {edge!r}")
        out.append((edge, value))
    return out


def _mark(attrs, on):
    if on:
        attrs.update(color=HIGHLIGHT, penwidth="3")


def _attrs(attrs):
    return ", ".join(f"{k}={quote(v)}" for k, v in attrs.items())
