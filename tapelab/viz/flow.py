"""Gradient flow: how large the gradient is in each part of a network, read off one backward pass (pure data).

    gradient_flow(tape) -> GradientFlow([ScopeFlow(scope, ops, output_norm, weight_norm), ...])   forward order

Per name scope (a layer, a time step), two sizes, both L2 norms:

- ``output_norm``: of dL/dy over the tensors y the scope computed and something outside it read (or the target):
  the gradient that arrives at the layer from above. Its fall from the last layer to the first is what "the
  gradient vanishes" means.
- ``weight_norm``: of the parts of dL/dW the scope's own ops sent to the trainable Variables they read (for a
  Dense layer, dL/dkernel and dL/dbias together; for a time step of an RNN, that step's share of the gradient of
  weights every step reads). None if the scope reads no source.

The pass is replayed from what ``gradient()`` kept (``tape.last_backward``), with every part reported: nothing
is recomputed forward, and a one-shot tape works after its ``gradient()`` call as its pictures do.
"""

from typing import NamedTuple

import numpy as np

from tapelab.engine.backward import Mode, walk
from tapelab.engine.primitives import NUMPY
from tapelab.engine.tensor import Variable
from tapelab.viz import fmt

TOP = "(no scope)"  # what the table calls the ops recorded outside every name scope (the loss, usually)


class ScopeFlow(NamedTuple):
    scope: str  # the name scope ("dense_1", "t07"), or TOP
    ops: int  # how many of the pass's ops ran in it
    output_norm: float  # |dL/d(what leaves the scope)|
    weight_norm: object  # |the scope's parts of dL/dW| (float), or None: it reads no source


class GradientFlow:
    """The norms of one backward pass per scope, in forward order (``flow["dense"]``, ``list(flow)``);
    ``print(flow)`` shows them as a table with a bar per scope on a log scale."""

    def __init__(self, rows):
        self.rows = rows

    def __iter__(self):
        return iter(self.rows)

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, scope):
        if isinstance(scope, int):
            return self.rows[scope]
        for row in self.rows:
            if row.scope == scope.rstrip("/"):
                return row
        raise KeyError(f"gradient_flow: no scope {scope!r} on this pass; its scopes are "
                       f"{', '.join(r.scope for r in self.rows)}")

    def norms(self, which="output"):
        """``{scope: norm}``: ``which`` is "output" (the gradient arriving at each scope) or "weights"."""
        if which not in ("output", "weights"):
            raise ValueError(f"gradient_flow.norms: which must be 'output' or 'weights', got {which!r}")
        return {r.scope: (r.output_norm if which == "output" else r.weight_norm) for r in self.rows}

    def __str__(self):
        width = max([len("scope")] + [len(r.scope) for r in self.rows])
        logs = [np.log10(r.output_norm) for r in self.rows if r.output_norm > 0]
        low, high = (min(logs), max(logs)) if logs else (0.0, 0.0)
        lines = [f"{'scope':<{width}}  {'ops':>4}  {'|dL/d output|':>13}  {'|dL/d weights|':>14}  "
                 f"log scale, 10^{low:.1f}..10^{high:.1f}"]  # (a 1024-px window's cell: 75 characters)
        for r in self.rows:
            weight = "-" if r.weight_norm is None else f"{r.weight_norm:.3g}"
            lines.append(f"{r.scope:<{width}}  {r.ops:>4}  {r.output_norm:>13.3g}  {weight:>14}  "
                         f"{_bar(r.output_norm, low, high)}")
        return "\n".join(lines)

    def __repr__(self):
        return f"<GradientFlow over {len(self.rows)} scopes>\n{self}"


def _bar(norm, low, high, full=20):
    """A bar from 1 mark (the smallest norm, 10^low) to ``full`` (the largest, 10^high), by log10 of ``norm``;
    a zero gradient shows as "0"."""
    if not norm > 0:
        return "0"
    span = high - low
    return "#" * (full if span == 0 else 1 + int(round((np.log10(norm) - low) / span * (full - 1))))


def gradient_flow(tape, depth=1):
    """The gradient's size per name scope in the latest ``gradient()`` call on ``tape`` (see the module's text).

    ``depth``: how many levels of a scope path name one row (1: ``model/dense/`` counts as ``model``; None: the
    whole path).

    >>> w = tl.Variable([[2.0]], name="w")
    >>> with tl.GradientTape() as tape:
    ...     with tl.name_scope("layer"):
    ...         h = tl.constant([[3.0]]) @ w
    ...     loss = tl.reduce_sum(h * h)
    >>> grad = tape.gradient(loss, w)
    >>> print(tl.viz.gradient_flow(tape))     # doctest: +NORMALIZE_WHITESPACE
    scope        ops  |dL/d output|  |dL/d weights|  log scale, 10^0.0..10^1.1
    layer          1             12              36  ####################
    (no scope)     2              1               -  #
    """
    record = _record_of(tape)
    group = _grouper(depth)
    entries = record.entries
    scope_of = {e.key: group(e.scope) for e in entries}
    sources = {t._key for t in record.sources if isinstance(t, Variable)}
    weight_parts = {}  # scope -> {variable key: the sum of the parts its ops sent}

    def on_step(e, g, parts, grads):
        for i, c, _ in parts:
            key = e.keys[i]
            if key in sources:
                into = weight_parts.setdefault(scope_of[e.key], {})
                into[key] = c if key not in into else into[key] + c

    grads = walk(entries, record.seeds, record.reaches, Mode(NUMPY, None, on_step))
    leaving = _leaving(entries, scope_of, record.seeds)
    rows, order = [], list(dict.fromkeys(scope_of[e.key] for e in entries if e.key in grads))
    for scope in order:
        outs = [grads[k] for k in leaving.get(scope, ()) if k in grads]
        parts = weight_parts.get(scope)
        rows.append(ScopeFlow(scope, sum(1 for e in entries if scope_of[e.key] == scope and e.key in grads),
                              fmt.norm(*outs), None if parts is None else fmt.norm(*parts.values())))
    return GradientFlow(rows)


def _record_of(tape):
    record = getattr(tape, "last_backward", None)
    if record is None:
        raise ValueError(
            "gradient_flow: this tape has no backward pass to measure yet. Call tape.gradient(loss, sources) "
            "first (the flow is read off that pass), then gradient_flow(tape).")
    return record


def _grouper(depth):
    def group(scope):
        if not scope:
            return TOP
        parts = scope.rstrip("/").split("/")
        return "/".join(parts if depth is None else parts[:depth])
    return group


def _leaving(entries, scope_of, seeds):
    """scope -> keys of the tensors it computed that an op of another scope read, or that are targets."""
    leaving = {}
    for e in entries:
        for k in e.keys:
            made_in = scope_of.get(k)
            if made_in is not None and made_in != scope_of[e.key]:
                leaving.setdefault(made_in, set()).add(k)
    for k in seeds:
        if k in scope_of:
            leaving.setdefault(scope_of[k], set()).add(k)
    return leaving
