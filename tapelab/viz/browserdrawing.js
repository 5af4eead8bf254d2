
// A tape drawn here: the DOT text (trait `source`) laid out by viz.js; the SVG goes back to the kernel (`svg`).
async function render({ model, el }) {
  el.classList.add("tapelab-drawing");
  const note = document.createElement("div");
  note.className = "tapelab-drawing-note";
  note.textContent = "drawing the tape with Graphviz in the browser…";
  el.replaceChildren(note);
  try {
    const svg = await drawDot(model, model.get("source"));
    el.innerHTML = svg;
    el.querySelector("svg")?.setAttribute("style", "max-width: 100%; height: auto");
    model.set("svg", svg);
    model.set("error", "");
  } catch (e) {
    showDrawError(el, e);
    model.set("error", e.message || String(e));
  }
  model.save_changes();
}

export default { render };
