"""The backward stepper: pure step views, the widget driven through its controls, the static fallback."""

import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import tapelab as tl
from tapelab.viz import fmt, replay, step_text, step_view
from tapelab.viz.stepper import CURRENT, GRADIENT, PENDING, Restyler
from tests.tapes import seed_000

ipywidgets = pytest.importorskip("ipywidgets")
SVG = "{http://www.w3.org/2000/svg}"


def used_twice():
    x = tl.Variable(3.0, name="x")
    with tl.GradientTape() as tape:
        y = x * x + x
    return tape, y, x


def mlp(persistent=False):
    tl.random.set_seed(0)
    model = tl.keras.Sequential([tl.keras.layers.Dense(4, activation="relu"), tl.keras.layers.Dense(3)])
    X = tl.random.normal((5, 2))
    labels = tl.constant(np.array([0, 1, 2, 0, 1]))
    model(X)
    with tl.GradientTape(persistent=persistent) as tape:
        loss = tl.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, model(X))
    return tape, loss, model.trainable_variables


def svg_tree(svg):
    return ET.fromstring(svg)


def node_stroke(svg, title):
    for g in svg_tree(svg).iter(f"{SVG}g"):
        t = g.find(f"{SVG}title")
        if g.get("class", "").startswith("node") and t is not None and t.text == title:
            shape = next(el for el in g.iter() if el.tag.rsplit("}", 1)[-1] in ("path", "polygon", "ellipse"))
            return shape.get("stroke")
    raise AssertionError(f"no node {title!r} in the SVG")


def edge_copies(svg, a, b):
    """(stroke, text elements) of every drawn edge a -> b (x * x draws x -> multiply twice)."""
    found = []
    for g in svg_tree(svg).iter(f"{SVG}g"):
        t = g.find(f"{SVG}title")
        if g.get("class", "").startswith("edge") and t is not None and t.text == f"{a}->{b}":
            found.append((g.find(f"{SVG}path").get("stroke"), list(g.iter(f"{SVG}text"))))
    assert found, f"no edge {a}->{b} in the SVG"
    return found


def edge_parts(svg, a, b):
    return edge_copies(svg, a, b)[0]


# --- the pure views -------------------------------------------------------------------------------------

def test_seed_000_steps_back_through_reduce_mean_then_matmul():
    tape, x, y, _, loss = seed_000()
    rep = replay(tape, loss, [x, y])
    assert rep.count() == 2 and [rep.trace.ops[s.index].name for s in rep.steps] == ["reduce_mean", "matmul"]

    start = step_view(rep, 0)
    assert start.op_index is None and start.highlight == {"t_b"}
    assert start.table == [("x", "-", "not reached yet"), ("y", "-", "not reached yet")]
    assert set(start.edges.values()) == {"pending"} and not start.labels

    first = step_view(rep, 1)
    assert first.op_index == 1 and first.highlight == {"op_1"}
    assert first.panel[0] == "Backward step 1 of 2 - op 1: b = reduce_mean(a)"
    assert first.panel[1] == "  upstream g = db = 1"
    assert first.panel[2] == "      (the gradient arriving at b)"
    assert first.panel[3] == "  input a (as x of the rule):  dx = broadcast(g) / n = [[0.25, 0.25], [0.25, 0.25]]"
    assert first.edges == {("t_x", "op_0"): "pending", ("t_y", "op_0"): "pending", ("op_0", "t_a"): "pending",
                           ("t_a", "op_1"): "current", ("op_1", "t_b"): "current"}

    second = step_view(rep, 2)
    assert second.op_index == 0 and second.highlight == {"op_0"}
    assert second.panel[0] == "Backward step 2 of 2 - op 0: a = matmul(x, y)"
    assert second.panel[1:] == ["  upstream g = da = [[0.25, 0.25], [0.25, 0.25]]",
                                "      (the gradient arriving at a; 0.25 per element)",
                                "  input x:  dx = g @ y.T = [[1, 1], [1, 1]]",
                                "      grad x: [[1, 1], [1, 1]]",
                                "  input y:  dy = x.T @ g = [[0.5, 0.5], [0.5, 0.5]]",
                                "      grad y: [[0.5, 0.5], [0.5, 0.5]]"]
    assert second.table == [("x", "[[1, 1], [1, 1]]", "final"), ("y", "[[0.5, 0.5], [0.5, 0.5]]", "final")]
    assert second.edges[("op_1", "t_b")] == "done" and second.edges[("t_x", "op_0")] == "current"
    assert rep.edge_grads[("op_0", "t_a")] == (2, "g = [[0.25, 0.25], [0.25, 0.25]]",
                                               ["g = [[0.25, 0.25], [0.25, 0.25]]"])
    assert rep.edge_grads[("t_y", "op_0")][:2] == (2, "dy = [[0.5, 0.5], [0.5, 0.5]]")


def test_a_tensor_used_twice_shows_three_contributions_adding_up():
    tape, y, x = used_twice()
    rep = replay(tape, y, x)
    one, two = step_view(rep, 1), step_view(rep, 2)
    assert one.panel[0] == "Backward step 1 of 2 - op 1: b = add(a, x)"
    assert one.panel[-2:] == ["  input x (as y of the rule):  dy = g = 1", "      grad x: 1"]
    assert one.table == [("x", "1", "partial: more terms to come")]
    assert two.panel[0] == "Backward step 2 of 2 - op 0: a = multiply(x, x)"
    assert two.panel[1] == "  the rule multiply(x, y) here has x = x, y = x"
    assert two.panel[4:] == ["  input x:  dx = g * y = 3", "      grad x: 1 + 3 = 4",
                             "  input x (as y of the rule):  dy = g * x = 3", "      grad x: 4 + 3 = 7"]
    assert two.table == [("x", "7", "final")]
    contributions = [c for s in rep.steps for _i, t, _f, c, _total in s.contributions if t is x]
    assert [float(c) for c in contributions] == [1.0, 3.0, 3.0]
    assert rep.edge_grads[("t_x", "op_0")] == (2, "dx = 6", ["dx = 3", "dx = 3"])  # one drawn edge per use of x
    assert rep.edge_grads[("t_x", "op_1")] == (1, "dx = 1", ["dx = 1"])


def test_final_table_equals_gradient_on_an_mlp_with_collapsed_layers():
    tape, loss, variables = mlp(persistent=True)
    expected = tape.gradient(loss, variables)
    rep = replay(tape, loss, variables, collapse=True)
    assert rep.unit_of_op[0] == rep.unit_of_op[2] == "scope_0"  # dense/ : matmul, add, relu in one box
    assert rep.unit_of_op[3] == "scope_3"
    last = step_view(rep, rep.count())
    assert [row[0] for row in last.table] == ["dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"]
    for (_name, text, status), g, v in zip(last.table, expected, variables):
        assert status == "final"
        g = g.numpy()
        assert text == (fmt.value_text(g) or f"{fmt.shape_text(v.shape)} float32, {fmt.summary_text(g)}")
    for key, g in zip(rep.sources, expected):
        np.testing.assert_array_equal(rep.steps[-1].totals[key], g.numpy())
    middle = step_view(rep, 3)  # inside the first layer seen from the loss: the dense_1 box
    assert middle.highlight == {"scope_3"} and "[in dense_1/]" in middle.panel[0]
    assert ("dense/kernel", "-", "not reached yet") in middle.table


def test_forward_mode_replays_the_tape_in_order():
    tape, x, y, _, loss = seed_000()
    rep = replay(tape, loss, [x, y])
    start = step_view(rep, 0, "forward")
    assert start.dimmed == {"op_0", "op_1", "t_a", "t_b"}
    assert start.table == [("x", "[[1, 1], [1, 1]]", "variable"), ("y", "[[2, 2], [2, 2]]", "variable")]
    one = step_view(rep, 1, "forward")
    assert one.op_index == 0 and one.highlight == {"op_0"} and one.dimmed == {"op_1", "t_b"}
    assert one.panel == ["Forward step 1 of 2 - op 0: a = matmul(x, y)", "  a = [[4, 4], [4, 4]]   (2, 2) float32"]
    assert one.edges[("t_x", "op_0")] == "current" and one.edges[("t_a", "op_1")] == "pending"
    two = step_view(rep, 2, "forward")
    assert two.op_index == 1 and not two.dimmed and two.edges[("t_x", "op_0")] == "done"
    assert two.table[-1] == ("b", "4", "output")


def test_step_text_writes_every_step():
    tape, y, x = used_twice()
    text = step_text(replay(tape, y, x))
    assert text.count("Backward step") == 2 and text.startswith("Start: the backward pass begins at the target b")
    assert text.rstrip().endswith("x  7    (final)")


def test_unconnected_source_and_empty_walk():
    x = tl.Variable(2.0, name="x")
    w = tl.Variable(5.0, name="w")
    with tl.GradientTape() as tape:
        y = x * 3.0
        w + 1.0  # w is watched (read inside the tape) but the target does not use it
    rep = replay(tape, y, [x, w])
    assert step_view(rep, 1).table == [("x", "3", "final"), ("w", "None", "not connected to the target")]
    with tl.GradientTape() as tape:
        z = w * 2.0
    rep = replay(tape, z, x)
    assert rep.count() == 0 and "nothing to step through" in step_view(rep, 0).text


# --- errors --------------------------------------------------------------------------------------------

def test_a_used_one_shot_tape_teaches_persistent():
    tape, x, y, _, loss = seed_000()
    tape.gradient(loss, [x, y])
    with pytest.raises(RuntimeError, match=r"(?s)already used by gradient\(\).*persistent=True"):
        tl.viz.BackwardStepper(tape, loss, [x, y])
    tape, x, y, _, loss = seed_000()
    tl.viz.BackwardStepper(tape, loss, [x, y])
    with pytest.raises(RuntimeError, match="persistent=True"):  # the stepper used the tape up, as gradient() does
        tape.gradient(loss, [x, y])


def test_a_persistent_tape_can_be_stepped_and_differentiated():
    tape, x, y, _, loss = seed_000(persistent=True)
    stepper = tl.viz.BackwardStepper(tape, loss, [x, y])
    stepper.slider.value = 2
    dx, dy = tape.gradient(loss, [x, y])
    assert stepper.view.table[0][1] == fmt.value_text(dx.numpy())
    assert stepper.view.table[1][1] == fmt.value_text(dy.numpy())


def test_bad_positions_and_modes_are_explained():
    tape, x, y, _, loss = seed_000()
    rep = replay(tape, loss, [x, y])
    with pytest.raises(ValueError, match=r"outside 0\.\.2 .*0 is the start"):
        step_view(rep, 3)
    with pytest.raises(ValueError, match="'backward' or 'forward'"):
        step_view(rep, 0, "sideways")
    with pytest.raises(TypeError, match="target"):
        tl.viz.BackwardStepper(tl.GradientTape(), 3.0, [x])


# --- the widget, driven through its controls -------------------------------------------------------------

def test_buttons_and_slider_move_the_view_and_redraw():
    tape, x, y, _, loss = seed_000()
    s = tl.viz.BackwardStepper(tape, loss, [x, y])
    assert s.position == 0 and s.prev_button.disabled and not s.next_button.disabled
    assert 'data-position="0"' in s.panel.value and "Start: the backward pass" in s.panel.value
    assert node_stroke(s.graph.value, "t_b") == CURRENT

    s.next_button.click()
    assert s.slider.value == 1 and s.view.op_index == 1
    assert 'data-op="1"' in s.panel.value and "b = reduce_mean(a)" in s.panel.value
    assert node_stroke(s.graph.value, "op_1") == CURRENT and node_stroke(s.graph.value, "op_0") != CURRENT
    stroke, texts = edge_parts(s.graph.value, "t_a", "op_1")
    assert stroke == CURRENT and texts[0].text == "da = [[0.25, 0.25], [0.25, 0.25]]" and not texts[0].get("visibility")
    stroke, texts = edge_parts(s.graph.value, "t_x", "op_0")
    assert stroke == PENDING and texts[0].get("visibility") == "hidden"
    assert "not reached yet" in s.table.value

    s.next_button.click()
    assert s.view.op_index == 0 and s.next_button.disabled
    assert "g @ y.T = [[1, 1], [1, 1]]" in s.panel.value
    assert re.search(r"<b>y</b>.*\[\[0\.5, 0\.5\], \[0\.5, 0\.5\]\].*<i>final</i>", s.table.value)
    assert edge_parts(s.graph.value, "t_a", "op_1")[0] == GRADIENT  # processed: coloured, still labelled
    s.next_button.click()  # at the end: stays
    assert s.position == 2

    s.prev_button.click()
    assert s.view.op_index == 1
    s.slider.value = 2
    assert s.view.op_index == 0
    renders = s.renders
    s.slider.value = 1
    s.slider.value = 2
    assert s.renders == renders  # each step's picture is made once
    s.reset_button.click()
    assert s.position == 0 and s.view.op_index is None and not s.play.playing


def test_play_drives_the_slider_and_mode_switches_to_forward():
    tape, x, y, _, loss = seed_000()
    s = tl.viz.BackwardStepper(tape, loss, [x, y])
    s.play.value = 2  # what the Play widget does in the browser, one tick at a time
    assert s.slider.value == 2 and s.view.op_index == 0
    s.mode_buttons.value = "forward"
    assert s.position == 0 and s.slider.max == 2 and s.view.mode == "forward"
    s.next_button.click()
    assert s.view.op_index == 0 and "Forward step 1 of 2" in s.panel.value
    assert edge_parts(s.graph.value, "t_x", "op_0")[0] == CURRENT
    svg = svg_tree(s.graph.value)
    dimmed = {g.find(f"{SVG}title").text for g in svg.iter(f"{SVG}g") if g.get("opacity")}
    assert dimmed == {"op_1", "t_b"}


def test_each_drawn_use_of_a_tensor_carries_its_own_part():
    tape, y, x = used_twice()
    s = tl.viz.BackwardStepper(tape, y, x)
    s.slider.value = 1
    copies = edge_copies(s.graph.value, "t_x", "op_0")
    assert len(copies) == 2 and all(stroke == PENDING for stroke, _ in copies)
    assert all(texts[0].get("visibility") == "hidden" for _, texts in copies)
    assert [texts[0].text for _, texts in edge_copies(s.graph.value, "t_x", "op_1")] == ["dx = 1"]
    s.next_button.click()
    copies = edge_copies(s.graph.value, "t_x", "op_0")
    assert [(stroke, texts[0].text, texts[0].get("visibility")) for stroke, texts in copies] == [
        (CURRENT, "dx = 3", None), (CURRENT, "dx = 3", None)]  # 3 + 3 (+ 1 from add) = 7


def test_mlp_stepper_highlights_the_collapsed_layer_box():
    tape, loss, variables = mlp()
    s = tl.viz.BackwardStepper(tape, loss, variables, collapse=True)
    s.slider.value = s.count
    assert s.view.highlight == {"scope_0"} and node_stroke(s.graph.value, "scope_0") == CURRENT
    assert all(status == "final" for _, _, status in s.view.table)


def test_without_a_kernel_the_output_still_shows_the_picture_and_the_chain_rule():
    tape, x, y, _, loss = seed_000()
    s = tl.viz.BackwardStepper(tape, loss, [x, y])
    bundle = s._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == s.widget.model_id
    assert bundle["text/plain"] == str(s) == step_text(s.replay)
    html = bundle["text/html"]
    assert "<svg" in html and "dy = x.T @ g = [[0.5, 0.5], [0.5, 0.5]]" in html and "every backward step" in html
    assert re.search(r"<title>op_0</title>", html)
    assert "BackwardStepper: 2 backward steps, at step 0" in repr(s)


def test_restyler_keeps_one_layout():
    tape, x, y, _, loss = seed_000()
    rep = replay(tape, loss, [x, y])
    r = Restyler.of(rep)
    a, b = r.svg(step_view(rep, 0)), r.svg(step_view(rep, 2))
    pos = lambda s: re.findall(r' (?:d|points|cx|cy)="[^"]*"', s)  # noqa: E731
    assert pos(a) == pos(b) and a != b  # same geometry, different styling
    assert r.svg(step_view(rep, 0)) == a  # restyling restores everything


def test_import_tapelab_does_not_import_ipywidgets():
    code = "import sys, tapelab, tapelab.viz.stepper; print('ipywidgets' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_import_tapelab_leaves_elementtree_namespaces_alone():
    code = ("import xml.etree.ElementTree as ET; before = dict(ET._namespace_map); import tapelab; "
            "print(ET._namespace_map == before)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"


def test_restyled_svg_keeps_graphviz_namespace_prefixes():
    tape, x, y, _, loss = seed_000()
    rep = replay(tape, loss, [x, y])
    svg = Restyler.of(rep).svg(step_view(rep, 1))
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"') and "ns0:" not in svg
    assert "xlink:title=" in svg


def test_docstring_examples():
    import doctest

    import tapelab.viz.stepper as module

    result = doctest.testmod(module, extraglobs={"tl": tl}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 15 and result.failed == 0


def test_a_saved_notebook_keeps_a_static_picture_and_the_chain_rule(tmp_path):
    """Run a notebook in a real kernel, as nbval or a teacher saving it would: the stored output holds the
    widget's view model and, for GitHub/nbviewer, the final picture and every step as text."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(
        "import tapelab as tl\n"
        "x = tl.Variable(3.0, name='x')\n"
        "with tl.GradientTape() as tape:\n"
        "    y = x * x + x\n"
        "tl.viz.BackwardStepper(tape, y, x)"))
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    nbformat.write(nb, tmp_path / "saved.ipynb")
    saved = nbformat.read(tmp_path / "saved.ipynb", as_version=4)
    (out,) = [o for o in saved.cells[0].outputs if o.output_type == "execute_result"]
    assert "application/vnd.jupyter.widget-view+json" in out.data
    assert "<svg" in out.data["text/html"] and "grad x: 4 + 3 = 7" in out.data["text/html"]
    assert "Backward step 2 of 2 - op 0: a = multiply(x, x)" in out.data["text/plain"]
    assert out.data["text/plain"].rstrip().endswith("x  7    (final)")
