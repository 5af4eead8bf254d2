"""``tl.keras``: models, layers, losses, optimizers and metrics under Keras's names and module paths, so TF2
tutorial code runs unchanged (``from tapelab.keras.layers import Dense, Flatten, Conv2D`` works too).

    model = tl.keras.Sequential([tl.keras.layers.Flatten(input_shape=(28, 28)), tl.keras.layers.Dense(10)])
    model.compile(optimizer="adam", loss=tl.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    (x_train, y_train), (x_test, y_test) = tl.keras.datasets.mnist.load_data()

Each submodule re-exports the tapelab module of the same name (``tl.keras.layers.Dense is tl.layers.Dense``).
"""

from tapelab.initializers import Initializer  # noqa: F401
from tapelab.keras import (  # noqa: F401
    activations,
    backend,
    datasets,
    initializers,
    layers,
    losses,
    metrics,
    models,
    optimizers,
    utils,
)
from tapelab.layers import Input, Layer  # noqa: F401
from tapelab.losses import Loss  # noqa: F401
from tapelab.metrics import Metric  # noqa: F401
from tapelab.models import Model, Sequential  # noqa: F401
from tapelab.optimizers import Optimizer  # noqa: F401

__all__ = ["Initializer", "Input", "Layer", "Loss", "Metric", "Model", "Optimizer", "Sequential", "activations",
           "backend", "datasets", "initializers", "layers", "losses", "metrics", "models", "optimizers", "utils"]
