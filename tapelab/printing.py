"""``tl.print``: tf.print, an op of the graph (a traced function prints on every call), and how it formats
tensors as TF does."""

import numpy as np

from tapelab.engine import nest, recording
from tapelab.engine.primitives import OPS
from tapelab.engine.tape import run
from tapelab.engine.tensor import Tensor


def print(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):  # noqa: A001
    """Print text and tensors' values, like ``tf.print``; inside ``tl.function`` it prints on every call.

    Python's ``print`` runs only while a function is traced; this is an op of the graph. Tensors print
    as TF prints them (the first and last ``summarize`` entries of each axis; ``None`` or -1: all).
    TF prints to stderr by default; tapelab prints to stdout, where a notebook shows it plainly.
    """
    tensors = []

    def slot(x):
        if isinstance(x, Tensor):
            tensors.append(x)
            return Slot(len(tensors) - 1)
        return x

    layout = tuple(x if isinstance(x, str) else
                   Printed(slot(x) if isinstance(x, Tensor) else nest.pack_like(x, [slot(v) for v in nest.flatten(x)]))
                   for x in inputs)
    stream = output_stream if output_stream is not None and hasattr(output_stream, "write") else None
    params = dict(layout=layout, sep=sep, end=end, stream=stream, summarize=-1 if summarize is None else int(summarize))
    graph = recording.tracing_graph()
    if graph is not None:  # while tl.function traces, the print only joins the graph: it prints on every run
        recording.record(OPS["print"], tuple(tensors), tuple(t._value for t in tensors),
                         Tensor(np.zeros((0,), bool)), params, None)
        return None
    run(OPS["print"], tuple(tensors), **params)


class Slot:
    """Where tensor ``index`` of a ``print`` op's inputs goes in the structure it prints."""

    def __init__(self, index):
        self.index = index


class Printed:
    """One argument of ``tl.print`` other than text: a tensor (a :class:`Slot`), or a Python structure with the
    tensors inside it as slots. The print op's forward calls :meth:`text` with the input arrays."""

    def __init__(self, piece):
        self.piece = piece

    def text(self, xs, summarize):
        return _text(self.piece, xs, summarize)


def _text(piece, xs, summarize):
    # text as it is; tensors as TF prints them (float32 to 9 digits, True as 1), the first and last `summarize`
    # entries of each axis of a big one; Python structures with the tensors inside them printed so
    if isinstance(piece, str):
        return piece
    if isinstance(piece, Slot):
        return _tensor_text(xs[piece.index], summarize)
    if isinstance(piece, (list, tuple)):
        inner = ", ".join(_text(p, xs, summarize) for p in piece)
        return f"[{inner}]" if isinstance(piece, list) else f"({inner}{',' if len(piece) == 1 else ''})"
    if isinstance(piece, dict):
        return "{" + ", ".join(f"{k!r}: {_text(v, xs, summarize)}" for k, v in piece.items()) + "}"
    return repr(piece)


_DIGITS = {"float16": 4, "float32": 9, "float64": 17}


def _tensor_text(x, summarize):
    kind = x.dtype.kind
    if kind == "f":
        digits = _DIGITS[x.dtype.name]
        formatter = {"float_kind": lambda v: f"{v:.{digits}g}"}
    elif kind == "b":
        formatter = {"bool": lambda v: "1" if v else "0"}
    else:
        formatter = {"int": str}
    if x.ndim == 0:
        return next(iter(formatter.values()))(x.item())
    edges = x.size if summarize is None or summarize < 0 else summarize
    return np.array2string(x, separator=" ", formatter=formatter, max_line_width=10**9,
                           threshold=2 * edges, edgeitems=max(edges, 1))
