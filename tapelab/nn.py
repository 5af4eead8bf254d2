"""``tl.nn``: neural-network ops, as in ``tf.nn``: activations and losses on logits."""

from tapelab import dtypes
from tapelab.math import _activation, log1p, log_sigmoid, softplus, softsign, top_k  # noqa: F401
from tapelab.ops import (  # noqa: F401
    cast,
    convert_to_tensor,
    exp,
    log_softmax,
    reduce_sum,
    sigmoid,
    softmax,
    sparse_softmax_cross_entropy_with_logits,
    tanh,
    where,
    zeros_like,
)
from tapelab.primitives import OPS
from tapelab.tape import run

relu = _activation("relu", "max(x, 0).")
relu6 = _activation("relu6", "min(max(x, 0), 6): a relu capped at 6.")
elu = _activation("elu", "x for x > 0, exp(x) - 1 below: a relu that bends smoothly to -1.")
selu = _activation("selu", "1.0507 * elu-like(x) with alpha 1.6733: the scaled elu of self-normalising networks.")


def leaky_relu(features, alpha=0.2, name=None):
    """x for x > 0, ``alpha * x`` below: a relu that keeps a small slope (integers become float32, as in TF)."""
    x = convert_to_tensor(features)
    if x.dtype.is_integer:
        x = cast(x, dtypes.float32)
    return run(OPS["leaky_relu"], (x,), alpha=float(alpha))


def gelu(features, approximate=False, name=None):
    """x * Phi(x), Phi the normal CDF (``approximate=True``: the tanh formula of the BERT paper)."""
    return run(OPS["gelu"], (convert_to_tensor(features),), approximate=bool(approximate))


def silu(features, beta=1.0):
    """x * sigmoid(beta * x) (also called swish)."""
    return run(OPS["silu"], (convert_to_tensor(features),), beta=float(beta))


swish = silu


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """Per-example cross-entropy of probability ``labels`` (e.g. one-hot) against ``logits``:
    ``-sum(labels * log_softmax(logits))`` along ``axis``."""
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels, dtype=logits.dtype) if not hasattr(labels, "dtype") else labels
    return -reduce_sum(labels * log_softmax(logits, axis=axis), axis=axis)


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Elementwise cross-entropy of 0/1 ``labels`` against ``logits`` (TF's overflow-free form:
    ``max(x, 0) - x * z + log(1 + exp(-|x|))``)."""
    if labels is None or logits is None:
        raise ValueError("sigmoid_cross_entropy_with_logits: pass labels= and logits= by name")
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels, dtype=logits.dtype) if not hasattr(labels, "dtype") else labels
    positive = logits >= 0
    zeros = zeros_like(logits)
    return where(positive, logits, zeros) - logits * labels + log1p(exp(where(positive, -logits, logits)))


def l2_loss(t, name=None):
    """sum(t ** 2) / 2: half the squared L2 norm (a weight-decay term)."""
    t = convert_to_tensor(t)
    return reduce_sum(t * t) / 2

__all__ = [
    "elu", "gelu", "l2_loss", "leaky_relu", "log_softmax", "relu", "relu6", "selu", "sigmoid",
    "sigmoid_cross_entropy_with_logits", "silu", "softmax", "softmax_cross_entropy_with_logits", "softplus", "softsign",
    "sparse_softmax_cross_entropy_with_logits", "swish", "tanh", "top_k",
]
