"""Backward stepper benchmark, Python side: the set-up once, then each step's view, tapelab only.

    .venv/bin/python benchmarks/bench_stepper.py            # 50-entry tapes, every step, both modes
    .venv/bin/python benchmarks/bench_stepper.py --quick    # a smoke run

Two tapes of about 50 entries: (a) an MLP training step (17 Dense layers in name scopes, collapsed into boxes,
softmax cross-entropy) and (b) a chain of 50 elementwise ops on 2x2 tensors (no scopes: every op is
its own node, the worst case for Graphviz). For each: the one-time set-up (the walkthrough: backward
steps, names, DOT text and schedule; one Graphviz layout), then per step the work the kernel does when
the slider moves to a step it has not shown yet: ``step_view`` (pure; the picture is restyled in the
browser, see bench_stepper_browser.py). For comparison, the time of a full Graphviz run per step
(``to_dot`` with highlight and edge colours, then ``render_dot``), which the stepper avoids.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import tapelab as tl  # noqa: E402
from tapelab.viz import render_dot, step_view, to_dot, walkthrough  # noqa: E402


def mlp_tape():
    tl.random.set_seed(0)
    model = tl.keras.Sequential([tl.keras.layers.Dense(16, activation="relu") for _ in range(16)]
                                + [tl.keras.layers.Dense(10)])
    X = tl.random.normal((32, 8))
    y = tl.constant(np.arange(32) % 10)
    model(X)
    loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True)
    with tl.GradientTape() as tape:
        loss = loss_fn(y, model(X))
    return tape, loss, model.trainable_variables, dict(collapse=True)


def chain_tape(n=50):
    x = tl.Variable(np.full((2, 2), 0.5, np.float32), name="x")
    with tl.GradientTape() as tape:
        h = x
        for i in range(n - 1):
            h = tl.tanh(h) if i % 2 else h * x
        loss = tl.reduce_sum(h)
    return tape, loss, [x], {}


def bench(name, make, repeats, full_render_steps):
    tape, loss, sources, options = make()
    n_entries = len(tape.entries)
    t0 = time.perf_counter()
    walk = walkthrough(tape, loss, sources, **options)
    t1 = time.perf_counter()
    render_dot(walk.dot, "svg")
    t2 = time.perf_counter()
    per_step = []
    for mode in ("backward", "forward"):
        for k in range(walk.count(mode) + 1):
            best = float("inf")
            for _ in range(repeats):  # the widget caches each step; this times a first visit
                start = time.perf_counter()
                step_view(walk, k, mode)
                best = min(best, time.perf_counter() - start)
            per_step.append(best)
    full = []
    for k in range(min(full_render_steps, len(walk.steps))):
        s = walk.steps[k]
        start = time.perf_counter()
        render_dot(to_dot(tape, loss, sources, highlight=[s.index],  # (the same graph: the same edge ids)
                          edge_colors=[(e.id, "red") for e in walk.graph.edges if e.op == s.index], **options))
        full.append(time.perf_counter() - start)
    ms = [1000 * t for t in per_step]
    print(f"{name}: {n_entries} entries, {len(walk.steps)} backward steps, {len(walk.graph.edges)} drawn edges")
    print(f"  set-up once: walkthrough {1000 * (t1 - t0):.1f} ms, Graphviz layout {1000 * (t2 - t1):.1f} ms")
    print(f"  per step (step_view), {len(ms)} steps in both modes: "
          f"median {statistics.median(ms):.2f} ms, max {max(ms):.2f} ms")
    if full:
        print(f"  for comparison, a full to_dot + Graphviz run per step: median "
              f"{1000 * statistics.median(full):.0f} ms")
    return max(ms)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    repeats, full = (1, 1) if args.quick else (3, 5)
    worst = max(bench("MLP training step (17 Dense layers, collapsed)", mlp_tape, repeats, full),
                bench("chain of 50 elementwise ops", chain_tape, repeats, full))
    print(f"worst step (kernel side): {worst:.2f} ms")


if __name__ == "__main__":
    main()
