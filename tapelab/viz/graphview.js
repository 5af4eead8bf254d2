// The stepper's picture in the browser: Graphviz's SVG, laid out once in Python, restyled here at every step.
//
// Traits (tapelab/viz/graphview.py): svg (once; or dot, laid out here by viz.js when the kernel has no Graphviz), schedules (once: per mode, when each edge and node changes),
// position and mode (every step; linked to the slider and the mode buttons in the browser, so a step costs
// no Graphviz run and no round trip). The view keeps the current op, its edges and its output in sight,
// scrolling only when they are not already visible, and a click on a node jumps to that node's step.

const MARGIN = 24; // px kept free around what is followed

function render({ model, el }) {
  el.classList.add("tapelab-graph");
  const bar = document.createElement("div");
  bar.className = "tapelab-graph-bar";
  const box = document.createElement("div");
  box.className = "tapelab-graph-box";
  el.append(bar, box);
  const button = (text, title, onclick) => {
    const b = document.createElement("button");
    Object.assign(b, { textContent: text, title, onclick });
    b.className = "tapelab-graph-zoom";
    bar.append(b);
  };
  button("−", "zoom out", () => setZoom(zoom / 1.25));
  button("+", "zoom in", () => setZoom(zoom * 1.25));
  button("fit", "the whole width in the box (the text may get small)", () => setZoom(fitZoom(0)));
  button("1:1", "natural size", () => setZoom(1));

  let svg = null, natural = null, zoom = 1, placed = false;
  let aim = null; // where a smooth scroll in flight is going: judge what is in view from there, not mid-way
  let aimTimer = null;
  const landed = () => { aim = null; clearTimeout(aimTimer); };
  box.addEventListener("scrollend", landed); // (and a timer, where the browser has no scrollend event)
  let nodes = new Map(), edges = new Map();

  function load() {
    if (!model.get("svg") && model.get("dot")) { // no Graphviz in the kernel: laid out here (vizloader.js)
      box.textContent = "drawing the tape with Graphviz in the browser…";
      drawDot(model, model.get("dot"), () => { box.textContent = WAITING; }).then(
        (drawn) => { model.set("svg", drawn); model.save_changes(); }, (e) => showDrawError(box, e));
      return;
    }
    box.innerHTML = model.get("svg");
    svg = box.querySelector("svg");
    nodes = new Map(); edges = new Map();
    placed = false;
    if (!svg) return;
    svg.removeAttribute("style");
    natural = { width: svg.width.baseVal.value, height: svg.height.baseVal.value }; // in px
    for (const g of svg.querySelectorAll("g.node[id]")) nodes.set(g.id, g);
    for (const g of svg.querySelectorAll("g.edge[id]")) edges.set(g.id, g);
    for (const [id, g] of nodes) {
      g.addEventListener("click", () => {
        const step = schedule().step_of_node[id];
        if (step !== undefined) { model.set("position", step); model.save_changes(); }
      });
    }
    apply();
  }

  const reduced = window.matchMedia("(prefers-reduced-motion: reduce)"); // the learner's setting: no animation
  const schedule = () => model.get("schedules")[model.get("mode")] || { current: [[]], edge_start: {}, edge_unit: {},
    appears: {}, step_of_node: {} };

  function fitZoom(floor) {
    if (!natural || !box.clientWidth) return 1;
    return Math.max(floor, Math.min(1, (box.clientWidth - 2) / natural.width));
  }

  function setZoom(z) {
    if (!svg) return;
    zoom = Math.min(4, Math.max(0.05, z));
    svg.style.width = `${natural.width * zoom}px`;
    svg.style.height = `${natural.height * zoom}px`;
    el.dataset.zoom = zoom.toFixed(3);
    follow(false);
  }

  function apply() {
    if (!svg) return;
    const s = schedule(), p = model.get("position"), mode = model.get("mode");
    const current = new Set(s.current[p] || []);
    el.classList.toggle("tapelab-mode-forward", mode === "forward");
    for (const [id, g] of nodes) {
      g.classList.toggle("tapelab-current", current.has(id));
      g.classList.toggle("tapelab-dimmed", (s.appears[id] ?? -1) > p);
      g.classList.toggle("tapelab-clickable", s.step_of_node[id] !== undefined);
    }
    for (const [id, g] of edges) {
      const start = s.edge_start[id];
      const state = start === undefined || start > p ? "pending" : current.has(s.edge_unit[id]) ? "current" : "done";
      g.setAttribute("class", `edge tapelab-${state}`);
    }
    el.dataset.position = String(p);
    el.dataset.mode = mode;
    el.dataset.count = String(s.count);
    if (!placed && box.clientWidth) { placed = true; setZoom(fitZoom(model.get("legible_zoom") || 1)); }
    follow(true);
  }

  // Keep the current op, its edges and the tensors at their ends in view (the ones it reads too, e.g. a
  // convolution's input), or as much of that as fits, the op first: scroll only as far as needed, and only if needed.
  function follow(smooth) {
    if (!svg || !box.clientWidth) return;
    const op = [...svg.querySelectorAll("g.node.tapelab-current")];
    if (!op.length) return;
    const edgesNow = [...svg.querySelectorAll("g.edge.tapelab-current")];
    const ends = (gs) => gs.flatMap((g) => (g.querySelector("title")?.textContent || "").split("->"));
    const ops = new Set(op.map((g) => g.id));
    const touching = [...edges.values()].filter((g) => ends([g]).some((id) => ops.has(id)));
    const tensors = (gs) => [...new Set(ends(gs))].map((id) => nodes.get(id)).filter((g) => g && !ops.has(g.id));
    const outer = box.getBoundingClientRect();
    const rect = (els) => {
      const r = els.map((e) => e.getBoundingClientRect());
      return { left: Math.min(...r.map((b) => b.left)) - outer.left + box.scrollLeft,
               top: Math.min(...r.map((b) => b.top)) - outer.top + box.scrollTop,
               right: Math.max(...r.map((b) => b.right)) - outer.left + box.scrollLeft,
               bottom: Math.max(...r.map((b) => b.bottom)) - outer.top + box.scrollTop };
    };
    const fits = (r) => r.bottom - r.top <= box.clientHeight - 2 * MARGIN && r.right - r.left <= box.clientWidth - 2 * MARGIN;
    const want = [[...op, ...touching, ...tensors(touching)], [...op, ...edgesNow, ...tensors(edgesNow)],
      [...op, ...edgesNow], op].map(rect).find(fits) || rect(op);
    const axis = (lo, hi, start, size) => {
      if (lo - MARGIN >= start && hi + MARGIN <= start + size) return start; // already in view: stay put
      if (hi - lo + 2 * MARGIN > size) return (lo + hi - size) / 2; // bigger than the view: centre it
      return lo - MARGIN < start ? lo - MARGIN : hi + MARGIN - size;
    };
    const from = aim || { top: box.scrollTop, left: box.scrollLeft };
    const top = axis(want.top, want.bottom, from.top, box.clientHeight);
    const left = axis(want.left, want.right, from.left, box.clientWidth);
    if (top !== from.top || left !== from.left) {
      smooth = smooth && !reduced.matches;
      aim = smooth ? { top, left } : null;
      clearTimeout(aimTimer);
      if (smooth) aimTimer = setTimeout(landed, 1000);
      box.scrollTo({ top, left, behavior: smooth ? "smooth" : "auto" });
    }
  }

  const resized = new ResizeObserver(() => { if (!placed) apply(); else follow(false); });
  resized.observe(box);
  model.on("change:svg", load);
  model.on("change:schedules", apply);
  model.on("change:position", apply);
  model.on("change:mode", apply);
  load();
  return () => resized.disconnect();
}

export default { initialize: ({ model }) => { saveWidgetStateWithNotebook(model); }, render };
