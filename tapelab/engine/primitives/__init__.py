"""The one table of primitives: for every op, its numpy forward, one VJP per input and the formulas.

    op.py       Op (one primitive), defop (adds one to the table), unbroadcast, and the rules' backends:
                NUMPY (each op's numpy forward) and on_tensors(run) (the same ops run on tensors)
    table.py    the table itself, OPS: each group of ops once (elementwise, two inputs, reductions, ...)
    kernels.py  the numpy forwards that need more than one numpy call
    rules.py    the VJP rules too long for a line of the table, and the helpers rules share

A VJP ("vector-Jacobian product") turns the gradient ``g`` that reaches an op's output into the
contribution for one input. Its formula is written in the rule's own names: ``dx`` for the input it
serves, ``x``, ``y``, ... for the inputs, ``g`` for the upstream gradient and ``out`` for the op's
output; pictures rewrite them in the learner's names (``∂loss/∂x = ∂loss/∂z @ y.T``).

Each rule is written once, against a small backend ``B`` and plain operators, so the same rule runs
on numpy arrays (ordinary ``gradient()``: fast) or on tensors (when an outer tape is recording: the
backward pass is itself recorded, giving higher-order derivatives). Signature: ``vjp(B, g, out, *inputs, **params)``.

An op may also save a *residual* from its forward pass for its rules (``saves=True``: the forward
returns ``(output, residual)`` and the rules get ``residual=``), as TF's fused cross-entropy kernel
and PyTorch's ``save_for_backward`` do: work the forward pass already did is not done again.

An op may say which arrays its rules read (``reads=(0, 1)``: both inputs, not ``out``; ``reads=()``: only
shapes and dtypes). A tape then keeps just those, as a hand-written backward pass keeps just what it
needs; the rules get a :class:`Spec` (shape and dtype) for the others, and pictures recompute them.
"""

from tapelab.engine.primitives import table  # noqa: F401  (fills OPS and NUMPY)
from tapelab.engine.primitives.op import NUMPY, OPS, QUIET, Op, Spec, defop, on_tensors, unbroadcast  # noqa: F401
