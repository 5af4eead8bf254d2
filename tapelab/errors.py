"""Exception types with TensorFlow's names."""

from tapelab.learner import spell


class InvalidArgumentError(ValueError):
    """An op was given inputs it cannot work with (shapes, dtypes, values); the message says which.

    Raised by check-numerics mode (:mod:`tapelab.debugging`) too; then ``op`` names the op,
    ``entry_index`` is its position on ``tape`` (``None`` if no tape recorded it) and ``phase`` is
    ``"forward"`` or ``"backward"``, so ``tl.viz.draw(err.tape, highlight=[err.entry_index])`` shows it.
    """

    def __init__(self, message, *, op=None, entry_index=None, tape=None, phase=None):
        super().__init__(spell(message))  # tl.cast reads tf.cast after `import tapelab as tf`
        self.op, self.entry_index, self.tape, self.phase = op, entry_index, tape, phase
