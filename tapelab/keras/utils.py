"""``keras.utils``: ``to_categorical`` (one-hot labels as numpy) and ``set_random_seed``."""

import numpy as np

from tapelab import random


def to_categorical(x, num_classes=None):
    """Integer labels to one-hot rows: ``to_categorical([0, 2], 3)`` is ``[[1, 0, 0], [0, 0, 1]]`` (float32)."""
    labels = np.asarray(x)
    if labels.dtype.kind not in "iu":
        if not np.all(np.mod(labels, 1) == 0):
            raise ValueError(f"to_categorical: labels must be whole numbers (class ids), got dtype {labels.dtype}")
        labels = labels.astype(np.int64)
    if labels.ndim > 1 and labels.shape[-1] == 1:
        labels = labels[..., 0]
    if labels.size == 0 and num_classes is None:
        raise ValueError(f"to_categorical: no labels (shape {labels.shape}), so the number of classes is unknown; "
                         "pass num_classes, e.g. to_categorical(labels, num_classes=10)")
    n = int(labels.max()) + 1 if num_classes is None else int(num_classes)
    if labels.size and (labels.min() < 0 or labels.max() >= n):
        raise ValueError(f"to_categorical: labels must be in [0, {n}), got {labels.min()}..{labels.max()}")
    return np.eye(n, dtype=np.float32)[labels]


def set_random_seed(seed):
    """Seed tapelab's random numbers (weights, dropout, shuffling): ``tl.random.set_seed(seed)``."""
    random.set_seed(seed)


__all__ = ["set_random_seed", "to_categorical"]
