"""``keras.layers``: ``tapelab.layers`` under Keras's path (``from tapelab.keras.layers import ...``)."""

from tapelab.layers import *  # noqa: F401, F403
from tapelab.layers import __all__  # noqa: F401
