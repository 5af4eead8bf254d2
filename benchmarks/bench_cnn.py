"""The quickstart-for-experts CNN: one training step on a 32-image MNIST batch, and one epoch of the sample.

    .venv/bin/python benchmarks/bench_cnn.py [--steps 40] [--repeats 5] [--threads 1]

The model is TF's "quickstart for experts": Conv2D(32, 3, relu) - Flatten - Dense(128, relu) - Dense(10),
sparse softmax cross-entropy from logits, Adam. Side by side in one run, from the same weights:
- tapelab: the tape loop a learner writes (Keras layers, GradientTape, the loss object, Adam);
- numpy: the same step written by hand (``reference.numpy_cnn_step``: the same im2col convolution);
- PyTorch on the CPU, if it is installed (``pip install torch``; not a tapelab dependency), as the anchor.
Each side runs ``steps`` steps per repeat, interleaved; the median step time of the best repeat counts.
Then one epoch of ``model.fit`` on the shipped 8,000-digit sample (250 steps of 32).
BLAS (and torch) run on ``--threads`` threads, one by default: a shared 2-core machine's multi-threaded
timings swing too much to compare.
"""

import argparse
import os
import platform
import statistics
import sys
import time

if __name__ == "__main__":
    _threads = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--threads=")), None)
    if "--threads" in sys.argv:
        _threads = sys.argv[sys.argv.index("--threads") + 1]
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = _threads or "1"

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402

import tapelab as tl  # noqa: E402


def tapelab_side(params):
    tl.keras.backend.clear_session()
    model = tl.keras.Sequential([tl.keras.Input((28, 28, 1)), tl.keras.layers.Conv2D(32, 3, activation="relu"),
                                 tl.keras.layers.Flatten(), tl.keras.layers.Dense(128, activation="relu"),
                                 tl.keras.layers.Dense(10)])
    model.set_weights(params)
    loss_fn = tl.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tl.keras.optimizers.Adam()

    def step(x, y):
        with tl.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return float(loss)

    return step


def torch_side(params):
    import torch

    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    kernel, bias, w1, b1, w2, b2 = [torch.tensor(p) for p in params]
    conv = torch.nn.Conv2d(1, 32, 3)
    dense1, dense2 = torch.nn.Linear(26 * 26 * 32, 128), torch.nn.Linear(128, 10)
    with torch.no_grad():  # the same weights, in torch's layouts (NCHW; its flatten order is channels first)
        conv.weight.copy_(kernel.permute(3, 2, 0, 1))
        conv.bias.copy_(bias)
        dense1.weight.copy_(w1.reshape(26, 26, 32, 128).permute(3, 2, 0, 1).reshape(128, -1))
        dense1.bias.copy_(b1)
        dense2.weight.copy_(w2.T)
        dense2.bias.copy_(b2)
    model = torch.nn.Sequential(conv, torch.nn.ReLU(), torch.nn.Flatten(), dense1, torch.nn.ReLU(), dense2)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(x, y):
        xt, yt = torch.from_numpy(x).permute(0, 3, 1, 2), torch.from_numpy(y.astype(np.int64))
        optimizer.zero_grad()
        loss = loss_fn(model(xt), yt)
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


def has_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", default="1")
    parser.add_argument("--no-epoch", action="store_true", help="skip the fit epoch on the MNIST sample")
    args = parser.parse_args(argv)

    (x_train, y_train), _ = tl.keras.datasets.mnist.load_data()
    x_train = (x_train[..., None] / 255.0).astype(np.float32)
    batches = [(x_train[k * 32:(k + 1) * 32], y_train[k * 32:(k + 1) * 32]) for k in range(args.steps)]
    sides = {"numpy": lambda p: reference.numpy_cnn_step(p), "tapelab": tapelab_side}
    if has_torch():
        sides["torch"] = torch_side
    best = {name: float("inf") for name in sides}
    first_loss = {}
    for _ in range(args.repeats):
        for name, make in sides.items():
            step = make(reference.init_cnn())
            times = []
            for k, (x, y) in enumerate(batches):
                t0 = time.perf_counter()
                loss = step(x, y)
                times.append(time.perf_counter() - t0)
                if k == 0:
                    first_loss[name] = loss
            best[name] = min(best[name], statistics.median(times[1:]))

    import numpy  # noqa: F401  (the version line)
    versions = f"numpy {np.__version__}"
    if "torch" in sides:
        import torch

        versions += f", torch {torch.__version__}"
    print(f"python {platform.python_version()}, {versions}, {os.cpu_count()} cpus, threads {args.threads}; "
          f"one step on 32 MNIST images, median of {args.steps - 1} steps, best of {args.repeats} repeats")
    for name in sides:
        print(f"  {name:8s} {best[name] * 1e3:7.2f} ms/step   first loss {first_loss[name]:.5f}")
    print(f"  tapelab / numpy: {best['tapelab'] / best['numpy']:.2f}x")
    if "torch" in sides:
        print(f"  tapelab / torch: {best['tapelab'] / best['torch']:.2f}x (goal <= 1.5x)")
    if not args.no_epoch:
        tl.random.set_seed(0)
        model = tl.keras.Sequential([tl.keras.Input((28, 28, 1)), tl.keras.layers.Conv2D(32, 3, activation="relu"),
                                     tl.keras.layers.Flatten(), tl.keras.layers.Dense(128, activation="relu"),
                                     tl.keras.layers.Dense(10)])
        model.compile(optimizer="adam", loss=tl.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
        t0 = time.perf_counter()
        history = model.fit(x_train, y_train, epochs=1, verbose=0)
        print(f"one epoch of model.fit on the {len(x_train):,}-digit sample (batch 32): "
              f"{time.perf_counter() - t0:.1f} s, training accuracy {history.history['accuracy'][0]:.3f}")
    return best


if __name__ == "__main__":
    main()
