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

// A notebook that holds a tapelab picture saves its widgets' state when it is saved, as JupyterLab's setting "Save
// Widget State Automatically" would (@jupyter-widgets/jupyterlab-manager's saveState, off by default in JupyterLab
// 4 and Notebook 7). Why: a learner's own saved notebook is trusted when reopened (the server signed it), so
// Jupyter shows the widget, not the still PNG beside it, and a widget whose state the notebook lacks shows "Error
// displaying widget: model not found" instead of the stepper. Called from each widget's initialize(); once per
// notebook (document context), on each save ("started": before the file is written) it writes what the manager's
// own _saveState writes, get_state_sync({drop_defaults: true}) of the live widgets, and also keeps the widgets the
// outputs still show that are no longer live (kernel restarted or shut down; a notebook reopened and not run), as
// last seen live or as the notebook was opened with them. Public API only (the manager's context and
// get_state_sync; the document context's saveState, sessionContext and model), each feature-detected: front ends
// with other widget managers (VS Code, Colab, Voila, classic Notebook 6) have no such context, and nothing happens.
const WIDGET_STATE = "application/vnd.jupyter.widget-state+json";
const MODEL_REF = /IPY_MODEL_([\w-]+)|"model_id":\s*"([\w-]+)"/g; // a widget inside another; a widget an output shows

function modelRefs(value) {
  return [...JSON.stringify(value ?? null).matchAll(MODEL_REF)].map((m) => m[1] || m[2]);
}

// the state to save: every live widget (as the manager saves it), then what the outputs show, drawn from `known`
function stateToSave(live, known, cells) {
  const all = { ...known, ...live.state };
  const keep = new Set(Object.keys(live.state));
  const add = (ids) => {
    for (const todo = [...ids]; todo.length;) {
      const id = todo.pop();
      if (keep.has(id) || !all[id]) continue;
      keep.add(id);
      todo.push(...modelRefs(all[id].state));
    }
  };
  add(cells.flatMap((cell) => modelRefs(cell.outputs || [])));
  for (const [id, m] of Object.entries(all)) { // links (jslink: Play, slider, picture) point at what they join
    const refs = modelRefs(m.state);
    if (!keep.has(id) && refs.some((r) => keep.has(r)) && refs.every((r) => all[r])) add([id]);
  }
  const state = {};
  for (const id of keep) state[id] = all[id];
  return { ...live, state };
}

function saveWidgetStateWithNotebook(model) {
  try {
    const manager = model?.widget_manager;
    const context = manager?.context;
    const doc = context?.model;
    if (typeof manager?.get_state_sync !== "function" || typeof context?.saveState?.connect !== "function" ||
        typeof doc?.setMetadata !== "function" || typeof doc?.getMetadata !== "function") return;
    const notebooks = (globalThis.__tapelabSavesWidgetState ??= new WeakMap()); // context -> the state seen
    if (notebooks.has(context)) return; // (each widget's module may be a copy of this one: the mark is global)
    const known = { ...(doc.getMetadata("widgets")?.[WIDGET_STATE]?.state || {}) };
    notebooks.set(context, known);
    const remember = () => Object.assign(known, manager.get_state_sync({ drop_defaults: true }).state);
    context.sessionContext?.statusChanged?.connect?.((_, status) => {
      if (status === "idle" || status === "restarting") { try { remember(); } catch { /* keep what we have */ } }
    });
    context.saveState.connect((_, progress) => {
      if (progress !== "started") return;
      try {
        const live = manager.get_state_sync({ drop_defaults: true });
        const state = stateToSave(live, known, doc.toJSON?.().cells || []);
        Object.assign(known, state.state);
        doc.setMetadata("widgets", { [WIDGET_STATE]: state });
      } catch (e) {
        console.warn("tapelab: could not save the widgets' state with the notebook", e);
      }
    });
  } catch (e) {
    console.warn("tapelab: could not arrange to save the widgets' state with the notebook", e);
  }
}
