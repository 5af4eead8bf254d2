"""Short, deterministic text for values, shapes, op params and formulas (shared by the listing, graph and stepper)."""

import re

import numpy as np

SMALL = 6  # tensors with at most this many elements show their values (in the graph's boxes)
PANEL_SMALL = 12  # ... in the stepper's text, which has room for a 3x3 kernel's gradient

# a tensor's kind -> (the listing's word, the graph label's shorter word)
KINDS = {"variable": ("Variable", "Variable"), "watched": ("watched", "watched"),
         "placeholder": ("placeholder", "placeholder"), "constant": ("constant", "constant"),
         "stopped": ("computed while recording was stopped", "stopped"), "intermediate": ("", "")}


def kind_text(kind, trainable=True, short=False):
    """``Variable (not trainable)`` in the listing, ``Variable, not trainable`` in a graph label."""
    word = KINDS[kind][short]
    if kind == "variable" and not trainable:
        word += ", not trainable" if short else " (not trainable)"
    return word


def shape_text(shape):
    return str(tuple(shape))


def value_text(v, small=SMALL):
    """``[[1, 1], [1, 1]]`` for a small array (4 significant digits), ``None`` for a big one (or no value)."""
    if v is None:
        return None
    v = np.asarray(v)
    if v.size > small:
        return None
    if v.dtype.kind == "f":
        fmt = {"float_kind": lambda x: _num(x)}
    elif v.dtype.kind == "b":
        fmt = {"bool": lambda x: "True" if x else "False"}
    else:
        fmt = {"int": lambda x: str(int(x))}
    text = np.array2string(v, separator=", ", formatter=fmt, max_line_width=10_000, threshold=10_000)
    return " ".join(text.split())


def _num(x):
    if x == 0:
        return "0"  # also -0.0
    s = f"{float(x):.4g}"
    return s


def number_text(x, digits=2):
    """A number in ``digits`` significant figures, as short as it goes (``0.0031``, ``4.2e-07``, ``1.5e+03``)."""
    return f"{float(x):.{digits}g}"


def norm(*arrays):
    """The L2 norm of one array, or of several taken together as one long vector, in float64."""
    return float(np.sqrt(sum(np.sum(np.square(np.asarray(a, np.float64))) for a in arrays)))


def summary_text(v):
    """A one-number summary of a big array: its norm (used for gradients that are too big to print)."""
    return f"norm {_num(norm(v))}"


def array_text(v, small=SMALL, shape=True):
    """The values of a small array, else ``(784, 128) float32, norm 3.2`` (just ``norm 3.2`` with ``shape=False``)."""
    v = np.asarray(v)
    text = value_text(v, small)
    if text is not None:
        return text
    return f"{shape_text(v.shape)} {v.dtype.name}, {summary_text(v)}" if shape else summary_text(v)


def arg_name(formula, i):
    """The rule's own name for input i: ``"dx = g @ y.T"`` -> ``"x"``; ``#i`` without one."""
    if formula and formula.startswith("d") and "=" in formula:
        return formula.split("=")[0].strip()[1:]
    return f"#{i}"


def operand(name):
    """A tensor's name as it reads inside an expression: ``(dense/kernel)``, ``(-1)``; plain names as they are."""
    return f"({name})" if re.search(r"[/\s]", name) or name.startswith("-") else name


def partial(of, wrt):
    """The gradient symbol ``∂loss/∂x`` (``∂loss/∂(dense/kernel)``): it cannot be mistaken for a tensor's name."""
    return f"∂{of}/∂{operand(wrt)}"


_SYMBOL = re.compile(r"(?<![A-Za-z_])[A-Za-z_]\w*")


def rule_rhs(formula, symbols):
    """A rule's right-hand side with its symbols (``x``, ``y``, ``g``, ``out``, ...) replaced as given.

    >>> rule_rhs("dx = g @ y.T", {"g": "∂loss/∂z", "x": "x", "y": operand("dense/kernel")})
    '∂loss/∂z @ (dense/kernel).T'
    """
    rhs = formula.split("=", 1)[1].strip() if "=" in formula else formula

    def put(m):  # a ∂ symbol next to a division reads unambiguously in brackets: (∂loss/∂z) / y
        value = symbols.get(m[0], m[0])
        around = rhs[:m.start()].rstrip()[-1:] + rhs[m.end():].lstrip()[:1]
        return f"({value})" if "/" in around and "/" in value and not value.startswith("(") else value

    return _SYMBOL.sub(put, rhs)


def param_text(value):
    """A compact op parameter: ``(1,)``, ``float32``, ``[0, 1:3]`` for an index key, ``None``."""
    if isinstance(value, slice):
        a = "" if value.start is None else str(value.start)
        b = "" if value.stop is None else str(value.stop)
        return f"{a}:{b}" + ("" if value.step is None else f":{value.step}")
    if value is Ellipsis:
        return "..."
    if hasattr(value, "name") and hasattr(value, "as_numpy_dtype"):  # a DType
        return value.name
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if isinstance(value, np.ndarray):
        return value_text(value, small=8) or f"<array {value.shape}>"
    if isinstance(value, tuple) and value and any(isinstance(x, (slice, type(Ellipsis))) for x in value):
        return "[" + ", ".join(param_text(x) for x in value) + "]"
    if isinstance(value, (tuple, list)):
        inner = ", ".join(param_text(x) for x in value)
        return f"({inner},)" if isinstance(value, tuple) and len(value) == 1 else (
            f"({inner})" if isinstance(value, tuple) else f"[{inner}]")
    if isinstance(value, (np.integer, np.floating)):
        return str(value.item())
    return str(value)


def params_text(params):
    """``axis=(1,), keepdims=True`` — params left at a do-nothing value (None, False) are left out."""
    return ", ".join(f"{k}={_index_text(v) if k == 'key' else param_text(v)}" for k, v in params.items()
                     if v is not None and v is not False)


def _index_text(key):
    """An indexing key as written in Python: ``[0, 1:]``."""
    return "[" + ", ".join(param_text(x) for x in (key if isinstance(key, tuple) else (key,))) + "]"
