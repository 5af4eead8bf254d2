"""``keras.activations``: ``tapelab.activations`` under Keras's path (``from tapelab.keras.activations import ...``)."""

from tapelab.activations import *  # noqa: F401, F403
from tapelab.activations import __all__  # noqa: F401
