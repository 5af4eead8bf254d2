"""Regenerate the pictures in docs/: `python docs/make_pictures.py` (needs Graphviz or graphviz-pure).

    docs/tape_seed_000.{svg,png,txt}   x, y, matmul, reduce_mean, after tape.gradient(loss, [x, y])
    docs/tape_mlp_step.{svg,png,txt}   one training step of a 784-128-10 MLP on an MNIST-shaped batch
    docs/tape_mlp_step_collapsed.png   the same tape with each layer collapsed into one box
    docs/stepper.png, stepper_mlp.png  with --stepper: the stepper in JupyterLab (the seed tape; an MLP step deep in
                                       its backward pass), shot by the browser tests (needs Chromium and the test
                                       extra; the test suite itself never writes docs/)
"""

import os
import pathlib
import subprocess
import sys

import numpy as np

import tapelab as tl

HERE = pathlib.Path(__file__).resolve().parent


# Each tape is recorded as a notebook cell would record it (module-level code in a namespace of its own), so the
# pictures carry the code's names: z and loss, h and logits (a function's locals are not looked up).
SEED_000 = """
x = tl.Variable(tl.ones((2, 2)), name="x")
y = tl.Variable([[2, 2], [2, 2]], dtype=tl.float32, name="y")
with tl.GradientTape() as tape:
    z = tl.matmul(x, y)
    loss = tl.reduce_mean(z)
tape.gradient(loss, [x, y])
"""

MLP_STEP = """
rng = np.random.default_rng(0)
def glorot(n_in, n_out):
    limit = np.sqrt(6 / (n_in + n_out))
    return rng.uniform(-limit, limit, size=(n_in, n_out)).astype("float32")
kernel = tl.Variable(glorot(784, 128), name="kernel")
bias = tl.Variable(np.zeros(128, "float32"), name="bias")
kernel_1 = tl.Variable(glorot(128, 10), name="kernel")
bias_1 = tl.Variable(np.zeros(10, "float32"), name="bias")
X = tl.constant(rng.random((32, 784), dtype=np.float32))  # an MNIST-shaped batch: 28 x 28 pixels in [0, 1)
labels = tl.constant(rng.integers(0, 10, size=32).astype("int32"))
with tl.GradientTape() as tape:
    with tl.name_scope("dense"):
        h = tl.nn.relu(tl.matmul(X, kernel) + bias)
    with tl.name_scope("dense_1"):
        logits = tl.matmul(h, kernel_1) + bias_1
    loss = tl.reduce_mean(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
tape.gradient(loss, [kernel, bias, kernel_1, bias_1])
"""


def run_cell(code, then):
    """Run ``code`` at module level in a fresh namespace, as a notebook cell runs, then ``then`` (an expression)
    in the same namespace: names are looked up when a picture is made, so it is made there."""
    namespace = {"tl": tl, "np": np}
    exec(compile(code, "<cell>", "exec"), namespace)
    return eval(then, namespace)


def save(drawing, name):
    drawing.save(HERE / f"{name}.svg")
    drawing.save(HERE / f"{name}.png")
    print(f"wrote docs/{name}.svg and .png (rendered by {drawing.dot[0]} dot)")


def stepper_screenshots():
    """Run the browser tests that take the stepper's screenshots, with their folder pointed at docs/."""
    env = dict(os.environ, TAPELAB_SCREENSHOTS=str(HERE), CI="1")  # CI: fail instead of skipping without Chromium
    tests = HERE.parent / "tests" / "e2e" / "test_browser.py"
    subprocess.run([sys.executable, "-m", "pytest", str(tests), "-m", "browser",
                    "-k", "seed_stepper or mlp_step", "-o", "addopts=", "-q", "-p", "no:cacheprovider"], env=env,
                   check=True)
    print("wrote docs/stepper.png and docs/stepper_mlp.png")


def main():
    if "--stepper" in sys.argv[1:]:
        stepper_screenshots()
    listing, drawing = run_cell(SEED_000, "str(tape), tl.viz.draw(tape, title='seed 000: loss = reduce_mean(x @ y), "
                                          "after tape.gradient(loss, [x, y])')")
    (HERE / "tape_seed_000.txt").write_text(listing + "\n")
    save(drawing, "tape_seed_000")
    listing, drawing, collapsed = run_cell(MLP_STEP, "str(tape), tl.viz.draw(tape, title='one MLP training step "
                                           "(784-128-10, batch 32)'), tl.viz.draw(tape, collapse=True, title='the "
                                           "same step, each layer collapsed')")
    (HERE / "tape_mlp_step.txt").write_text(listing + "\n")
    save(drawing, "tape_mlp_step")
    save(collapsed, "tape_mlp_step_collapsed")

if __name__ == "__main__":
    main()
