"""``keras.backend``: ``clear_session`` (layer names start again), ``epsilon``, ``floatx`` and the random draws
``random_normal`` / ``random_uniform`` (``keras.random``'s, under their Keras 2 names)."""

from tapelab.keras import random as _random
from tapelab.keras.losses import EPSILON
from tapelab.keras.naming import clear_session  # noqa: F401


def epsilon():
    """The small number kept between probabilities and 0 or 1 before a log (Keras's 1e-7)."""
    return EPSILON


def floatx():
    """The default float type of layers' weights: ``"float32"``."""
    return "float32"


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Samples from N(mean, stddev^2): ``tl.keras.random.normal``."""
    return _random.normal(shape, mean, stddev, dtype, seed)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Samples uniformly from [minval, maxval): ``tl.keras.random.uniform``."""
    return _random.uniform(shape, minval, maxval, dtype, seed)


__all__ = ["clear_session", "epsilon", "floatx", "random_normal", "random_uniform"]
