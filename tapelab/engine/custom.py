"""``tl.custom_gradient``: write your own op: a forward computation and the rule that sends gradients back.

    @tl.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tl.clip_by_norm(dy, 0.5)
        return y, backward

The tape records one entry per call, named after the function, whose gradient rule is the function's
``grad_fn`` (its formula reads ``dy = backward(g)``); what ``f`` computes inside is not recorded.
"""

import functools
import inspect

from tapelab.engine import nest
from tapelab.engine.primitives import Op
from tapelab.engine.recording import Recorder, record
from tapelab.engine.recording import state as _state
from tapelab.engine.tensor import Tensor, Variable, convert_to_tensor, to_numpy


def custom_gradient(f=None):
    """Decorate ``f(*x) -> (y, grad_fn)``: ``y`` is the result (one tensor) and ``grad_fn(dy)`` returns the
    gradient for each input of ``f`` (one tensor, or a list with one entry per input; ``None`` for none).

    If ``f`` reads trainable tl.Variables, ``grad_fn`` must accept ``variables=`` (the list of them) and
    return ``(input_gradients, variable_gradients)``, as in TF.
    """
    if f is None:
        return custom_gradient
    return _CustomGradientFunction(f)


class _CustomGradientFunction:
    """``f`` decorated with :func:`custom_gradient`. On a class it binds ``self`` first (as TF's ``Bind`` does), so
    ``self`` is no input of the op."""

    def __init__(self, f):
        functools.update_wrapper(self, f)
        self._f = f

    def __get__(self, obj, objtype=None):
        if obj is None or not hasattr(self._f, "__get__"):
            return self
        return _CustomGradientFunction(self._f.__get__(obj, objtype))

    def __call__(self, *args, **kwargs):
        f = self._f
        xs = tuple(convert_to_tensor(a) for a in args)
        forward = _CustomForward(f, kwargs, len(xs))
        op = Op(f.__name__, forward, saves=True)
        value, residual = forward.on(xs)  # f sees the tensors themselves: grad_fn may use them (higher order)
        inputs = xs + tuple(residual.variables)
        op.vjps = tuple(functools.partial(_custom_vjp, i) for i in range(len(inputs)))
        op.formulas = _formulas(f, residual.grad_fn, len(xs), residual.variables)
        out = Tensor(value)
        # one entry on each tape (and in a graph being traced, replayed with f): f already ran, unrecorded
        record(op, inputs, tuple(t._value for t in inputs), out, {}, residual)
        return out


class _CustomForward:
    """The op's forward: run ``f`` with nothing recorded, noting the Variables it reads."""

    def __init__(self, f, kwargs, n_inputs):
        self.f, self.kwargs, self.n_inputs = f, kwargs, n_inputs

    def __call__(self, *values):  # a traced graph runs the op again on new values
        return self.on([Tensor(v) for v in values[:self.n_inputs]])

    def on(self, xs):
        watcher = _VariableWatcher(xs)
        saved, _state.recorders[:] = _state.recorders[:], [watcher]
        try:
            result = self.f(*xs, **self.kwargs)
        finally:
            _state.recorders[:] = saved
        if not (isinstance(result, (tuple, list)) and len(result) == 2 and callable(result[1])):
            raise TypeError(f"custom_gradient: {self.f.__name__} must return (y, grad_fn): the result and the "
                            f"function that turns the gradient of y into the gradients of the inputs; got {result!r}")
        y, grad_fn = result
        if not isinstance(y, Tensor) and len(nest.flatten(y)) != 1:
            raise NotImplementedError(f"custom_gradient: {self.f.__name__} returns {len(nest.flatten(y))} results; "
                                      "tapelab's custom ops have one output tensor. Return one tensor (tl.stack "
                                      "several).")
        y = convert_to_tensor(nest.flatten(y)[0])
        if watcher.variables and "variables" not in inspect.signature(grad_fn).parameters:
            raise TypeError(f"custom_gradient: {self.f.__name__} reads the tl.Variable(s) "
                            f"{', '.join(v.name for v in watcher.variables)}, so its grad_fn must accept a keyword "
                            "argument 'variables' and return (input gradients, variable gradients).")
        return to_numpy(y), _CustomGradient(self.f.__name__, grad_fn, watcher.variables, self.n_inputs)


class _VariableWatcher(Recorder):
    """Sits on the recorder stack while ``f`` runs: notes the trainable Variables its ops read, records nothing."""

    def __init__(self, arguments):
        self.variables = []
        self.arguments = arguments  # (a Variable passed as an argument is an input already)

    def _record(self, op, inputs, values, out, params, residual):
        for t in inputs:
            if (isinstance(t, Variable) and t.trainable and all(t is not v for v in self.variables)
                    and all(t is not a for a in self.arguments)):
                self.variables.append(t)


class _CustomGradient:
    """What one call's rules share: the user's ``grad_fn``, called once per upstream gradient."""

    def __init__(self, name, grad_fn, variables, n_inputs):
        self.name, self.grad_fn, self.variables, self.n_inputs = name, grad_fn, variables, n_inputs
        self._last = None  # (upstream, gradients): every input's rule asks for the same call

    def gradients(self, g, inputs):
        if self._last is not None and self._last[0] is g:
            return self._last[1]
        numpy = not isinstance(g, Tensor)  # an ordinary backward pass works on arrays; grad_fn on tensors
        upstream = Tensor(g) if numpy else g
        if self.variables:
            grads, var_grads = self.grad_fn(upstream, variables=list(self.variables))
            grads = _as_list(grads) + _as_list(var_grads)
        else:
            grads = _as_list(self.grad_fn(upstream))
        if len(grads) != len(inputs):
            raise ValueError(f"custom_gradient: {self.name}'s grad_fn returned {len(grads)} gradient(s) for "
                             f"{len(inputs)} input(s); return one per input (None where no gradient flows).")
        out = []
        for i, (grad, x) in enumerate(zip(grads, inputs)):
            if grad is not None:
                grad = convert_to_tensor(grad, dtype=x.dtype) if not isinstance(grad, Tensor) else grad
                if tuple(grad.shape) != tuple(x.shape):
                    raise ValueError(f"custom_gradient: {self.name}'s grad_fn returned shape {tuple(grad.shape)} for "
                                     f"input {i} of shape {tuple(x.shape)}; a gradient has its input's shape.")
                grad = to_numpy(grad) if numpy else grad
            out.append(grad)
        self._last = (g, out)
        return out


def _as_list(grads):
    return list(grads) if isinstance(grads, (list, tuple)) else [grads]


def _custom_vjp(i, B, g, out, *inputs, residual):
    return residual.gradients(g, inputs)[i]


def _formulas(f, grad_fn, n_inputs, variables):
    # "dy = backward(g)" in the names of f's parameters; "[i]" picks an input's part of grad_fn's list
    try:
        params = [p for p in inspect.signature(f).parameters if p != "self"]
    except (TypeError, ValueError):
        params = []
    names = [params[i] if i < len(params) and params[i].isidentifier() else f"x{i}" for i in range(n_inputs)]
    names += [f"var{j}" for j in range(len(variables))]
    call = f"{getattr(grad_fn, '__name__', 'grad_fn')}(g)"
    single = len(names) == 1
    return tuple(f"d{name} = {call}" if single else f"d{name} = {call}[{i}]" for i, name in enumerate(names))
