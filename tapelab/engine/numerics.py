"""The check-numerics errors: which op made a NaN or Inf, with what inputs, and what to do (below the tape,
which raises them; ``tapelab.debugging`` switches the checks on and off)."""

import numpy as np

from tapelab.engine.errors import InvalidArgumentError
from tapelab.engine.recording import state
from tapelab.engine.tensor import to_numpy

# --- the error messages ------------------------------------------------------------------------------

HINTS = {
    "log": "log needs x > 0: log(0) = -inf and log(x < 0) = nan. Add a small epsilon (log(x + 1e-7)), clip with "
           "tl.maximum(x, 1e-7), or use tl.nn.log_softmax / sparse_softmax_cross_entropy_with_logits instead "
           "of log(softmax(z)).",
    "sqrt": "sqrt needs x >= 0, and its gradient 1 / (2 sqrt(x)) is inf at x = 0: add a small epsilon, "
            "e.g. tl.sqrt(x + 1e-12).",
    "divide": "a denominator is 0 (or both are): guard it, e.g. x / (y + 1e-7), or tl.where(y != 0, x / y, 0).",
    "floormod": "x % y needs y != 0.",
    "pow": "x ** y is nan for a negative x with a fractional y and inf for 0 ** (y < 0); its gradient for y "
           "needs log(x), so keep x > 0.",
    "exp": "exp overflows above about 88 (float32) or 709 (float64): subtract the maximum first (softmax and "
           "log_softmax do), or find out why the input grew so large (a too-high learning rate?).",
}
OVERFLOW = ("the values overflowed the dtype's range (float32 ends near 3.4e38): the numbers grew too large. "
            "Lower the learning rate, normalise the inputs, or compute in float64.")


def describe(v):
    """'shape (2, 3) float32, values in [-1.5, 2]' (plus counts of NaN / Inf)."""
    head = f"shape {tuple(v.shape)} {v.dtype}"
    if v.size == 0:
        return head + ", no values"
    if v.dtype.kind not in "fc":
        return f"{head}, values in [{v.min()}, {v.max()}]"
    finite = v[np.isfinite(v)]
    text = f"{head}, values in [{finite.min():.4g}, {finite.max():.4g}]" if finite.size else f"{head}, no finite values"
    return text + (f" and {bad_words(v)}" if finite.size < v.size else "")


def bad_words(v):
    counts = [(int(np.isnan(v).sum()), "NaN"), (int(np.isposinf(v).sum()), "+Inf"), (int(np.isneginf(v).sum()), "-Inf")]
    return ", ".join(f"{n} {word}" for n, word in counts if n)


def _kinds(v):
    kinds = [word for word, test in (("NaN", np.isnan), ("+Inf", np.isposinf), ("-Inf", np.isneginf)) if test(v).any()]
    return kinds[0] if len(kinds) == 1 else " and ".join(kinds)


def _where_recorded(out):
    for tape in reversed(state.recorders):  # the innermost tape that recorded this output
        if tape.entries and tape.entries[-1].key == out._key:
            return tape, len(tape.entries) - 1
    return None, None


def _hint(op, values):
    if any(v.dtype.kind == "f" and not np.isfinite(v).all() for v in values):
        return ("An input already contains NaN or Inf, so the problem is earlier: it came from outside the ops "
                "checked here (the data? a Variable's value?). tl.debugging.check_numerics(x, 'data') checks a "
                "tensor.")
    return HINTS.get(op.name, OVERFLOW)


def forward_error(op, inputs, out):
    tape, index = _where_recorded(out)
    where = (f"entry {index} on the tape (tl.viz.draw(tape, highlight=[{index}]) shows it)" if tape is not None
             else "not recorded on any tape")
    values = [t._value for t in inputs]
    lines = [f"check_numerics: {op.name} produced {_kinds(out._value)} in its output (forward pass), {where}."]
    lines += [f"  input {i}: {describe(v)}" for i, v in enumerate(values)]
    lines += [f"  output: {describe(out._value)}", f"What to do: {_hint(op, values)}"]
    return InvalidArgumentError("\n".join(lines), op=op.name, entry_index=index, tape=tape, phase="forward")


def backward_error(tape, entry, i, g, contribution):
    index = next(k for k, e in enumerate(tape.entries) if e is entry)
    values = entry.values
    what = "NaN or Inf" if contribution is None else _kinds(to_numpy(contribution))
    lines = [f"check_numerics: the gradient of {entry.op.name} for its input {i} contains {what} (backward pass), "
             f"entry {index} on the tape (tl.viz.draw(tape, highlight=[{index}]) shows it).",
             f"  rule: {entry.op.formulas[i]}",
             f"  upstream gradient g: {describe(to_numpy(g))}"]
    lines += [f"  input {k}: {describe(v)}" for k, v in enumerate(values)]
    if contribution is not None:
        lines.append(f"  gradient for input {i}: {describe(to_numpy(contribution))}")
    upstream_bad = not np.isfinite(to_numpy(g)).all()
    hint = ("the gradient arriving from later ops is already non-finite (output_gradients?)." if upstream_bad
            else _hint(entry.op, values))
    lines.append(f"What to do: {hint}")
    return InvalidArgumentError("\n".join(lines), op=entry.op.name, entry_index=index, tape=tape, phase="backward")
