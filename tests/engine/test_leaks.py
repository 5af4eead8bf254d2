"""No leaks: tapes free what they recorded, long training keeps memory flat, tapes stay in their thread."""

import gc
import threading
import time
import tracemalloc
import weakref

import numpy as np

import tapelab as tl

MB = 1 << 20


def test_one_shot_tape_releases_entries_and_frees_intermediates_when_dropped():
    # (each array is 1 MB: a tape lets go in sweeps, once it has recorded retention.SWEEP bytes since the last one)
    x = tl.Variable(np.ones((512, 512), np.float32))
    with tl.GradientTape() as tape:
        h = x * 2.0
        loss = tl.reduce_sum(tl.tanh(h))
    alive = weakref.ref(h)
    tape.gradient(loss, x)
    assert tape.entries == [] and tape._tracked == {}  # released for further use
    assert tape.watched_variables() == (x,)  # (TF still lists the watched variables after gradient())
    kept = weakref.ref(tape.last_backward.entries[1].out)  # tanh's output: its rule reads it
    del h
    assert alive() is None  # no rule reads h (tanh's reads its output): the tape let it go with the code
    assert kept() is not None  # last_backward keeps what the rules read, for print(tape) and draw(tape)
    assert "%0 = multiply(%in0, 2)" in str(tape)  # and the listing recomputes the rest
    del tape
    assert kept() is None  # dropping the tape frees it at once: no reference cycle waits for the gc


def test_deleted_persistent_tape_frees_its_memory():
    x = tl.Variable(np.ones((512, 512), np.float32))  # each intermediate is 1 MB
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        with tl.GradientTape(persistent=True) as tape:
            y = x
            for _ in range(8):
                y = tl.tanh(y) * 1.5
            loss = tl.reduce_sum(y)
        del y
        tape.gradient(loss, x)
        tape.gradient(loss, x)
        held = tracemalloc.get_traced_memory()[0] - before
        del tape, loss
        after = tracemalloc.get_traced_memory()[0] - before  # no gc.collect(): plain reference counting suffices
    finally:
        tracemalloc.stop()
    # kept for further gradient() calls: the 8 tanh outputs of 1 MB the rules read, not the 8 products no rule reads;
    # and the last gradient of x, for display
    assert 8 * MB < held < 9.5 * MB, f"{held / MB:.2f} MB"
    assert after < 0.1 * MB, f"{after} bytes still held after deleting the tape"


def test_a_picture_recomputes_what_the_tape_let_go_without_keeping_it_and_reuses_what_the_code_holds():
    x = tl.Variable(np.ones((512, 512), np.float32))  # each array is 1 MB
    with tl.GradientTape(persistent=True) as tape:
        y = x
        for _ in range(8):
            y = tl.tanh(y) * 1.5  # no rule reads the products (tanh's reads its output)
        tl.reduce_sum(y)
    held = y.numpy()  # the code still holds the last product
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        listing = str(tape)
        after = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert "multiply" in listing
    assert after < 0.5 * MB, f"print(tape) kept {after / MB:.1f} MB"  # the 7 products it recomputed: let go again
    assert tape.entries[-2].output._value is held  # (not recomputed: the code holds it)
    np.testing.assert_array_equal(tape.entries[1].output.numpy(), np.tanh(np.ones((512, 512), np.float32)) * 1.5)


def test_gradient_lets_go_of_the_intermediate_gradients_and_the_pictures_replay_them():
    x = tl.Variable(np.ones((512, 512), np.float32))  # each array is 1 MB
    with tl.GradientTape() as tape:
        y = x
        for _ in range(8):
            y = tl.tanh(y) * 1.5
        loss = tl.reduce_sum(y)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        (grad,) = tape.gradient(loss, [x])
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # the walk makes 16 gradients of 1 MB on the way; only the source's (returned) outlives it
    assert held < 2.5 * MB, f"gradient() kept {held / MB:.1f} MB"

    # a tape recorded the same way, walked by the stepper (which keeps every gradient), shows the same numbers
    with tl.GradientTape() as again:
        y = x
        for _ in range(8):
            y = tl.tanh(y) * 1.5
        loss_again = tl.reduce_sum(y)
    steps = again.backward_steps(loss_again, [x])
    replayed = tape.last_backward.replay_grads()  # asked for by print(tape) and draw(tape): walked again
    shown = steps[-1].totals
    assert len(replayed) == len(shown) == 18  # loss, 16 intermediates, x
    pairs = zip(tape.last_backward.entries, again.last_backward.entries)
    for e, f in pairs:
        np.testing.assert_array_equal(replayed[e.key], shown[f.key])
    assert replayed[x._key] is grad._value  # the very array gradient() returned
    assert "tanh" in str(tape)


def mnist_mlp_steps(steps, batch_size=16, on_step=None):
    """Train the lesson's 784-128-10 MLP (tapelab Dense layers, SGD) on the shipped MNIST sample."""
    (x_train, y_train), _ = tl.datasets.mnist.load_data(tl.datasets.mnist.SAMPLE, verbose=False)
    x_train = x_train.reshape(-1, 784).astype(np.float32) / 255
    tl.random.set_seed(0)
    model = tl.keras.Sequential([tl.keras.layers.Dense(128, activation="relu"), tl.keras.layers.Dense(10)])
    optimizer = tl.keras.optimizers.SGD(0.05, momentum=0.9)
    loss_fn = tl.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    rows = len(x_train) // batch_size * batch_size
    for step in range(steps):
        start = step * batch_size % rows
        x, y = x_train[start:start + batch_size], y_train[start:start + batch_size]
        with tl.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        if on_step:
            on_step(step, loss)
    return float(loss)


def test_ten_thousand_mnist_steps_keep_memory_flat(record_property):
    """Memory is sampled every 100 steps. numpy's and Python's internal caches fill up during roughly the first
    1,500 steps (about 140 KB, then they stop); after that the traced memory must not grow at all."""
    steps, window = 10_000, 1_000
    at = np.arange(100, steps + 1, 100)
    samples = np.zeros(len(at))  # preallocated: sampling must not allocate what it measures

    def on_step(step, loss):
        if step % 100 == 99:
            samples[step // 100] = tracemalloc.get_traced_memory()[0]

    gc.collect()
    tracemalloc.start()
    start = time.perf_counter()
    try:
        final_loss = mnist_mlp_steps(steps, on_step=on_step)
    finally:
        tracemalloc.stop()
    seconds = time.perf_counter() - start
    first, last = samples[at <= window].mean(), samples[at > steps - window].mean()
    slope = np.polyfit(at[at > steps // 2], samples[at > steps // 2], 1)[0]  # bytes/step in the steady state
    record_property("bytes_per_step", round(slope, 2))
    record_property("seconds", round(seconds, 1))
    print(f"\n{steps} MNIST MLP steps (batch 16) under tracemalloc: {seconds:.1f} s; traced memory in the first "
          f"{window} steps {first / MB:.3f} MB, in the last {last / MB:.3f} MB ({last - first:+.0f} bytes); "
          f"steady state {slope:+.2f} bytes/step")
    assert final_loss < 1.0  # it did learn: the steps were real
    assert abs(last - first) < 256 * 1024, f"memory grew by {last - first:.0f} bytes"
    assert abs(slope) < 2, f"memory grows by {slope:.1f} bytes per step"  # a leak of one small object per step fails


def test_two_threads_training_at_once_keep_their_own_tapes():
    """Each thread trains its own model; every step both threads are inside their tapes at the same time."""
    steps = 30
    barrier = threading.Barrier(2)
    results, errors = {}, []

    def train(name, seed, barrier):
        try:
            # (numpy's own generator: tl.random's seed is one for the process, as TF's, and a race between the
            # threads' set_seed calls would change the data, not the tapes)
            rng = np.random.default_rng(seed)
            w = tl.Variable(rng.normal(size=(3, 2)).astype(np.float32), name=f"w_{name}")
            x = tl.constant(rng.normal(size=(5, 3)).astype(np.float32))
            counts = []
            for _ in range(steps):
                with tl.GradientTape() as tape, tl.name_scope(name):
                    h = tl.matmul(x, w)
                    if barrier:
                        barrier.wait()  # the other thread is now recording too
                    loss = tl.reduce_mean(tl.square(tl.tanh(h)))
                    if barrier:
                        barrier.wait()
                counts.append([e.scope for e in tape.entries])
                w.assign_sub(0.5 * tape.gradient(loss, w))
            results[name, barrier is not None] = (counts, w.numpy().copy())
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
            barrier and barrier.abort()

    threads = [threading.Thread(target=train, args=(n, s, barrier)) for n, s in [("a", 1), ("b", 2)]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    train("a", 1, None)  # the same training alone, for reference
    train("b", 2, None)
    for name in ("a", "b"):
        scopes, w = results[name, True]
        assert scopes == [[f"{name}/"] * 4] * steps  # matmul, tanh, square, reduce_mean: only this thread's ops
        np.testing.assert_array_equal(w, results[name, False][1])
