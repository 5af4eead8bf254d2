"""keras.layers.SimpleRNN and GRU beyond the TF fixtures: the same numbers as the loop written by hand with tape ops,
one name scope per time step (what the pictures and the flow view group by), traced = eager, and the errors."""

import numpy as np
import pytest

import tapelab as tl


def _data(batch=3, steps=7, features=2, seed=0):
    rng = np.random.default_rng(seed)
    return tl.constant(rng.normal(size=(batch, steps, features)).astype(np.float32))


def test_the_layer_is_the_loop_a_learner_writes_by_hand():
    tl.random.set_seed(0)
    x = _data()
    rnn = tl.keras.layers.SimpleRNN(5, return_sequences=True)
    with tl.GradientTape() as tape:
        layer_out = rnn(x)
        layer_loss = tl.reduce_sum(layer_out[:, -1] ** 2)
    layer_grads = tape.gradient(layer_loss, rnn.trainable_variables)

    W_x, W_h, b = rnn.trainable_variables
    with tl.GradientTape() as tape:
        h, hs = tl.zeros((3, 5)), []
        for t in range(7):
            h = tl.tanh(x[:, t, :] @ W_x + b + h @ W_h)
            hs.append(h)
        hand_loss = tl.reduce_sum(h ** 2)
    hand_grads = tape.gradient(hand_loss, [W_x, W_h, b])
    np.testing.assert_allclose(layer_out.numpy(), tl.stack(hs, axis=1).numpy(), rtol=1e-6, atol=1e-7)
    for a, e in zip(layer_grads, hand_grads):
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-5, atol=1e-7)


def test_each_time_step_is_a_name_scope_and_a_row_of_the_flow():
    tl.random.set_seed(1)
    rnn = tl.keras.layers.SimpleRNN(4)
    x = _data(steps=12)
    with tl.GradientTape(persistent=True) as tape:
        loss = tl.reduce_sum(rnn(x))
    tape.gradient(loss, rnn.trainable_variables)
    steps = sorted({e.scope for e in tape.entries if e.scope.startswith(f"{rnn.name}/t")})
    assert steps == [f"{rnn.name}/t{t:02d}/" for t in range(12)]
    flow = tl.viz.gradient_flow(tape, depth=None)
    per_step = [r.output_norm for r in flow if r.scope.startswith(f"{rnn.name}/t")]
    assert len(per_step) == 12 and all(n > 0 for n in per_step)


@pytest.mark.parametrize("kind", ["SimpleRNN", "GRU"])
def test_a_traced_call_equals_the_eager_one(kind):
    tl.random.set_seed(2)
    rnn = getattr(tl.keras.layers, kind)(3, return_state=True)
    x = _data()

    def step(x):
        with tl.GradientTape() as tape:
            out, state = rnn(x)
            loss = tl.reduce_sum(out * state)
        return loss, tape.gradient(loss, rnn.trainable_variables)

    (eager_loss, eager_grads), (traced_loss, traced_grads) = step(x), tl.function(step)(x)
    np.testing.assert_allclose(eager_loss.numpy(), traced_loss.numpy(), rtol=1e-6)
    for e, t in zip(eager_grads, traced_grads):
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


@pytest.mark.parametrize("kind", ["SimpleRNN", "GRU"])
def test_a_2d_input_says_which_axis_to_add(kind):
    with pytest.raises(ValueError, match=r"expects sequences of shape \(batch, time steps, features\), got shape "
                                         r"\(4, 6\) \(2-D\).*tl.expand_dims\(x, -1\)"):
        getattr(tl.keras.layers, kind)(3)(tl.ones((4, 6)))


def test_a_gru_whose_update_gate_is_open_carries_the_gradient_back_through_time():
    """Where z is near 1 a GRU step copies h forward, so dL/dh_0 over 40 steps stays near dL/dh_40; at the
    start of training (zero biases) z is about 0.5 and the gradient halves at every step instead."""
    x = _data(batch=8, steps=40, features=2, seed=3)
    ratio = {}
    for z_bias in (0.0, 4.0):
        tl.random.set_seed(4)
        gru = tl.keras.layers.GRU(8)
        gru.build((None, 40, 2))
        bias = np.zeros((2, 24), np.float32)
        bias[0, :8] = z_bias  # the update gate's part of the input bias
        gru.bias.assign(bias)
        with tl.GradientTape() as tape:
            loss = tl.reduce_sum(gru(x))
        tape.gradient(loss, gru.trainable_variables)
        norms = [r.output_norm for r in tl.viz.gradient_flow(tape, depth=None) if r.scope.startswith(gru.name)]
        ratio[z_bias] = norms[0] / norms[-1]  # |dL/dh at step 0| / |dL/dh at the last step|
    assert ratio[0.0] < 1e-6 and ratio[4.0] > 0.1, ratio


def test_tf1_s_gru_variant_is_left_to_tensorflow():
    with pytest.raises(tl.errors.UnsupportedError, match=r"reset_after=False.*leave reset_after at Keras 3's default"):
        tl.keras.layers.GRU(3, reset_after=False)


def test_a_wrong_feature_size_and_a_wrong_initial_state_are_explained():
    rnn = tl.keras.layers.SimpleRNN(3)
    rnn(tl.ones((2, 4, 5)))
    with pytest.raises(tl.errors.InvalidArgumentError, match=r"built for sequences of 5 features.*got inputs of "
                                                             r"shape \(2, 4, 6\) \(6 features\)"):
        rnn(tl.ones((2, 4, 6)))
    with pytest.raises(ValueError, match=r"initial_state has shape \(2, 4\).*has shape \(2, 3\) \(batch, units\)"):
        rnn(tl.ones((2, 4, 5)), initial_state=tl.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"a SimpleRNN has one state; initial_state holds 2 tensors"):
        rnn(tl.ones((2, 4, 5)), initial_state=[tl.zeros((2, 3)), tl.zeros((2, 3))])


def test_a_layer_built_by_hand_keeps_its_weights_on_the_first_call():
    rnn = tl.keras.layers.SimpleRNN(2)
    rnn.build((None, 3, 4))
    before = [w.numpy().copy() for w in rnn.weights]
    rnn(tl.ones((1, 3, 4)))
    assert rnn.built and len(rnn.weights) == 3
    for b, w in zip(before, rnn.weights):
        np.testing.assert_array_equal(b, w.numpy())
