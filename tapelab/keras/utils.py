"""``keras.utils``: ``to_categorical`` (one-hot labels as numpy), ``set_random_seed`` and ``plot_model`` (a model's
layer graph, drawn by Graphviz)."""

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


def plot_model(model, to_file=None, show_shapes=False, show_dtype=False, show_layer_names=True, rankdir="TB",
               dpi=None, **kwargs):
    """A functional or Sequential model's layers as a graph, one box per layer and an arrow per connection (Keras's
    ``plot_model``): it shows inline in Jupyter; ``to_file`` (``.svg``, ``.png`` or ``.dot``) also writes it.
    ``show_shapes`` adds each layer's output shape, ``show_dtype`` its dtype. The same layers on the tape of a step
    are ``tl.viz.draw(tape, collapse=True)``: one box per layer, each holding that layer's ops."""
    from tapelab.keras.functional import Functional
    from tapelab.keras.models import Sequential
    from tapelab.lessons.plots import layer_graph  # (Graphviz loads only when a picture is made)

    if isinstance(model, Functional):
        boxes, arrows = model.graph()
    elif isinstance(model, Sequential):
        boxes = [(id(layer), layer) for layer in model.layers]
        arrows = list(zip([key for key, _ in boxes], [key for key, _ in boxes][1:]))
    else:
        raise ValueError(f"plot_model: {getattr(model, 'name', model)!r} is a {type(model).__name__}; plot_model "
                         "draws the layer graph of a functional model (tl.keras.Model(inputs, outputs)) or a "
                         "Sequential one. A subclassed model's graph is what its call() does: record one step on a "
                         "tape and draw it by layer, tl.viz.draw(tape, collapse=True).")
    labels = []
    for key, box in boxes:
        if hasattr(box, "count_params"):  # a layer
            text = f"{box.name} ({type(box).__name__})" if show_layer_names else type(box).__name__
            if show_shapes:
                text += f"\noutput: {getattr(box, 'output_shape', None) or '?'}"
            if show_dtype:
                text += f"\ndtype: {box.dtype.name}"
            labels.append((key, text, True))
        else:  # an operator (x + y) between layers
            labels.append((key, box, False))
    picture = layer_graph(labels, arrows, rankdir)
    if to_file is not None:
        picture.save(to_file)
    return picture


def register_keras_serializable(package="Custom", name=None):
    """``keras.saving.register_keras_serializable`` (TF keeps it here too)."""
    from tapelab.keras.saving import register_keras_serializable as register

    return register(package, name)


__all__ = ["plot_model", "register_keras_serializable", "set_random_seed", "to_categorical"]
