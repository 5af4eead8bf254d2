"""The tape as text, jaxpr-like: inputs, one line per op, then the gradients. ``print(tape)`` shows this.

Deterministic (no ids, no addresses, 4 significant digits), so tests and nbval can compare it. Tensors
carry the calling code's names (see :mod:`tapelab.viz.tapedata`).
"""

from tapelab.viz import fmt
from tapelab.viz.foreign import adopt
from tapelab.viz.tapedata import tape_data


def format_tape(tape, target=None, sources=None, values=True, max_ops=None):
    """The tape as a listing: inputs, one line per recorded op, then (after ``gradient()``) the gradients.

    Each op line reads ``z = matmul(x, y)   # (2, 2) float32``, in the calling code's names, with the
    value when the tensor is small (``values=True``). Ops recorded inside ``tl.name_scope`` appear
    under a ``scope/`` heading. Scalar constants nobody named are written as their values in the op lines
    (``multiply(x, 2)``), not listed as inputs. ``max_ops`` shows only the last ops (those nearest the target,
    as the picture does) and says how many earlier ones were left out.

    >>> x = tl.Variable(tl.ones((2, 2)), name="x")
    >>> y = tl.Variable([[2, 2], [2, 2]], dtype=tl.float32, name="y")
    >>> with tl.GradientTape() as tape:
    ...     z = tl.matmul(x, y)
    ...     loss = tl.reduce_mean(z)
    >>> dx, dy = tape.gradient(loss, [x, y])
    >>> print(format_tape(tape))
    GradientTape: 2 ops
    inputs:
      x : Variable             # (2, 2) float32  source  [[1, 1], [1, 1]]
      y : Variable             # (2, 2) float32  source  [[2, 2], [2, 2]]
    ops:
      z = matmul(x, y)         # (2, 2) float32  [[4, 4], [4, 4]]
      loss = reduce_mean(z)    # () float32  target  4
    gradient of loss:
      ∂loss/∂x = [[1, 1], [1, 1]]
      ∂loss/∂y = [[0.5, 0.5], [0.5, 0.5]]
    """
    tape, target, sources = adopt(tape, target, sources)
    data = tape_data(tape, target, sources)
    n = len(data.ops)
    title = (f"Graph '{tape.name}'" if tape.is_traced_graph else  # (Graph 'f_0': 2 ops)
             getattr(tape, "foreign_name", type(tape).__name__))  # (a tape of one's own: its class's name)
    head = f"{title}: {n} op{'s' if n != 1 else ''}"
    if not data.tensors:
        return head + " (nothing recorded yet: compute with a Variable or a watched tensor inside the tape)"

    rows = _input_rows(data, values) + _op_rows(data, values, max_ops)
    return "\n".join([head, *_aligned(rows), *_gradients(data)])


# a listing's rows are (indent, left, right), aligned into "left   # right" (a heading has no right)
def _input_rows(data, values):
    inputs = data.named_inputs
    if not inputs:
        return []
    return [(0, "inputs:", None)] + [(1, f"{t.name} : {fmt.kind_text(t.kind, t.trainable)}", _right(t, values))
                                     for t in inputs]


def _op_rows(data, values, max_ops):
    """One row per op shown (the last ``max_ops``), under a heading for each name scope."""
    n = len(data.ops)
    shown = data.ops if max_ops is None else data.ops[-max_ops:]
    rows = []
    if shown:
        rows.append((0, "ops:", None))
    if len(shown) < n:
        rows.append((1, f"... {n - len(shown)} earlier ops (format_tape(tape, max_ops=None) lists them all)", None))
    scope = ""
    for op in shown:
        if op.scope != scope:
            scope = op.scope
            if scope:
                rows.append((1, scope, None))
        rows.append((2 if scope else 1, data.call_text(op.index), _right(data.tensors[op.output], values)))
    return rows


def _aligned(rows):
    """The rows as lines, their ``# ...`` comments in one column (no further right than 48 characters)."""
    width = max((2 * ind + len(left) for ind, left, right in rows if right is not None), default=0)
    width = min(width, 48)
    lines = []
    for ind, left, right in rows:
        text = "  " * ind + left
        lines.append(text if right is None else f"{text.ljust(width)}    # {right}")
    return lines


def _right(t, values):
    parts = [f"{fmt.shape_text(t.shape)} {t.dtype}"]
    if t.is_source:
        parts.append("source")
    if t.is_target:
        parts.append("target")
    if values:
        v = fmt.value_text(t.value)
        if v is not None:
            parts.append(v)
    return "  ".join(parts)


def _gradients(data):
    if not data.sources or not (data.has_gradient or any(data.tensors[k].none_reason for k in data.sources)):
        return []
    target = data.target_name
    lines = [f"gradient of {target}:" if data.has_gradient else f"gradient of {target} (not computed yet):"]
    for k in data.sources:
        t = data.tensors[k]
        if t.none_reason:
            lines.append(f"  {data.grad_of(k)} = None    # {t.none_reason}")
        elif t.zeros_reason:
            lines.append(f"  {data.grad_of(k)} = {fmt.array_text(t.grad)}    # {t.zeros_reason}; "
                         "unconnected_gradients=\"zero\" gives zeros, not None")
        elif t.grad is not None:
            lines.append(f"  {data.grad_of(k)} = {fmt.array_text(t.grad)}")
    return lines
