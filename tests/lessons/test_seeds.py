"""Every example of the two tutorials tapelab grew from, with their numbers, written the way the tutorials write
them but with ``import tapelab as tf``. Seed 000, "the new style of training code in TensorFlow 2.0": the tape
(``tape.gradient(loss, x)`` of ``reduce_mean(matmul(x, y))`` is all ones; with ``[x, y]`` also all 0.5) and
``tf.gradients`` refused in eager mode. Seed 001, "static graphs versus dynamic graphs": eager values, Python
control flow on tensors, and a linear regression trained eagerly to its stated numbers. Lessons 01 to 04 and 06
teach them."""

import numpy as np
import pytest

import tapelab as tf


def test_seed_000_tape_example_one_source():
    with tf.GradientTape() as tape:
        x = tf.Variable(tf.ones((2, 2)))
        y = tf.Variable([[2, 2], [2, 2]], dtype=tf.float32)
        z = tf.matmul(x, y)
        loss = tf.reduce_mean(z)
    grads = tape.gradient(loss, x)
    assert str(grads) == "tapelab.Tensor(\n[[1. 1.]\n [1. 1.]], shape=(2, 2), dtype=float32)"
    assert grads.numpy().tolist() == [[1, 1], [1, 1]] and grads.dtype == tf.float32


def test_seed_000_tape_example_two_sources():
    with tf.GradientTape() as tape:
        x = tf.Variable(tf.ones((2, 2)))
        y = tf.Variable([[2, 2], [2, 2]], dtype=tf.float32)
        z = tf.matmul(x, y)
        loss = tf.reduce_mean(z)
    gx, gy = tape.gradient(loss, [x, y])
    assert gx.numpy().tolist() == [[1, 1], [1, 1]]
    assert gy.numpy().tolist() == [[0.5, 0.5], [0.5, 0.5]]


def test_seed_000_tf_gradients_is_not_supported_in_eager_mode():
    with pytest.raises(RuntimeError, match="not supported when eager execution is enabled. Use tf.GradientTape"):
        tf.gradients(tf.constant(1.0), tf.constant(1.0))


def test_seed_001_eager_values():
    a = tf.constant([[1, 2], [3, 4]])
    assert a.numpy().tolist() == [[1, 2], [3, 4]] and a.dtype == tf.int32
    b = tf.Variable(np.zeros((2, 2)))
    assert b.numpy().tolist() == [[0, 0], [0, 0]] and b.dtype == tf.float64
    c = [[2.0]]
    m = tf.matmul(c, c)
    assert "hello,{}".format(m) == "hello,[[4.]]"  # as TF: format() shows the value
    assert int(tf.add(1, 2)) == 3 and int(tf.square(8)) == 64
    assert int(tf.reduce_sum([1, 2, 3])) == 6 and int(tf.square(2) + tf.square(3)) == 13
    assert str(tf.add(1, 2)) == "tapelab.Tensor(3, shape=(), dtype=int32)"


def test_seed_001_dynamic_control_flow(capsys):
    def function(num):
        counter = tf.constant(0)
        num = tf.convert_to_tensor(num)
        for num in range(1, num.numpy() + 2):  # noqa: B020  (the seed reuses the name, as written)
            num = tf.constant(num)
            if int(num % 2) == 0 and int(num % 4) == 0:
                print("good")
            elif int(num % 2) == 0:
                print("hi")
            elif int(num % 4) == 0:
                print("hello")
            else:
                print(num.numpy())
            counter += 1
        return counter

    counter = function(16)
    expected = []
    for n in range(1, 18):
        expected.append("good" if n % 4 == 0 else "hi" if n % 2 == 0 else str(n))
    assert capsys.readouterr().out.split() == expected
    assert int(counter) == 17 and counter.dtype == tf.int32


def linear_regression(seed=0):
    """Seed 001's eager training loop, line for line (with a seed for repeatability)."""
    tf.random.set_seed(seed)
    num_test = 1000
    train_X = tf.random.normal([num_test])
    train_Y = train_X * 5 + 2

    def prediction(input, weight, bias):
        return input * weight + bias

    def loss(weights, biases):
        error = prediction(train_X, weights, biases) - train_Y
        return tf.reduce_mean(tf.square(error))

    def grad(weights, biases):
        with tf.GradientTape() as tape:
            loss_value = loss(weights, biases)
        return tape.gradient(loss_value, [weights, biases])

    train_steps, learning_rate = 200, 0.01
    W, B = tf.Variable(5.0), tf.Variable(10.0)
    log = ["Initial loss:{:.3f}".format(loss(W, B))]
    for i in range(train_steps):
        dW, dB = grad(W, B)
        W.assign_sub(dW * learning_rate)
        B.assign_sub(dB * learning_rate)
        if i % 20 == 0:
            log.append("Loss at step {:03d}:{:.3f}".format(i, loss(W, B)))
    log.append("Final loss:{:.3f}".format(loss(W, B)))
    return log, float(loss(W, B)), float(W.numpy()), float(B.numpy())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_seed_001_linear_regression(seed):
    log, final, w, b = linear_regression(seed)
    assert log[0] == "Initial loss:64.000"
    assert log[1].startswith("Loss at step 000:") and len(log) == 12
    losses = [float(line.split(":")[-1]) for line in log]
    assert all(a > b for a, b in zip(losses[1:-1], losses[2:-1]))  # falls steadily
    assert 0.015 < final < 0.03  # "about 0.02"
    assert abs(w - 5.0) < 0.05 and 2.1 < b < 2.2
