"""BLAS threads: a lesson's MNIST epoch with tapelab's one BLAS thread and with OpenBLAS's own default.

    .venv/bin/python benchmarks/bench_threads.py               # --repeats 5; --quick for a smoke run

The epoch is lesson 05's: the 784-128-10 ReLU MLP (Dense layers), SparseCategoricalCrossentropy and Adam, written
with GradientTape, batch 32 over 8,000 digits of the MNIST sample (``tl.keras.datasets.mnist.load_data()``): 250
steps. Beside it, in the same process, the same epoch by hand in numpy (same weights, same batches, Adam). Each
run is a fresh process, as a learner's kernel is, in four cases:

- quiet, tapelab's default (``import tapelab`` sets numpy's BLAS to one thread);
- quiet, unlimited: ``OPENBLAS_NUM_THREADS`` set to the count OpenBLAS starts with on its own here (a count the
  user set, so tapelab leaves it alone: the BLAS as it was before tapelab limited it);
- the same two with one competing CPU-bound process (``python -c 'while True: pass'``, started here and killed
  after): a shared machine, or a Binder/JupyterHub pod that sees more cores than its CPU quota gives it.

Best and median of ``--repeats`` each, the cases interleaved. Then single products of the lesson's sizes with 1
and 2 BLAS threads on the quiet machine: what a second thread gains them.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "TAPELAB_NUM_THREADS")
CASES = [("quiet", "tapelab's default"), ("quiet", "unlimited"), ("competing", "tapelab's default"),
         ("competing", "unlimited")]


# ---- in the child: one epoch each way ------------------------------------------------------------------------------

def epochs(digits, batch_size=32):
    """Run in a fresh process: one tapelab epoch and one numpy-by-hand epoch; print their times as JSON."""
    import numpy as np
    from threadpoolctl import threadpool_info

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_training
    import reference

    import tapelab as tl

    (x_train, y_train), _ = tl.keras.datasets.mnist.load_data()
    X = (x_train[:digits] / 255.0).astype(np.float32).reshape(-1, 784)
    Y = y_train[:digits].astype(np.int32)
    batches = [(X[i:i + batch_size], Y[i:i + batch_size]) for i in range(0, len(X), batch_size)]

    model = bench_training.tapelab_model(reference.init_mlp())  # Dense(128, relu), Dense(10), built
    loss_fn = tl.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tl.keras.optimizers.Adam(learning_rate=0.001)

    def train_step(images, labels):  # lesson 05's
        with tl.GradientTape() as tape:
            loss_value = loss_fn(labels, model(images))
        grads = tape.gradient(loss_value, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss_value

    numpy_step = numpy_adam_step(reference.init_mlp())
    train_step(*batches[0]), numpy_step(*batches[0])  # (first calls: Adam's slots, numpy's first products)
    start = time.perf_counter()
    for images, labels in batches:
        train_step(images, labels)
    tapelab_s = time.perf_counter() - start
    start = time.perf_counter()
    for images, labels in batches:
        numpy_step(images, labels)
    numpy_s = time.perf_counter() - start
    blas = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
    print(json.dumps({"tapelab": tapelab_s, "numpy": numpy_s, "steps": len(batches), "threads": max(blas)}))


def numpy_adam_step(params, lr=1e-3, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
    """``step(x, y)``: forward, backward (``reference.py``) and Adam by hand, training ``params`` in place."""
    import numpy as np
    import reference

    m, v, t = [np.zeros_like(p) for p in params], [np.zeros_like(p) for p in params], [0]

    def step(x, y):
        loss, saved = reference.numpy_mlp_forward(params, x, y)
        grads = reference.numpy_mlp_backward(params, x, y, saved)
        t[0] += 1
        scale = lr * np.sqrt(1 - beta_2 ** t[0]) / (1 - beta_1 ** t[0])
        for p, g, mk, vk in zip(params, grads, m, v):
            mk *= beta_1
            mk += (1 - beta_1) * g
            vk *= beta_2
            vk += (1 - beta_2) * np.square(g)
            p -= scale * mk / (np.sqrt(vk) + epsilon)
        return loss

    return step


# ---- in the parent -------------------------------------------------------------------------------------------------

def clean_env(**variables):
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    return {**env, **variables}


def openblas_own_threads():
    """How many threads OpenBLAS starts with on its own here (no variable set, no tapelab)."""
    code = ("import numpy, json; from threadpoolctl import threadpool_info; "
            "print(json.dumps(max(p['num_threads'] for p in threadpool_info() if p['user_api'] == 'blas')))")
    return json.loads(subprocess.run([sys.executable, "-c", code], env=clean_env(), capture_output=True, text=True,
                                     check=True).stdout)


def one_run(limit, own_threads, digits):
    env = clean_env() if limit == "tapelab's default" else clean_env(OPENBLAS_NUM_THREADS=str(own_threads))
    done = subprocess.run([sys.executable, __file__, "--child", "--digits", str(digits)], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def products(repeats):
    """Seconds per (32, 784) @ (784, 128) and (2000, 784) @ (784, 128) float32 product with 1 and 2 BLAS threads."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    w = rng.standard_normal((784, 128)).astype(np.float32)
    out = {}
    for rows, calls in ((32, 2000), (2000, 40)):
        x = rng.standard_normal((rows, 784)).astype(np.float32)
        for _ in range(repeats):  # (1 and 2 threads interleaved: a busy moment slows both)
            for threads in (1, 2):
                with threadpool_limits(threads, user_api="blas"):
                    x @ w  # (wakes the threads)
                    start = time.perf_counter()
                    for _ in range(calls):
                        x @ w
                    seconds = (time.perf_counter() - start) / calls
                out[rows, threads] = min(out.get((rows, threads), seconds), seconds)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="2 repeats of 2,000 digits, for a smoke run")
    parser.add_argument("--digits", type=int, default=8_000, help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return epochs(args.digits)
    repeats, digits = (2, 2_000) if args.quick else (args.repeats, args.digits)

    import numpy as np

    from tapelab import threads  # (the products below set their own thread counts)

    own = openblas_own_threads()
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} cpus, CPU affinity "
          f"{threads.affinity_cpus()}, cgroup quota {threads.cgroup_cpu_limit() or 'none'}, OpenBLAS on its own: "
          f"{own} threads, OPENBLAS_CORETYPE {os.environ.get('OPENBLAS_CORETYPE', '-')}; {digits} digits, batch 32; "
          f"best / median of {repeats}")
    runs = {case: [] for case in CASES}
    for _ in range(repeats):
        for load, limit in CASES:
            rival = None
            if load == "competing":
                rival = subprocess.Popen([sys.executable, "-c", "while True: pass"])
                time.sleep(0.2)  # (running before the epoch starts)
            try:
                runs[load, limit].append(one_run(limit, own, digits))
            finally:
                if rival is not None:
                    rival.kill()
                    rival.wait()

    def cell(results, side):
        times = [r[side] for r in results]
        return f"{min(times):.3f} / {statistics.median(times):.3f}"

    print("\n| machine | BLAS | threads | tapelab epoch, s (best / median) | numpy by hand, s (best / median) |")
    print("|---|---|---|---|---|")
    for (load, limit), results in runs.items():
        print(f"| {load} | {limit} | {results[0]['threads']} | {cell(results, 'tapelab')} | {cell(results, 'numpy')} |")
    print(f"({results[0]['steps']} steps an epoch)")

    per_call = products(max(repeats, 3))
    print("\n| product (float32) | 1 thread, us | 2 threads, us | time with 2 / with 1 |")
    print("|---|---|---|---|")
    for rows in (32, 2000):
        one, two = per_call[rows, 1] * 1e6, per_call[rows, 2] * 1e6
        print(f"| ({rows}, 784) @ (784, 128) | {one:.1f} | {two:.1f} | {two / one:.2f}x |")


if __name__ == "__main__":
    main()
