"""A slice of a Variable assigns back into it, as TF's strided_slice_assign: ``v[1, 2].assign(9)``.

TF's numbers and error kinds are the ``slice_*`` cases of ``fixtures/tf_contract.json``; these tests check what the
contract cannot: the messages, that the slice is an ordinary tensor otherwise, and that tapes and ``tl.function`` see
the ordinary assign of the Variable."""

import gc

import numpy as np
import pytest

import tapelab as tl
from tapelab.engine import tensor as engine_tensor


def grid():
    return tl.Variable(np.arange(12, dtype=np.float32).reshape(3, 4), name="X")


def test_assign_writes_the_slice_and_returns_the_variable():
    v = grid()
    out = v[1, 2].assign(9)
    assert out is v
    expected = np.arange(12, dtype=np.float32).reshape(3, 4)
    expected[1, 2] = 9
    np.testing.assert_array_equal(v.numpy(), expected)
    v[:, 0].assign([7, 8, 9])
    v[1:3, ::2].assign(-1.0)  # a scalar fills the slice
    expected[:, 0] = [7, 8, 9]
    expected[1:3, ::2] = -1
    np.testing.assert_array_equal(v.numpy(), expected)


def test_the_slice_is_an_ordinary_tensor():
    v = grid()
    s = v[1]
    assert type(s) is tl.Tensor and not isinstance(s, tl.Variable)
    assert s.shape == (4,) and s.dtype == tl.float32
    np.testing.assert_array_equal((s * 2).numpy(), [8, 10, 12, 14])
    assert not hasattr(s, "assign_add") and not hasattr(s, "assign_sub")
    assert not hasattr(s[0], "assign")  # a slice of a slice: TF has no assign there either
    assert not hasattr(v[[0, 2]], "assign") and not hasattr(v[v > 3], "assign")  # picked by a list or a mask


def test_the_slice_is_forgotten_with_it():
    v = grid()
    before = len(engine_tensor._SLICES)
    s = v[0]
    assert len(engine_tensor._SLICES) == before + 1
    del s
    gc.collect()
    assert len(engine_tensor._SLICES) == before


def test_wrong_shape_names_the_slice_and_both_shapes():
    v = grid()
    with pytest.raises(tl.errors.InvalidArgumentError) as e:
        v[:, 0].assign([1, 2])
    message = str(e.value)
    assert "X[:, 0]" in message and "[2]" in message and "(3,)" in message and "(3, 4)" in message
    assert "broadcast" in message
    np.testing.assert_array_equal(v.numpy(), np.arange(12).reshape(3, 4))  # nothing written


def test_wrong_dtype_names_the_slice_the_dtypes_and_the_fix():
    v = grid()
    with pytest.raises(ValueError) as e:
        v[:, 0].assign(tl.constant([1, 2, 3]))
    message = str(e.value)
    assert "X[:, 0]" in message and "float32" in message and "int32" in message and "tl.cast(" in message
    ints = tl.Variable([1, 2, 3], name="n")
    with pytest.raises(TypeError, match=r"n\[0\].*int32"):
        ints[0].assign(2.5)
    flags = tl.Variable([True, False])
    with pytest.raises(TypeError, match=r"Variable\[1:\].*bool.*True / False"):
        flags[1:].assign(1)


def test_a_plain_tensor_says_what_can_be_assigned():
    with pytest.raises(AttributeError, match=r"no attribute 'assign'.*tl\.Variable.*v\[1, 2\]\.assign\(9\)"):
        tl.constant([1.0, 2.0])[0].assign(3.0)
    assert not hasattr(tl.constant([1.0]), "assign")


def test_index_text_in_messages():
    v = tl.Variable(np.zeros((2, 3, 4), np.float32), name="W")
    with pytest.raises(tl.errors.InvalidArgumentError, match=r"W\[\.\.\., 1:3:2, tl\.newaxis\]"):
        v[..., 1:3:2, None].assign(np.ones((5,)))


def test_gradient_of_a_slice_and_after_an_assign():
    w = tl.Variable([1.0, 2.0, 3.0])
    with tl.GradientTape() as tape:
        y = w[1] * 3.0
    np.testing.assert_array_equal(tape.gradient(y, w).numpy(), [0, 3, 0])
    with tl.GradientTape() as tape:
        w[1].assign(5.0)
        y = tl.reduce_sum(w * w)
    np.testing.assert_array_equal(tape.gradient(y, w).numpy(), [2, 10, 6])


def test_an_assign_on_a_tape_records_no_ops():
    w = tl.Variable([1.0, 2.0, 3.0])
    with tl.GradientTape() as tape:
        s = w[0]
        s.assign(4.0)
    assert [entry.op.name for entry in tape.entries] == ["getitem"]  # the read; the write is the Variable's assign
    np.testing.assert_array_equal(w.numpy(), [4, 2, 3])


def test_the_old_value_a_tape_recorded_is_kept():
    w = tl.Variable([1.0, 2.0, 3.0])
    with tl.GradientTape() as tape:
        y = w * w
        w[0].assign(10.0)
    np.testing.assert_array_equal(y.numpy(), [1, 4, 9])
    np.testing.assert_array_equal(tape.gradient(y, w).numpy(), [2, 4, 6])  # 2 w at the values it read


def test_in_a_function_each_call_writes_its_own_value():
    w = tl.Variable([1.0, 2.0, 3.0])

    @tl.function
    def f(x):
        w[0].assign(x)
        w[1:].assign(w[1:] * 2)
        return w[0] + 1

    assert float(f(tl.constant(10.0))) == 11.0
    np.testing.assert_array_equal(w.numpy(), [10, 4, 6])
    assert float(f(tl.constant(20.0))) == 21.0
    np.testing.assert_array_equal(w.numpy(), [20, 8, 12])
    assert f.trace_count == 1
    with tl.GradientTape():  # replayed through the op table while a tape records
        f(tl.constant(30.0))
    np.testing.assert_array_equal(w.numpy(), [30, 16, 24])


def test_in_a_function_int_and_bool_variables():
    counts = tl.Variable([0, 0, 0])
    flags = tl.Variable([False, False])

    @tl.function
    def step(i):
        counts[1:].assign(counts[1:] + i)
        flags[0].assign(True)
        return counts[2]

    step(tl.constant(2))
    step(tl.constant(3))
    np.testing.assert_array_equal(counts.numpy(), [0, 5, 5])
    np.testing.assert_array_equal(flags.numpy(), [True, False])
