"""``tl.keras``: the training stack under Keras's names, so TF2 tutorial code runs unchanged.

    model = tl.keras.Sequential([tl.keras.layers.Flatten(), tl.keras.layers.Dense(10)])
    optimizer = tl.keras.optimizers.Adam()
    loss_fn = tl.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    (x_train, y_train), (x_test, y_test) = tl.keras.datasets.mnist.load_data()
"""

from types import SimpleNamespace

from tapelab import datasets, layers, losses, metrics, optimizers  # noqa: F401
from tapelab.layers import Sequential  # noqa: F401

backend = SimpleNamespace(clear_session=layers.clear_session, epsilon=lambda: losses.EPSILON)

__all__ = ["Sequential", "backend", "datasets", "layers", "losses", "metrics", "optimizers"]
