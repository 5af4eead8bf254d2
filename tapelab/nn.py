"""``tl.nn``: neural-network ops, as in ``tf.nn``: activations and losses on logits.

Also convolution, pooling and dropout. The activations and functions ``tf.math`` has too (``sigmoid``, ``softmax``,
``softplus``, ``top_k``, ...) live in ``tl.math``, which this module builds on; they are re-exported here.
"""

import numpy as np

from tapelab.array_ops import cast, where, zeros_like
from tapelab.engine import dtypes
from tapelab.engine.errors import InvalidArgumentError
from tapelab.engine.primitives import OPS
from tapelab.engine.tape import run
from tapelab.engine.tensor import Tensor, convert_to_tensor
from tapelab.math import (  # noqa: F401  (tf.nn's names for them)
    exp,
    log1p,
    log_sigmoid,
    log_softmax,
    reduce_sum,
    sigmoid,
    softmax,
    softplus,
    softsign,
    tanh,
    top_k,
)
from tapelab.op_wrappers import names_defined, unary

_IMPORTED = set(globals())  # (a public name defined below joins __all__, at the end)

# --- activations ----------------------------------------------------------------------------------------------------
relu = unary("relu", "max(x, 0).", argument="features")
relu6 = unary("relu6", "min(max(x, 0), 6): a relu capped at 6.", argument="features")
elu = unary("elu", "x for x > 0, exp(x) - 1 below: a relu that bends smoothly to -1.", argument="features")
selu = unary("selu", "1.0507 * elu-like(x) with alpha 1.6733: the scaled elu of self-normalising networks.",
             argument="features")


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


# --- losses on logits -----------------------------------------------------------------------------------------------
def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Per-example cross-entropy of integer ``labels`` against unnormalised ``logits``.

    ``logits`` has shape (batch, classes), ``labels`` shape (batch,) with values in [0, classes).
    """
    if labels is None or logits is None:
        raise ValueError("sparse_softmax_cross_entropy_with_logits: pass labels= and logits= by name")
    return checked_sparse_xent(convert_to_tensor(labels), convert_to_tensor(logits))


def checked_sparse_xent(labels, logits):
    """The sparse cross-entropy of ``labels`` and ``logits``, tensors already (what the public function and the
    Keras loss, which converted them, share), checked first."""
    _check_sparse_xent(labels, logits)
    return run(OPS["sparse_softmax_cross_entropy_with_logits"], (labels, logits))  # (the op checks each label's range)


def _check_sparse_xent(labels, logits):
    name = "sparse_softmax_cross_entropy_with_logits"
    if labels._value.dtype.kind not in "iu":
        raise InvalidArgumentError(
            f"{name}: labels must be integer class ids, got {labels.dtype.name}. Use tl.cast(labels, tl.int32); "
            "for one-hot or probability labels use softmax_cross_entropy_with_logits."
        )
    if logits.ndim < 1 or labels._value.shape != logits._value.shape[:-1]:
        raise InvalidArgumentError(
            f"{name}: logits should have shape labels.shape + (classes,), got labels {tuple(labels.shape)} and "
            f"logits {tuple(logits.shape)}. Typically labels is (batch,) and logits (batch, classes)."
        )
    classes = logits._value.shape[-1]
    if classes == 0:  # (TF refuses it even for an empty batch: a distribution over no classes has no meaning)
        raise InvalidArgumentError(
            f"{name}: logits of shape {tuple(logits.shape)} have 0 classes; the last axis must hold one score per "
            "class, so it needs at least one. Check the last layer's number of units (the number of classes)."
        )


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """Per-example cross-entropy of probability ``labels`` (e.g. one-hot) against ``logits``:
    ``-sum(labels * log_softmax(logits))`` along ``axis``."""
    logits = convert_to_tensor(logits)
    labels = _labels_like(labels, logits)
    return -reduce_sum(labels * log_softmax(logits, axis=axis), axis=axis)


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Elementwise cross-entropy of 0/1 ``labels`` against ``logits`` (TF's overflow-free form:
    ``max(x, 0) - x * z + log(1 + exp(-|x|))``)."""
    if labels is None or logits is None:
        raise ValueError("sigmoid_cross_entropy_with_logits: pass labels= and logits= by name")
    logits = convert_to_tensor(logits)
    labels = _labels_like(labels, logits)
    if tuple(labels.shape) != tuple(logits.shape):  # (as TF: they would broadcast into a bigger, wrong loss)
        raise ValueError(
            f"sigmoid_cross_entropy_with_logits: logits and labels must have the same shape, got logits "
            f"{tuple(logits.shape)} and labels {tuple(labels.shape)}. Reshape one, e.g. tl.reshape(labels, (-1, 1)).")
    positive = logits >= 0
    zeros = zeros_like(logits)
    return where(positive, logits, zeros) - logits * labels + log1p(exp(where(positive, -logits, logits)))


def _labels_like(labels, logits):
    # Python labels in the logits' dtype; an array or a tensor (it has a dtype) is used as it is
    return labels if hasattr(labels, "dtype") else convert_to_tensor(labels, dtype=logits.dtype)


def l2_loss(t, name=None):
    """sum(t ** 2) / 2: half the squared L2 norm (a weight-decay term)."""
    t = convert_to_tensor(t)
    return reduce_sum(t * t) / 2


# --- convolution, pooling, dropout (images are NHWC: batch, height, width, channels) ------------------------------
def _pair_of(name, value, what):
    """TF's ways of giving a window or stride: 2, [2], [2, 2] or [1, 2, 2, 1] -> (2, 2)."""
    values = [int(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
    if len(values) == 4 and values[0] == values[3] == 1:
        values = values[1:3]
    if len(values) == 1:
        values = values * 2
    if len(values) != 2 or min(values) < 1:
        raise ValueError(f"{name}: {what} must be a positive int, two ints (height, width) or [1, h, w, 1], "
                         f"got {value!r}")
    return tuple(values)


def _images(name, x, data_format):
    x = convert_to_tensor(x)
    if data_format != "NHWC":
        raise ValueError(f"{name}: only data_format='NHWC' (batch, height, width, channels) is supported, got "
                         f"{data_format!r}; move the channels last with tl.transpose(x, [0, 2, 3, 1]).")
    if x.ndim != 4:
        raise InvalidArgumentError(
            f"{name}: expects a 4-D batch of images (batch, height, width, channels), got shape {tuple(x.shape)}. "
            "For one grayscale image of shape (28, 28) use x[tl.newaxis, ..., tl.newaxis].")
    return x


def _padding(name, padding):
    padding = str(padding).upper()
    if padding not in ("VALID", "SAME"):
        raise ValueError(f"{name}: padding must be 'VALID' (no padding: the output shrinks) or 'SAME' (zeros "
                         f"around: the output keeps size / stride), got {padding!r}")
    return padding


def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):  # noqa: A002
    """A 2-D convolution: each output pixel is the dot product of one window of ``input`` with each filter.

    ``input`` is (batch, height, width, in_channels), ``filters`` (kh, kw, in_channels, out_channels).
    """
    x = _images("conv2d", input, data_format)
    kernel = convert_to_tensor(filters)
    if kernel.ndim != 4 or kernel.shape[2] != x.shape[3]:
        raise InvalidArgumentError(
            f"conv2d: filters must have shape (height, width, in_channels={x.shape[3]}, out_channels), got "
            f"{tuple(kernel.shape)} for input {tuple(x.shape)}. If the channels come first in the input (NCHW), "
            "move them last: tl.transpose(x, [0, 2, 3, 1]).")
    if dilations is not None and set(np.atleast_1d(dilations).tolist()) != {1}:
        raise NotImplementedError("conv2d: dilations other than 1 are not supported")
    return run(OPS["conv2d"], (x, kernel), strides=_pair_of("conv2d", strides, "strides"),
               padding=_padding("conv2d", padding))


def _pool(op, input, ksize, strides, padding, data_format):  # noqa: A002
    x = _images(op, input, data_format)
    return run(OPS[op], (x,), ksize=_pair_of(op, ksize, "ksize"), strides=_pair_of(op, strides, "strides"),
               padding=_padding(op, padding))


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """The largest value of each ``ksize`` window (per channel); the gradient goes to that value's position."""
    return _pool("max_pool2d", input, ksize, strides, padding, data_format)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """The mean of each ``ksize`` window (per channel; with SAME padding, of the real entries only)."""
    return _pool("avg_pool2d", input, ksize, strides, padding, data_format)


max_pool, avg_pool = max_pool2d, avg_pool2d


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Zero each entry with probability ``rate`` and scale the rest by 1 / (1 - rate), so the expected value
    stays the same. The random mask comes from ``tl.random`` (``seed``: a repeatable sequence of masks); it is
    a constant of the tape: the gradient is the same mask times 1 / (1 - rate). Inside ``tl.function`` a new
    mask is drawn on every call."""
    from tapelab import random as _random

    return _dropout(x, rate, noise_shape, lambda: _random.generator(seed))


def _dropout(x, rate, noise_shape, rng):
    from tapelab.engine.function import _python_node_or_none

    x = convert_to_tensor(x)
    if x._value.dtype.kind != "f":  # (as TF: the kept entries are scaled by 1 / (1 - rate))
        raise ValueError(f"dropout: x must be a float tensor, since the kept entries are scaled by 1 / (1 - rate); "
                         f"got {x.dtype.name}. Cast it first: tl.cast(x, tl.float32).")
    if not 0 <= rate < 1:
        raise ValueError(f"dropout: rate must be in [0, 1) (the fraction of entries dropped), got {rate!r}")
    if rate == 0:
        return x
    # noise_shape: the mask's shape, broadcast over x (None: x's size on that axis)
    shape = tuple(x.shape) if noise_shape is None else tuple(
        int(n) if n is not None else int(x.shape[k]) for k, n in enumerate(noise_shape))
    dtype = x._value.dtype

    def mask():
        keep = rng().uniform(size=shape) >= rate
        return Tensor((keep / (1 - rate)).astype(dtype))

    drawn = _python_node_or_none("dropout mask", mask, (), example=np.zeros(shape, dtype))
    return x * (drawn if drawn is not None else mask())


# tf.nn's names: every public name defined here, and the ones tf.nn shares with tf.math
__all__ = names_defined(globals(), _IMPORTED, leave_out=["checked_sparse_xent"],  # (what Keras's losses call)
                        also=["log_softmax", "sigmoid", "softmax", "softplus", "softsign", "tanh", "top_k"])
