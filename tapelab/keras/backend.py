"""``keras.backend``: ``clear_session`` (layer names start again) and ``epsilon``."""

from tapelab.keras.losses import EPSILON
from tapelab.keras.naming import clear_session  # noqa: F401


def epsilon():
    """The small number kept between probabilities and 0 or 1 before a log (Keras's 1e-7)."""
    return EPSILON


def floatx():
    """The default float type of layers' weights: ``"float32"``."""
    return "float32"


__all__ = ["clear_session", "epsilon", "floatx"]
