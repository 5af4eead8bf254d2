"""``keras.optimizers``: ``tapelab.optimizers`` under Keras's path (``from tapelab.keras.optimizers import ...``)."""

from tapelab.optimizers import *  # noqa: F401, F403
from tapelab.optimizers import __all__  # noqa: F401
