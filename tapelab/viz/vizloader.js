// Graphviz in the browser (viz.js: Graphviz compiled to WebAssembly), for pictures where the kernel has no `dot`.
// Prepended to the ES modules of the widgets that draw DOT here (tapelab/viz/browser.py). The page fetches viz.js
// once: the first picture asks its kernel for it by a message (so the 1.2 MB never goes into a widget's saved
// state); every picture listens, and the first reply from any kernel settles the one load that all of them wait
// for. A busy kernel answers late, never too late: a picture only says it is still waiting.

const ASK_AGAIN_MS = 10000; // a picture still waiting by then asks its own kernel too (the first one may be gone)

function vizjsState() {
  return (globalThis.__tapelabVizjs ??= { loading: null, settle: null });
}

function vizjs(model, onWait) {
  const state = vizjsState();
  if (!state.loading) {
    state.loading = new Promise((resolve, reject) => { state.settle = { resolve, reject }; });
    state.loading.catch(() => { state.loading = null; }); // a failed load: the next picture tries again
    model.send({ need: "vizjs" });
  }
  const loading = state.loading;
  model.on("msg:custom", async (msg) => {
    if (msg.vizjs === undefined || state.loading !== loading || !state.settle) return; // settled already
    const { resolve, reject } = state.settle;
    state.settle = null;
    try {
      if (msg.error) throw new Error(msg.error);
      const url = URL.createObjectURL(new Blob([msg.vizjs], { type: "text/javascript" }));
      try { resolve(await (await import(url)).instance()); } finally { URL.revokeObjectURL(url); }
    } catch (e) {
      reject(new Error(`viz.js did not load: ${e.message || e}`));
    }
  });
  const timer = setTimeout(() => { onWait?.(); model.send({ need: "vizjs" }); }, ASK_AGAIN_MS);
  loading.finally(() => clearTimeout(timer)).catch(() => {});
  return loading;
}

// DOT text -> SVG text, or an Error whose message is Graphviz's own (a syntax error names its line)
async function drawDot(model, dot, onWait) {
  const viz = await vizjs(model, onWait);
  let result;
  try {
    result = viz.render(dot, { format: "svg" });
  } catch (e) { // Graphviz itself gave up (in WebAssembly: out of memory, on a very large graph): start afresh
    const state = vizjsState();
    state.loading = null;
    throw new Error(`Graphviz stopped: ${e.message || e}`);
  }
  if (result.status !== "success") {
    throw new Error(result.errors.map((e) => `${e.level || "error"}: ${e.message}`).join("\n") || "Graphviz failed");
  }
  return result.output;
}

// what a picture says while its kernel has not sent viz.js yet
const WAITING = "still waiting for the kernel to send Graphviz (viz.js): it answers when the running cells finish";

// An error where the picture would be: what went wrong and what still works
function showDrawError(el, error) {
  const pre = document.createElement("pre");
  pre.className = "tapelab-draw-error";
  pre.textContent = `Could not draw the tape in the browser: ${error.message || error}\n\n` +
    "print(tape) shows the same tape as text; tapelab.viz.to_dot(tape) gives the DOT source. " +
    "Where Graphviz can be installed (apt-get install graphviz, or pip install graphviz-pure), the kernel draws instead.";
  el.replaceChildren(pre);
}
