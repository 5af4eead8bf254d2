"""Tensors and Variables: TF's dtype rules, printing, operators, numpy interop and teaching errors."""

import numpy as np
import pytest

import tapelab as tl


@pytest.mark.parametrize("value, dtype", [
    (1.5, "float32"), (3, "int32"), (True, "bool"), ([1, 2], "int32"), ([1, 2.5], "float32"),
    ([[1.0], [2.0]], "float32"), (np.zeros(2), "float64"), (np.zeros(2, np.int64), "int64"),
    (np.float32(1), "float32"), (2**40, "int64"),
])
def test_dtype_inference_follows_tf(value, dtype):
    assert tl.constant(value).dtype == getattr(tl, dtype)
    assert tl.convert_to_tensor(value).dtype.name == dtype


def test_dtypes_compare_with_names_and_numpy():
    assert tl.float32 == "float32" and tl.float32 == np.float32 and tl.as_dtype(np.dtype("int32")) is tl.int32
    assert repr(tl.float32) == "tapelab.float32" and tl.float32.is_floating and tl.int32.is_integer
    with pytest.raises(TypeError, match="not a dtype"):
        tl.as_dtype("datetime64")
    with pytest.raises(tl.UnsupportedError, match="complex numbers.*left to TensorFlow"):
        tl.as_dtype("complex64")


def test_str_and_repr_look_like_tf():
    assert str(tl.constant(3)) == "tapelab.Tensor(3, shape=(), dtype=int32)"
    assert repr(tl.constant(4.5)) == "<tapelab.Tensor: shape=(), dtype=float32, numpy=4.5>"
    assert str(tl.constant([[1, 2], [3, 4]])) == "tapelab.Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)"
    assert repr(tl.constant([[1, 2], [3, 4]])) == (
        "<tapelab.Tensor: shape=(2, 2), dtype=int32, numpy=\narray([[1, 2],\n       [3, 4]], dtype=int32)>")
    assert repr(tl.Variable(4.5, name="w")) == "<tapelab.Variable 'w:0' shape=() dtype=float32, numpy=4.5>"
    assert repr(tl.constant([1.0, 2.0])) == (
        "<tapelab.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>")


def test_python_scalars_take_the_tensor_dtype():
    t = tl.constant([1.0, 2.0])
    assert (t * 2).dtype == tl.float32 and (2 * t).dtype == tl.float32 and (t + 1).dtype == tl.float32
    i = tl.constant([1, 2])
    assert (i * 2).dtype == tl.int32
    with pytest.raises(TypeError, match="Cannot convert 2.5"):
        i * 2.5


def test_mixed_tensor_dtypes_raise_and_name_the_cast():
    with pytest.raises(tl.InvalidArgumentError, match=r"add: .*float32 and int32.*tl.cast\(x, tl.float32\)"):
        tl.constant(1.0) + tl.constant(1)


def test_numpy_interop_both_ways():
    t = tl.constant([1.0, 2.0])
    a = np.ones(2)
    assert isinstance(a + t, tl.Tensor) and (a + t).dtype == tl.float32  # the tensor decides, as in TF
    assert isinstance(t + a, tl.Tensor)
    np.testing.assert_array_equal(np.asarray(t), [1.0, 2.0])
    assert np.asarray(t).dtype == np.float32
    assert np.sum(t) == 3.0
    m = tl.matmul(np.eye(2, dtype=np.float32), tl.constant([[1.0], [2.0]]))
    np.testing.assert_array_equal(m.numpy(), [[1.0], [2.0]])


def test_operators():
    a, b = tl.constant([6.0, 7.0]), tl.constant([4.0, 2.0])
    results = {
        "+": a + b, "-": a - b, "*": a * b, "/": a / b, "//": a // b, "%": a % b, "**": a ** b, "neg": -a,
        "abs": abs(-a),
    }
    expected = {"+": [10, 9], "-": [2, 5], "*": [24, 14], "/": [1.5, 3.5], "//": [1, 3], "%": [2, 1],
                "**": [1296, 49], "neg": [-6, -7], "abs": [6, 7]}
    for k, v in results.items():
        np.testing.assert_allclose(v.numpy(), expected[k], err_msg=k)
        assert v.dtype == tl.float32, k
    np.testing.assert_array_equal((a > b).numpy(), [True, True])
    np.testing.assert_array_equal((a == 6.0).numpy(), [True, False])
    np.testing.assert_array_equal((a != 6.0).numpy(), [False, True])
    assert (tl.constant([[1.0, 2.0]]) @ tl.constant([[1.0], [1.0]])).numpy().tolist() == [[3.0]]
    assert (tl.constant(3) / tl.constant(2)).dtype == tl.float64  # TF: int / int is float64


def test_indexing_and_iteration():
    t = tl.constant([[1, 2, 3], [4, 5, 6]])
    assert t[1, 2].numpy() == 6 and t[:, 1].numpy().tolist() == [2, 5] and t[-1].numpy().tolist() == [4, 5, 6]
    assert [r.numpy().tolist() for r in t] == [[1, 2, 3], [4, 5, 6]] and len(t) == 2
    assert t[tl.constant(1)].numpy().tolist() == [4, 5, 6]


def test_scalar_conversions_and_format():
    assert int(tl.constant(3)) == 3 and float(tl.constant(2.5)) == 2.5 and bool(tl.constant(True))
    assert f"{tl.constant(64.0):.3f}" == "64.000" and "{:03d}".format(tl.constant(5)) == "005"
    assert list(range(5))[tl.constant(2)] == 2
    with pytest.raises(ValueError, match=r"exactly one element.*shape \(2,\)"):
        bool(tl.constant([True, False]))


def test_variable_assign_family_and_attributes():
    v = tl.Variable([1.0, 2.0], name="v")
    assert v.name == "v:0" and v.trainable and v.dtype == tl.float32 and v.shape == (2,)
    assert v.assign([3.0, 4.0]) is v
    v.assign_add([1.0, 1.0])
    v.assign_sub(tl.constant([0.5, 0.5]))
    np.testing.assert_array_equal(v.numpy(), [3.5, 4.5])
    assert tl.Variable(np.zeros((2, 2))).dtype == tl.float64 and tl.Variable(1, dtype=tl.float32).dtype == tl.float32
    assert tl.Variable(5.0).name == "Variable:0" and not tl.Variable(1.0, trainable=False).trainable
    with pytest.raises(ValueError, match=r"assign: shape mismatch.*\(2,\).*\(3,\)"):
        v.assign([1.0, 2.0, 3.0])


def test_variable_value_is_its_own_copy():
    a = np.array([1.0, 2.0])
    v = tl.Variable(a)
    a[0] = 100
    assert v.numpy()[0] == 1.0


def test_tensors_are_unhashable_like_tf_but_have_ref():
    t = tl.constant(1.0)
    with pytest.raises(TypeError, match=r"ref\(\)"):
        hash(t)
    assert {t.ref(): 1}[t.ref()] == 1 and t.ref().deref() is t


def test_zeros_ones_random():
    assert tl.zeros((2, 3)).dtype == tl.float32 and tl.ones([2], dtype=tl.int32).numpy().tolist() == [1, 1]
    tl.random.set_seed(7)
    a = tl.random.normal([3])
    tl.random.set_seed(7)
    assert a.numpy().tolist() == tl.random.normal([3]).numpy().tolist() and a.dtype == tl.float32
    u = tl.random.uniform((1000,), minval=2, maxval=3)
    assert 2 <= u.numpy().min() and u.numpy().max() < 3
    assert tl.random.uniform((4,), maxval=10, dtype=tl.int32).dtype == tl.int32


def test_strings_and_objects_are_rejected_clearly():
    with pytest.raises(tl.UnsupportedError, match="string tensors.*left to TensorFlow.*vocabulary"):
        tl.constant("hello")
    with pytest.raises(TypeError, match="numbers or booleans"):
        tl.constant(np.array([object()]))


def test_float_only_ops_teach_the_cast():
    with pytest.raises(tl.InvalidArgumentError, match=r"sqrt: expects a float tensor.*4.0"):
        tl.sqrt(4)


def test_shape_errors_name_op_and_shapes():
    with pytest.raises(tl.InvalidArgumentError, match=r"add: shapes \(2, 3\) and \(4,\) cannot be broadcast"):
        tl.ones((2, 3)) + tl.ones((4,))
    with pytest.raises(tl.InvalidArgumentError, match=r"matmul: inner dimensions must match.*\(2, 3\).*\(4, 5\)"):
        tl.matmul(tl.ones((2, 3)), tl.ones((4, 5)))
    with pytest.raises(tl.InvalidArgumentError, match=r"matmul: both inputs must be at least 2-D"):
        tl.matmul(tl.ones((3,)), tl.ones((3, 2)))
    with pytest.raises(tl.InvalidArgumentError, match=r"reshape: cannot reshape a tensor with 6 elements"):
        tl.reshape(tl.ones((2, 3)), (4, 2))
    with pytest.raises(tl.InvalidArgumentError, match=r"reduce_sum: axis 2 is out of range"):
        tl.reduce_sum(tl.ones((2, 3)), axis=2)
    with pytest.raises(tl.InvalidArgumentError, match=r"outside the valid range of \[0, 3\)"):
        tl.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 3], logits=tl.ones((2, 3)))
    with pytest.raises(tl.InvalidArgumentError, match=r"concat: cannot join shapes \(2, 3\), \(2, 4\) along axis 0"):
        tl.concat([tl.ones((2, 3)), tl.ones((2, 4))], 0)


def test_stable_nn_ops_for_huge_logits():
    z = tl.Variable([[1000.0, -1000.0, 0.0]])
    with tl.GradientTape() as tape:
        loss = tl.reduce_sum(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=[1], logits=z)) + \
            tl.reduce_sum(tl.nn.log_softmax(z)) * 0.0 + tl.reduce_sum(tl.sigmoid(z))
    g = tape.gradient(loss, z)
    assert np.all(np.isfinite(g.numpy())) and float(loss) == pytest.approx(2001.5)  # 2000 + sigmoid: 1 + 0 + 0.5
    np.testing.assert_allclose(tl.nn.softmax(z).numpy(), [[1.0, 0.0, 0.0]])


def test_variable_numpy_is_a_copy_and_np_array_copies():
    v = tl.Variable([1.0, 2.0])
    v.numpy()[0] = 100.0
    assert v.numpy()[0] == 1.0  # only assign changes a Variable
    t = tl.constant([1.0, 2.0])
    a = np.array(t)
    a[0] = 5.0
    assert t.numpy()[0] == 1.0


def test_value_and_identity_are_recorded_reads():
    v = tl.Variable(3.0)
    with tl.GradientTape() as tape:
        y = v.value() * tl.identity(v)
    assert float(tape.gradient(y, v)) == 6.0


def test_sigmoid_keeps_precision_for_negative_inputs():
    x = tl.constant([-20.0, -10.0, 0.0, 30.0], dtype=tl.float64)
    np.testing.assert_allclose(tl.sigmoid(x).numpy(), 1 / (1 + np.exp(-x.numpy())), rtol=1e-12)


def test_transpose_with_negative_perm_differentiates():
    x = tl.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    with tl.GradientTape() as tape:
        y = tl.transpose(x, [-1, 0]) * tl.constant([[1.0, 2.0]] * 3)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[1, 1, 1], [2, 2, 2]])


def test_expand_dims_range_and_small_int_division_and_bool_sums():
    with pytest.raises(tl.InvalidArgumentError, match=r"expand_dims: axis 5 is out of range.*-2..1"):
        tl.expand_dims(tl.constant([1, 2]), 5)
    assert tl.expand_dims(tl.constant([1, 2]), -1).shape == (2, 1)
    assert (tl.constant(np.array([3], np.uint8)) / tl.constant(np.array([2], np.uint8))).dtype == tl.float32
    assert (tl.constant([3]) / tl.constant([2])).dtype == tl.float64
    with pytest.raises(tl.InvalidArgumentError, match=r"reduce_sum: got a bool tensor.*tl.cast\(x, tl.int32\)"):
        tl.reduce_sum(tl.constant([True, False, True]))
    with pytest.raises(tl.InvalidArgumentError, match=r"reduce_max: got a bool tensor.*tl.reduce_any"):
        tl.reduce_max(tl.constant([True, False]))  # TF: no max of booleans
    assert bool(tl.reduce_any(tl.constant([True, False]))) and not bool(tl.reduce_all(tl.constant([True, False])))


def test_a_shape_equals_the_list_of_its_sizes_and_a_slice_of_it_is_a_shape():
    shape = tl.zeros((2, 3)).shape
    assert shape == [2, 3] and shape == (2, 3) and shape != [3, 2] and not shape == "23"
    assert shape[1:].as_list() == [3] and shape[0] == 2 and hash(shape) == hash((2, 3))


def test_bool_tensors_have_xor_and_the_reflected_logical_operators():
    b = tl.constant([True, False])
    assert (b ^ tl.constant([True, True])).numpy().tolist() == [False, True]
    assert (True & b).numpy().tolist() == [True, False] and (False | b).numpy().tolist() == [True, False]
    assert (True ^ b).numpy().tolist() == [False, True]


def test_elu_with_alpha_has_a_finite_gradient_for_large_inputs():
    x = tl.Variable([100.0, -1.0])
    with tl.GradientTape() as tape:
        y = tl.keras.activations.elu(x, alpha=2.0)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [1.0, 2.0 * np.exp(-1.0)], rtol=1e-6)


def test_diag_refuses_the_arguments_for_other_diagonals_it_does_not_implement():
    with pytest.raises(NotImplementedError, match=r"diag: only the main diagonal .*\['k'\]"):
        tl.linalg.diag([1.0, 2.0], k=1)
    with pytest.raises(NotImplementedError, match="diag_part"):
        tl.linalg.diag_part([[1.0, 2.0], [3.0, 4.0]], k=1)
    assert tl.linalg.diag([1.0, 2.0], k=0).shape == (2, 2)
