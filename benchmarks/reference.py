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


# --- the quickstart-for-experts CNN: Conv2D(32, 3, relu) - Flatten - Dense(128, relu) - Dense(10), Adam ----------
def init_cnn(seed=0):
    """Glorot-uniform weights and zero biases: [kernel (3, 3, 1, 32), bias, W1 (21632, 128), b1, W2 (128, 10), b2]."""
    rng = np.random.default_rng(seed)

    def glorot(shape, fan_in, fan_out):
        limit = np.sqrt(6 / (fan_in + fan_out))
        return rng.uniform(-limit, limit, shape).astype(np.float32)

    return [glorot((3, 3, 1, 32), 9, 9 * 32), np.zeros(32, np.float32), glorot((26 * 26 * 32, 128), 21632, 128),
            np.zeros(128, np.float32), glorot((128, 10), 128, 10), np.zeros(10, np.float32)]


def numpy_cnn_step(params, lr=1e-3, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
    """A function ``step(x, y)`` training ``params`` in place by hand: forward, backward, Adam; returns the loss."""
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    t = [0]

    def step(x, y):
        kernel, bias, W1, b1, W2, b2 = params
        n = len(x)
        cols = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(1, 2))  # (n, 26, 26, 1, 3, 3) windows
        conv = np.tensordot(cols, kernel, axes=([3, 4, 5], [2, 0, 1])) + bias  # (n, 26, 26, 32)
        h = np.maximum(conv, 0).reshape(n, -1)
        pre = h @ W1 + b1
        a = np.maximum(pre, 0)
        logits = a @ W2 + b2
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        loss = -log_p[np.arange(n), y].mean()
        d_logits = np.exp(log_p)
        d_logits[np.arange(n), y] -= 1
        d_logits /= n
        d_a = (d_logits @ W2.T) * (pre > 0)
        d_h = (d_a @ W1.T).reshape(conv.shape) * (conv > 0)
        grads = [np.tensordot(cols, d_h, axes=([0, 1, 2], [0, 1, 2])).transpose(1, 2, 0, 3), d_h.sum(axis=(0, 1, 2)),
                 h.T @ d_a, d_a.sum(axis=0), a.T @ d_logits, d_logits.sum(axis=0)]
        t[0] += 1
        scale = lr * np.sqrt(1 - beta_2 ** t[0]) / (1 - beta_1 ** t[0])
        for p, g, mk, vk in zip(params, grads, m, v):  # Adam, in place: m, v running moments of g and g^2
            mk *= beta_1
            mk += (1 - beta_1) * g
            vk *= beta_2
            vk += (1 - beta_2) * np.square(g)
            step = np.sqrt(vk)
            step += epsilon
            np.divide(mk, step, out=step)
            step *= scale
            p -= step
        return float(loss)

    return step
