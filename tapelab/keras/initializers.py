"""``keras.initializers``: ``tapelab.initializers`` under Keras's path (``from ... import``)."""

from tapelab.initializers import *  # noqa: F401, F403
from tapelab.initializers import __all__  # noqa: F401
