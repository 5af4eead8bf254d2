"""Keras-shaped layers (``keras.layers``): Dense, Conv2D, pooling, Dropout, BatchNormalization and friends.

    model = tl.keras.Sequential([
        tl.keras.layers.Conv2D(32, 3, activation="relu", input_shape=(28, 28, 1)),
        tl.keras.layers.Flatten(),
        tl.keras.layers.Dense(10),
    ])
    logits = model(x)              # a layer builds its weights on its first call (the input size is known then)

Each layer runs its ops inside ``tl.name_scope(layer.name)``, so a tape's listing and graph group
them as ``dense/matmul``, ``dense/add``, ``dense/relu``. ``layer(x, training=True)`` switches Dropout
and BatchNormalization to their training behaviour; a layer called inside another one gets the outer
call's ``training`` unless it is given its own, as in Keras.
"""

import functools
import inspect
import threading
import warnings

import numpy as np

from tapelab import array_ops, nn
from tapelab import math as tmath
from tapelab import random as _random
from tapelab.engine import dtypes
from tapelab.engine.errors import InvalidArgumentError, UnsupportedError
from tapelab.engine.learner import spell
from tapelab.engine.primitives import OPS
from tapelab.engine.tape import run
from tapelab.engine.tensor import Tensor, Variable, convert_to_tensor
from tapelab.keras import activations, initializers, regularizers, symbolic
from tapelab.keras.initializers import glorot_uniform  # noqa: F401  (tl.layers.glorot_uniform, as before)
from tapelab.keras.naming import (
    clear_session,  # noqa: F401  (tl.layers.clear_session, as before)
    each_once,
    keras_name,
    unique_name,
)
from tapelab.module import Module, leaves

get_activation = activations.get
_MATMUL, _ADD = OPS["matmul"], OPS["add"]
ACTIVATIONS = activations._BY_NAME


class _Context(threading.local):
    training = None  # the `training` of the layer call in progress (inner layers inherit it)


_context = _Context()


class Layer(Module):
    """A Module that is called on tensors: ``build`` (once, when the input shape is known), then ``call``.

    Subclasses implement ``call(inputs)`` (optionally ``call(inputs, training=None)``) and, if they own
    weights, ``build(input_shape)`` using :meth:`add_weight`. Calling the layer runs ``call`` inside
    ``tl.name_scope(self.name)``. ``input_shape=`` (without the batch axis) fixes what the layer takes,
    as in Keras; a model's first layer with one is built at once.
    """

    def __init__(self, name=None, dtype=dtypes.float32, input_shape=None, input_dim=None, trainable=True, **kwargs):
        if kwargs:
            raise ValueError(_unknown_arguments(type(self).__name__, kwargs))
        super().__init__(name=name or unique_name(keras_name(type(self).__name__)))
        self.dtype = dtypes.as_dtype(dtype or dtypes.float32)
        self.built = False
        self.trainable = bool(trainable)
        self.input_shape_declared = (tuple(input_shape) if input_shape is not None
                                     else (int(input_dim),) if input_dim is not None else None)
        self.output_shape = None  # (None, ...) once called
        self._weights = []  # in creation order; sorts first among attributes, so variables keep this order
        self._penalties = []  # (weight, regularizer): what add_weight(regularizer=...) asked for
        self._losses = []  # what add_loss() added during the layer's latest call

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "build" in cls.__dict__:  # a layer built by hand (layer.build(shape)) is built, as in Keras 3
            cls.build = _marks_built(cls.__dict__["build"])
        if "__init__" in cls.__dict__:  # its arguments are its config (get_config), as Keras 3 records them
            cls.__init__ = _records_config(cls.__dict__["__init__"])

    def add_weight(self, *args, shape=None, initializer=None, dtype=None, trainable=True, autocast=True,
                   regularizer=None, constraint=None, aggregation="none", overwrite_with_gradient=False, name=None):
        """Create a Variable named ``<layer>/<name>`` and track it, as Keras 3 does::

            self.w = self.add_weight(shape=(input_shape[-1], 4), initializer="random_normal", trainable=True)

        ``initializer``: a name, an Initializer or a function ``f(shape, dtype)`` (default ``"glorot_uniform"``
        for floats, ``"zeros"`` otherwise); ``dtype`` the layer's unless given; ``name`` Keras's ``variable``,
        ``variable_1``, ... unless given; ``regularizer`` adds a penalty on the weight to ``layer.losses``."""
        if args:
            if isinstance(args[0], str):
                raise ValueError(spell(f"{self.name}: `name` must be passed as a keyword argument. Received: "
                                       f"add_weight({args[0]!r}, ...). Use: add_weight(shape=..., name={args[0]!r})."))
            shape, initializer = (list(args) + [initializer])[:2] if len(args) == 1 else args[:2]
        if constraint is not None:
            raise UnsupportedError(f"{self.name}.add_weight(constraint=...)",
                                   "clip the weight yourself after each step, e.g. w.assign(tl.clip_by_value(w, "
                                   "-1.0, 1.0)).")
        dtype = dtypes.as_dtype(dtype or self.dtype)
        if initializer is None:
            initializer = "glorot_uniform" if dtype.is_floating else "zeros"
        try:
            make = initializers.get(initializer)
        except ValueError as e:
            raise ValueError(f"{self.name}.add_weight: {e}") from None
        value = make(tuple(int(n) for n in (shape or ())), dtype=dtype)  # (as Keras calls it: f(shape, dtype=...))
        name = name or unique_name("variable")
        var = Variable(value, trainable=trainable, name=f"{self.name}/{name}", dtype=dtype)
        self._weights.append(var)
        if regularizer is not None:
            self._penalties.append((var, regularizers.get(regularizer)))
        return var

    def add_loss(self, loss):
        """Add a scalar (or a tensor, summed) to ``layer.losses`` from ``call``: ``fit`` adds the model's losses to
        the loss it trains on. They are the losses of the layer's latest call."""
        self._losses.append(loss)

    @property
    def losses(self):
        """The layer's extra losses, computed now (on the tape, if one records): its latest call's ``add_loss``
        values, each regularizer's penalty on its weight (under the layer's name scope), then every inner layer's."""
        out = list(self.__dict__.get("_losses", ()))
        penalties = self.__dict__.get("_penalties", ())
        if penalties:
            with self.name_scope:
                out += [regularize(w) for w, regularize in penalties]
        return out + [loss for layer in self._sublayers() for loss in layer.losses]

    def get_config(self):
        """The layer's arguments as a dict (name, trainable, dtype, and those its ``__init__`` was given), so
        ``type(layer).from_config(layer.get_config())`` makes a layer like it (new weights)."""
        return {**self.__dict__.get("_config", {}), "name": self.name, "trainable": self.trainable,
                "dtype": self.dtype.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A new layer from :meth:`get_config`'s dict: ``cls(**config)``."""
        return cls(**config)

    def build(self, input_shape):
        """Create the layer's weights once the input shape is known (the first call runs it, then sets ``built``).

        Override it with :meth:`add_weight` calls; the default creates nothing. For example::

            def build(self, input_shape):
                self.w = self.add_weight(shape=(input_shape[-1], 4), initializer="glorot_uniform", name="w")
        """

    def call(self, inputs):
        """The layer's computation on a tensor; ``layer(x)`` runs it inside ``tl.name_scope(layer.name)``.

        Override it in every layer, e.g. ``return tl.matmul(inputs, self.w)``.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement call(inputs)")

    def __call__(self, inputs, *args, training=None, **kwargs):
        if self._losses:
            self._losses = []  # (losses are the latest call's)
        if not isinstance(inputs, Tensor):
            if symbolic.is_symbolic(inputs, args, kwargs):  # keras.Input's tensors: a node of a functional graph
                if training is not None:
                    kwargs["training"] = training
                return symbolic.call(self, (inputs, *args), kwargs, layer=self)
            if not isinstance(inputs, dict) and not (
                    isinstance(inputs, (list, tuple)) and any(isinstance(i, (Tensor, np.ndarray)) for i in inputs)):
                inputs = convert_to_tensor(inputs)  # numbers, nested lists, numpy arrays
        if self.input_shape_declared is not None and isinstance(inputs, Tensor):
            self._check_declared_shape(inputs._value.shape)
        if not self.built:
            self.build(tuple(inputs.shape) if isinstance(inputs, Tensor) else None)
            self.built = True
        outer = _context.training
        if training is None:
            training = outer
        if training is not None and _takes(type(self), "training"):
            kwargs["training"] = training  # (None: call's own default applies, as in Keras)
        if training is not outer:
            _context.training = training
        try:
            with self.name_scope:
                out = self.call(inputs, *args, **kwargs)
        finally:
            if training is not outer:
                _context.training = outer
        if self.output_shape is None and isinstance(out, Tensor):  # (for summary(): the first call's, per example)
            self.output_shape = (None,) + out._value.shape[1:]
        return out

    @property
    def input(self):
        """The KerasTensor(s) this layer was first called on in a functional graph (Keras's ``layer.input``)."""
        return self._first_node("input").args[0] if not isinstance(self, InputLayer) else self.output

    @property
    def output(self):
        """The KerasTensor(s) this layer made when first called in a functional graph (Keras's ``layer.output``)."""
        return self._first_node("output").outputs

    def _first_node(self, what):
        node = self.__dict__.get("_node")  # (symbolic.call sets it)
        if node is None:
            raise AttributeError(f"The layer {self.name} has never been called and thus has no defined {what}. "
                                 "Call it on a KerasTensor first, e.g. layer(tl.keras.Input(shape=(4,))).")
        return node

    def _check_declared_shape(self, shape):
        declared = self.input_shape_declared
        if declared is not None and (len(shape) != len(declared) + 1 or any(
                d is not None and d != n for d, n in zip(declared, shape[1:]))):
            raise ValueError(
                f"{self.name}: declared input_shape={declared} (one example, without the batch axis) but got a "
                f"batch of shape {shape}, i.e. examples of shape {shape[1:]}. Give input_shape the shape of one "
                "example, or reshape the data to match it."
            )

    # --- weights, in Keras's order: the layer's own (creation order), then each inner layer's (assignment order) --
    def _sublayers(self):
        """The layers held in this layer's attributes (directly, or in lists, tuples and dicts), in the order
        they were assigned; each once."""
        found = []
        for key, value in vars(self).items():
            if not key.startswith("_"):
                found += [leaf for leaf in leaves(value) if isinstance(leaf, Layer) and leaf is not self
                          and all(leaf is not f for f in found)]
        return found

    def _own_variables(self):
        """Weights made with add_weight, then Variables (and tl.Modules' variables) held in attributes."""
        own = list(self._weights)
        for key, value in vars(self).items():
            if key.startswith("_"):
                continue
            for leaf in leaves(value):
                if isinstance(leaf, Variable):
                    own.append(leaf)
                elif isinstance(leaf, Module) and not isinstance(leaf, Layer):
                    own += leaf.variables
        return each_once(own)

    @property
    def variables(self):
        return tuple(each_once(self._own_variables() + [v for layer in self._sublayers() for v in layer.variables]))

    @property
    def trainable_variables(self):
        """The variables an optimizer updates: none while ``layer.trainable`` is False (a frozen layer)."""
        if not self.trainable:
            return ()
        return tuple(each_once([v for v in self._own_variables() if v.trainable]
                               + [v for layer in self._sublayers() for v in layer.trainable_variables]))

    @property
    def non_trainable_variables(self):
        trainable = {id(v) for v in self.trainable_variables}
        return tuple(v for v in self.variables if id(v) not in trainable)

    @property
    def weights(self):
        """Every weight of the layer (and of the layers inside it), trainable first as Keras lists them."""
        return self.trainable_weights + self.non_trainable_weights

    @property
    def trainable_weights(self):
        return list(self.trainable_variables)

    @property
    def non_trainable_weights(self):
        return list(self.non_trainable_variables)

    def get_weights(self):
        """The values of the layer's weights, as numpy arrays (in :attr:`weights` order)."""
        return [v.numpy() for v in self.weights]

    def set_weights(self, values):
        """Assign ``values`` (numpy arrays, in :attr:`weights` order) to the weights."""
        weights = self.weights
        if len(values) != len(weights):
            raise ValueError(f"{self.name}.set_weights: got {len(values)} arrays for {len(weights)} weights")
        for v, value in zip(weights, values):
            v.assign(value)

    def count_params(self):
        """The number of scalars in all weights (0 before the layer is built)."""
        return super().count_params()


def _marks_built(build):
    @functools.wraps(build)
    def built(self, input_shape):
        build(self, input_shape)
        self.built = True
    return built


def _records_config(init):
    @functools.wraps(init)
    def recording(self, *args, **kwargs):
        if "_config" not in self.__dict__:  # (the most derived __init__ runs first: its arguments are the config)
            bound = inspect.signature(init).bind(self, *args, **kwargs)
            bound.apply_defaults()
            config = {k: v for k, v in list(bound.arguments.items())[1:] if k not in ("args", "kwargs")}
            config.update(bound.arguments.get("kwargs", {}))
            self.__dict__["_config"] = config
        init(self, *args, **kwargs)
    return recording


def _unknown_arguments(kind, kwargs):
    """The error for keyword arguments a layer does not take; a regularizer on a layer without weights says so."""
    message = f"Unrecognized keyword arguments passed to {kind}: {kwargs}."
    penalties = [k for k in kwargs if k.endswith("_regularizer")]
    if penalties:
        message += (f" {kind} has no weights for {', '.join(penalties)} to act on: put the regularizer on the layer "
                    "whose weights it should keep small, e.g. tl.keras.layers.Dense(64, "
                    "kernel_regularizer=tl.keras.regularizers.L2(1e-4)).")
    return spell(message)


def _takes(cls, argument):
    """Whether ``cls.call`` accepts ``argument`` (``training``); remembered per class."""
    key = (cls, argument)
    if key not in _TAKES:
        params = inspect.signature(cls.call).parameters
        _TAKES[key] = argument in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
    return _TAKES[key]


_TAKES = {}


class _WithKernel(Layer):
    """What Dense and the convolutions share: an activation, a kernel and an optional bias, each weight with its
    initializer and regularizer, made once the input size is known; ``activation(y + bias)``."""

    def _kernel_options(self, activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                        bias_regularizer):
        self.activation = get_activation(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel = self.bias = None

    def _make_weights(self, kernel_shape, units):
        self.kernel = self.add_weight(shape=kernel_shape, initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, name="kernel")
        if self.use_bias:
            self.bias = self.add_weight(shape=(units,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, name="bias")

    def _activated(self, y):
        if self.use_bias:
            y = tmath.add(y, self.bias)  # one bias per unit (filter), broadcast over the batch (and the pixels)
        return self.activation(y)


class Dense(_WithKernel):
    """A fully connected layer: ``activation(inputs @ kernel + bias)``, like ``keras.layers.Dense``.

    The kernel has shape (input size, units) and starts Glorot-uniform; the bias starts at zero.
    The input size is found on the first call.

    >>> tl.random.set_seed(0)
    >>> layer = tl.layers.Dense(3, activation="relu")
    >>> layer(tl.ones((2, 4))).shape
    TensorShape([2, 3])
    >>> [v.name for v in layer.trainable_variables]
    ['dense/kernel:0', 'dense/bias:0']
    """

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, name=None,
                 dtype=dtypes.float32, **kwargs):
        if int(units) != units or units < 1:
            raise ValueError(f"Dense: units must be a positive integer, got {units!r}")
        super().__init__(name=name, dtype=dtype, **kwargs)
        self.units = int(units)
        self._kernel_options(activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                             bias_regularizer)

    def build(self, input_shape):
        _check_batched(self, input_shape)
        self._make_weights((input_shape[-1], self.units), self.units)

    def call(self, inputs):
        inputs = _as_layer_dtype(self, inputs)
        shape = inputs._value.shape
        if len(shape) < 2:
            _check_batched(self, shape)
        if shape[-1] != self.kernel._value.shape[0]:
            raise InvalidArgumentError(
                f"{self.name}: this layer was built for inputs with {self.kernel.shape[0]} features (kernel shape "
                f"{tuple(self.kernel.shape)}) but got inputs of shape {tuple(inputs.shape)}. A layer's input size "
                "is fixed by its first call; make a new layer for a different input size."
            )
        # the checks tl.matmul and tl.add would repeat (dtypes, ranks, sizes) are the layer's own, above: run the ops
        y = run(_MATMUL, (inputs, self.kernel))  # (batch, in) @ (in, units) -> (batch, units)
        if self.use_bias:
            y = run(_ADD, (y, self.bias))  # the bias broadcasts over the batch
        return self.activation(y)

    def __repr__(self):
        size = "?" if self.kernel is None else self.kernel.shape[0]
        return f"<tapelab.keras.layers.Dense '{self.name}' {size} -> {self.units}>"


def _check_batched(layer, shape):
    if len(shape) < 2:
        raise ValueError(
            spell(f"{layer.name}: Dense expects inputs of shape (batch, features), got shape {tuple(shape)}. "
                  "For a single example use tl.reshape(x, (1, -1)); for images put tl.layers.Flatten() first.")
        )


def _as_layer_dtype(layer, x):
    """Inputs are cast to the layer's dtype, as Keras 3 casts them (integers too: uint8 pixels become 0.0 ..
    255.0, which a model learns from poorly; scale them first, x / 255)."""
    if x._value.dtype == layer.dtype.as_numpy_dtype:
        return x
    if x.dtype.is_floating or x.dtype.is_integer or x.dtype.is_bool:
        return array_ops.cast(x, layer.dtype)
    raise TypeError(f"{layer.name}: inputs have dtype {x.dtype.name}; the layer computes in {layer.dtype.name}")


class Flatten(Layer):
    """Flatten everything but the batch axis: (batch, 28, 28) -> (batch, 784)."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)

    def call(self, inputs):
        if inputs.ndim < 1:
            raise ValueError(f"{self.name}: Flatten needs at least a batch axis, got a scalar")
        return array_ops.reshape(inputs, (inputs.shape[0], -1))


class Conv2D(_WithKernel):
    """A 2-D convolution layer, like ``keras.layers.Conv2D``: ``activation(conv2d(inputs, kernel) + bias)``.

    Inputs are batches of images (batch, height, width, channels) (channels last, as Keras's default);
    the kernel has shape (kernel height, kernel width, input channels, ``filters``).

    >>> tl.random.set_seed(0)
    >>> tl.keras.layers.Conv2D(8, 3, activation="relu")(tl.zeros((2, 28, 28, 1))).shape
    TensorShape([2, 26, 26, 8])
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None, dilation_rate=(1, 1),
                 activation=None, use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, **kwargs):
        if int(filters) != filters or filters < 1:
            raise ValueError(f"Conv2D: filters must be a positive integer, got {filters!r}")
        if data_format not in (None, "channels_last"):
            raise ValueError("Conv2D: only data_format='channels_last' (batch, height, width, channels) is supported; "
                             "move the channels last with tl.transpose(x, [0, 2, 3, 1]).")
        if nn._pair_of("Conv2D", dilation_rate, "dilation_rate") != (1, 1):
            raise NotImplementedError("Conv2D: dilation_rate other than 1 is not supported")
        super().__init__(**kwargs)
        self.filters = int(filters)
        self.kernel_size = nn._pair_of("Conv2D", kernel_size, "kernel_size")
        self.strides = nn._pair_of("Conv2D", strides, "strides")
        self.padding = nn._padding("Conv2D", padding)
        self._kernel_options(activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                             bias_regularizer)

    def build(self, input_shape):
        _check_images(self, input_shape, self.kernel_size)
        self._make_weights(self.kernel_size + (input_shape[-1], self.filters), self.filters)

    def call(self, inputs):
        inputs = _as_layer_dtype(self, inputs)
        _check_images(self, tuple(inputs.shape), self.kernel_size, channels=self.kernel.shape[2])
        return self._activated(nn.conv2d(inputs, self.kernel, strides=self.strides, padding=self.padding))


def _check_images(layer, shape, window, channels=None):
    """Images must be (batch, height, width, channels), at least as big as the window; say so for NCHW data."""
    kind = type(layer).__name__
    if len(shape) != 4:
        raise ValueError(
            f"{layer.name}: {kind} expects a batch of images of shape (batch, height, width, channels), got shape "
            f"{shape}. For grayscale images of shape (batch, 28, 28) add the channel axis: x[..., tl.newaxis].")
    looks_nchw = shape[1] in (1, 3) and shape[3] > 4
    if channels is not None and shape[3] != channels:
        raise ValueError(
            f"{layer.name}: built for images with {channels} channel(s) but got shape {shape} "
            f"({shape[3]} channels)." + (_NCHW if looks_nchw else ""))
    if getattr(layer, "padding", "SAME") == "VALID" and (shape[1] < window[0] or shape[2] < window[1]):
        raise ValueError(
            f"{layer.name}: images of shape {shape} are {shape[1]}x{shape[2]} pixels, smaller than the {window[0]}x"
            f"{window[1]} window." + (_NCHW if looks_nchw else " Use padding='same', or a smaller window."))


_NCHW = (" This looks like channels first (NCHW: batch, channels, height, width); Keras layers take channels last "
         "(NHWC): move them with tl.transpose(x, [0, 2, 3, 1]).")


class _Pooling2D(Layer):
    op = None

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.pool_size = nn._pair_of(type(self).__name__, pool_size, "pool_size")
        self.strides = self.pool_size if strides is None else nn._pair_of(type(self).__name__, strides, "strides")
        self.padding = nn._padding(type(self).__name__, padding)

    def call(self, inputs):
        _check_images(self, tuple(inputs.shape), self.pool_size)
        return self.op(inputs, ksize=self.pool_size, strides=self.strides, padding=self.padding)


class MaxPooling2D(_Pooling2D):
    """The largest value of each ``pool_size`` window, per channel (the window moves by ``strides``: by default
    its own size, so (batch, 26, 26, c) -> (batch, 13, 13, c))."""

    op = staticmethod(nn.max_pool2d)


class AveragePooling2D(_Pooling2D):
    """The mean of each ``pool_size`` window, per channel."""

    op = staticmethod(nn.avg_pool2d)


MaxPool2D, AvgPool2D = MaxPooling2D, AveragePooling2D


class Dropout(Layer):
    """While training (``training=True``), zero each input with probability ``rate`` and scale the rest by
    1 / (1 - rate); otherwise pass the inputs through unchanged. The masks come from ``tl.random``."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        if not 0 <= rate < 1:
            raise ValueError(f"Dropout: rate must be in [0, 1) (the fraction of inputs dropped), got {rate!r}")
        super().__init__(**kwargs)
        self.rate, self.noise_shape, self.seed = float(rate), noise_shape, seed
        self._rng = None if seed is None else np.random.default_rng(seed)  # a seed: a repeatable series of masks
        if rate > 0 and seed is None:
            _random.keras_seed()  # (as Keras's Dropout takes one: the initializers after it take Keras's seeds)

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        from tapelab import random

        return nn._dropout(inputs, self.rate, self.noise_shape, lambda: self._rng or random.generator())


class Softmax(Layer):
    """``softmax(inputs)`` along ``axis``: scores to probabilities."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return tmath.softmax(inputs, axis=self.axis)


class ReLU(Layer):
    """max(x, 0); with ``negative_slope`` a leaky relu, with ``max_value`` capped (6: relu6)."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        if threshold:
            raise NotImplementedError("ReLU: threshold other than 0 is not supported")
        super().__init__(**kwargs)
        self.max_value, self.negative_slope = max_value, float(negative_slope)

    def call(self, inputs):
        return activations.relu(inputs, negative_slope=self.negative_slope, max_value=self.max_value)


class LeakyReLU(Layer):
    """x for x > 0, ``negative_slope * x`` otherwise (Keras 3's default slope: 0.3), so a negative input still
    passes a small gradient back. (``alpha=`` is Keras 2's name for the slope: accepted, with Keras's warning.)"""

    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:
            warnings.warn("Argument `alpha` is deprecated. Use `negative_slope` instead.", stacklevel=2)
            negative_slope = kwargs.pop("alpha")
        if negative_slope is None or isinstance(negative_slope, bool) or not float(negative_slope) >= 0:
            raise ValueError("The negative_slope value of a Leaky ReLU layer cannot be None or negative value. "
                             f"Expected a float. Received: negative_slope={negative_slope!r}")
        super().__init__(**kwargs)
        self.negative_slope = float(negative_slope)

    def call(self, inputs):
        return activations.leaky_relu(inputs, negative_slope=self.negative_slope)


class Lambda(Layer):
    """Wrap a function of tensors as a layer: ``Lambda(lambda x: x / 255.0)``."""

    def __init__(self, function, **kwargs):
        if not callable(function):
            raise TypeError(f"Lambda: expects a function, got {function!r}")
        super().__init__(**kwargs)
        self.function = function

    def call(self, inputs):
        return self.function(inputs)


class Reshape(Layer):
    """Reshape each example to ``target_shape`` (the batch axis stays; one entry may be -1)."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(n) for n in target_shape)

    def call(self, inputs):
        return array_ops.reshape(inputs, (inputs.shape[0],) + self.target_shape)


class BatchNormalization(Layer):
    """Normalise each feature (the last axis) to mean 0 and variance 1, then scale by ``gamma`` and shift by
    ``beta`` (both learned), as ``keras.layers.BatchNormalization``.

    With ``training=True`` it uses the batch's mean and variance (and the gradient flows through them),
    and moves the running statistics towards them: ``moving = moving * momentum + batch * (1 - momentum)``.
    Otherwise it uses the running statistics, and so does a frozen layer (``trainable = False``) even with
    ``training=True``, as in Keras: fine-tuning leaves its statistics as they were learned.
    """

    def __init__(self, axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True, **kwargs):
        super().__init__(**kwargs)
        self.axis, self.momentum, self.epsilon = axis, float(momentum), float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.gamma = self.beta = self.moving_mean = self.moving_variance = None

    def build(self, input_shape):
        features = (input_shape[self.axis],)
        if self.scale:
            self.gamma = self.add_weight(shape=features, initializer="ones", name="gamma")
        if self.center:
            self.beta = self.add_weight(shape=features, initializer="zeros", name="beta")
        self.moving_mean = self.add_weight(shape=features, initializer="zeros", trainable=False, name="moving_mean")
        self.moving_variance = self.add_weight(shape=features, initializer="ones", trainable=False,
                                               name="moving_variance")

    def call(self, inputs, training=None):
        inputs = _as_layer_dtype(self, inputs)
        axis = self.axis % inputs.ndim
        reduce = [a for a in range(inputs.ndim) if a != axis]
        shape = [1 if a != axis else n for a, n in enumerate(inputs.shape)]
        if training and self.trainable:  # (a frozen layer runs as in inference, as in Keras) tf.nn.moments: the
            # variance around the (stopped) mean
            mean = tmath.reduce_mean(inputs, axis=reduce, keepdims=True)
            variance = tmath.reduce_mean(tmath.squared_difference(inputs, array_ops.stop_gradient(mean)), axis=reduce,
                                       keepdims=True)
            m = self.momentum
            self.moving_mean.assign(self.moving_mean * m + array_ops.reshape(mean, (-1,)) * (1 - m))
            self.moving_variance.assign(self.moving_variance * m + array_ops.reshape(variance, (-1,)) * (1 - m))
        else:
            mean = array_ops.reshape(self.moving_mean, shape)
            variance = array_ops.reshape(self.moving_variance, shape)
        # tf.nn.batch_normalization: x * inv + (beta - mean * inv), inv = gamma / sqrt(variance + epsilon)
        inv = tmath.rsqrt(variance + self.epsilon)
        if self.scale:
            inv = inv * array_ops.reshape(self.gamma, shape)
        shift = array_ops.reshape(self.beta, shape) - mean * inv if self.center else -mean * inv
        return inputs * inv + shift


class InputLayer(Layer):
    """The layer behind ``keras.Input(shape=...)``: the shape of one example (a functional model's input, or where a
    Sequential model starts); it passes its input on unchanged."""

    def __init__(self, shape=None, batch_size=None, dtype=None, name=None, **kwargs):
        if shape is None:
            raise ValueError("Input: give the shape of one example, e.g. tl.keras.Input(shape=(28, 28))")
        shape = (shape,) if isinstance(shape, int) else tuple(None if n is None else int(n) for n in shape)
        super().__init__(name=name, dtype=dtype or dtypes.float32, input_shape=shape, **kwargs)
        self.batch_size = batch_size
        self.output_shape = (batch_size,) + shape

    def call(self, inputs):
        return inputs


def Input(shape=None, batch_size=None, dtype=None, name=None, batch_shape=None, **kwargs):  # noqa: N802 - Keras's
    """A symbolic tensor for one input of a model: ``Input(shape=(784,))`` stands for a batch of examples of that
    shape (:class:`~tapelab.keras.symbolic.KerasTensor`). Call layers on it and give both ends to
    ``tl.keras.Model(inputs, outputs)`` (the functional API), or start a Sequential model with it:
    ``Sequential([Input((28, 28)), ...])``. ``None`` in the shape is a size known only when data comes (a sequence's
    length); ``batch_shape=(8, 32)`` is ``shape=(32,), batch_size=8``."""
    if batch_shape is not None:
        if shape is not None:
            raise ValueError("Input: give shape= or batch_shape=, not both (batch_shape is (batch_size, *shape))")
        batch_size, shape = batch_shape[0], tuple(batch_shape[1:])
    layer = InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, name=name, **kwargs)
    return symbolic.input_tensor(layer, layer.input_shape_declared, batch_size, layer.dtype, name)


__all__ = ["AveragePooling2D", "AvgPool2D", "BatchNormalization", "Conv2D", "Dense", "Dropout", "Flatten", "Input",
           "InputLayer", "Lambda", "Layer", "LeakyReLU", "MaxPool2D", "MaxPooling2D", "ReLU", "Reshape", "Softmax"]
