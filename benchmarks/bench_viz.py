"""Graph rendering: time to_dot and draw on a 2,000-entry tape, with both Graphviz programs.

    .venv/bin/python benchmarks/bench_viz.py            # --full also times the uncollapsed, uncapped graph

The tape: a 500-layer chain, each layer `tanh(x @ w + b) * 0.5` under its own name scope (4 ops), so
2,000 entries. Reference in the same run: a bare DOT graph of the same size (one plain node per op,
no labels, no clusters) rendered by the same program: what Graphviz alone costs.
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


if __name__ == "__main__":
    main()
