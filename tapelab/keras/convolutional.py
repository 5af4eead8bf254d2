"""More image and sequence layers: ``keras.layers.Conv2DTranspose`` (the transpose of a convolution: it spreads each
input pixel over a window of the output, so images grow), ``UpSampling2D`` (each pixel repeated into a block), the
global poolings (``GlobalMaxPooling2D``, ``GlobalAveragePooling2D``: one number per channel of each image;
``GlobalMaxPooling1D``, ``GlobalAveragePooling1D``: one per feature of each sequence) and ``Conv1D`` (a convolution
along a sequence: a Conv2D on images one pixel high).

    decoder = tl.keras.Sequential([tl.keras.layers.Conv2DTranspose(16, 3, strides=2, padding="same"),  # 7 -> 14
                                   tl.keras.layers.Conv2DTranspose(1, 3, strides=2, padding="same")])  # 14 -> 28

Each is made of the table's ops: Conv2DTranspose is ``conv2d_input_grad``, the op that sends a convolution's gradient
back to its input (TF's ``Conv2DBackpropInput``, which ``tf.nn.conv2d_transpose`` runs too), so its gradients are
that op's rules (a convolution and a filter gradient); the poolings are ``reduce_max`` / ``reduce_mean``;
UpSampling2D is a reshape, a ``broadcast_to`` (whose gradient sums each block back into its pixel) and a reshape;
Conv1D is ``conv2d`` between two reshapes (and a ``pad`` first for ``padding="causal"``).
"""

from tapelab import array_ops, nn
from tapelab import math as tmath
from tapelab.engine.errors import UnsupportedError
from tapelab.engine.primitives import OPS
from tapelab.engine.tape import run
from tapelab.keras.layers import Layer, _as_layer_dtype, _check_images, _WithKernel


def transposed_size(size, window, stride, padding):
    """Keras 3's output length of a transposed convolution (no output_padding): ``size * stride``, plus what the
    window reaches past the last stride with padding="valid"."""
    return size * stride + (max(window - stride, 0) if padding == "VALID" else 0)


def conv2d_transpose(x, kernel, strides, padding):
    """The transposed convolution of images ``x`` (batch, h, w, in) with ``kernel`` (kh, kw, out, in): one
    ``conv2d_input_grad`` op, the output of Keras's size (``strides``: a pair, ``padding``: "VALID" or "SAME")."""
    shape = tuple(x.shape)
    out = (shape[0],) + tuple(transposed_size(shape[1 + a], kernel.shape[a], strides[a], padding)
                              for a in (0, 1)) + (kernel.shape[2],)
    return run(OPS["conv2d_input_grad"], (x, kernel), input_shape=out, strides=tuple(strides), padding=padding)


class Conv2DTranspose(_WithKernel):
    """A transposed 2-D convolution, like ``keras.layers.Conv2DTranspose``: each input pixel adds ``kernel`` times
    its values to a window of the output, the windows ``strides`` apart, then ``+ bias`` and ``activation``.
    An image of height h becomes ``h * stride`` high (``padding="same"``) or ``h * stride + max(k - stride, 0)``
    (``"valid"``). The kernel has shape (kernel height, kernel width, ``filters``, input channels): a Conv2D's
    layout with its two channel axes in the roles of the transpose.

    >>> tl.random.set_seed(0)
    >>> tl.keras.layers.Conv2DTranspose(8, 3, strides=2, padding="same")(tl.zeros((2, 7, 7, 16))).shape
    TensorShape([2, 14, 14, 8])
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", output_padding=None, data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, **kwargs):
        kind = "Conv2DTranspose"
        if int(filters) != filters or filters < 1:
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. Received "
                             f"filters={filters!r}. ({kind}: filters is the number of output channels.)")
        if data_format not in (None, "channels_last"):
            raise ValueError(f"{kind}: only data_format='channels_last' (batch, height, width, channels) is "
                             "supported; move the channels last with tl.transpose(x, [0, 2, 3, 1]).")
        if output_padding is not None:
            raise NotImplementedError(f"{kind}: output_padding is not supported; the output has Keras's default "
                                      "size (crop or pad the result to adjust it).")
        if nn._pair_of(kind, dilation_rate, "dilation_rate") != (1, 1):
            raise NotImplementedError(f"{kind}: dilation_rate other than 1 is not supported")
        super().__init__(**kwargs)
        self.filters = int(filters)
        self.kernel_size = nn._pair_of(kind, kernel_size, "kernel_size")
        self.strides = nn._pair_of(kind, strides, "strides")
        self.padding = nn._padding(kind, padding)
        self._kernel_options(activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                             bias_regularizer)

    def build(self, input_shape):
        _check_images(self, input_shape, (1, 1))
        self._make_weights(self.kernel_size + (self.filters, input_shape[-1]), self.filters)

    def call(self, inputs):
        inputs = _as_layer_dtype(self, inputs)
        _check_images(self, tuple(inputs.shape), (1, 1), channels=self.kernel.shape[3])
        return self._activated(conv2d_transpose(inputs, self.kernel, self.strides, self.padding))


class _GlobalPooling(Layer):
    """A global pooling over the image's (or the sequence's) axes: ``reduce`` over axes 1..``rank``."""

    reduce, rank = None, 2

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        if data_format not in (None, "channels_last"):
            shape, order = (("(batch, steps, features)", "[0, 2, 1]") if self.rank == 1 else
                            ("(batch, height, width, channels)", "[0, 2, 3, 1]"))
            raise ValueError(f"{type(self).__name__}: only data_format='channels_last' {shape} is supported; "
                             f"move the channels last with tl.transpose(x, {order}).")
        super().__init__(**kwargs)
        self.keepdims = bool(keepdims)

    def call(self, inputs):
        if self.rank == 2:
            _check_images(self, tuple(inputs.shape), (1, 1))
        else:
            _check_steps(self, tuple(inputs.shape))
        return type(self).reduce(inputs, axis=list(range(1, self.rank + 1)), keepdims=self.keepdims)


class GlobalMaxPooling2D(_GlobalPooling):
    """The largest value of each channel over the whole image: (batch, h, w, c) -> (batch, c) (``keepdims=True``:
    (batch, 1, 1, c))."""

    reduce = staticmethod(tmath.reduce_max)


class GlobalAveragePooling2D(_GlobalPooling):
    """The mean of each channel over the whole image: (batch, h, w, c) -> (batch, c) (``keepdims=True``:
    (batch, 1, 1, c))."""

    reduce = staticmethod(tmath.reduce_mean)


class GlobalMaxPooling1D(_GlobalPooling):
    """The largest value of each feature over the whole sequence: (batch, steps, features) -> (batch, features)
    (``keepdims=True``: (batch, 1, features))."""

    reduce, rank = staticmethod(tmath.reduce_max), 1


class GlobalAveragePooling1D(_GlobalPooling):
    """The mean of each feature over the whole sequence: (batch, steps, features) -> (batch, features)
    (``keepdims=True``: (batch, 1, features)). Keras's masking of padded steps is left out: every step counts."""

    reduce, rank = staticmethod(tmath.reduce_mean), 1


def _check_steps(layer, shape, features=None):
    """Sequences must be (batch, steps, features)."""
    if len(shape) != 3:
        raise ValueError(
            f"{layer.name}: {type(layer).__name__} expects a batch of sequences of shape (batch, steps, features), "
            f"got shape {shape} ({len(shape)}-D). For one feature per step add an axis: x[..., tl.newaxis]; "
            "for a single sequence add the batch axis: x[tl.newaxis].")
    if features is not None and shape[2] != features:
        raise ValueError(f"{layer.name}: built for sequences with {features} feature(s) per step but got shape "
                         f"{shape} ({shape[2]} features). Make a new layer for another feature size.")


class UpSampling2D(Layer):
    """Each pixel repeated into a ``size`` block, like ``keras.layers.UpSampling2D`` (``interpolation="nearest"``):
    (batch, h, w, c) -> (batch, h * size[0], w * size[1], c). No weights; the gradient of a pixel is the sum of
    its block's gradients.

    >>> tl.keras.layers.UpSampling2D()(tl.reshape(tl.range(4.0), (1, 2, 2, 1)))[0, :, :, 0]
    <tapelab.Tensor: shape=(4, 4), dtype=float32, numpy=
    array([[0., 0., 1., 1.],
           [0., 0., 1., 1.],
           [2., 2., 3., 3.],
           [2., 2., 3., 3.]], dtype=float32)>
    """

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        if data_format not in (None, "channels_last"):
            raise ValueError("UpSampling2D: only data_format='channels_last' (batch, height, width, channels) is "
                             "supported; move the channels last with tl.transpose(x, [0, 2, 3, 1]).")
        if interpolation != "nearest":
            if interpolation in ("bilinear", "bicubic", "lanczos3", "lanczos5", "area"):
                raise UnsupportedError(f"UpSampling2D(interpolation={interpolation!r})",
                                       "interpolation='nearest' (each pixel repeated into a block), or learn the "
                                       "upsampling with tl.keras.layers.Conv2DTranspose(..., strides=2)")
            raise ValueError(f"UpSampling2D: interpolation must be 'nearest' (the one tapelab has), got "
                             f"{interpolation!r}")
        super().__init__(**kwargs)
        self.size = nn._pair_of("UpSampling2D", size, "size")
        self.interpolation = interpolation

    def call(self, inputs):
        _check_images(self, tuple(inputs.shape), (1, 1))
        b, h, w, c = inputs.shape
        (sh, sw) = self.size
        x = array_ops.reshape(inputs, (b, h, 1, w, 1, c))
        x = array_ops.broadcast_to(x, (b, h, sh, w, sw, c))  # each pixel copied into its block
        return array_ops.reshape(x, (b, h * sh, w * sw, c))


class Conv1D(_WithKernel):
    """A 1-D convolution along a sequence, like ``keras.layers.Conv1D``: inputs (batch, steps, channels), the kernel
    (``kernel_size``, channels, ``filters``), output (batch, new steps, ``filters``). It runs as a Conv2D on images
    one pixel high (a reshape, ``conv2d``, a reshape). ``padding="causal"`` pads ``kernel_size - 1`` zeros before
    the sequence only, so step t sees steps t, t-1, ... and never a later one (the output keeps the length).

    >>> tl.random.set_seed(0)
    >>> tl.keras.layers.Conv1D(8, 3, padding="causal", activation="relu")(tl.zeros((2, 10, 4))).shape
    TensorShape([2, 10, 8])
    """

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1, groups=1,
                 activation=None, use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, **kwargs):
        kind = "Conv1D"
        if isinstance(filters, bool) or int(filters) != filters or filters < 1:
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. Received "
                             f"filters={filters!r}. ({kind}: filters is the number of output channels.)")
        if data_format not in (None, "channels_last"):
            raise ValueError(f"{kind}: only data_format='channels_last' (batch, steps, channels) is supported; move "
                             "the channels last with tl.transpose(x, [0, 2, 1]).")
        if _single(kind, dilation_rate, "dilation_rate") != 1:
            raise UnsupportedError(f"{kind}(dilation_rate={dilation_rate!r})",
                                   "dilation_rate=1 (stack more layers, or a larger kernel_size, to see further back)")
        if groups != 1:
            raise UnsupportedError(f"{kind}(groups={groups!r})", "groups=1 (one convolution over all channels)")
        super().__init__(**kwargs)
        self.filters = int(filters)
        self.kernel_size = _single(kind, kernel_size, "kernel_size")
        self.strides = _single(kind, strides, "strides")
        if str(padding).lower() not in ("valid", "same", "causal"):
            raise ValueError(f"{kind}: padding must be 'valid' (no padding: the sequence shrinks), 'same' (zeros at "
                             "both ends: it keeps length / stride) or 'causal' (zeros before it only: step t sees no "
                             f"later step), got {padding!r}")
        self.causal = str(padding).lower() == "causal"
        self.padding = "VALID" if self.causal else str(padding).upper()  # (causal: pad, then a valid convolution)
        self._kernel_options(activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                             bias_regularizer)

    def build(self, input_shape):
        _check_steps(self, tuple(input_shape))
        self._make_weights((self.kernel_size, input_shape[-1], self.filters), self.filters)

    def call(self, inputs):
        inputs = _as_layer_dtype(self, inputs)
        _check_steps(self, tuple(inputs.shape), features=self.kernel.shape[1])
        x = inputs
        if self.causal:  # zeros before the first step only: no step sees a later one
            x = array_ops.pad(x, [[0, 0], [self.kernel_size - 1, 0], [0, 0]])
        b, steps, channels = x.shape
        if self.padding == "VALID" and steps < self.kernel_size:
            raise ValueError(f"{self.name}: sequences of {steps} steps (shape {tuple(inputs.shape)}) are shorter than "
                             f"the kernel ({self.kernel_size} steps). Use padding='same' or 'causal', or a smaller "
                             "kernel_size.")
        x = array_ops.reshape(x, (b, 1, steps, channels))  # images one pixel high
        kernel = array_ops.reshape(self.kernel, (1,) + tuple(self.kernel.shape))
        y = nn.conv2d(x, kernel, strides=(1, self.strides), padding=self.padding)
        return self._activated(array_ops.reshape(y, (b, y.shape[2], self.filters)))


def _single(kind, value, what):
    """Keras's ways of giving a 1-D window or stride: 3 or (3,)."""
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if len(values) != 1 or isinstance(values[0], bool) or int(values[0]) != values[0] or values[0] < 1:
        raise ValueError(f"{kind}: {what} must be a positive int or a tuple of one, got {value!r}")
    return int(values[0])


GlobalMaxPool2D, GlobalAvgPool2D = GlobalMaxPooling2D, GlobalAveragePooling2D
GlobalMaxPool1D, GlobalAvgPool1D = GlobalMaxPooling1D, GlobalAveragePooling1D
Convolution1D = Conv1D

__all__ = ["Conv1D", "Conv2DTranspose", "Convolution1D", "GlobalAveragePooling1D", "GlobalAveragePooling2D",
           "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPooling1D",
           "GlobalMaxPooling2D", "UpSampling2D"]
