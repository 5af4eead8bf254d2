"""More image layers: ``keras.layers.Conv2DTranspose`` (the transpose of a convolution: it spreads each input pixel
over a window of the output, so images grow) and the global poolings (``GlobalMaxPooling2D``,
``GlobalAveragePooling2D``: one number per channel of each image).

    decoder = tl.keras.Sequential([tl.keras.layers.Conv2DTranspose(16, 3, strides=2, padding="same"),  # 7 -> 14
                                   tl.keras.layers.Conv2DTranspose(1, 3, strides=2, padding="same")])  # 14 -> 28

Each is made of the table's ops: Conv2DTranspose is ``conv2d_input_grad``, the op that sends a convolution's gradient
back to its input (TF's ``Conv2DBackpropInput``, which ``tf.nn.conv2d_transpose`` runs too), so its gradients are
that op's rules (a convolution and a filter gradient); the poolings are ``reduce_max`` / ``reduce_mean``.
"""

from tapelab import math as tmath
from tapelab import nn
from tapelab.engine.primitives import OPS
from tapelab.engine.tape import run
from tapelab.keras import initializers, regularizers
from tapelab.keras.activations import get as get_activation
from tapelab.keras.layers import Layer, _as_layer_dtype, _check_images


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


class Conv2DTranspose(Layer):
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
        self.activation = get_activation(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel = self.bias = None

    def build(self, input_shape):
        _check_images(self, input_shape, (1, 1))
        self.kernel = self.add_weight(shape=self.kernel_size + (self.filters, input_shape[-1]),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      name="kernel")
        if self.use_bias:
            self.bias = self.add_weight(shape=(self.filters,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, name="bias")

    def call(self, inputs):
        inputs = _as_layer_dtype(self, inputs)
        _check_images(self, tuple(inputs.shape), (1, 1), channels=self.kernel.shape[3])
        y = conv2d_transpose(inputs, self.kernel, self.strides, self.padding)
        if self.use_bias:
            y = tmath.add(y, self.bias)
        return self.activation(y)


class _GlobalPooling2D(Layer):
    reduce = None

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        if data_format not in (None, "channels_last"):
            raise ValueError(f"{type(self).__name__}: only data_format='channels_last' (batch, height, width, "
                             "channels) is supported; move the channels last with tl.transpose(x, [0, 2, 3, 1]).")
        super().__init__(**kwargs)
        self.keepdims = bool(keepdims)

    def call(self, inputs):
        _check_images(self, tuple(inputs.shape), (1, 1))
        return type(self).reduce(inputs, axis=[1, 2], keepdims=self.keepdims)


class GlobalMaxPooling2D(_GlobalPooling2D):
    """The largest value of each channel over the whole image: (batch, h, w, c) -> (batch, c) (``keepdims=True``:
    (batch, 1, 1, c))."""

    reduce = staticmethod(tmath.reduce_max)


class GlobalAveragePooling2D(_GlobalPooling2D):
    """The mean of each channel over the whole image: (batch, h, w, c) -> (batch, c) (``keepdims=True``:
    (batch, 1, 1, c))."""

    reduce = staticmethod(tmath.reduce_mean)


GlobalMaxPool2D, GlobalAvgPool2D = GlobalMaxPooling2D, GlobalAveragePooling2D

__all__ = ["Conv2DTranspose", "GlobalAveragePooling2D", "GlobalAvgPool2D", "GlobalMaxPool2D", "GlobalMaxPooling2D"]
