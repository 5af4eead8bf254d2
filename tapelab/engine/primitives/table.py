"""The one table of primitives: every op, its numpy forward, one VJP rule per input and the rules' formulas.

Each group of ops appears once, the ops of a family side by side. An op without rules (``vjps`` None) is not
differentiable: it is never recorded, and its output carries no gradient. The numpy kernels are in
:mod:`~tapelab.engine.primitives.kernels`, the longer rules in :mod:`~tapelab.engine.primitives.rules`.
"""

import math

import numpy as np

from tapelab.engine import dtypes
from tapelab.engine.primitives.kernels import (
    SELU_ALPHA,
    SELU_SCALE,
    avg_pool2d,
    avg_pool2d_grad,
    broadcast_to,
    concat,
    conv2d,
    conv2d_filter_grad,
    conv2d_input_grad,
    cumulative,
    diag,
    einsum,
    erf,
    floordiv,
    floormod,
    gather,
    gelu,
    inv,
    log_softmax,
    max_over,
    max_pool2d,
    min_over,
    n_reduced,
    one_hot,
    pad,
    print_inputs,
    reduce_logsumexp,
    reduce_mean,
    reduce_sum,
    relu_grad,
    scatter,
    segment_sum,
    sigmoid,
    softmax,
    solve,
    sort_indices,
    sparse_xent,
    svd,
    truediv_dtype,
)
from tapelab.engine.primitives.op import Each, EachFormula, defop, unbroadcast
from tapelab.engine.primitives.rules import (
    concat_vjp,
    cumprod_vjp,
    diag_part_vjp,
    einsum_vjp,
    extreme_vjp,
    gelu_vjp,
    max_pool2d_vjp,
    no_grad,
    no_grad_at,
    pad_vjp,
    prod_vjp,
    select,
    sparse_xent_residual_vjp,
    sparse_xent_vjp,
    svd_vjp,
    swap_last,
    to_full,
    unless_zero,
    where_dx,
    where_dy,
)

# --- elementwise, one input ------------------------------------------------------------------------------------
# arithmetic
defop("negative", np.negative, (lambda B, g, out, x: -g,), ("dx = -g",), reads=())
defop("square", np.square, (lambda B, g, out, x: g * 2 * x,), ("dx = g * 2 * x",))
# (sqrt, reciprocal, rsqrt and exp: rules written with the output, so a tape need not keep a large x)
defop("sqrt", np.sqrt, (lambda B, g, out, x: unless_zero(B, g, g * 0.5 / out),), ("dx = g / (2 * sqrt(x))",),
      float_only=True, reads=("out",))
defop("reciprocal", np.reciprocal, (lambda B, g, out, x: unless_zero(B, g, -g * out * out),), ("dx = -g / x^2",),
      float_only=True, reads=("out",))
defop("rsqrt", lambda x: 1 / np.sqrt(x), (lambda B, g, out, x: unless_zero(B, g, -0.5 * g * out * out * out),),
      ("dx = -g / (2 * x^(3/2))",), float_only=True, reads=("out",))
defop("exp", np.exp, (lambda B, g, out, x: g * out,), ("dx = g * exp(x)",), float_only=True, reads=("out",))
defop("log", np.log, (lambda B, g, out, x: g / x,), ("dx = g / x",), float_only=True)
defop("abs", np.abs, (lambda B, g, out, x: g * B.sign(x),), ("dx = g * sign(x)",))
defop("sign", np.sign, (no_grad,), ("dx = 0",))
# the usual functions and the smooth activations (float tensors); a rule's formula is in the input's own terms
defop("tanh", np.tanh, (lambda B, g, out, x: g * (1 - out * out),), ("dx = g * (1 - tanh(x)^2)",), float_only=True,
      reads=("out",))
defop("sigmoid", sigmoid, (lambda B, g, out, x: g * out * (1 - out),), ("dx = g * out * (1 - out)",), float_only=True,
      reads=("out",))
for _name, _fn, _rule, _formula in [
    ("sin", np.sin, lambda B, g, out, x: g * B.cos(x), "dx = g * cos(x)"),
    ("cos", np.cos, lambda B, g, out, x: -g * B.sin(x), "dx = -g * sin(x)"),
    ("tan", np.tan, lambda B, g, out, x: g / B.square(B.cos(x)), "dx = g / cos(x)^2"),
    ("asin", np.arcsin, lambda B, g, out, x: g / B.sqrt(1 - x * x), "dx = g / sqrt(1 - x^2)"),
    ("acos", np.arccos, lambda B, g, out, x: -g / B.sqrt(1 - x * x), "dx = -g / sqrt(1 - x^2)"),
    ("atan", np.arctan, lambda B, g, out, x: g / (1 + x * x), "dx = g / (1 + x^2)"),
    ("sinh", np.sinh, lambda B, g, out, x: g * B.cosh(x), "dx = g * cosh(x)"),
    ("cosh", np.cosh, lambda B, g, out, x: g * B.sinh(x), "dx = g * sinh(x)"),
    ("asinh", np.arcsinh, lambda B, g, out, x: g / B.cosh(out), "dx = g / sqrt(x^2 + 1)"),
    ("acosh", np.arccosh, lambda B, g, out, x: g / B.sinh(out), "dx = g / sqrt(x^2 - 1)"),
    ("atanh", np.arctanh, lambda B, g, out, x: g / (1 - x * x), "dx = g / (1 - x^2)"),
    ("log1p", np.log1p, lambda B, g, out, x: g / (1 + x), "dx = g / (1 + x)"),
    ("expm1", np.expm1, lambda B, g, out, x: g * B.exp(x), "dx = g * exp(x)"),
    ("erf", erf, lambda B, g, out, x: g * (2 / math.sqrt(math.pi)) * B.exp(-x * x),
     "dx = g * 2 / sqrt(pi) * exp(-x^2)"),
    ("softplus", lambda x: np.logaddexp(x, 0).astype(x.dtype),
     lambda B, g, out, x: g * B.sigmoid(x), "dx = g * sigmoid(x)"),
    ("log_sigmoid", lambda x: -np.logaddexp(-x, 0).astype(x.dtype),
     lambda B, g, out, x: g * B.sigmoid(-x), "dx = g * sigmoid(-x)"),
    ("softsign", lambda x: x / (1 + np.abs(x)), lambda B, g, out, x: g / B.square(1 + B.abs(x)),
     "dx = g / (1 + |x|)^2"),
    ("elu", lambda x: np.where(x < 0, np.exp(np.minimum(x, 0)) - 1, x),  # TF: exp(x) - 1 below 0
     lambda B, g, out, x: B.where(out < 0, g * (out + 1), g), "dx = g * exp(x) where x < 0, else g"),
    ("selu", lambda x: np.where(x < 0, SELU_SCALE * SELU_ALPHA * (np.exp(np.minimum(x, 0)) - 1),
                                SELU_SCALE * x).astype(x.dtype),
     lambda B, g, out, x: B.where(out < 0, g * (out + SELU_SCALE * SELU_ALPHA), g * SELU_SCALE),
     "dx = g * 1.7581 * exp(x) where x < 0, else g * 1.0507"),
]:
    defop(_name, _fn, (_rule,), (_formula,), float_only=True)
# the relu family: the slope is 1 above 0, alpha (0 for relu) below, 0 past relu6's cap. The rules use relu_grad,
# as TF's do, so a second derivative is 0 (connected), not None
# (relu's rule reads out: [out > 0] is [x > 0], and a tape then need not keep x)
defop("relu", lambda x: np.maximum(x, 0), (lambda B, g, out, x: B.relu_grad(g, out),), ("dx = g * [x > 0]",),
      reads=("out",))
defop("relu6", lambda x: np.minimum(np.maximum(x, 0), 6), (lambda B, g, out, x: B.relu_grad(g, x, cap=6),),
      ("dx = g * [0 < x < 6]",))
defop("leaky_relu", lambda x, alpha: np.where(x > 0, x, alpha * x).astype(x.dtype),
      (lambda B, g, out, x, alpha: B.relu_grad(g, x, alpha=alpha),), ("dx = g where x > 0, else alpha * g",),
      float_only=True)
defop("relu_grad", relu_grad,
      (lambda B, g, out, u, x, alpha=0.0, cap=None: unbroadcast(B, B.relu_grad(g, x, alpha=alpha, cap=cap), u.shape),
       no_grad_at(1)),
      ("du = g * slope(x)   (the relu's slope at x)", "dx = 0"), same_dtype=True, broadcasts=True)
defop("gelu", gelu, (gelu_vjp,), ("dx = g * (Phi(x) + x * phi(x))   (Phi, phi: the normal CDF and density)",),
      float_only=True)
defop("silu", lambda x, beta: x * sigmoid(beta * x),
      (lambda B, g, out, x, beta: (lambda s: g * s * (1 + beta * x * (1 - s)))(B.sigmoid(beta * x)),),
      ("dx = g * s * (1 + beta * x * (1 - s)),  s = sigmoid(beta * x)",), float_only=True)
# piecewise constant: TF defines no gradient for them (None), unlike sign's zeros
for _name, _fn in [("floor", np.floor), ("ceil", np.ceil), ("round", np.round)]:  # round: half to even, as TF
    defop(_name, _fn)
# tests and logic (no gradient)
for _name, _fn in [("logical_not", np.logical_not), ("is_finite", np.isfinite), ("is_nan", np.isnan),
                   ("is_inf", np.isinf)]:
    defop(_name, _fn)
# the same values: as they are, in another dtype, or with no gradient flowing back
defop("identity", lambda x: x, (lambda B, g, out, x: g,), ("dx = g",), reads=())
defop("cast", lambda x, dtype: x.astype(dtypes.as_dtype(dtype).as_numpy_dtype),
      (lambda B, g, out, x, dtype: B.cast(g, dtype=dtypes.as_dtype(x.dtype)),), ("dx = cast(g, x.dtype)",), reads=())
defop("stop_gradient", lambda x: x)


# --- elementwise, two inputs, broadcasting (each VJP undoes the broadcast with `unbroadcast`) ------------------
defop("add", np.add,
      (lambda B, g, out, x, y: unbroadcast(B, g, x.shape),
       lambda B, g, out, x, y: unbroadcast(B, g, y.shape)),
      ("dx = g", "dy = g"), same_dtype=True, broadcasts=True, reads=())
defop("subtract", np.subtract,
      (lambda B, g, out, x, y: unbroadcast(B, g, x.shape),
       lambda B, g, out, x, y: unbroadcast(B, -g, y.shape)),
      ("dx = g", "dy = -g"), same_dtype=True, broadcasts=True, reads=())
defop("multiply", np.multiply,
      (lambda B, g, out, x, y: unbroadcast(B, g * y, x.shape),
       lambda B, g, out, x, y: unbroadcast(B, g * x, y.shape)),
      ("dx = g * y", "dy = g * x"), same_dtype=True, broadcasts=True, reads=(0, 1))
defop("divide", lambda x, y: np.true_divide(x, y, dtype=truediv_dtype(x)),
      (lambda B, g, out, x, y: unbroadcast(B, g / y, x.shape),
       lambda B, g, out, x, y: unbroadcast(B, g * (-x / y / y), y.shape)),  # (TF's: from x and y, not out)
      ("dx = g / y", "dy = -g * x / y^2"), same_dtype=True, broadcasts=True, quiet=True, reads=(0, 1))
defop("floordiv", floordiv, same_dtype=True, quiet=True)
defop("floormod", floormod,
      (lambda B, g, out, x, y: unbroadcast(B, g, x.shape),
       lambda B, g, out, x, y: unbroadcast(B, -g * B.floordiv(x, y), y.shape)),
      ("dx = g", "dy = -g * floor(x / y)"), same_dtype=True, broadcasts=True, quiet=True)
defop("pow", np.power,
      (lambda B, g, out, x, y: unbroadcast(B, g * y * x ** (y - 1), x.shape),
       lambda B, g, out, x, y: unbroadcast(B, g * out * B.log(B.where(x > 0, x, B.ones_like(x))), y.shape)),
      ("dx = g * y * x^(y-1)", "dy = g * x^y * log(x)   (0 where x <= 0)"), same_dtype=True, broadcasts=True,
      quiet=True)
defop("squared_difference", lambda x, y: np.square(x - y),
      (lambda B, g, out, x, y: unbroadcast(B, g * 2 * (x - y), x.shape),
       lambda B, g, out, x, y: unbroadcast(B, -g * 2 * (x - y), y.shape)),
      ("dx = g * 2 * (x - y)", "dy = -g * 2 * (x - y)"), same_dtype=True, broadcasts=True, quiet=True)
# maximum/minimum: x gets g where it wins or ties, y everywhere else (also where a NaN makes the test false); the
# other side gets an exact 0, even where g is NaN or inf (a select, as TF's rule)
defop("maximum", np.maximum,
      (lambda B, g, out, x, y: unbroadcast(B, select(B, x >= y, g), x.shape),
       lambda B, g, out, x, y: unbroadcast(B, select(B, ~(x >= y), g), y.shape)),
      ("dx = g * [x >= y]", "dy = g * [not x >= y]"), same_dtype=True, broadcasts=True)
defop("minimum", np.minimum,
      (lambda B, g, out, x, y: unbroadcast(B, select(B, x <= y, g), x.shape),
       lambda B, g, out, x, y: unbroadcast(B, select(B, ~(x <= y), g), y.shape)),
      ("dx = g * [x <= y]", "dy = g * [not x <= y]"), same_dtype=True, broadcasts=True)
# xlogy: x * log(y), and exactly 0 where x is 0 (whatever y is); so are both parts of its gradient there (TF's rule)
defop("xlogy", lambda x, y: np.where(x == 0, 0, x * np.log(y)),
      (lambda B, g, out, x, y: unbroadcast(B, select(B, x != 0, g * B.log(y)), x.shape),
       lambda B, g, out, x, y: unbroadcast(B, select(B, x != 0, g * x / y), y.shape)),
      ("dx = g * log(y)   (0 where x = 0)", "dy = g * x / y   (0 where x = 0)"), same_dtype=True, float_only=True,
      broadcasts=True)
defop("atan2", np.arctan2,  # atan2(y, x): the angle of the point (x, y)
      (lambda B, g, out, y, x: unbroadcast(B, g * x / (x * x + y * y), y.shape),
       lambda B, g, out, y, x: unbroadcast(B, -g * y / (x * x + y * y), x.shape)),
      ("dy = g * x / (x^2 + y^2)", "dx = -g * y / (x^2 + y^2)"), same_dtype=True, float_only=True, broadcasts=True)
defop("where", lambda cond, x, y: np.where(cond, x, y), (None, where_dx, where_dy),
      ("dcond = None (a bool mask has no gradient)", "dx = g where cond else 0", "dy = g where not cond else 0"),
      broadcasts=True)
# comparisons and logic (no gradient)
for _name, _fn in [("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
                   ("less_equal", np.less_equal), ("greater", np.greater), ("greater_equal", np.greater_equal),
                   ("logical_and", np.logical_and), ("logical_or", np.logical_or),
                   ("logical_xor", np.logical_xor)]:
    defop(_name, _fn, same_dtype=True)


# --- reductions and scans --------------------------------------------------------------------------------------
defop("reduce_sum", reduce_sum,
      (lambda B, g, out, x, axis, keepdims: to_full(B, g, x, axis),), ("dx = broadcast(g)",), reads=())
defop("reduce_mean", reduce_mean,
      (lambda B, g, out, x, axis, keepdims: to_full(B, g / n_reduced(x.shape, axis), x, axis),),
      ("dx = broadcast(g) / n",), reads=())
defop("reduce_prod", lambda x, axis=None, keepdims=False: np.multiply.reduce(x, axis=axis, keepdims=keepdims,
                                                                              dtype=x.dtype),
      (prod_vjp,), ("dx = broadcast(g) * (the product of the other elements)",), quiet=True)
defop("reduce_max", lambda x, axis=None, keepdims=False: max_over(x, axis, keepdims),
      (lambda B, g, out, x, axis, keepdims: extreme_vjp(B, g, out, x, axis),),
      ("dx = g shared among the maxima",))
defop("reduce_min", lambda x, axis=None, keepdims=False: min_over(x, axis, keepdims),
      (lambda B, g, out, x, axis, keepdims: extreme_vjp(B, g, out, x, axis),),
      ("dx = g shared among the minima",))
defop("reduce_logsumexp", reduce_logsumexp,
      (lambda B, g, out, x, axis, keepdims: to_full(B, g, x, axis) * B.exp(x - to_full(B, out, x, axis)),),
      ("dx = broadcast(g) * exp(x - out)   (softmax(x))",), float_only=True)
defop("reduce_any", lambda x, axis=None, keepdims=False: np.logical_or.reduce(x, axis=axis, keepdims=keepdims))
defop("reduce_all", lambda x, axis=None, keepdims=False: np.logical_and.reduce(x, axis=axis, keepdims=keepdims))
# where the extremes are, and the sorting order (no gradient). argmax / argmin skip NaN (TF compares, and a
# comparison with NaN is false); numpy would point at the NaN
defop("argmax", lambda x, axis, output_type: np.argmax(
    np.where(np.isnan(x), -np.inf, x) if x.dtype.kind == "f" else x, axis=axis).astype(output_type))
defop("argmin", lambda x, axis, output_type: np.argmin(
    np.where(np.isnan(x), np.inf, x) if x.dtype.kind == "f" else x, axis=axis).astype(output_type))
defop("argsort", lambda x, axis, descending: sort_indices(x, axis, descending).astype(np.int32))
defop("cumsum", lambda x, axis, exclusive, reverse: cumulative(np.add, x, axis, exclusive, reverse),
      (lambda B, g, out, x, axis, exclusive, reverse:
       B.cumsum(g, axis=axis, exclusive=exclusive, reverse=not reverse),),
      ("dx = cumsum(g) in the other direction",), quiet=True)
defop("cumprod", lambda x, axis, exclusive, reverse: cumulative(np.multiply, x, axis, exclusive, reverse),
      (cumprod_vjp,), ("dx = cumsum(g * out) in the other direction / x   (0 where x = 0, as TF)",), quiet=True)


# --- neural-network ops (numerically stable forms) -------------------------------------------------------------
defop("softmax", softmax,
      (lambda B, g, out, x, axis: out * (g - B.reduce_sum(g * out, axis=(axis,), keepdims=True)),),
      ("dx = out * (g - sum(g * out))",), float_only=True, reads=("out",))
defop("log_softmax", log_softmax,
      (lambda B, g, out, x, axis: g - B.exp(out) * B.reduce_sum(g, axis=(axis,), keepdims=True),),
      ("dx = g - softmax(x) * sum(g)",), float_only=True, reads=("out",))
defop("sparse_softmax_cross_entropy_with_logits", sparse_xent,
      (None, sparse_xent_vjp),
      ("dlabels = None (class ids have no gradient)", "dlogits = g * (softmax(logits) - one_hot(labels))"),
      saves=True)
# softmax(logits) - one_hot(labels), what the cross-entropy saves: the op its recorded rule runs (higher order, traced)
defop("sparse_xent_residual", lambda labels, logits: sparse_xent(labels, logits)[1],
      (None, sparse_xent_residual_vjp),
      ("dlabels = None (class ids have no gradient)", "dlogits = p * (g - sum(g * p)),  p = softmax(logits)"),
      residual_of="sparse_softmax_cross_entropy_with_logits")


# --- shapes, picking, joining ----------------------------------------------------------------------------------
defop("transpose", lambda x, perm: x.transpose(perm),
      (lambda B, g, out, x, perm: B.transpose(g, perm=tuple(np.argsort(perm))),), ("dx = transpose(g, inverse perm)",),
      reads=())
defop("reshape", lambda x, shape: x.reshape(shape),
      (lambda B, g, out, x, shape: B.reshape(g, shape=tuple(x.shape)),), ("dx = reshape(g, x.shape)",), reads=())
defop("broadcast_to", broadcast_to,
      (lambda B, g, out, x, shape: unbroadcast(B, g, x.shape),), ("dx = sum of g over the broadcast axes",), reads=())
defop("concat", concat, Each(concat_vjp), EachFormula("dx{i} = g[the slice that x{i} filled]"),
      same_dtype=True)
defop("pad", pad, (pad_vjp,), ("dx = g without the padding (mirrored copies added back)",))
defop("getitem", lambda x, key: x[key],
      (lambda B, g, out, x, key: B.scatter(g, key=key, shape=tuple(x.shape)),), ("dx = zeros, with g added at [key]",),
      reads=())
defop("scatter", scatter, (lambda B, g, out, x, key, shape: B.getitem(g, key=key),), ("dx = g[key]",))
defop("gather", gather,
      (lambda B, g, out, params, indices, axis: B.unsorted_segment_sum(g, indices, num_segments=params.shape[axis],
                                                                       axis=axis), None),
      ("dparams = zeros, with g added at the picked indices", "dindices = None (indices have no gradient)"))
defop("unsorted_segment_sum", segment_sum,
      (lambda B, g, out, data, ids, num_segments, axis: B.gather(g, ids, axis=axis), None),
      ("ddata = g at each slice's segment (gather)", "dids = None (ids have no gradient)"))
defop("one_hot", one_hot)


# --- linear algebra (tf.linalg) --------------------------------------------------------------------------------
defop("matmul", np.matmul,
      (lambda B, g, out, x, y: unbroadcast(B, g @ swap_last(B, y), x.shape),
       lambda B, g, out, x, y: unbroadcast(B, swap_last(B, x) @ g, y.shape)),
      ("dx = g @ y.T", "dy = x.T @ g"), same_dtype=True, reads=(0, 1))
defop("einsum", einsum, Each(einsum_vjp), EachFormula("dx{i} = einsum(g, the other inputs) into x{i}'s subscripts"),
      same_dtype=True)
defop("inv", inv, (lambda B, g, out, x: -(swap_last(B, out) @ g @ swap_last(B, out)),),
      ("dx = -inv(x).T @ g @ inv(x).T",), float_only=True)
defop("det", np.linalg.det,
      (lambda B, g, out, x: B.reshape(g * out, shape=tuple(g.shape) + (1, 1)) * swap_last(B, B.inv(x)),),
      ("dx = g * det(x) * inv(x).T",), float_only=True)
defop("solve", solve,
      (lambda B, g, out, a, b, adjoint: -(B.solve(a, g, adjoint=not adjoint) @ swap_last(B, out)) if not adjoint
       else -(out @ swap_last(B, B.solve(a, g, adjoint=not adjoint))),
       lambda B, g, out, a, b, adjoint: B.solve(a, g, adjoint=not adjoint)),
      ("da = -solve(a.T, g) @ out.T", "db = solve(a.T, g)"), same_dtype=True, float_only=True)
# svd: one op per part (s, u or v: tl.linalg.svd runs the parts it returns); each rule is TF's _SvdGrad with the
# other parts' gradients 0, so the three entries of one decomposition add up to TF's gradient
defop("svd", svd, (svd_vjp,),
      ("dx = u diag(gs) v.T + u (F * (u.T gu - gu.T u)) S v.T + u S (F * (v.T gv - gv.T v)) v.T + (m < n: u S^-1 "
       "gv.T (1 - v v.T)),  F[i, j] = 1 / (s_j^2 - s_i^2)",), float_only=True)
defop("diag", diag, (lambda B, g, out, v: B.diag_part(g),), ("dv = diag_part(g)",))
defop("diag_part", lambda x: np.diagonal(x, axis1=-2, axis2=-1).copy(), (diag_part_vjp,),
      ("dx = zeros, with g on the diagonal",))


# --- convolution and pooling: the rules are each other's transposes, so second derivatives stay in the table ---
defop("conv2d", conv2d,
      (lambda B, g, out, x, kernel, strides, padding:
       B.conv2d_input_grad(g, kernel, input_shape=tuple(x.shape), strides=strides, padding=padding),
       lambda B, g, out, x, kernel, strides, padding:
       B.conv2d_filter_grad(x, g, kernel_shape=tuple(kernel.shape), strides=strides, padding=padding)),
      ("dx = g @ kernel.T, sent back to the window of x each output pixel read (overlaps add up)",
       "dkernel = sum over output positions of (the window of x there) * g"), same_dtype=True)
defop("conv2d_input_grad", conv2d_input_grad,
      (lambda B, g, out, gy, kernel, input_shape, strides, padding:
       B.conv2d(g, kernel, strides=strides, padding=padding),
       lambda B, g, out, gy, kernel, input_shape, strides, padding:
       B.conv2d_filter_grad(g, gy, kernel_shape=tuple(kernel.shape), strides=strides, padding=padding)),
      ("dgy = conv2d(g, kernel)", "dkernel = sum over positions of (window of g) * gy"), same_dtype=True)
defop("conv2d_filter_grad", conv2d_filter_grad,
      (lambda B, g, out, x, gy, kernel_shape, strides, padding:
       B.conv2d_input_grad(gy, g, input_shape=tuple(x.shape), strides=strides, padding=padding),
       lambda B, g, out, x, gy, kernel_shape, strides, padding: B.conv2d(x, g, strides=strides, padding=padding)),
      ("dx = gy @ g.T sent back to each window", "dgy = conv2d(x, g)"), same_dtype=True)
defop("max_pool2d", max_pool2d, (max_pool2d_vjp,), ("dx = g at each window's maximum, 0 elsewhere",), saves=True)
# where each window's maximum is, as an op: what a recorded rule computes (a traced graph's residual would be fixed)
defop("max_pool2d_argmax", lambda x, ksize, strides, padding: max_pool2d(x, ksize, strides, padding)[1])
defop("avg_pool2d", avg_pool2d,
      (lambda B, g, out, x, ksize, strides, padding:
       B.avg_pool2d_grad(g, input_shape=tuple(x.shape), ksize=ksize, strides=strides, padding=padding),),
      ("dx = g / (the entries the window averaged), shared by each of them",), float_only=True)
defop("avg_pool2d_grad", avg_pool2d_grad,
      (lambda B, g, out, gy, input_shape, ksize, strides, padding:
       B.avg_pool2d(g, ksize=ksize, strides=strides, padding=padding),),
      ("dgy = avg_pool2d(g)",), float_only=True)


# --- effects ---------------------------------------------------------------------------------------------------
defop("print", print_inputs)  # tf.print: an op, so a traced function prints on every call
