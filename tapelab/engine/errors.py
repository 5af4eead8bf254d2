"""Exception types with TensorFlow's names, and the one error for what tapelab leaves to TensorFlow."""

from tapelab.engine.learner import spell


class InvalidArgumentError(ValueError):
    """An op was given inputs it cannot work with (shapes, dtypes, values); the message says which.

    Raised by check-numerics mode (:mod:`tapelab.debugging`) too; then ``op`` names the op,
    ``entry_index`` is its position on ``tape`` (``None`` if no tape recorded it) and ``phase`` is
    ``"forward"`` or ``"backward"``, so ``tl.viz.draw(err.tape, highlight=[err.entry_index])`` shows it.
    """

    def __init__(self, message, *, op=None, entry_index=None, tape=None, phase=None):
        super().__init__(spell(message))  # tl.cast reads tf.cast after `import tapelab as tf`
        self.op, self.entry_index, self.tape, self.phase = op, entry_index, tape, phase


class LeakedTensorError(TypeError):
    """A tensor of a traced graph was used outside the trace that made it (TF raises a TypeError too)."""

    def __init__(self, message):
        super().__init__(spell(message))


class UnsupportedError(NotImplementedError):
    """A TensorFlow feature tapelab does not teach: strings, ragged, sparse and complex tensors, saved models,
    devices, ``tf.io``, ``tf.image``, ``py_function``, ``TensorArray``, autograph's rewriting of Python
    control flow. The message names the feature and, where there is one, the tapelab way."""

    def __init__(self, feature, instead=None, message=None):
        if message is None:
            message = (f"{feature}: left to TensorFlow. tapelab teaches how automatic differentiation works "
                       "(eager ops, the gradient tape, tl.function's graphs) and does not implement this.")
            message += f" The tapelab way: {instead}" if instead else " Use TensorFlow itself for this."
        super().__init__(spell(message))
        self.feature = feature


class UnsupportedAttributeError(UnsupportedError, AttributeError):
    """:class:`UnsupportedError` for an attribute (so ``hasattr`` answers False, as for any missing name)."""


class Unsupported:
    """Stands in for a TF module, class, function or dtype (``name``, about ``what``) that tapelab leaves to
    TensorFlow: using it in any way (an attribute, a call, as a dtype) raises :class:`UnsupportedError`."""

    def __init__(self, name, what, instead=None):
        self._name, self._what, self._instead = name, what, instead

    def error(self, name=None):
        return UnsupportedError(f"{name or self._name} ({self._what})", self._instead)

    def __getattr__(self, attribute):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        raise UnsupportedAttributeError(f"{self._name}.{attribute} ({self._what})", self._instead)

    def __call__(self, *args, **kwargs):
        raise self.error()

    def __instancecheck__(self, obj):
        return False  # nothing in tapelab is one

    def __repr__(self):
        return spell(f"<{self._name} ({self._what}): left to TensorFlow, not part of tapelab>")


__all__ = ["InvalidArgumentError", "LeakedTensorError", "UnsupportedAttributeError", "UnsupportedError"]
