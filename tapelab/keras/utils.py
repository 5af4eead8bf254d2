"""``keras.utils``: ``to_categorical`` (one-hot labels as numpy), ``set_random_seed``, ``plot_model`` (a model's
layer graph, drawn by Graphviz), and ``array_to_img`` / ``img_to_array`` (an image array as a PIL Image and back)."""

import numpy as np

from tapelab import random
from tapelab.keras import backend


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
    """Seed every random number a program draws, as Keras's does: Python's ``random``, numpy's global generator and
    ``tl.random.set_seed(seed)`` (TF's streams, the initial weights, dropout, shuffling)."""
    import random as python_random

    python_random.seed(seed)
    np.random.seed(seed)
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


def _data_format(data_format, caller):
    if data_format is None:
        return "channels_last"  # (Keras's image_data_format(); tapelab's images are channels last)
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"{caller}: The `data_format` argument must be one of {{'channels_first', 'channels_last'}}. "
                         f"Received: data_format={data_format}. Images here are (height, width, channels): "
                         "'channels_last'; 'channels_first' is (channels, height, width).")
    return data_format


def _pil_image(caller):
    try:
        from PIL import Image  # (Pillow: matplotlib's own dependency; loaded only when an image is made)
    except ImportError:
        raise ImportError(f"{caller} needs Pillow (PIL), which is not installed: pip install pillow") from None
    return Image


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """One image, an array of shape (height, width, channels), as a PIL Image, as Keras's ``array_to_img``: 1 channel
    is mode "L" (grey), 3 "RGB", 4 "RGBA". ``scale`` (the default) stretches the values to 0..255 first (``x - min``,
    divided by the new max, times 255); without it values are cut to whole numbers as they are (keep them in 0..255).
    ``data_format="channels_first"`` reads (channels, height, width)."""
    data_format = _data_format(data_format, "array_to_img")
    image = _pil_image("array_to_img")
    x = np.asarray(x, dtype=backend.floatx() if dtype is None else dtype)  # (a tensor gives its value)
    if x.ndim != 3:
        raise ValueError(f"Expected image array to have rank 3 (single image). Got array with shape: {x.shape}. An "
                         "image is (height, width, channels): a grey one of shape (28, 28) is x[..., None] (or "
                         "np.expand_dims(x, -1)); for one image of a batch, x[0].")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        x_max = np.max(x)
        if x_max != 0:
            x /= x_max
        x *= 255
    channels = x.shape[2]
    if channels in (3, 4):
        return image.fromarray(x.astype("uint8"), "RGB" if channels == 3 else "RGBA")
    if channels == 1:
        if np.max(x) > 255:  # (32-bit grey, PIL's mode "I", as Keras does)
            return image.fromarray(x[:, :, 0].astype("int32"), "I")
        return image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {channels}. An image array of shape {x.shape} (height, width, "
                     "channels) needs 1 channel (grey), 3 (RGB) or 4 (RGBA)"
                     + ("; for channels first, (channels, height, width), pass data_format='channels_first'."
                        if data_format == "channels_last" and x.shape[0] in (1, 3, 4) else "."))


def img_to_array(img, data_format=None, dtype=None):
    """A PIL Image as a numpy array of shape (height, width, channels) (float32 unless ``dtype``), as Keras's
    ``img_to_array``: a grey image gets a channel axis of size 1. ``data_format="channels_first"`` gives
    (channels, height, width)."""
    data_format = _data_format(data_format, "img_to_array")
    x = np.asarray(img, dtype=backend.floatx() if dtype is None else dtype)
    if x.ndim == 3:
        if data_format == "channels_first":
            x = x.transpose(2, 0, 1)
    elif x.ndim == 2:
        x = x.reshape((1, *x.shape) if data_format == "channels_first" else (*x.shape, 1))
    else:
        raise ValueError(f"Unsupported image shape: {x.shape}. img_to_array takes one image (a PIL Image, or an array "
                         "of shape (height, width) or (height, width, channels)); for a batch, convert each image.")
    return x


def register_keras_serializable(package="Custom", name=None):
    """``keras.saving.register_keras_serializable`` (TF keeps it here too)."""
    from tapelab.keras.saving import register_keras_serializable as register

    return register(package, name)


__all__ = ["array_to_img", "img_to_array", "plot_model", "register_keras_serializable", "set_random_seed",
           "to_categorical"]
