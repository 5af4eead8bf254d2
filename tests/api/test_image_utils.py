"""``keras.utils.array_to_img`` / ``img_to_array``: Keras 3's pixels, modes and error kinds are the ``image_*`` cases of
``fixtures/tf_contract.json``; these check the messages and what the contract cannot reach."""

import sys

import numpy as np
import pytest

import tapelab as tl

utils = tl.keras.utils


def test_scaling_stretches_to_0_255_and_modes_follow_the_channels():
    x = np.linspace(-2.0, 6.0, 2 * 2 * 3).reshape(2, 2, 3)
    img = utils.array_to_img(x)
    pixels = np.asarray(img)
    assert img.mode == "RGB" and img.size == (2, 2) and pixels.dtype == np.uint8
    assert pixels.min() == 0 and pixels.max() == 255
    assert utils.array_to_img(np.zeros((2, 2, 1))).mode == "L"
    assert utils.array_to_img(np.zeros((2, 2, 4))).mode == "RGBA"


def test_round_trip_of_a_uint8_image():
    x = np.random.default_rng(3).integers(0, 256, (5, 4, 3)).astype(np.float32)
    back = utils.img_to_array(utils.array_to_img(x, scale=False))
    assert back.dtype == np.float32 and back.shape == (5, 4, 3)
    np.testing.assert_array_equal(back, x)
    first = utils.img_to_array(utils.array_to_img(x, scale=False), data_format="channels_first")
    np.testing.assert_array_equal(first, x.transpose(2, 0, 1))


def test_a_tensor_is_an_image_array():
    img = utils.array_to_img(tl.ones((2, 3, 1)) * tl.constant([[[0.0]], [[1.0]]]))
    np.testing.assert_array_equal(np.asarray(img), [[0, 0, 0], [255, 255, 255]])


def test_a_grey_image_without_its_channel_axis_says_how_to_add_it():
    with pytest.raises(ValueError, match=r"rank 3.*\(28, 28\).*x\[\.\.\., None\]"):
        utils.array_to_img(np.zeros((28, 28)))
    with pytest.raises(ValueError, match=r"rank 3.*x\[0\]"):
        utils.array_to_img(np.zeros((8, 28, 28, 1)))


def test_channels_first_by_mistake_is_named():
    with pytest.raises(ValueError, match=r"Unsupported channel number: 2.*data_format='channels_first'"):
        utils.array_to_img(np.zeros((3, 2, 2)))
    with pytest.raises(ValueError, match=r"Unsupported channel number: 5\..*1 channel"):
        utils.array_to_img(np.zeros((2, 2, 5)))


def test_data_format_is_checked():
    for call in (lambda: utils.array_to_img(np.zeros((2, 2, 1)), data_format="nchw"),
                 lambda: utils.img_to_array(np.zeros((2, 2)), data_format="NHWC")):
        with pytest.raises(ValueError, match=r"channels_first.*channels_last.*Received"):
            call()


def test_img_to_array_of_a_batch_says_one_image():
    with pytest.raises(ValueError, match=r"Unsupported image shape: \(1, 2, 2, 3\).*one image"):
        utils.img_to_array(np.zeros((1, 2, 2, 3)))


def test_without_pillow_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match="pip install pillow"):
        utils.array_to_img(np.zeros((2, 2, 1)))
