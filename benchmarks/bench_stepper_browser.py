"""The stepper in the browser: how long one step takes to show, on a 100-op tape, in JupyterLab + headless Chromium.

    .venv/bin/python benchmarks/bench_stepper_browser.py                  # 60 steps of each kind
    .venv/bin/python benchmarks/bench_stepper_browser.py --steps 20       # quicker
    .venv/bin/python benchmarks/bench_stepper_browser.py --tapelab DIR    # the same with another checkout's tapelab

A chain of 100 ops (``v = tanh(v * 0.5)`` 50 times) is recorded and stepped. Timed from the user's action
until the page shows the new step, in the page's own clock (``performance.now()``):
- **Next** / **Prev**: a click on the button (the click goes to the kernel and the new position comes back);
- **slider**: an arrow key on the slider, which moves the picture in the browser without the kernel;
for the picture (the current op restyled, ``.tapelab-graph[data-position]``) and for the panel with the
chain-rule text (``.tapelab-stepper-panel[data-position]``, always a round trip to the kernel).
With ``--tapelab`` the kernel imports tapelab from another checkout (for before/after figures); a stepper
without the browser-side picture is then timed by its panel only.
"""

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests import browser  # noqa: E402

CHAIN = ("import tapelab as tf\n"
         "w = tf.Variable(1.0, name='w')\n"
         "with tf.GradientTape() as tape:\n"
         "    v = w\n"
         "    for _ in range(50):\n"
         "        v = tf.tanh(v * 0.5)\n"
         "tf.viz.BackwardStepper(tape, v, w)")

STEP = """async ([action, n, pause]) => {
    const sleep = (ms) => new Promise(r => setTimeout(r, ms));
    const root = document.querySelector('.tapelab-stepper');
    const graph = root.querySelector('.tapelab-graph');
    const panel = () => root.querySelector('.tapelab-stepper-panel');
    const position = () => Number(panel().dataset.position);
    const slider = root.querySelector('.noUi-handle, [role=slider]');
    const picture = [], text = [];
    for (let i = 0; i < n; i++) {
        const want = position() + (action === 'prev' ? -1 : 1);
        const t0 = performance.now();
        if (action === 'slider') { slider.focus(); slider.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight',
            code: 'ArrowRight', keyCode: 39, which: 39, bubbles: true})); }
        else root.querySelector(`button.tapelab-stepper-${action}`).click();
        let shown = !graph;
        while (!(shown && position() === want)) {
            if (!shown && graph.dataset.position === String(want)) {
                picture.push(performance.now() - t0);
                shown = true;
            }
            if (performance.now() - t0 > 5000) return {error: `${action}: position ${want} never showed`};
            await sleep(0);
        }
        text.push(performance.now() - t0);
        await sleep(pause);
    }
    return {picture, text};
}"""


def summary(ms):
    ms = sorted(ms)
    return f"median {statistics.median(ms):5.1f} ms, p90 {ms[int(0.9 * (len(ms) - 1))]:5.1f} ms, max {ms[-1]:5.1f} ms"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60, help="steps of each kind")
    parser.add_argument("--pause", type=int, default=100, help="ms between steps (a learner's pace is slower)")
    parser.add_argument("--tapelab", help="a checkout whose tapelab the kernel imports instead of this one")
    args = parser.parse_args()
    reason = browser.missing()
    if reason:
        sys.exit(reason)
    if args.tapelab:
        os.environ["PYTHONPATH"] = str(Path(args.tapelab).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / "nb").mkdir()
        browser.write_notebook(home / "nb" / "chain.ipynb", [CHAIN])
        with browser.jupyterlab(home / "nb", home) as (url, token), browser.chromium() as page:
            browser.open_notebook(page, url, token, "chain.ipynb", run=True)
            page.wait_for_selector(".tapelab-stepper-panel")
            has_picture = page.locator(".tapelab-graph").count() > 0
            which = args.tapelab or "this checkout"
            print(f"a 100-op chain in JupyterLab + headless Chromium ({which}); {args.steps} steps of each kind, "
                  f"{args.pause} ms apart")
            for action in ("next", "prev", "slider"):
                result = page.evaluate(STEP, [action, args.steps, args.pause])
                if "error" in result:
                    print(f"  {action:6s}: {result['error']}")
                    continue
                line = f"  {action:6s}: panel {summary(result['text'])}"
                if has_picture:
                    line += f" | picture {summary(result['picture'])}"
                print(line)


if __name__ == "__main__":
    main()
