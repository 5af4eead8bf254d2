"""``keras.losses``: ``tapelab.losses`` under Keras's path (``from tapelab.keras.losses import ...``)."""

from tapelab.losses import *  # noqa: F401, F403
from tapelab.losses import __all__  # noqa: F401
