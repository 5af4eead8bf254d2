"""``keras.saving``: the registry of custom objects (``register_keras_serializable``), and where saving is.

    @tl.keras.saving.register_keras_serializable(package="MyLayers")
    class Scale(tl.keras.layers.Layer):
        ...

Weights are saved by ``model.save_weights("model.weights.h5")`` (Keras 3's layout); whole-model files (``.keras``,
SavedModel) are left to TensorFlow.
"""

from tapelab.engine.errors import Unsupported
from tapelab.keras.models import _WHOLE_MODEL

_registered = {}  # "package>name" -> the class or function


def register_keras_serializable(package="Custom", name=None):
    """A decorator: registers the class (or function) as ``"<package>><name>"`` (its own name by default), as
    Keras finds custom objects by that name when it loads a config."""
    def register(obj):
        key = f"{package}>{name or obj.__name__}"
        if "get_config" not in dir(obj) and isinstance(obj, type):
            raise ValueError(f"Cannot register a class that does not have a get_config() method: {obj.__name__}")
        _registered[key] = obj
        obj._registered_name = key
        return obj
    return register


def get_registered_name(obj):
    """The name ``obj`` was registered under (its own name if it was not)."""
    return getattr(obj, "_registered_name", getattr(obj, "__name__", type(obj).__name__))


def get_registered_object(name, custom_objects=None, module_objects=None):
    """What was registered as ``name`` (or is in ``custom_objects`` / ``module_objects`` under it), else None."""
    for source in (custom_objects or {}, _registered, module_objects or {}):
        if name in source:
            return source[name]
    return None


def get_custom_objects():
    """The registry itself, ``{"package>name": object}``."""
    return _registered


load_model = Unsupported("tl.keras.saving.load_model", "whole-model files (.keras, SavedModel)", _WHOLE_MODEL)
save_model = Unsupported("tl.keras.saving.save_model", "whole-model files (.keras, SavedModel)", _WHOLE_MODEL)

__all__ = ["get_custom_objects", "get_registered_name", "get_registered_object", "load_model",
           "register_keras_serializable", "save_model"]
