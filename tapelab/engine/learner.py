"""What the learner's own code calls tapelab, and where its frames are.

Messages are written with ``tl.`` (``tl.cast(x, tl.float32)``); :func:`spell` rewrites them the way
the calling code spells the package (``tf.cast`` after ``import tapelab as tf``). (Pictures of a tape name each
tensor as the calling code does, from the same frames: ``tapelab/viz/names.py``.)

Both look in the frames outside tapelab, innermost first: a notebook's user namespace, a script's
globals, ``exec()`` namespaces, and a function's globals. A function's own locals are read only on
Python 3.13 and later: before that, ``frame.f_locals`` makes a snapshot that keeps the function's
tensors alive after it deletes them.

(How an error's traceback is shown in Jupyter is ``tapelab/lessons/tracebacks.py``.)
"""

import inspect
import os
import re
import sys

_PACKAGE = __name__.split(".")[0]  # "tapelab"
HOME = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # tapelab's own code lives here
_TL = re.compile(r"\btl\.")
_LIVE_LOCALS = sys.version_info >= (3, 13)  # PEP 667: f_locals is a view of the frame, not a snapshot


def learner_frames(limit=50):
    """The call stack outside tapelab's own files, innermost first (the learner's cell or script, then its callers)."""
    frame = sys._getframe(1)
    while frame is not None and limit:
        if not frame.f_code.co_filename.startswith(HOME):
            yield frame
        frame, limit = frame.f_back, limit - 1


def stacklevel():
    """The ``stacklevel`` for ``warnings.warn``, called from the function that calls this, that points the
    warning at the learner's line: the first frame outside tapelab's own files."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(HOME):
        frame, level = frame.f_back, level + 1
    return level


def namespaces(frame):
    """The dicts that hold a frame's names without a snapshot: its locals when they are a plain dict (a module,
    a notebook cell, ``exec()``) or a live view (Python >= 3.13), then its globals."""
    if not frame.f_code.co_flags & inspect.CO_OPTIMIZED or _LIVE_LOCALS:
        if frame.f_locals is not frame.f_globals:
            return (frame.f_locals, frame.f_globals)
    return (frame.f_globals,)


def package_alias():
    """The name the calling code holds tapelab under (``"tf"`` after ``import tapelab as tf``), else ``None``."""
    package = sys.modules[_PACKAGE]
    for frame in learner_frames():
        for namespace in namespaces(frame):
            for name, value in list(namespace.items()):
                if value is package and not name.startswith("_"):
                    return name
    return None


def spell(message):
    """``message`` with ``tl.`` written as the learner imported tapelab: ``tf.cast(x, tf.float32)`` after
    ``import tapelab as tf``, plain ``cast(x, float32)`` when the calling code holds no name for it."""
    if "tl." not in message:
        return message
    alias = package_alias()
    return message if alias == "tl" else _TL.sub(f"{alias}." if alias else "", message)
