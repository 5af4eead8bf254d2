import tapelab as tl


def test_import_and_seed_000_example():
    x = tl.Variable(tl.ones((2, 2)))
    y = tl.Variable([[2, 2], [2, 2]], dtype=tl.float32)
    with tl.GradientTape() as tape:
        loss = tl.reduce_mean(tl.matmul(x, y))
    dx, dy = tape.gradient(loss, [x, y])
    assert dx.numpy().tolist() == [[1, 1], [1, 1]]
    assert dy.numpy().tolist() == [[0.5, 0.5], [0.5, 0.5]]
