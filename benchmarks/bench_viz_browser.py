"""Graphviz in the browser: how long viz.js (tapelab/viz/vizjs/viz.js) takes to lay out tapes of growing size in
headless Chromium, beside graphviz-pure in the kernel on the same DOT (the same Graphviz, 16.1.0, natively).

    .venv/bin/python benchmarks/bench_viz_browser.py          # 100 to 5,000 ops drawn, scopes expanded

The tapes are bench_viz.py's chain (each layer `tanh(x @ w + b) * 0.5` under its own name scope, scopes expanded),
so a picture of N ops has about 2N nodes. Where the layout takes too long, BrowserDrawing refuses the picture with a
message (tapelab.viz.limits.MAX_NODES) instead of leaving the cell blank for minutes.
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_viz import big_tape  # noqa: E402

from tapelab import viz  # noqa: E402
from tapelab.viz.limits import MAX_NODES, NODE, VIZJS  # noqa: E402
from tapelab.viz.render import find_dot, render_dot  # noqa: E402
from tests import browser  # noqa: E402

TIME_IN_PAGE = """async ([code, sources]) => {
    const url = URL.createObjectURL(new Blob([code], {type: 'text/javascript'}));
    let t = performance.now();
    const viz = await (await import(url)).instance();
    const times = [performance.now() - t];
    for (const s of sources) {
        t = performance.now();
        const r = viz.render(s, {format: 'svg'});
        times.push(r.status === 'success' ? performance.now() - t : -1);
    }
    return times;
}"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, nargs="*", default=[100, 1000, 2000, 3000, 5000])
    args = parser.parse_args(argv)
    tape = big_tape(max(args.ops) // 4 + 1)
    sources = [viz.to_dot(tape, max_ops=n, collapse=False) for n in args.ops]
    with browser.chromium() as page:
        page.goto("about:blank")
        start, *times = page.evaluate(TIME_IN_PAGE, [VIZJS.read_text(encoding="utf-8"), sources])
    print(f"viz.js loaded and Graphviz started in {start:.0f} ms; MAX_NODES = {MAX_NODES}")
    print(f"{'ops drawn':>10} {'nodes':>7} {'viz.js in Chromium':>20} {'graphviz-pure':>15}")
    exe = find_dot("graphviz-pure")[1]
    for n, source, ms in zip(args.ops, sources, times):
        t = time.perf_counter()
        render_dot(source, "svg", exe)
        native = (time.perf_counter() - t) * 1e3
        print(f"{n:>10} {len(NODE.findall(source)):>7} {ms:>17.0f} ms {native:>12.0f} ms")


if __name__ == "__main__":
    main()
