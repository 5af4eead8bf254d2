"""tapelab: learn how TensorFlow-2-style autodiff works by watching the gradient tape.

    import tapelab as tl
    x = tl.Variable(3.0)
    with tl.GradientTape() as tape:
        y = x * x
    tape.gradient(y, x)   # 6.0
"""

from tapelab import linalg, math, nn, random, tensor_operators  # noqa: F401  (tensor_operators: x + y, x[k], ...)
from tapelab.array_ops import (  # noqa: F401
    boolean_mask,
    broadcast_to,
    cast,
    concat,
    einsum,
    expand_dims,
    eye,
    fill,
    gather,
    identity,
    is_tensor,
    linspace,
    meshgrid,
    newaxis,
    one_hot,
    ones,
    ones_like,
    pad,
    range,
    rank,
    repeat,
    reshape,
    shape,
    size,
    squeeze,
    stack,
    stop_gradient,
    transpose,
    where,
    zeros,
    zeros_like,
)
from tapelab.control_flow import cond, map_fn  # noqa: F401
from tapelab.engine import dtypes, errors, nest  # noqa: F401  (tf.dtypes, tf.errors, tf.nest)
from tapelab.engine.dtypes import (  # noqa: F401
    DType,
    as_dtype,
    bool,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from tapelab.engine.errors import InvalidArgumentError, UnsupportedError  # noqa: F401
from tapelab.engine.function import (  # noqa: F401
    ConcreteFunction,
    Function,
    Graph,
    TensorSpec,
    TracingError,
    function,
    init_scope,
)
from tapelab.engine.gradcheck import GradientCheck, check_gradients  # noqa: F401
from tapelab.engine.primitives import OPS  # noqa: F401
from tapelab.engine.tape import GradientTape, UnconnectedGradients, gradients, name_scope  # noqa: F401
from tapelab.engine.tensor import Tensor, TensorShape, Variable, constant, convert_to_tensor  # noqa: F401
from tapelab.linalg import matmul, norm, tensordot  # noqa: F401
from tapelab.math import (  # noqa: F401
    abs,
    acos,
    acosh,
    add,
    add_n,
    argmax,
    argmin,
    argsort,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    clip_by_global_norm,
    clip_by_norm,
    clip_by_value,
    cos,
    cosh,
    cumsum,
    divide,
    equal,
    exp,
    floor,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    pow,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
    round,
    sigmoid,
    sign,
    sin,
    sinh,
    sort,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    truediv,
)
from tapelab.printing import print  # noqa: F401

__version__ = "0.1.0"

# --- training stack: Module, layers, models, losses, optimizers, metrics, data, datasets; plots load lazily ---
from tapelab import data, datasets, keras  # noqa: F401, E402
from tapelab.keras import layers, losses, metrics, models, optimizers  # noqa: F401, E402  (tl.layers: Keras's)
from tapelab.lessons import plots  # noqa: F401, E402
from tapelab.module import Module  # noqa: F401, E402

# --- end training stack ---
# isort: split
from tapelab import viz  # noqa: F401, E402  (the tape listing and graph; graphviz loads only when drawing)

# isort: split
from tapelab import debugging  # noqa: F401, E402  (check-numerics mode)

# isort: split
from tapelab import config  # noqa: F401, E402  (devices; what is left to TensorFlow says so)
from tapelab.config import device  # noqa: F401, E402
from tapelab.engine.custom import custom_gradient  # noqa: F401, E402
from tapelab.unsupported import *  # noqa: F401, F403, E402
from tapelab.unsupported import types  # noqa: F401, E402

# isort: split
from tapelab.lessons.tracebacks import install_ipython_tracebacks as _tracebacks  # noqa: E402

_tracebacks()  # in IPython/Jupyter, a tapelab error shows the learner's lines and the message, not tapelab's frames

config.threading.limit_at_import()  # numpy's BLAS on one thread unless the user chose (tapelab/threads.py says why)

# the public names: TF's (docs/tf_api.md lists them against TensorFlow 2.21) and tapelab's own teaching tools
# (tl.function and tl.nest exist but stay out of the list, as before: tl.function has an argument TF's lacks)
_IMPLEMENTATION = {"array_ops", "control_flow", "engine", "exercises", "function", "lessons", "models", "module",
                   "nest", "op_wrappers", "printing", "random_streams", "tensor_operators", "threads", "unsupported"}
__all__ = sorted(name for name in dir() if not name.startswith("_") and name not in _IMPLEMENTATION)
