"""``tl.nn``: neural-network ops, as in ``tf.nn``."""

from tapelab.ops import (  # noqa: F401
    log_softmax,
    relu,
    sigmoid,
    softmax,
    sparse_softmax_cross_entropy_with_logits,
    tanh,
)
