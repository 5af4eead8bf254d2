"""Recorded tapes that several viz tests draw, list and step through."""

import numpy as np

import tapelab as tl


def seed_000(persistent=False):
    """The seed tutorial's tape: loss = reduce_mean(matmul(x, y)) with x = ones, y = twos (dx = 1, dy = 0.5)."""
    x = tl.Variable(tl.ones((2, 2)), name="x")
    y = tl.Variable([[2, 2], [2, 2]], dtype=tl.float32, name="y")
    with tl.GradientTape(persistent=persistent) as tape:
        z = tl.matmul(x, y)
        loss = tl.reduce_mean(z)
    return tape, x, y, z, loss


def mlp_tape(steps=1, batch=4):
    """A 2-layer MLP step recorded under name scopes dense/ and dense_1/ (like Keras layers)."""
    rng = np.random.default_rng(0)
    w1 = tl.Variable(rng.normal(size=(6, 5)).astype("float32"), name="kernel")
    b1 = tl.Variable(np.zeros(5, "float32"), name="bias")
    w2 = tl.Variable(rng.normal(size=(5, 3)).astype("float32"), name="kernel")
    b2 = tl.Variable(np.zeros(3, "float32"), name="bias")
    x = tl.constant(rng.normal(size=(batch, 6)).astype("float32"))
    labels = tl.constant(np.arange(batch) % 3)
    with tl.GradientTape(persistent=True) as tape:
        for _ in range(steps):
            with tl.name_scope("dense"):
                h = tl.nn.relu(tl.matmul(x, w1) + b1)
            with tl.name_scope("dense_1"):
                logits = tl.matmul(h, w2) + b2
            loss = tl.reduce_mean(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    return tape, loss, [w1, b1, w2, b2]
