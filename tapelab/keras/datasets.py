"""``keras.datasets``: ``mnist.load_data()`` in Keras's layout (``from tapelab.keras.datasets import mnist``)."""

import importlib


def __getattr__(name):
    # loaded on first use, as tl.datasets.mnist (so `python -m tapelab.datasets.mnist` runs it only once)
    if name == "mnist":
        return importlib.import_module("tapelab.datasets.mnist")
    raise AttributeError(f"module 'tapelab.keras.datasets' has no attribute {name!r}")


__all__ = ["mnist"]  # noqa: F822 (loaded on first use, above)
