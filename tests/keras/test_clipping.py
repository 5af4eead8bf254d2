"""Gradient clipping: ``tl.clip_by_global_norm`` and the optimizers' ``clipnorm`` / ``global_clipnorm`` /
``clipvalue`` (TF's values are in the contract fixtures; these check what the fixtures cannot: a traced step,
a learner's slips, and the error's advice)."""

import numpy as np
import pytest

import tapelab as tl

CLIPS = [{"clipnorm": 1.0}, {"global_clipnorm": 1.0}, {"clipvalue": 0.5}, {}]


@pytest.mark.parametrize("clip", CLIPS, ids=lambda c: next(iter(c), "none"))
@pytest.mark.parametrize("optimizer", [tl.optimizers.SGD, tl.optimizers.Adam, tl.optimizers.RMSprop])
def test_a_traced_step_clips_as_the_eager_one(optimizer, clip):
    def train(step_of):
        w, b = tl.Variable([[3.0, -4.0]]), tl.Variable([0.5])
        opt = optimizer(learning_rate=0.1, **clip)

        def step(x):
            with tl.GradientTape() as tape:
                loss = tl.reduce_sum(tl.square(x @ tl.transpose(w) + b))
            grads = tape.gradient(loss, [w, b])
            opt.apply_gradients(zip(grads, [w, b]))
            return loss

        step = step_of(step)
        for k in range(3):
            step(tl.constant([[1.0 + k, 2.0]]))
        return w.numpy(), b.numpy()

    eager, traced = train(lambda f: f), train(tl.function)
    for e, t in zip(eager, traced):
        np.testing.assert_allclose(e, t, rtol=1e-6)


def test_global_clipnorm_keeps_the_update_direction():
    w = tl.Variable([3.0, 4.0])
    tl.optimizers.SGD(1.0, global_clipnorm=1.0).apply_gradients([(tl.constant([30.0, 40.0]), w)])
    np.testing.assert_allclose(w.numpy(), [3.0 - 0.6, 4.0 - 0.8], rtol=1e-6)


def test_an_infinite_norm_makes_the_update_nan_not_zero():
    w = tl.Variable([1.0])
    tl.optimizers.SGD(0.1, global_clipnorm=1.0).apply_gradients([(tl.constant([np.inf]), w)])
    assert np.isnan(w.numpy()).all()
    (clipped,), norm = tl.clip_by_global_norm([tl.constant([np.inf, 1.0])], 1.0)
    assert np.isinf(norm.numpy()) and np.isnan(clipped.numpy()).all()


def test_one_tensor_instead_of_a_list_says_what_to_pass():
    with pytest.raises(TypeError, match=r"clip_by_global_norm: t_list should be a list.*got Tensor.*clip_by_norm"):
        tl.clip_by_global_norm(tl.constant([3.0, 4.0]), 1.0)
    with pytest.raises(TypeError, match=r"global_norm: t_list should be a list"):
        tl.linalg.global_norm(tl.constant([3.0, 4.0]))


def test_mixed_or_integer_dtypes_are_refused_with_the_cast_to_make():
    with pytest.raises(tl.errors.InvalidArgumentError, match=r"one float dtype, got float32, float64.*tl.cast"):
        tl.clip_by_global_norm([tl.constant([3.0]), tl.constant([4.0], tl.float64)], 1.0)
    with pytest.raises(tl.errors.InvalidArgumentError, match=r"one float dtype, got int32"):
        tl.linalg.global_norm([tl.constant([3])])


def test_two_clips_at_once_are_refused_with_the_difference_explained():
    with pytest.raises(ValueError, match=r"only one of `clipnorm`, `clipvalue` and `global_clipnorm`.*direction"):
        tl.optimizers.Adam(clipnorm=1.0, clipvalue=0.5)
    with pytest.raises(TypeError, match=r"SGD: global_clipnorm must be a number, got 'one'"):
        tl.optimizers.SGD(global_clipnorm="one")
