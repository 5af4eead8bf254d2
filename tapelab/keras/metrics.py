"""``keras.metrics``: ``tapelab.metrics`` under Keras's path (``from tapelab.keras.metrics import ...``)."""

from tapelab.metrics import *  # noqa: F401, F403
from tapelab.metrics import __all__  # noqa: F401
