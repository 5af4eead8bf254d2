"""Hand-written numpy references that the benchmarks time tapelab against (same math, no tape)."""

import numpy as np


def mnist_like_data(rows=60_000, seed=0):
    """Synthetic MNIST-shaped rows: float32 pixels in [0, 1) and int32 labels 0..9."""
    rng = np.random.default_rng(seed)
    return rng.random((rows, 784), dtype=np.float32), rng.integers(0, 10, rows).astype(np.int32)


def init_mlp(seed=0, sizes=(784, 128, 10)):
    """Glorot-uniform weights and zero biases, float32: [W1, b1, W2, b2]."""
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        limit = np.sqrt(6 / (fan_in + fan_out))
        params += [rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32), np.zeros(fan_out, np.float32)]
    return params


def numpy_mlp_forward(params, x, y):
    """Forward pass and mean softmax cross-entropy of the ReLU MLP; returns (loss, what the backward pass needs)."""
    W1, b1, W2, b2 = params
    pre = x @ W1 + b1
    h = np.maximum(pre, 0)
    logits = h @ W2 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_z = np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = float(np.mean(log_z[:, 0] - shifted[np.arange(len(y)), y]))
    return loss, (pre, h, shifted, log_z)


def numpy_mlp_backward(params, x, y, saved):
    """The gradients [dW1, db1, dW2, db2] of the mean cross-entropy, by hand."""
    W1, b1, W2, b2 = params
    pre, h, shifted, log_z = saved
    n = len(y)
    d_logits = np.exp(shifted - log_z)  # softmax
    d_logits[np.arange(n), y] -= 1
    d_logits /= n
    dW2, db2 = h.T @ d_logits, d_logits.sum(axis=0)
    d_pre = (d_logits @ W2.T) * (pre > 0)
    dW1, db1 = x.T @ d_pre, d_pre.sum(axis=0)
    return [dW1, db1, dW2, db2]


def numpy_sgd(params, grads, lr):
    """Plain SGD, in place: p -= lr * g."""
    for p, g in zip(params, grads):
        p -= lr * g


def numpy_mlp_step(params, x, y, lr):
    """One SGD step of a 784-128-10 ReLU MLP with mean softmax cross-entropy, by hand. Returns the loss."""
    loss, saved = numpy_mlp_forward(params, x, y)
    numpy_sgd(params, numpy_mlp_backward(params, x, y, saved), lr)
    return loss


def numpy_mlp_epoch(params, X, Y, batch_size=128, lr=0.1):
    """One epoch over (X, Y) in order; returns the last batch's loss."""
    loss = None
    for start in range(0, len(X), batch_size):
        loss = numpy_mlp_step(params, X[start:start + batch_size], Y[start:start + batch_size], lr)
    return loss
