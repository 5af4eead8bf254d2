// Graphviz in the browser (viz.js: Graphviz compiled to WebAssembly), for pictures where the kernel has no `dot`.
// Prepended to the ES modules of the widgets that draw DOT here (tapelab/viz/browser.py). The first widget on a
// page asks its kernel for viz.js by a message (so the 1.2 MB is sent once per page and never stored in a widget's
// saved state), imports it and starts Graphviz; every later picture on the page waits for that same promise.

const VIZJS_TIMEOUT_MS = 30000;

function vizjs(model) {
  if (!globalThis.__tapelabVizjs) {
    const loading = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(
        `the kernel did not send viz.js within ${VIZJS_TIMEOUT_MS / 1000} s (is it busy, or gone?)`)), VIZJS_TIMEOUT_MS);
      model.on("msg:custom", async (msg) => {
        if (msg.vizjs === undefined) return;
        clearTimeout(timer);
        try {
          if (msg.error) throw new Error(msg.error);
          const url = URL.createObjectURL(new Blob([msg.vizjs], { type: "text/javascript" }));
          try { resolve(await (await import(url)).instance()); } finally { URL.revokeObjectURL(url); }
        } catch (e) {
          reject(new Error(`viz.js did not load: ${e.message || e}`));
        }
      });
      model.send({ need: "vizjs" });
    });
    globalThis.__tapelabVizjs = loading;
    loading.catch(() => { if (globalThis.__tapelabVizjs === loading) globalThis.__tapelabVizjs = null; }); // retry later
  }
  return globalThis.__tapelabVizjs;
}

// DOT text -> SVG text, or an Error whose message is Graphviz's own (a syntax error names its line)
async function drawDot(model, dot) {
  const viz = await vizjs(model);
  let result;
  try {
    result = viz.render(dot, { format: "svg" });
  } catch (e) { // Graphviz itself gave up (in WebAssembly: out of memory, on a very large graph)
    throw new Error(`Graphviz stopped: ${e.message || e}`);
  }
  if (result.status !== "success") {
    throw new Error(result.errors.map((e) => `${e.level || "error"}: ${e.message}`).join("\n") || "Graphviz failed");
  }
  return result.output;
}

// An error where the picture would be: what went wrong and what still works
function showDrawError(el, error) {
  const pre = document.createElement("pre");
  pre.className = "tapelab-draw-error";
  pre.textContent = `Could not draw the tape in the browser: ${error.message || error}\n\n` +
    "print(tape) shows the same tape as text; tapelab.viz.to_dot(tape) gives the DOT source. " +
    "Where Graphviz can be installed (apt-get install graphviz, or pip install graphviz-pure), the kernel draws instead.";
  el.replaceChildren(pre);
}
