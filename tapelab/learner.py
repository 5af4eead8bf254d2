"""What the learner's own code calls things: the name it imported tapelab under (``tf`` or ``tl``).

Messages are written with ``tl.`` (``tl.cast(x, tl.float32)``); :func:`spell` rewrites them the way
the calling code spells the package, found in the first frame outside tapelab that holds it.
"""

import inspect
import re
import sys

_PACKAGE = __name__.rpartition(".")[0]  # "tapelab"
_TL = re.compile(r"\btl\.")
_OPTIMIZED = inspect.CO_OPTIMIZED


def learner_frames(limit=50):
    """The call stack outside tapelab, innermost first (the learner's cell or script, then its callers)."""
    frame = sys._getframe(1)
    while frame is not None and limit:
        name = frame.f_globals.get("__name__") or ""
        if name != _PACKAGE and not name.startswith(_PACKAGE + "."):
            yield frame
        frame, limit = frame.f_back, limit - 1


def namespaces(frame):
    """The dicts that hold a frame's names without copying them: a module's, a notebook cell's or exec()'s
    namespace, and its globals. (A function's locals are not read: in CPython < 3.13, ``frame.f_locals``
    makes a snapshot that keeps the function's tensors alive after it deletes them.)"""
    if frame.f_code.co_flags & _OPTIMIZED:  # a function: fast locals, only its globals are a plain dict
        return (frame.f_globals,)
    return (frame.f_locals,) if frame.f_locals is frame.f_globals else (frame.f_locals, frame.f_globals)


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
