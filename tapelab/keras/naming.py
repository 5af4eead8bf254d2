"""Keras's names for layers, and each weight listed once: what ``layers`` and ``models`` both use.

    keras_name("MaxPooling2D")   # 'max_pooling2d'
    unique_name("dense")         # 'dense', then 'dense_1', 'dense_2' ... until clear_session()
"""

import collections
import re

_name_counts = collections.Counter()


def unique_name(base):
    """``dense``, then ``dense_1``, ``dense_2`` ... as Keras names layers."""
    n = _name_counts[base]
    _name_counts[base] += 1
    return base if n == 0 else f"{base}_{n}"


def keras_name(class_name):
    """Keras's snake case for a layer's default name: Conv2D -> conv2d, MaxPooling2D -> max_pooling2d."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", class_name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def clear_session():
    """Restart layer numbering (the next Dense is ``dense`` again), like ``keras.backend.clear_session``."""
    _name_counts.clear()


def each_once(variables):
    """``variables`` in order, each object once (a weight shared by two layers is listed where it is met first)."""
    seen = set()
    return [v for v in variables if not (id(v) in seen or seen.add(id(v)))]
