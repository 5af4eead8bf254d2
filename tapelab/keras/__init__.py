"""``tl.keras``: models, layers, losses, optimizers and metrics under Keras's names and module paths, so TF2
tutorial code runs unchanged (``from tapelab.keras.layers import Dense, Flatten, Conv2D`` works too).

    model = tl.keras.Sequential([tl.keras.layers.Flatten(input_shape=(28, 28)), tl.keras.layers.Dense(10)])
    model.compile(optimizer="adam", loss=tl.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    (x_train, y_train), (x_test, y_test) = tl.keras.datasets.mnist.load_data()

The submodules are the implementations (``tl.layers`` is ``tl.keras.layers``, kept for short lesson code).
"""

from tapelab.engine.errors import Unsupported
from tapelab.keras import (  # noqa: F401
    activations,
    backend,
    callbacks,
    convolutional,
    datasets,
    embedding,
    functional,
    initializers,
    layers,
    losses,
    merging,
    metrics,
    models,
    optimizers,
    random,
    recurrent,
    regularizers,
    saving,
    utils,
)
from tapelab.keras.initializers import Initializer  # noqa: F401
from tapelab.keras.layers import Input, Layer  # noqa: F401
from tapelab.keras.losses import Loss  # noqa: F401
from tapelab.keras.metrics import Metric  # noqa: F401
from tapelab.keras.models import Model, Sequential  # noqa: F401
from tapelab.keras.optimizers import Optimizer  # noqa: F401

layers.Sequential = Sequential  # tl.layers.Sequential, as before (models imports layers, so not the other way)
for _module in (recurrent, merging, convolutional, embedding):  # (these layers build on layers, so are added here)
    for _name in _module.__all__:
        setattr(layers, _name, getattr(_module, _name))
layers.__all__ = sorted(layers.__all__ + recurrent.__all__ + merging.__all__ + convolutional.__all__
                        + embedding.__all__)

applications = Unsupported("tl.keras.applications", "pretrained models, whose weights are downloads",
                           "build the model from tl.keras.layers and train it (lesson 07 builds a CNN).")

__all__ = ["Initializer", "Input", "Layer", "Loss", "Metric", "Model", "Optimizer", "Sequential", "activations",
           "applications",
           "backend", "callbacks", "datasets", "initializers", "layers", "losses", "metrics", "models", "optimizers",
           "random", "regularizers", "saving", "utils"]
