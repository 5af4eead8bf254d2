"""A dtype given as TF's integer code (its DataType enum): ``tl.zeros(1, 1)`` is float32, as in TF.

TF's answers are the ``dtype_code_*`` cases of ``fixtures/tf_contract.json``; these check the codes TF has and
tapelab leaves out, and the messages."""

import numpy as np
import pytest

import tapelab as tl
from tapelab.engine.errors import UnsupportedError

CODES = {1: tl.float32, 2: tl.float64, 3: tl.int32, 4: tl.uint8, 5: tl.int16, 6: tl.int8, 9: tl.int64, 10: tl.bool,
         19: tl.float16}  # TF 2.21's tf.as_dtype(n)


@pytest.mark.parametrize("code", sorted(CODES))
def test_each_code_of_a_tapelab_dtype(code):
    assert tl.as_dtype(code) is CODES[code]
    assert tl.as_dtype(np.int16(code)) is CODES[code]
    assert CODES[code].as_datatype_enum == code
    assert tl.zeros((2,), code).dtype == CODES[code]


@pytest.mark.parametrize("code, name", [(14, "bfloat16"), (17, "uint16"), (22, "uint32"), (23, "uint64"),
                                        (11, "qint8"), (20, "resource"), (29, "int4"), (101, "float32_ref"),
                                        (109, "int64_ref")])
def test_a_code_of_a_dtype_tapelab_leaves_out_names_it(code, name):
    with pytest.raises(TypeError) as e:
        tl.as_dtype(code)
    message = str(e.value)
    assert f"dtype {name}," in message and "1 float32" in message and "19 float16" in message


@pytest.mark.parametrize("code, feature", [(7, "string"), (8, "complex"), (18, "complex")])
def test_string_and_complex_codes_are_left_to_tensorflow(code, feature):
    with pytest.raises(UnsupportedError, match=feature):
        tl.as_dtype(code)
    with pytest.raises(UnsupportedError, match=feature):
        tl.zeros(2, code)


@pytest.mark.parametrize("code", [0, -1, 34, 200, 2 ** 40])
def test_a_code_no_dtype_has(code):
    with pytest.raises(TypeError, match=rf"no dtype has the integer code {code}\..*3 int32"):
        tl.as_dtype(code)


def test_comparing_a_dtype_with_a_code():
    assert tl.float32 == 1 and tl.int64 == 9 and tl.float32 != 2
    assert not (tl.float32 == 7) and not (tl.float32 == 14) and not (tl.float32 == 0)  # never an error


def test_bools_and_floats_are_not_codes():
    # TF looks codes up in a dict, so True and 1.0 find float32 there; tapelab takes only integers
    for value in (True, 1.0, "1"):
        with pytest.raises(TypeError, match="not a dtype tapelab supports"):
            tl.as_dtype(value)
