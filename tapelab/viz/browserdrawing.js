
// A tape drawn here: the DOT text (trait `source`) laid out by viz.js; the SVG goes back to the kernel (`svg`).
// A picture that has its SVG already (drawn before, the notebook's saved widget state) shows it as it is.
async function render({ model, el }) {
  el.classList.add("tapelab-drawing");
  const show = (svg) => {
    el.innerHTML = svg;
    el.querySelector("svg")?.setAttribute("style", "max-width: 100%; height: auto");
  };
  if (model.get("svg")) { show(model.get("svg")); return; }
  const note = document.createElement("div");
  note.className = "tapelab-drawing-note";
  note.textContent = "drawing the tape with Graphviz in the browser…";
  el.replaceChildren(note);
  try {
    const svg = await drawDot(model, model.get("source"), () => { note.textContent = WAITING; });
    show(svg);
    model.set("svg", svg);
    model.set("error", "");
  } catch (e) {
    showDrawError(el, e);
    model.set("error", e.message || String(e));
  }
  model.save_changes();
}

export default { initialize: ({ model }) => { saveWidgetStateWithNotebook(model); }, render };
