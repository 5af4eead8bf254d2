"""The names the learner's code holds its tensors by, for the pictures: ``z``, ``loss``.

They are read from the frames outside tapelab, as :mod:`tapelab.engine.learner` finds them for its messages.
"""

import numpy as np

from tapelab.engine.learner import learner_frames, namespaces

_SKIP = {"In", "Out", "exit", "quit", "get_ipython"}  # IPython's own names


def code_names(tensors):
    """``tensor key -> the name the calling code holds it by``, for those of ``tensors`` it holds.

    Identity only, never equal values: a name counts if it is bound to the tensor itself (or to a tensor with
    its key: a tape gives back the tensors it let go under their own keys), or to the numpy array the tensor
    wraps (``x = np.ones(3)`` passed to an op). The innermost frame wins; within one namespace, the name bound
    first (dict order); names starting with ``_`` (IPython's ``_``, ``_3``) and IPython's ``In``/``Out`` are
    skipped. A name rebound since names only what it holds now.
    """
    kinds = {type(t) for t in tensors}  # (Tensor, Variable, a traced graph's tensors)
    arrays = {id(t._value): t._key for t in tensors if type(t._value) is np.ndarray}
    return _held(lambda value: value._key if type(value) in kinds else arrays.get(id(value)),
                 {t._key for t in tensors})


def held_names(objects):
    """``id(obj) -> the name the calling code holds it by``, for those of ``objects`` it holds (identity only; the
    rules of :func:`code_names`): the names of a foreign tape's values."""
    return _held(id, {id(o) for o in objects})


def _held(identify, wanted):
    """``identity -> name`` for the values of the learner's frames whose ``identify(value)`` is in ``wanted``."""
    found = {}
    for frame in learner_frames():
        for namespace in namespaces(frame):
            for name, value in list(namespace.items()):
                key = identify(value)
                if key in wanted and key not in found and not name.startswith("_") and name not in _SKIP:
                    found[key] = name
        if len(found) == len(wanted):
            break
    return found
