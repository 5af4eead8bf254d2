"""TensorFlow's random streams on numpy, so ``tl.random.set_seed(22); tl.random.normal([3])`` draws what TF draws.

TF's stateful random ops (``RandomUniform``, ``RandomStandardNormal``, ``TruncatedNormal``, ``RandomUniformInt``)
run the counter-based generator Philox4x32-10: a 64-bit key and a 128-bit counter go through ten rounds of

    hi0, lo0 = M0 * c0;  hi1, lo1 = M1 * c2           (32 x 32 -> 64-bit products)
    c = [hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0];  k += (W0, W1)

and give four 32-bit words per counter value. An op's two seeds (see :func:`op_seeds`) are the key (``seed``)
and the counter's upper half (``seed2``); each call of an op with the same seeds goes on ``256 * n`` counter
values further (TF's eager kernel keeps its place, ``ReserveRandomOutputs``). The words become numbers as TF's
distributions make them:

    uniform float32   the word's low 23 bits as the mantissa of a float in [1, 2), minus 1
    uniform float64   two words, 52 bits, the same way
    integers          minval + word % (maxval - minval)          (int64: two words, low first)
    normal            Box-Muller on two uniforms u1, u2: sqrt(-2 log u1) * (sin, cos)(2 pi u2)
    truncated normal  normal pairs, each kept if |x| < 2; every group of outputs starts 256 counter values on

Uniform draws and integers are bit-exact with TF 2.21 on CPU; the normal ones agree to float32 rounding (TF's
log, sin and cos are Eigen's vectorised ones, 1-2 units in the last place from numpy's).
"""

import random as _pyrandom

import numpy as np

MAXINT32 = 2**31 - 1
DEFAULT_GRAPH_SEED = 87654321  # TF's seed for an op given a seed when no global seed is set
_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_LOW = np.uint64(0xFFFFFFFF)
_RESERVED = 256  # counter values TF reserves per output of one op call (so the next call starts past them)


class Streams:
    """The state TF keeps for random ops: the global seed, the generator of op seeds it starts (Python's
    ``random.Random(global_seed)``, as TF's eager context draws them), and how far each op's kernel has gone."""

    def __init__(self):
        self.set_global_seed(None)

    def set_global_seed(self, seed):
        self.global_seed = None if seed is None else int(seed)
        self._op_seeds = None if seed is None else _pyrandom.Random(int(seed))
        self._used = {}  # (op, dtype, seed, seed2) -> counter values used so far (TF's cached kernels)

    def op_seeds(self, op_seed=None):
        """TF's ``random_seed.get_seed``: ``(seed, seed2)`` for an op, or None when neither seed is set."""
        if self.global_seed is not None:
            if op_seed is None:
                op_seed = self._op_seeds.randint(0, MAXINT32)
            seeds = (self.global_seed % MAXINT32, int(op_seed) % MAXINT32)
        elif op_seed is not None:
            seeds = (DEFAULT_GRAPH_SEED, int(op_seed) % MAXINT32)
        else:
            return None
        return (0, MAXINT32) if seeds == (0, 0) else seeds

    def seeds(self, op_seed=None):
        """An op's ``(seed, seed2)`` (:meth:`op_seeds`); without any seed set, fresh random ones."""
        seeds = self.op_seeds(op_seed)
        return seeds if seeds is not None else tuple(int(s) for s in np.random.default_rng().integers(1, MAXINT32, 2))

    def skip(self, op, dtype, seeds, outputs):
        """Where the kernel of ``op`` with these seeds stands, in counter values, for a call making ``outputs``
        values (it then moves on past them, as TF reserves them)."""
        kernel = (op, np.dtype(dtype).name, *seeds)
        skip = self._used.get(kernel, 0)
        self._used[kernel] = skip + _RESERVED * outputs
        return skip


def philox(seed, seed2, skip, n):
    """``n`` counter values from ``skip`` on, through Philox4x32-10: an (n, 4) uint32 array."""
    return philox_at(seed, seed2, np.arange(skip, skip + n, dtype=np.uint64))


class Words:
    """TF's ``SingleSampleAdapter<PhiloxRandom>(seed, seed2)``: Philox's 32-bit words one at a time, in order (what
    ``Dataset.shuffle`` draws its picks and its seeds from)."""

    def __init__(self, seed, seed2):
        self.seed, self.seed2 = seed, seed2
        self._block, self._next, self._counter = (), 0, 0

    def __call__(self):
        if self._next == len(self._block):
            self._block = philox(self.seed, self.seed2, self._counter, 256).reshape(-1).tolist()  # (1024 at a time)
            self._counter += 256
            self._next = 0
        self._next += 1
        return self._block[self._next - 1]

    def copy(self):
        twin = Words(self.seed, self.seed2)
        twin._block, twin._next, twin._counter = self._block, self._next, self._counter
        return twin


def _float32(words):
    return ((words & np.uint32(0x7FFFFF)) | np.uint32(127 << 23)).view(np.float32) - np.float32(1.0)


def _float64(high, low):
    bits = ((high.astype(np.uint64) << np.uint64(32)) | low.astype(np.uint64)) & np.uint64((1 << 52) - 1)
    return (bits | np.uint64(1023 << 52)).view(np.float64) - 1.0


def _float16(words):
    return ((words & np.uint32(0x3FF)).astype(np.uint16) | np.uint16(15 << 10)).view(np.float16) - np.float16(1.0)


def uniform(seed, seed2, skip, size, dtype):
    """TF's ``RandomUniform``: ``size`` floats in [0, 1) of ``dtype`` (float16, float32, float64)."""
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        words = philox(seed, seed2, skip, (size + 1) // 2).reshape(-1)
        return _float64(words[0::2], words[1::2])[:size]
    words = philox(seed, seed2, skip, (size + 3) // 4).reshape(-1)[:size]
    return _float16(words) if dtype == np.float16 else _float32(words)


def integers(seed, seed2, skip, size, low, high, dtype):
    """TF's ``RandomUniformInt``: ``size`` integers in [low, high) of ``dtype`` (int32 or int64)."""
    span = int(high) - int(low)
    if np.dtype(dtype) == np.int64:
        words = philox(seed, seed2, skip, (size + 1) // 2).reshape(-1)
        bits = words[0::2].astype(np.uint64) | (words[1::2].astype(np.uint64) << np.uint64(32))
        return (np.int64(low) + (bits % np.uint64(span)).astype(np.int64))[:size]
    words = philox(seed, seed2, skip, (size + 3) // 4).reshape(-1)[:size]
    return (np.int64(low) + (words % np.uint32(span)).astype(np.int64)).astype(np.int32)


def _box_muller(u1, u2):
    """Pairs of normal samples from pairs of uniforms (TF's ``BoxMuller``: u1 kept above 1e-7)."""
    u1 = np.maximum(u1, u1.dtype.type(1e-7))
    radius = np.sqrt(u1.dtype.type(-2.0) * np.log(u1))
    angle = u1.dtype.type(2 * np.pi) * u2
    return np.sin(angle) * radius, np.cos(angle) * radius


def _normal_pairs(words, dtype):
    """Normal pairs from rows of words: float32 takes two words per pair, float64 four."""
    if np.dtype(dtype) == np.float64:
        return _box_muller(_float64(words[..., 0::4], words[..., 1::4]), _float64(words[..., 2::4], words[..., 3::4]))
    return _box_muller(_float32(words[..., 0::2]), _float32(words[..., 1::2]))


def normal(seed, seed2, skip, size, dtype):
    """TF's ``RandomStandardNormal``: ``size`` samples of N(0, 1) of ``dtype`` (float32 or float64)."""
    per_value = 2 if np.dtype(dtype) == np.float64 else 1  # words per output
    words = philox(seed, seed2, skip, (size * per_value + 3) // 4).reshape(-1)
    first, second = _normal_pairs(words, dtype)
    out = np.empty(first.size + second.size, np.dtype(dtype))
    out[0::2], out[1::2] = first, second
    return out[:size]


def truncated_normal(seed, seed2, skip, size, dtype):
    """TF's ``TruncatedNormal``: N(0, 1) samples redrawn outside (-2, 2). Outputs come in groups (4 of float32, 2 of
    float64); each group's words start ``256 * group`` (float64: ``128 * group``) counter values on, and it keeps
    the first normal samples, in order, whose size is under 2."""
    group = 2 if np.dtype(dtype) == np.float64 else 4
    groups = (size + group - 1) // group
    stride = group * _RESERVED // 4
    take = 16  # counter values read per group at first: 32 float32 candidates for 4 places (enough but ~never)
    while True:
        rows = _strided_words(seed, seed2, skip, groups, stride, take)
        first, second = _normal_pairs(rows, dtype)
        candidates = np.stack([first, second], axis=-1).reshape(groups, -1)  # in the order TF tries them
        kept = np.abs(candidates) < 2
        if kept.sum(axis=1).min() >= group:
            break
        take *= 2
    order = np.argsort(~kept, axis=1, kind="stable")[:, :group]  # each group's first `group` kept samples
    return np.take_along_axis(candidates, order, axis=1).reshape(-1)[:size].astype(np.dtype(dtype))


def _strided_words(seed, seed2, skip, groups, stride, take):
    """The first ``take`` counter values of each of ``groups`` groups ``stride`` apart, as rows of words."""
    starts = skip + stride * np.arange(groups, dtype=np.uint64)
    low = (starts[:, None] + np.arange(take, dtype=np.uint64)[None, :]).reshape(-1)
    words = philox_at(seed, seed2, low)
    return words.reshape(groups, -1)


def stateless_seeds(seed):
    """TF's stateless ops' ``(key, counter's upper half)`` from a seed pair ``[a, b]``: one Philox round-trip of the
    pair (as counter) under a fixed key scrambles it, so either half of the seed may be weak."""
    a, b = (int(v) % 2**64 for v in seed)
    low = np.array([a], np.uint64)
    key = (0x02461E29 << 32) | 0x3EC8F720
    mix = philox_at(key, b, low)[0].tolist()
    return mix[0] | mix[1] << 32, mix[2] | mix[3] << 32


def philox_at(seed, seed2, low):
    """Philox4x32-10 at the given counter values (their lower 64 bits, uint64; the upper half is ``seed2``): an
    (n, 4) uint32 array."""
    c0, c1 = low & _LOW, low >> np.uint64(32)
    c2 = np.full(low.size, seed2 & 0xFFFFFFFF, np.uint64)
    c3 = np.full(low.size, (seed2 >> 32) & 0xFFFFFFFF, np.uint64)
    k0, k1 = seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF
    for _ in range(10):
        p0, p1 = _M0 * c0, _M1 * c2
        c0, c1, c2, c3 = (p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0), p1 & _LOW, \
            (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1), p0 & _LOW
        k0, k1 = (k0 + _W0) & 0xFFFFFFFF, (k1 + _W1) & 0xFFFFFFFF
    return np.stack([c0, c1, c2, c3], axis=1).astype(np.uint32)
