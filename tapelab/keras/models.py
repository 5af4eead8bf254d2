"""``keras.models``: ``tapelab.models`` under Keras's path (``from tapelab.keras.models import ...``)."""

from tapelab.models import *  # noqa: F401, F403
from tapelab.models import __all__  # noqa: F401
