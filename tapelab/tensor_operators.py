"""What a tensor's operators call: ``x + y`` is ``tl.add(x, y)``, ``x @ y`` ``tl.matmul``, ``x[k]`` a recorded
getitem, and so on. The engine's Tensor cannot import the ops (they build on it), so they are handed to it here,
once ``tl.math``, ``tl.linalg`` and the array ops have loaded."""

from types import SimpleNamespace

from tapelab import array_ops, linalg, math
from tapelab.engine import tensor

tensor._ops = SimpleNamespace(
    **{name: getattr(math, name) for name in (
        "add", "subtract", "multiply", "divide", "floordiv", "floormod", "pow", "negative", "abs",
        "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
        "logical_and", "logical_or", "logical_xor", "logical_not")},
    matmul=linalg.matmul,
    getitem=array_ops.getitem,
    identity=array_ops.identity,
)
