"""What an op of the table is (:class:`Op`), how one is added (:func:`defop`), and the two backends its VJP rules
compute with: ``NUMPY`` (each op's numpy forward) and, built by :func:`on_tensors`, the same ops run on tensors."""

import functools
from types import SimpleNamespace

import numpy as np

from tapelab.engine.tensor import Tensor, convert_to_tensor


class Spec:
    """What a rule sees of an array the tape did not keep (see ``reads``): its shape and dtype."""

    __slots__ = ("shape", "dtype")

    def __init__(self, array):
        self.shape, self.dtype = array.shape, array.dtype

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"<Spec {self.shape} {self.dtype}>"


class Op:
    """One primitive. ``vjps[i]`` is the rule for input ``i`` (``None``: no gradient flows there)."""

    __slots__ = ("name", "forward", "vjps", "formulas", "same_dtype", "float_only", "saves", "broadcasts", "reads",
                 "unread", "reads_out", "residual_of")

    def __init__(self, name, forward, vjps=None, formulas=(), same_dtype=False, float_only=False, saves=False,
                 broadcasts=False, reads=None, residual_of=None):
        self.name = name
        self.forward = forward
        self.vjps = vjps  # None: the whole op is not differentiable (never recorded)
        self.formulas = formulas
        self.same_dtype = same_dtype
        self.float_only = float_only
        self.saves = saves  # the forward returns (output, residual); the rules get residual=
        # elementwise with broadcasting. Only the stepper's text reads it (to say a gradient was summed back to an
        # input's shape); the summing itself is each rule's own unbroadcast()
        self.broadcasts = broadcasts
        # which arrays the rules read: input positions and "out" (None: all of them). A tape keeps only those (and
        # the inputs it did not compute); of the rest the rules see shape and dtype, and pictures recompute them
        self.reads = reads
        self.unread = () if reads is None else tuple(i for i in range(len(vjps)) if i not in reads)  # (positions)
        self.reads_out = reads is None or "out" in reads
        # the name of the op whose saved residual this op computes, from the same inputs (a traced rule's op: a plan
        # takes the residual the forward saved instead of running this one)
        self.residual_of = residual_of

    @property
    def differentiable(self):
        return self.vjps is not None

    def __repr__(self):
        return f"<op {self.name}>"


class Each:
    """The same rule for every input of a variadic op (concat): ``rules[i]`` binds ``i``."""

    def __init__(self, rule):
        self.rule = rule

    def __getitem__(self, i):
        return functools.partial(self.rule, i)


class EachFormula:
    """The same formula for every input of a variadic op: ``formulas[i]`` fills in ``i``."""

    def __init__(self, text):
        self.text = text

    def __getitem__(self, i):
        return self.text.format(i=i)


OPS = {}
# The numpy backend of the VJP rules: each op's own forward (defop adds it), plus two helpers
NUMPY = SimpleNamespace(zeros_like=np.zeros_like, ones_like=np.ones_like)
# numpy warns where TF computes quietly (log(0) is -inf, 0/0 is NaN, exp(100.) overflows to inf)
QUIET = np.errstate(divide="ignore", invalid="ignore", over="ignore")


def defop(name, forward, vjps=None, formulas=(), quiet=False, **flags):
    """Add an op to the table. ``quiet``: its numpy forward may warn on inf, NaN or 0 (silenced, as in TF);
    ops of floats (``float_only``) are quiet anyway."""
    if quiet or flags.get("float_only"):
        forward = QUIET(forward)
    OPS[name] = Op(name, forward, vjps, formulas, **flags)
    setattr(NUMPY, name, forward)


def unbroadcast(B, g, shape):
    """Sum ``g`` over the axes that broadcasting added or stretched, so it has ``shape`` again."""
    if g.shape == shape:
        return g
    lead = len(g.shape) - len(shape)
    if g.shape[lead:] == shape:  # only leading axes were added (a bias over a batch): one sum, no reshape
        return B.reduce_sum(g, axis=tuple(range(lead)), keepdims=False)
    stretched = tuple(lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    return B.reshape(B.reduce_sum(g, axis=tuple(range(lead)) + stretched, keepdims=True), shape=tuple(shape))


def on_tensors(run):
    """The tensor backend of the VJP rules: every op of the table run on tensors through ``run`` (so the tape
    that is recording sees it: a backward pass differentiated by an outer tape), plus the same two helpers."""

    def primitive(op):
        def call(*inputs, **params):
            return run(op, inputs, **params)

        call.__name__ = op.name
        return call

    def zeros_like(x):
        x = convert_to_tensor(x)._value
        return Tensor(np.zeros(x.shape, x.dtype))

    def ones_like(x):
        x = convert_to_tensor(x)._value
        return Tensor(np.ones(x.shape, x.dtype))

    return SimpleNamespace(**{name: primitive(op) for name, op in OPS.items()}, zeros_like=zeros_like,
                           ones_like=ones_like)
