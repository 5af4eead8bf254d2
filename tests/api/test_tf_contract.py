"""TensorFlow faithfulness: the API contract snippets give TF's numbers, dtypes, shapes, Nones and error kinds.

``fixtures/tf_contract.json`` holds what real TensorFlow 2 did for each snippet; it is produced by
``fixtures/make_tf_contract.py`` (run with a Python that has TensorFlow; TF is never needed here).
Each snippet is executed with ``tf = tapelab`` and its result is compared with TF's:

- tensors: same dtype name, same shape, same values (float32 to ~1e-6 relative, float64 to ~1e-12);
- Variables: also the same ``name`` and ``trainable``;
- lists / tuples / dicts: same container type and structure; ``None`` where TF gives ``None``;
- Python and numpy scalars: same type;
- strings (``str()`` / ``repr()``): equal once TF's ``tf.`` prefix reads ``tapelab.``;
- errors: the same kind (TF's ``InvalidArgumentError`` -> ``tapelab.InvalidArgumentError``; builtin
  exceptions the same class). Messages are tapelab's own; some cases check key words the contract asks for.

A case where tapelab still differs from TF is listed in ``KNOWN_DIFFERENCES`` and runs as a strict
xfail: fixing the engine makes it XPASS (a failure) until its entry is removed.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

import tapelab

FIXTURES = Path(__file__).parents[1] / "fixtures"
FIXTURE = json.loads((FIXTURES / "tf_contract.json").read_text(encoding="utf-8"))
CASES = {case["id"]: case for case in FIXTURE["cases"]}

# Relative / absolute tolerance per float dtype (float32 values are compared to ~1e-6 relative).
TOLERANCE = {"float16": (1e-3, 1e-4), "float32": (1e-6, 1e-7), "float64": (1e-12, 1e-15)}

# case id -> (rtol, atol) where TF's float32 round-off differs from tapelab's one formula, with the reason
TOLERANCE_OVERRIDES = {
    # TF composes gelu's tanh form from ops and differentiates each; tapelab's rule is one formula
    "new_grad_gelu_approximate": ((1e-5, 1e-6), "float32 round-off of a composed vs a closed-form derivative"),
    # a gradient through five time steps sums float32 parts per step, in TF's loop order vs the tape's
    **{f"keras_simple_rnn_{case}": ((1e-5, 1e-6), "float32 round-off of sums over time steps")
       for case in ("last_output", "sequences", "relu_no_bias", "state_and_initial_state", "go_backwards")},
    **{f"keras_gru_{case}": ((1e-5, 1e-6), "float32 round-off of sums over time steps")
       for case in ("last_output", "sequences_and_state", "no_bias")},
    # numpy's SVD (LAPACK's gesdd) and TF's (Eigen's Jacobi) round float32 differently
    **{f"svd_{case}": ((1e-5, 1e-6), "float32 round-off of two SVD algorithms (LAPACK's and Eigen's)")
       for case in ("values_order_and_shapes", "batched", "grad_square_float32")},
    # a transposed convolution adds float32 products up in another order than TF's Conv2DBackpropInput kernel
    **{f"keras_conv2d_transpose_{case}": ((1e-5, 1e-5), "float32 round-off of sums in another order")
       for case in ("valid", "same_stride2", "valid_stride2_k2", "rectangular", "same_k4_s3")},
}

# Key words tapelab's own message must contain (case-insensitive), where the contract demands them.
MESSAGE_KEYWORDS = {
    "tape_second_gradient_non_persistent": ["persistent=True"],
    # the snippets import tapelab as tf, so messages name tapelab's functions that way (tf.cast, not tl.cast)
    "tf_gradients_raises": ["tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape"],
    "op_add_float32_int32_tensors": ["tf.cast("],
    "op_add_float32_float64_tensors": ["tf.cast("],
    "tf_matmul_int_float_mismatch": ["tf.cast(", "matmul"],
    "op_add_shape_mismatch": ["add"],
    "op_matmul_shape_mismatch": ["matmul"],
    "tf_reshape_bad": ["reshape"],
    "tf_concat_mismatch": ["concat"],
    "tape_unconnected_bad_string": ["unconnected_gradients"],
    "edge_sparse_xent_zero_classes_empty_batch": ["0 classes", "at least one"],
    "edge_keras_sparse_crossentropy_zero_classes": ["0 classes", "at least one"],
}

# TF exception name -> the tapelab exception class the same snippet must raise.
ERROR_KINDS = {
    "InvalidArgumentError": tapelab.InvalidArgumentError,
    "TypeError": TypeError,
    "ValueError": ValueError,
    "RuntimeError": RuntimeError,
    "IndexError": IndexError,
    "AttributeError": AttributeError,
    "NotImplementedError": NotImplementedError,
}

# case id -> what differs from TensorFlow (the engine owner fixes it and deletes the entry).
KNOWN_DIFFERENCES: dict[str, str] = {}

# case id -> why tapelab differs from TensorFlow on purpose (these cases are skipped, with the reason).
ACCEPTED_DIFFERENCES: dict[str, str] = {
    "variable_isinstance_tensor": "a tapelab Variable is a Tensor subclass, so every op accepts it directly",
    "op_add_python_float_to_int_tensor": "TF itself is inconsistent (+ raises InvalidArgumentError, - * / raise "
                                         "TypeError); tapelab raises TypeError for all of them",
    "tf_add_python_float_to_int_tensor": "as above: tapelab raises TypeError for a Python float into an int tensor",
    "index_list_not_allowed": "tapelab allows numpy fancy indexing (its gradient scatters back); TF needs tf.gather",
    "float16_mean_past_65504": "TF 2.21 gives 0.0 (its float16 count of 70,000 overflows); tapelab adds float16 up in "
                               "float32 and gives the mean, 0.1",
    "float16_sum_accumulates": "TF 2.21 adds float16 in float16 (99.75 for 1000 x 0.1); tapelab in float32 (100.0)",
    "tf_add_python_int_then_float_tensor": "tf.add(3, t) works as 3 + t does (the Python number takes the tensor's "
                                           "dtype); TF converts 3 to int32 first and refuses to add it to a float",
    "keras_model_weights_include_attribute_variables": "a Variable held in a model's attribute is one of its weights "
                                                       "and variables (tapelab has one kind of Variable); Keras 3 "
                                                       "tracks only its own, so a tf.Variable is in neither",
}

# case id -> the feature tapelab leaves to TensorFlow: TF computes a result, tapelab raises UnsupportedError
# naming the feature (tapelab teaches autodiff; docs/tf_api.md lists what is left out)
LEFT_TO_TENSORFLOW = {
    "unsupported_string_constant": "string tensors", "unsupported_strings_split": "tf.strings",
    "unsupported_ragged": "tf.ragged", "unsupported_sparse": "tf.sparse", "unsupported_complex": "complex",
    "unsupported_saved_model": "tf.saved_model", "unsupported_io": "tf.io", "unsupported_image": "tf.image",
    "unsupported_py_function": "tf.py_function", "unsupported_tensor_array": "tf.TensorArray",
    "unsupported_autograph_if": "autograph", "unsupported_autograph_for_range": "autograph",
    "unsupported_gpu_device": "GPU",
}


# ---------------------------------------------------------------------------------------------- helpers
def describe(obj):
    """The same plain description ``make_tf_contract.describe`` gives, for tapelab objects."""
    if obj is None:
        return {"kind": "none"}
    if isinstance(obj, tapelab.Variable):
        return {"kind": "variable", "name": obj.name, "trainable": bool(obj.trainable), "dtype": obj.dtype.name,
                "shape": list(obj.shape), "value": obj.numpy().tolist()}
    if isinstance(obj, tapelab.Tensor):
        return {"kind": "tensor", "dtype": obj.dtype.name, "shape": list(obj.shape), "value": obj.numpy().tolist()}
    if isinstance(obj, tapelab.TensorShape):
        return {"kind": "shape", "value": list(obj)}
    if isinstance(obj, tapelab.DType):
        return {"kind": "dtype", "name": obj.name}
    if isinstance(obj, (np.ndarray, np.generic)):
        arr = np.asarray(obj)
        return {"kind": "numpy", "scalar": isinstance(obj, np.generic), "dtype": arr.dtype.name,
                "shape": list(arr.shape), "value": arr.tolist()}
    if isinstance(obj, (bool, int, float, str)):
        return {"kind": "python", "type": type(obj).__name__, "value": obj}
    if isinstance(obj, (list, tuple)):  # (a namedtuple such as top_k's TopKV2 is a tuple)
        return {"kind": "list" if isinstance(obj, list) else "tuple", "items": [describe(o) for o in obj]}
    if isinstance(obj, dict):
        return {"kind": "dict", "items": {str(k): describe(v) for k, v in obj.items()}}
    return {"kind": "unknown", "type": type(obj).__name__, "repr": repr(obj)}


def run_with_tapelab(code):
    """Execute a snippet with ``tf = tapelab``: ``("ok", description)`` or ``("error", exception)``."""
    namespace = {"tf": tapelab, "np": np}
    try:
        exec(compile(code, "<case>", "exec"), namespace)
    except Exception as exc:  # noqa: BLE001 - comparing what is raised is the point
        return "error", exc
    return "ok", describe(namespace["result"])


def tf_text_as_tapelab(text):
    """TF prints ``tf.Tensor(...)`` / ``<tf.Variable ...>`` / ``tf.float32``; tapelab uses its own name."""
    return text.replace("tf.", "tapelab.")


def assert_values_close(expected, actual, dtype, where, tolerance=None):
    exp = np.asarray(expected, dtype=np.float64 if dtype.startswith("float") else None)
    act = np.asarray(actual, dtype=np.float64 if dtype.startswith("float") else None)
    assert exp.shape == act.shape, f"{where}: value nesting {exp.shape} != {act.shape}"
    if dtype.startswith("float"):
        rtol, atol = tolerance or TOLERANCE.get(dtype, TOLERANCE["float32"])
        ok = np.allclose(act, exp, rtol=rtol, atol=atol, equal_nan=True)
        assert ok, f"{where}: values differ (TF {expected!r}, tapelab {actual!r})"
    else:
        assert exp.tolist() == act.tolist(), f"{where}: values differ (TF {expected!r}, tapelab {actual!r})"


def assert_same(expected, actual, where="result", tolerance=None):
    """Compare TF's description with tapelab's, naming the first place they differ."""
    kind = expected["kind"]
    assert actual["kind"] == kind, f"{where}: TF gives {kind} {expected}, tapelab gives {actual['kind']} {actual}"
    if kind == "none":
        return
    if kind in ("tensor", "variable", "numpy"):
        if kind == "variable":
            assert actual["name"] == expected["name"], f"{where}: name {actual['name']!r} != TF {expected['name']!r}"
            assert actual["trainable"] == expected["trainable"], f"{where}: trainable differs"
        if kind == "numpy":
            assert actual["scalar"] == expected["scalar"], (
                f"{where}: numpy {'scalar' if expected['scalar'] else 'array'} expected, got the other")
        assert actual["dtype"] == expected["dtype"], f"{where}: dtype {actual['dtype']} != TF {expected['dtype']}"
        assert actual["shape"] == expected["shape"], f"{where}: shape {actual['shape']} != TF {expected['shape']}"
        assert_values_close(expected["value"], actual["value"], expected["dtype"], where, tolerance)
    elif kind == "shape":
        assert actual["value"] == expected["value"], f"{where}: shape {actual['value']} != TF {expected['value']}"
    elif kind == "dtype":
        assert actual["name"] == expected["name"], f"{where}: dtype {actual['name']} != TF {expected['name']}"
    elif kind == "python":
        assert actual["type"] == expected["type"], (
            f"{where}: Python {actual['type']} {actual['value']!r} != TF {expected['type']} {expected['value']!r}")
        if expected["type"] == "float":
            rtol, atol = TOLERANCE["float32"]
            assert math.isclose(actual["value"], expected["value"], rel_tol=rtol, abs_tol=atol) or (
                math.isnan(actual["value"]) and math.isnan(expected["value"])), f"{where}: {actual} != TF {expected}"
        elif expected["type"] == "str":
            want = tf_text_as_tapelab(expected["value"])
            assert actual["value"] == want, (
                f"{where}: text differs\n TF (renamed): {want!r}\n tapelab:      {actual['value']!r}")
        else:
            assert actual["value"] == expected["value"], f"{where}: {actual['value']!r} != TF {expected['value']!r}"
    elif kind in ("list", "tuple"):
        assert len(actual["items"]) == len(expected["items"]), f"{where}: {len(actual['items'])} items, TF has " \
            f"{len(expected['items'])}"
        for i, (e, a) in enumerate(zip(expected["items"], actual["items"])):
            assert_same(e, a, f"{where}[{i}]", tolerance)
    elif kind == "dict":
        assert list(actual["items"]) == list(expected["items"]), f"{where}: keys {list(actual['items'])} != TF " \
            f"{list(expected['items'])}"
        for key, e in expected["items"].items():
            assert_same(e, actual["items"][key], f"{where}[{key!r}]", tolerance)
    else:  # pragma: no cover - the fixture only holds the kinds above
        raise AssertionError(f"{where}: unknown kind {kind!r} in the fixture")


def _params():
    for case_id in CASES:
        if case_id in LEFT_TO_TENSORFLOW:
            continue  # (test_left_to_tensorflow_says_so)
        marks = []
        if case_id in KNOWN_DIFFERENCES:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_DIFFERENCES[case_id]))
        if case_id in ACCEPTED_DIFFERENCES:
            marks.append(pytest.mark.skip(reason="deliberate difference: " + ACCEPTED_DIFFERENCES[case_id]))
        yield pytest.param(case_id, marks=marks, id=case_id)


# ---------------------------------------------------------------------------------------------- tests
@pytest.mark.parametrize("case_id", list(_params()))
def test_matches_tensorflow(case_id):
    case = CASES[case_id]
    expected = case["tf"]
    status, got = run_with_tapelab(case["code"])
    if expected["kind"] == "error":
        want = ERROR_KINDS[expected["type"]]
        assert status == "error", (
            f"TF raises {expected['type']}: {expected['message'][:200]!r}\n"
            f"tapelab returned {got}\ncode:\n{case['code']}")
        assert isinstance(got, want), (
            f"TF raises {expected['type']}, tapelab raises {type(got).__name__}: {got}\ncode:\n{case['code']}")
        message = str(got).lower()
        for word in MESSAGE_KEYWORDS.get(case_id, []):
            assert word.lower() in message, f"tapelab's message should mention {word!r}: {got}"
        return
    if status == "error":
        raise AssertionError(
            f"TF gives {expected}\ntapelab raises {type(got).__name__}: {got}\ncode:\n{case['code']}") from got
    assert_same(expected, got, tolerance=TOLERANCE_OVERRIDES.get(case_id, (None,))[0])


@pytest.mark.parametrize("case_id", sorted(LEFT_TO_TENSORFLOW))
def test_left_to_tensorflow_says_so(case_id):
    """TF computes these; tapelab stops with UnsupportedError, naming the feature and that TF has it."""
    case = CASES[case_id]
    assert case["tf"]["kind"] != "error", f"TF itself fails: {case['tf']}"
    status, got = run_with_tapelab(case["code"])
    assert status == "error" and isinstance(got, tapelab.UnsupportedError), (status, got)
    assert isinstance(got, NotImplementedError)
    message = str(got)
    assert LEFT_TO_TENSORFLOW[case_id].lower() in message.lower() and "left to TensorFlow" in message, message


def test_fixture_is_current_with_generator():
    """The snippets in the fixture are exactly the generator's list (regenerate the fixture after editing it)."""
    spec = importlib.util.spec_from_file_location("make_tf_contract", FIXTURES / "make_tf_contract.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert [(c["id"], c["code"]) for c in FIXTURE["cases"]] == [tuple(c) for c in module.CASES]
    assert len(CASES) == len(FIXTURE["cases"]) >= 120


def test_known_differences_and_keywords_name_real_cases():
    for table in (KNOWN_DIFFERENCES, ACCEPTED_DIFFERENCES, MESSAGE_KEYWORDS, TOLERANCE_OVERRIDES, LEFT_TO_TENSORFLOW):
        assert set(table) <= set(CASES), set(table) - set(CASES)
    for case_id in MESSAGE_KEYWORDS:
        assert CASES[case_id]["tf"]["kind"] == "error", case_id
    assert {c["tf"]["type"] for c in CASES.values() if c["tf"]["kind"] == "error"} <= set(ERROR_KINDS)
