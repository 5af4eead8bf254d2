"""Graph rendering: time to_dot and draw on a 2,000-entry tape, with both Graphviz programs, and a 50-step RNN.

    .venv/bin/python benchmarks/bench_viz.py            # --full also times the uncollapsed, uncapped graph

The tape: a 500-layer chain, each layer `tanh(x @ w + b) * 0.5` under its own name scope (4 ops), so
2,000 entries. Reference in the same run: a bare DOT graph of the same size (one plain node per op,
no labels, no clusters) rendered by the same program: what Graphviz alone costs.

The RNN: keras.layers.SimpleRNN(8) unrolled over 50 steps (one name scope per step) and a Dense head, drawn
collapsed per step with the flow view, as lesson 09 draws it: to_dot, the SVG and the notebook's PNG. Beside
it, the same picture with every step's edges from the one weight node (dot.SHARED_OVER lifted), as it was drawn
before the weights were drawn again beside each step.
"""

import argparse
import platform
import time

import numpy as np

import tapelab as tl
from tapelab import viz


def big_tape(layers=500):
    rng = np.random.default_rng(0)
    x = tl.constant(rng.normal(size=(2, 4)).astype("float32"))
    ws = [tl.Variable(rng.normal(size=(4, 4)).astype("float32") * 0.5, name="kernel") for _ in range(layers)]
    bs = [tl.Variable(np.zeros(4, "float32"), name="bias") for _ in range(layers)]
    with tl.GradientTape() as tape:
        h = x
        for k in range(layers):
            with tl.name_scope(f"layer_{k}"):
                h = tl.tanh(tl.matmul(h, ws[k]) + bs[k]) * 0.5
        loss = tl.reduce_sum(h)
    tape.gradient(loss, ws + bs)
    return tape


def rnn_tape(steps=50):
    tl.random.set_seed(0)
    rnn, head = tl.keras.layers.SimpleRNN(8), tl.keras.layers.Dense(1)
    x = tl.random.normal([4, steps, 1])
    with tl.GradientTape() as tape:
        y = head(rnn(x))
        loss = tl.reduce_mean(y * y)
    tape.gradient(loss, rnn.trainable_variables + head.trainable_variables)
    return tape


def time_rnn(exe):
    tape = rnn_tape()
    t_dot, source = best(lambda: viz.to_dot(tape, collapse=True, flow=True))
    t_svg, _ = best(lambda: viz.render_dot(source, "svg", exe))
    t_png, _ = best(lambda: viz.render.cell_png(source, exe))
    print(f"50-step SimpleRNN, collapsed per step, flow=True: to_dot {t_dot * 1000:.0f} ms, "
          f"SVG {t_svg:.2f} s, the cell's PNG {t_png:.2f} s")
    saved, viz.dot.SHARED_OVER = viz.dot.SHARED_OVER, 10**9
    try:
        before = viz.to_dot(tape, collapse=True, flow=True)
    finally:
        viz.dot.SHARED_OVER = saved
    t_before, _ = best(lambda: viz.render_dot(before, "svg", exe), repeat=1)
    print(f"  the same with one weight node feeding all 50 steps: SVG {t_before:.2f} s")


def bare_dot(n_ops):
    lines = ["digraph g {"] + [f"  n{i} -> n{i + 1};" for i in range(n_ops - 1)] + ["}"]
    return "\n".join(lines)


def best(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true", help="also render every op (collapse=False, max_ops=None)")
    args = ap.parse_args()
    tape = big_tape()
    n = len(tape.last_backward.entries)
    print(f"tape: {n} entries; Python {platform.python_version()}, numpy {np.__version__}")
    t_dot, source = best(lambda: viz.to_dot(tape))
    print(f"to_dot (defaults: scopes collapsed, max_ops={viz.dot.MAX_OPS}): {t_dot * 1000:.0f} ms, "
          f"{source.count(' -> ')} edges")
    t_text, _ = best(lambda: str(tape))
    print(f"listing (str(tape), all {n} ops): {t_text * 1000:.0f} ms")
    configs = [("defaults", {})]
    if args.full:
        configs.append(("every op", {"collapse": False, "max_ops": None}))
    for which in ("system", "graphviz-pure"):
        try:
            kind, exe = viz.find_dot(which)
        except viz.GraphvizNotFound:
            print(f"{which}: not installed, skipped")
            continue
        t_bare, _ = best(lambda exe=exe: viz.render_dot(bare_dot(viz.dot.MAX_OPS * 2), "svg", exe))
        for name, opts in configs:
            reps = 3 if name == "defaults" else 1
            t_draw, d = best(lambda exe=exe, opts=opts: viz.draw(tape, dot=exe, **opts), repeat=reps)
            print(f"{which:13s} draw ({name}): {t_draw:.2f} s total (to_dot + render); "
                  f"bare {viz.dot.MAX_OPS * 2}-node chain: {t_bare:.2f} s; svg {len(d.svg) // 1024} KiB")
        if which == "system":
            time_rnn(exe)


if __name__ == "__main__":
    main()
