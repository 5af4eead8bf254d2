"""Finding where NaN and Inf come from, with TensorFlow's names (``tf.debugging``).

    with tl.debugging.enable_check_numerics():      # or call it once: on until disable_check_numerics()
        with tl.GradientTape() as tape:
            loss = ...                               # raises at the first op that makes a NaN or Inf
        grads = tape.gradient(loss, variables)       # ... or at the first gradient that has one

The error (``tl.InvalidArgumentError``) names the op, its entry on the tape, and the shapes and value
ranges of what went in; ``tl.viz.draw(err.tape, highlight=[err.entry_index])`` shows where it is.
When the mode is off, each op pays one flag test.
"""

import numpy as np

from tapelab.engine.errors import InvalidArgumentError
from tapelab.engine.numerics import bad_words, describe
from tapelab.engine.recording import switches
from tapelab.engine.tensor import convert_to_tensor

__all__ = ["enable_check_numerics", "disable_check_numerics", "check_numerics"]


class _CheckNumerics:
    """What ``enable_check_numerics()`` returns: used as a context, it restores the previous setting on exit."""

    def __init__(self, previous):
        self._previous = previous

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        switches.check_numerics = self._previous
        return False

    def __repr__(self):
        return "<check_numerics on: every op's output and gradient is checked for NaN and Inf>"


def enable_check_numerics(stack_height_limit=30, path_length_limit=50):
    """Stop at the first op whose output, or whose gradient, contains NaN or Inf (``tf.debugging`` name).

    Stays on until :func:`disable_check_numerics`; used as ``with tl.debugging.enable_check_numerics():``
    it is on only inside the block. The two limits exist for TF compatibility and are ignored.

    >>> with tl.debugging.enable_check_numerics():
    ...     tl.math.log(tl.constant([1.0, 0.0]))
    Traceback (most recent call last):
    ...
    tapelab.engine.errors.InvalidArgumentError: check_numerics: log produced -Inf ...
    """
    previous, switches.check_numerics = switches.check_numerics, True
    return _CheckNumerics(previous)


def disable_check_numerics():
    """Turn check-numerics mode off again."""
    switches.check_numerics = False


def check_numerics(tensor, message, name=None):
    """``tensor`` unchanged if it is all finite; else ``InvalidArgumentError`` starting with ``message``."""
    t = convert_to_tensor(tensor)
    if t._value.dtype.kind == "f" and not np.isfinite(t._value).all():
        raise InvalidArgumentError(f"{message}: the tensor has {bad_words(t._value)} ({describe(t._value)}).")
    return t
