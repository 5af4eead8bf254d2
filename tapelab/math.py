"""``tl.math``: the math ops under TensorFlow's ``tf.math.*`` names."""

from tapelab.ops import (  # noqa: F401
    abs, add, argmax, argmin, divide, equal, exp, floor, floordiv, floormod, greater, greater_equal, less,
    less_equal, log, logical_and, logical_not, logical_or, maximum, minimum, mod, multiply, negative,
    not_equal, pow, reduce_max, reduce_mean, reduce_sum, sigmoid, sign, sqrt, square, subtract, tanh, truediv,
)
from tapelab.ops import log_softmax, softmax  # noqa: F401
