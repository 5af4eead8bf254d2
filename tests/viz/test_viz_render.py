"""Rendering through a real Graphviz: the system dot and graphviz-pure, the error without either, rich display."""

import base64
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

import tapelab as tl
from tapelab.viz import GraphvizNotFound, draw, find_dot, limits, render
from tests.tapes import mlp_tape, seed_000

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SVG = "{http://www.w3.org/2000/svg}"
VENV_BIN = os.path.dirname(sys.executable)
needs_system_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="no system Graphviz here")
needs_pure = pytest.mark.skipif(shutil.which("graphviz-pure", path=os.pathsep.join([os.environ.get("PATH", ""),
                                                                                   VENV_BIN])) is None,
                                reason="graphviz-pure is not installed")


def svg_nodes(svg):
    """Parse the SVG: {node id (the <title>): the text lines drawn in it}."""
    root = ET.fromstring(svg)
    out = {}
    for g in root.iter(f"{SVG}g"):
        if g.get("class") == "node":
            title = g.find(f"{SVG}title").text
            out[title] = [t.text for t in g.iter(f"{SVG}text")]
    return out


def gradient_seed_000():
    tape, x, y, z, loss = seed_000(persistent=True)
    tape.gradient(loss, [x, y])
    return tape


@pytest.mark.parametrize("which", [pytest.param("system", marks=needs_system_dot),
                                   pytest.param("graphviz-pure", marks=needs_pure)])
def test_seed_000_renders_with_names_values_and_gradients(which):
    drawing = draw(gradient_seed_000(), dot=which)
    assert drawing.dot[0] == which
    nodes = svg_nodes(drawing.svg)
    assert set(nodes) == {"t0", "t1", "t2", "t3", "op_0", "op_1"}  # x, y, then %0 and %1 (a helper's locals)
    assert nodes["t0"] == ["x (Variable, source)", "(2, 2) float32", "[[1, 1], [1, 1]]", "grad [[1, 1], [1, 1]]"]
    assert nodes["t1"][-1] == "grad [[0.5, 0.5], [0.5, 0.5]]"
    assert nodes["op_0"] == ["matmul(x, y)"]
    if which == "graphviz-pure":
        assert "graphviz-pure" in drawing.svg.split("<svg")[0]  # its own signature in the header comment


@pytest.mark.parametrize("which", [pytest.param("system", marks=needs_system_dot),
                                   pytest.param("graphviz-pure", marks=needs_pure)])
def test_clusters_boxes_and_the_summary_node_render(which):
    tape, loss, variables = mlp_tape(steps=3)
    tape.gradient(loss, variables)
    svg = draw(tape, collapse=["dense"], max_ops=6, dot=which).svg
    root = ET.fromstring(svg)
    clusters = [g.find(f"{SVG}title").text for g in root.iter(f"{SVG}g") if g.get("class") == "cluster"]
    assert clusters == ["cluster_0"]  # dense_1/ stays a cluster; dense/ is a box
    nodes = svg_nodes(svg)
    assert nodes["more"][0] == "... 13 more ops"
    assert nodes["box_14"][:2] == ["dense/", "3 ops: matmul, add, relu"]


@needs_pure
def test_graphviz_pure_is_used_when_path_has_no_dot(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{VENV_BIN}")
    assert find_dot()[0] == "graphviz-pure"
    drawing = draw(gradient_seed_000())
    assert drawing.dot[0] == "graphviz-pure" and "t0" in svg_nodes(drawing.svg)


@needs_pure
def test_graphviz_pure_beside_the_interpreter_is_found_without_path():
    # a Jupyter kernel started from an unactivated venv: PATH lacks the venv's bin directory
    code = ("import tapelab as tl\nx = tl.Variable(2.0, name='x')\n"
            "with tl.GradientTape() as t:\n    y = x * x\n"
            "d = tl.viz.draw(t)\nprint(d.dot[0], 'x (Variable)' in d.svg)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PATH": "/nonexistent"}, cwd=ROOT)
    assert out.stdout.split() == ["graphviz-pure", "True"]


def test_clear_error_when_no_graphviz_is_found(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(render, "_scripts_dir", lambda: str(tmp_path))  # nothing beside this Python either
    with pytest.raises(GraphvizNotFound) as err:
        draw(gradient_seed_000())
    text = str(err.value)
    for hint in ("apt-get install graphviz", "pip install graphviz-pure", "print(tape)"):
        assert hint in text
    with pytest.raises(GraphvizNotFound, match="the program `graphviz-pure` was not found"):
        find_dot("graphviz-pure", path=str(tmp_path))
    with pytest.raises(GraphvizNotFound, match="is not an executable file"):
        find_dot(str(tmp_path / "dot"))
    # the tape still displays: as its listing, without a picture
    tape = gradient_seed_000()
    assert tape._repr_mimebundle_() == {"text/plain": str(tape)}  # (no picture: no PNG, no metadata)


@needs_pure
def test_save_svg_png_and_dot(tmp_path):
    drawing = draw(gradient_seed_000(), dot="graphviz-pure")
    assert drawing.save(tmp_path / "t.svg").read_text().count("<svg") == 1
    assert (tmp_path / "t.png").exists() is False
    drawing.save(tmp_path / "t.png")
    assert (tmp_path / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert drawing.save(tmp_path / "t.dot").read_text() == drawing.source
    with pytest.raises(ValueError, match="use a name ending in .svg, .png or .dot"):
        drawing.save(tmp_path / "t.pdf")


@needs_system_dot
def test_system_dot_writes_png_too(tmp_path):
    drawing = draw(gradient_seed_000(), dot="system")
    assert drawing.png()[:8] == b"\x89PNG\r\n\x1a\n"


def test_explicit_path_to_a_dot_program():
    kind, exe = find_dot()
    assert draw(gradient_seed_000(), dot=exe).dot == (kind, exe)


def test_rich_display_is_a_png_jupyter_can_shrink_to_its_cell():
    """An SVG output is shown at its full size, past a narrow cell's edge; a PNG with its width in screen pixels is
    shrunk to fit, and shows in a notebook that is not trusted too. It is drawn at 1.5x, so its text stays sharp."""
    tape = gradient_seed_000()
    bundle, metadata = tape._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "image/png"}
    assert bundle["text/plain"] == str(tape)
    png = base64.b64decode(bundle["image/png"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert metadata["image/png"]["width"] == round(int.from_bytes(png[16:20], "big") / 1.5)
    assert set(tape._repr_mimebundle_(include=["text/plain"])) == {"text/plain"}
    assert set(tape._repr_mimebundle_(exclude=["image/png"])) == {"text/plain"}
    drawing = draw(tape)
    assert set(svg_nodes(drawing.svg)) == {"t0", "t1", "t2", "t3", "op_0", "op_1"}
    assert '<svg style="max-width: 100%; height: auto" ' in drawing.svg  # inline (a saved page): never wider either
    # the text form is the same whichever Graphviz drew it (nbval compares it on every machine)
    assert drawing._repr_mimebundle_()[0]["text/plain"] == "<tapelab.viz.Drawing: 5 edges; .save('tape.svg' or " \
        "'tape.png')>"


def test_a_failing_graphviz_run_names_the_program(tmp_path):
    with pytest.raises(RuntimeError, match=r"Graphviz \(.*\) failed"):
        render.render_dot("digraph { this is not dot", "svg")


def test_empty_tape_draws():
    with tl.GradientTape() as tape:
        pass
    assert svg_nodes(draw(tape).svg) == {}


def test_what_jupyter_shows_is_never_shrunk_below_legible_text():
    """A long, narrow tape is shown whole at its natural size (no height cap shrinks its text); a picture too wide
    to shrink into a narrow cell with its text still 11 px is shown unconfined (the cell scrolls), a narrower one
    may shrink to the cell."""
    x = tl.Variable(1.0, name="x")
    with tl.GradientTape() as tape:
        y = x
        for _ in range(40):
            y = tl.tanh(y) * 1.5
    drawing = draw(tape)
    bundle, metadata = drawing._repr_mimebundle_()
    shown = base64.b64decode(bundle["image/png"])
    size = lambda png: (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big"))  # noqa: E731
    assert size(shown) == tuple(round(n * 1.5) for n in size(drawing.png()))  # natural size, drawn 1.5x sharp
    assert metadata["image/png"] == {"width": round(size(shown)[0] / 1.5)}  # narrow: it may shrink to a cell
    assert metadata["image/png"]["width"] * render.LEGIBLE_ZOOM <= render.NARROW_CELL_PX
    wide = tl.Variable(tl.ones((2, 3)), name="a_variable_with_a_long_name")
    with tl.GradientTape() as tape:
        parts = [wide * float(k) for k in range(8)]  # eight ops side by side
        total = tl.add_n(parts)
    bundle, metadata = draw(tape, total, wide)._repr_mimebundle_()
    assert metadata["image/png"]["unconfined"] and metadata["image/png"]["width"] * 0.825 > 592
    assert render.LEGIBLE_ZOOM * render.SMALLEST_TEXT_PT * 96 / 72 == pytest.approx(render.LEGIBLE_PX)


# --- Graphviz in the browser (viz.js), where the kernel has none: the kernel's side ------------------------------
# (the page's side, in JupyterLab and Chromium, is tests/e2e/test_browser_render.py)

BROWSER_KERNEL_CELL = """
import tapelab as tl
import tapelab.viz.render
tapelab.viz.render._scripts_dir = lambda: ""  # as in a Python without graphviz-pure (PATH has no dot either)
x = tl.Variable(2.0, name="x")
with tl.GradientTape() as tape:
    y = x * x
drawing = tl.viz.draw(tape)
print(type(drawing).__name__, drawing.source.startswith("digraph"))
display(drawing)
display(tape)
tape
"""


def test_a_kernel_without_graphviz_draws_in_the_browser(monkeypatch, tmp_path):
    """A real kernel where no Graphviz program can be found (no TAPELAB_DOT): draw() gives the browser drawing, and
    both it and the tape's own display show as widgets (the page lays them out), the tape with its listing as the
    text; showing the unchanged tape again reuses its widget."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("anywidget")
    monkeypatch.setenv("PATH", os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep) if not any(
        os.path.exists(os.path.join(d, exe)) for exe in ("dot", "graphviz-pure"))))
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(BROWSER_KERNEL_CELL))
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
                            ).execute()
    outputs = nb.cells[0].outputs
    assert [o.text for o in outputs if o.output_type == "stream"] == ["BrowserDrawing True\n"]
    shown = [o.data for o in outputs if o.output_type in ("display_data", "execute_result")]
    assert len(shown) == 3 and all("application/vnd.jupyter.widget-view+json" in d for d in shown)
    assert "GradientTape: 1 op" in shown[1]["text/plain"]  # the tape's listing, for plain front ends
    widget = [d["application/vnd.jupyter.widget-view+json"]["model_id"] for d in shown]
    assert widget[1] == widget[2] != widget[0]  # the tape shown twice: one widget


def test_outside_a_notebook_no_graphviz_is_still_an_error(monkeypatch):
    monkeypatch.setenv("TAPELAB_DOT", " Browser")
    tape, *_ = seed_000()
    with pytest.raises(GraphvizNotFound, match="(?s)TAPELAB_DOT=Browser: pictures are drawn in the browser.*needs a "
                                               "Jupyter notebook"):
        draw(tape)  # a script has no browser to draw in
    assert "GradientTape" in str(tape)  # and printing the tape still works


def test_a_graphviz_asked_for_by_name_draws_or_says_why_even_in_a_notebook(monkeypatch):
    monkeypatch.setattr(render, "in_notebook", lambda: True)  # (where the browser would draw otherwise)
    tape, *_ = seed_000()
    with pytest.raises(GraphvizNotFound, match=r"draw: dot='/no/such/dot' is not an executable file"):
        draw(tape, dot="/no/such/dot")
    monkeypatch.setenv("TAPELAB_DOT", "dott")
    with pytest.raises(GraphvizNotFound, match=r"draw: TAPELAB_DOT=dott is not an executable file"):
        draw(tape)


def test_browser_drawing_refuses_a_tape_too_big_to_lay_out_and_saves_only_what_it_has(tmp_path):
    pytest.importorskip("anywidget")
    from tapelab.viz.browser import BrowserDrawing
    from tapelab.viz.limits import MAX_NODES

    w = tl.Variable(1.0, name="w")
    with tl.GradientTape() as tape:
        v = w
        for _ in range(5000):
            v = tl.tanh(v * 0.5)  # 10,000 entries
    assert BrowserDrawing(tl.viz.to_dot(tape)).source.count("op_") > 100  # the default cap: 100 ops drawn (and "more")
    with pytest.raises(ValueError, match=f"too many to lay out in the browser .* past {MAX_NODES:,}.*max_ops"):
        BrowserDrawing(tl.viz.to_dot(tape, max_ops=None))
    drawing = BrowserDrawing(tl.viz.to_dot(tape))
    with pytest.raises(RuntimeError, match="has not drawn this picture yet.*Show it first"):
        drawing.save(tmp_path / "tape.svg")
    with pytest.raises(ValueError, match="saves as .svg or .dot.*PNG needs Graphviz in the kernel"):
        drawing.save(tmp_path / "tape.png")
    assert drawing.save(tmp_path / "tape.dot").read_text().startswith("digraph")


def test_the_shipped_viz_js_is_the_pinned_npm_file():
    result = subprocess.run([sys.executable, "scripts/fetch_vizjs.py", "--check"], capture_output=True, text=True,
                            cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "sha256 matches" in result.stdout


def test_outside_pyodide_the_worker_renderer_stays_out_of_the_way():
    from tapelab.viz import worker

    assert not worker.available()  # (tests/e2e/test_lite.py runs it inside Pyodide)
    assert render.render_dot("digraph { a -> b }", "svg").startswith(b"<?xml")  # a Graphviz program drew it


def test_a_traced_graph_shows_its_picture_and_its_listing():
    @tl.function
    def f(x):
        return x * x + 1.0

    f(tl.constant(2.0))
    graph = f.get_concrete_function(tl.constant(2.0)).graph
    data, metadata = graph._repr_mimebundle_()
    assert "image/png" in data and data["text/plain"] == str(graph)


def test_the_too_big_message_says_which_ops_max_ops_keeps(monkeypatch):
    tape, x, y, z, loss = seed_000()
    dot = tl.viz.to_dot(tape, max_ops=1)
    assert '"op_1" [' in dot and '"op_0" [' not in dot  # the op nearest the target stays; the first one goes
    monkeypatch.setattr(limits, "MAX_NODES", 3)  # (limits, not browser: checking needs no anywidget)
    with pytest.raises(ValueError) as error:
        limits.check_size(dot)
    message = str(error.value)
    assert message.startswith("draw: this picture has about 4 nodes, too many to lay out in the browser")
    assert "a smaller max_ops (the default, 100, draws only the last 100 ops, those nearest the target)" in message
    assert "first" not in message
