"""``tl.linalg``: matrix ops, as in ``tf.linalg``."""

from tapelab.ops import matmul, matrix_transpose  # noqa: F401
