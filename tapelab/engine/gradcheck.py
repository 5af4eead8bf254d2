"""Check a gradient the slow, obvious way: nudge each input a little and watch the output move."""

from dataclasses import dataclass

import numpy as np

from tapelab.engine.errors import InvalidArgumentError
from tapelab.engine.tape import GradientTape
from tapelab.engine.tensor import Tensor, convert_to_tensor


@dataclass
class GradientCheck:
    """The tape's gradients next to finite differences, one array per input."""

    analytic: list
    numeric: list
    max_error: float
    tolerance: float

    @property
    def ok(self):
        return self.max_error <= self.tolerance

    def __repr__(self):
        verdict = "agree" if self.ok else "DISAGREE"
        lines = [f"GradientCheck: tape and finite differences {verdict} (max error {self.max_error:.2e}, "
                 f"tolerance {self.tolerance:.0e})"]
        for i, (a, n) in enumerate(zip(self.analytic, self.numeric)):
            lines.append(f"  input {i}: tape {np.array2string(a, precision=5, threshold=8)}")
            lines.append(f"           numeric {np.array2string(n, precision=5, threshold=8)}")
        return "\n".join(lines)


def check_gradients(f, *inputs, eps=1e-6, tolerance=1e-5, seed=0):
    """Compare ``tape.gradient`` of ``f`` with central finite differences, in float64.

    The scalar checked is ``sum(f(*inputs) * w)`` for fixed random weights ``w``, so every output
    element's gradient counts. Returns a :class:`GradientCheck`; ``.ok`` says whether they agree.

    >>> tl.check_gradients(lambda x: x * x, [1.0, 2.0]).ok
    True
    """
    points = [np.array(convert_to_tensor(x)._value, dtype=np.float64) for x in inputs]
    try:
        out = np.asarray(f(*[Tensor(p) for p in points]))
    except InvalidArgumentError as e:
        raise InvalidArgumentError(
            f"check_gradients: f runs on float64 copies of the inputs (finite differences need the precision), and "
            f"it failed there: {e} If f uses float32 Variables or constants, make f follow its input's dtype, e.g. "
            "tl.matmul(x, tl.cast(w, x.dtype)).") from None
    weights = np.random.default_rng(seed).uniform(0.5, 1.5, out.shape)

    def scalar(*arrays):
        return float(np.sum(np.asarray(f(*[Tensor(a) for a in arrays])) * weights))

    xs = [Tensor(p.copy()) for p in points]
    with GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    analytic = tape.gradient(y, xs, output_gradients=weights)
    analytic = [np.zeros_like(p) if g is None else g.numpy() for g, p in zip(analytic, points)]

    numeric = []
    for k, p in enumerate(points):
        grad = np.zeros_like(p)
        for idx in np.ndindex(p.shape):
            shifted = [q.copy() for q in points]
            shifted[k][idx] = p[idx] + eps
            up = scalar(*shifted)
            shifted[k][idx] = p[idx] - eps
            grad[idx] = (up - scalar(*shifted)) / (2 * eps)
        numeric.append(grad)
    error = max((float(np.max(np.abs(a - n) / (1 + np.abs(n)), initial=0.0)) for a, n in zip(analytic, numeric)),
                default=0.0)
    return GradientCheck(analytic, numeric, error, tolerance)
