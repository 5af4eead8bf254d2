"""``keras.datasets``: ``mnist.load_data()`` in Keras's layout (``from tapelab.keras.datasets import mnist``).

Keras's other datasets are downloads tapelab does not make (a classroom machine may have no network, and the
lessons need MNIST only): each raises an UnsupportedError saying so.
"""

import importlib

from tapelab.engine.errors import Unsupported

_DOWNLOADS = ("cifar10", "cifar100", "fashion_mnist", "imdb", "reuters", "boston_housing", "california_housing")


def __getattr__(name):
    # loaded on first use, as tl.datasets.mnist (so `python -m tapelab.datasets.mnist` runs it only once)
    if name == "mnist":
        return importlib.import_module("tapelab.datasets.mnist")
    if name in _DOWNLOADS:
        return Unsupported(f"tl.keras.datasets.{name}", "a dataset Keras downloads",
                           "tapelab ships MNIST only (tl.keras.datasets.mnist.load_data(), with a 10,000-digit sample "
                           f"offline); load {name} with TensorFlow and give tapelab the numpy arrays.")
    raise AttributeError(f"module 'tapelab.keras.datasets' has no attribute {name!r}")


__all__ = ["mnist"]  # noqa: F822 (loaded on first use, above)
