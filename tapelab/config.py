"""``tl.config``: what runs where. tapelab runs every op on the CPU, in numpy; devices are left to TensorFlow.

    tl.config.list_physical_devices()        # [PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]
    tl.config.list_physical_devices("GPU")   # []
    tl.config.run_functions_eagerly(True)    # tl.function calls the Python function itself (for debugging)
    tl.config.threading.get_intra_op_parallelism_threads()  # 1: numpy's BLAS threads (tapelab.threads says why)
"""

import contextlib
from typing import NamedTuple

from tapelab import threads as threading  # noqa: F401  (TF's tf.config.threading: numpy's BLAS threads)
from tapelab.engine.errors import UnsupportedAttributeError, UnsupportedError
from tapelab.engine.function import settings


class PhysicalDevice(NamedTuple):
    name: str
    device_type: str


class LogicalDevice(NamedTuple):
    name: str
    device_type: str


def list_physical_devices(device_type=None):
    """The devices tapelab computes on: one CPU (there is no GPU support to find)."""
    return [PhysicalDevice("/physical_device:CPU:0", "CPU")] if device_type in (None, "CPU") else []


def list_logical_devices(device_type=None):
    return [LogicalDevice("/device:CPU:0", "CPU")] if device_type in (None, "CPU") else []


get_visible_devices = list_physical_devices


def set_visible_devices(devices, device_type=None):
    """Accepts the CPU (nothing changes); any other device is left to TensorFlow."""
    devices = devices if isinstance(devices, (list, tuple)) else [devices]
    if any(getattr(d, "device_type", "CPU") != "CPU" for d in devices) or device_type not in (None, "CPU"):
        raise UnsupportedError("GPUs and other accelerators", "tapelab runs every op on the CPU.")


def run_functions_eagerly(run_eagerly):
    """``True``: every ``tl.function`` runs its Python function directly instead of a traced graph (prints
    and breakpoints work on every call); ``False``: trace and replay again."""
    settings.run_eagerly = bool(run_eagerly)


def functions_run_eagerly():
    """Whether :func:`run_functions_eagerly` is on."""
    return settings.run_eagerly


class _Experimental:
    list_physical_devices = staticmethod(list_physical_devices)
    list_logical_devices = staticmethod(list_logical_devices)

    def __getattr__(self, name):
        raise UnsupportedAttributeError(f"tl.config.experimental.{name} (device and runtime settings)",
                                        "nothing to set: tapelab runs every op on the CPU, in numpy.")


experimental = _Experimental()


def __getattr__(name):
    raise UnsupportedAttributeError(f"tl.config.{name} (device and runtime settings)",
                                    "nothing to set: tapelab runs every op on the CPU, in numpy.")


@contextlib.contextmanager
def device(device_name):
    """``with tl.device('/CPU:0'):`` runs as usual (every tapelab op runs on the CPU); a GPU or TPU is left to
    TensorFlow and raises :class:`UnsupportedError`."""
    name = (device_name or "").upper()
    if "GPU" in name or "TPU" in name:
        raise UnsupportedError(f"running on {device_name} (GPUs and TPUs)",
                               "leave out the tl.device block: tapelab runs every op on the CPU, in numpy.")
    yield

__all__ = ["experimental", "functions_run_eagerly", "get_visible_devices", "list_logical_devices",
           "list_physical_devices", "run_functions_eagerly", "set_visible_devices"]
