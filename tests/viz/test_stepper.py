"""The backward stepper: the pure walkthrough and step views, and the widget driven through its controls in Python.

The browser side (the picture restyled at each step, following the current op, clicks) is tested in
tests/e2e/test_browser.py. Tapes made inside test functions name their intermediates %0, %1, ... (see
tests/viz/test_viz_listing.py); notebooks name them as the code does (the saved-notebook test below).
"""

import base64
import json
import re
import subprocess
import sys

import numpy as np
import pytest

import tapelab as tl
from tapelab.viz import fmt, step_text, step_view, walkthrough
from tapelab.viz.steps import TableRow, frame_dot
from tests.tapes import seed_000

ipywidgets = pytest.importorskip("ipywidgets")
pytest.importorskip("anywidget")


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


def edge_id(walk, tail_name, head):
    """The id of the (first) edge from the tensor drawn as ``tail_name`` into node ``head``."""
    node = {walk.graph.tensor_nodes[k]: t.name for k, t in walk.data.tensors.items()}
    return next(e.id for e in walk.graph.edges if node.get(e.tail) == tail_name and e.head == head)


def out_edge(walk, op):
    return next(e.id for e in walk.graph.edges if e.tail == f"op_{op}")


def node_of(walk, name):
    return next(walk.graph.tensor_nodes[k] for k, t in walk.data.tensors.items() if t.name == name)


# --- the pure views -------------------------------------------------------------------------------------

def test_seed_000_steps_back_through_reduce_mean_then_matmul():
    tape, x, y, _, loss = seed_000()
    walk = walkthrough(tape, loss, [x, y])
    assert walk.count() == 2 and [walk.data.ops[s.index].name for s in walk.steps] == ["reduce_mean", "matmul"]

    start = step_view(walk, 0)
    assert start.op_index is None and start.current == [node_of(walk, "%1")]
    assert start.table == [TableRow("x", "-", "not reached yet"), TableRow("y", "-", "not reached yet")]
    assert set(start.edges.values()) == {"pending"} and not start.labels
    assert start.panel[0] == "Start: the backward pass begins at the target %1 with ∂%1/∂%1 = 1."

    first = step_view(walk, 1)
    assert first.op_index == 1 and first.current == ["op_1"]
    assert first.panel == ["Backward step 1 of 2 - op 1: %1 = reduce_mean(%0)",
                           "  upstream gradient at %1:  ∂%1/∂%1 = 1",
                           "  to %0:  ∂%1/∂%0 = broadcast(∂%1/∂%1) / 4 = [[0.25, 0.25], [0.25, 0.25]]"]
    z_in, out1 = edge_id(walk, "%0", "op_1"), out_edge(walk, 1)
    assert {i for i, state in first.edges.items() if state == "current"} == {z_in, out1}
    assert first.labels == {z_in, out1}

    second = step_view(walk, 2)
    assert second.op_index == 0 and second.current == ["op_0"]
    assert second.panel == ["Backward step 2 of 2 - op 0: %0 = matmul(x, y)",
                            "  upstream gradient at %0:  ∂%1/∂%0 = [[0.25, 0.25], [0.25, 0.25]]",
                            "  to x:  ∂%1/∂x = ∂%1/∂%0 @ y.T = [[1, 1], [1, 1]]",
                            "  to y:  ∂%1/∂y = x.T @ ∂%1/∂%0 = [[0.5, 0.5], [0.5, 0.5]]"]
    assert second.table == [("x", "[[1, 1], [1, 1]]", "final"), ("y", "[[0.5, 0.5], [0.5, 0.5]]", "final")]
    assert second.edges[out1] == "done" and second.edges[edge_id(walk, "x", "op_0")] == "current"
    assert walk.labels[out_edge(walk, 0)] == "∂%1/∂%0\n= [[0.25, 0.25], [0.25, 0.25]]"
    assert walk.labels[edge_id(walk, "y", "op_0")] == "∂%1/∂y\n= [[0.5, 0.5], [0.5, 0.5]]"


def test_a_gradient_written_as_its_norm_says_when_it_is_one_number_everywhere():
    """Too many numbers to show, so the panel gives the norm; a mean's gradient is 1/n in every element, and the
    panel says that number, where it arrives and where it is sent (the numbers themselves need no such note)."""
    x = tl.Variable(tl.ones((1000,)), name="x")
    with tl.GradientTape() as tape:
        y = tl.reduce_mean(tl.square(x))
    walk = walkthrough(tape, y, x)
    first, second = step_view(walk, 1), step_view(walk, 2)
    assert first.panel[-1].endswith("= (1000,) float32, norm 0.03162   (0.001 per element)")
    assert second.panel[1].endswith("= (1000,) float32, norm 0.03162   (0.001 per element)")
    assert second.panel[2].endswith("= (1000,) float32, norm 0.06325   (0.002 per element)")


def test_a_tensor_used_twice_shows_three_contributions_adding_up():
    tape, y, x = used_twice()
    walk = walkthrough(tape, y, x)
    one, two = step_view(walk, 1), step_view(walk, 2)
    assert one.panel == ["Backward step 1 of 2 - op 1: %1 = add(%0, x)", "  upstream gradient at %1:  ∂%1/∂%1 = 1",
                         "  to %0:  ∂%1/∂%0 = ∂%1/∂%1 = 1", "  to x:  ∂%1/∂x += ∂%1/∂%1 = 1",
                         "      ∂%1/∂x so far: 1"]
    assert one.table == [("x", "1", "partial: more to come")]
    assert two.panel == ["Backward step 2 of 2 - op 0: %0 = multiply(x, x)", "  upstream gradient at %0:  ∂%1/∂%0 = 1",
                         "  to x (input 0):  ∂%1/∂x += ∂%1/∂%0 * x = 3", "      ∂%1/∂x so far: 1 + 3 = 4",
                         "  to x (input 1):  ∂%1/∂x += ∂%1/∂%0 * x = 3", "      ∂%1/∂x: 4 + 3 = 7, final"]
    assert two.table == [("x", "7", "final")]
    assert [float(c.value) for s in walk.steps for c in s.contributions if c.tensor is x] == [1.0, 3.0, 3.0]
    twice = [e.id for e in walk.graph.edges if e.head == "op_0"]  # one drawn edge per use of x, each its own part
    assert len(twice) == 2 and [walk.labels[i] for i in twice] == ["∂%1/∂x\n+= 3"] * 2
    assert walk.labels[edge_id(walk, "x", "op_1")] == "∂%1/∂x\n+= 1"


def test_the_names_in_a_notebook_are_the_codes():
    namespace = {"tl": tl}
    exec(compile("x = tl.Variable(tl.ones((2, 2)), name='x')\ny = tl.Variable([[2.0, 2.0], [2.0, 2.0]], name='y')\n"
                 "with tl.GradientTape() as tape:\n    z = tl.matmul(x, y)\n    loss = tl.reduce_mean(z)\n"
                 "text = tl.viz.step_text(tl.viz.walkthrough(tape, loss, [x, y]))", "<cell>", "exec"), namespace)
    text = namespace["text"]
    assert "Backward step 2 of 2 - op 0: z = matmul(x, y)" in text
    assert "  to x:  ∂loss/∂x = ∂loss/∂z @ y.T = [[1, 1], [1, 1]]" in text
    assert " g " not in text and "dx" not in text  # never the rule's own names, never a bare g


def test_final_table_equals_gradient_on_an_mlp_with_collapsed_layers():
    tape, loss, variables = mlp(persistent=True)
    expected = tape.gradient(loss, variables)
    walk = walkthrough(tape, loss, variables, collapse=True)
    assert walk.graph.op_nodes[0] == walk.graph.op_nodes[2] == "box_0"  # dense/: matmul, add, relu in one box
    assert walk.graph.op_nodes[3] == "box_3"
    last = step_view(walk, walk.count())
    assert [row.name for row in last.table] == ["dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"]
    for row, g, v in zip(last.table, expected, variables):
        assert row.status == "final"
        g = g.numpy()
        summary = f"{fmt.shape_text(v.shape)} float32, {fmt.summary_text(g)}"
        assert row.value == (fmt.value_text(g, fmt.PANEL_SMALL) or summary)
    for v, g in zip(variables, expected):
        np.testing.assert_array_equal(walk.steps[-1].totals[v._key], g.numpy())
    middle = step_view(walk, 3)  # inside the first layer seen from the loss: the dense_1 box
    assert middle.current == ["box_3"] and "[in dense_1/]" in middle.panel[0]
    assert ("dense/kernel", "-", "not reached yet") in middle.table
    assert "∂%6/∂(dense_1/kernel) = %2.T @ ∂%6/∂%3" in step_view(walk, 4).text  # a scoped name in a formula


def test_forward_mode_replays_the_tape_in_order():
    tape, x, y, _, loss = seed_000()
    walk = walkthrough(tape, loss, [x, y])
    z, out = node_of(walk, "%0"), node_of(walk, "%1")
    start = step_view(walk, 0, "forward")
    assert start.dimmed == {"op_0", "op_1", z, out}
    assert start.table == [("x", "[[1, 1], [1, 1]]", "variable"), ("y", "[[2, 2], [2, 2]]", "variable")]
    one = step_view(walk, 1, "forward")
    assert one.op_index == 0 and one.current == ["op_0"] and one.dimmed == {"op_1", out}
    assert one.panel == ["Forward step 1 of 2 - op 0: %0 = matmul(x, y)", "  %0 = [[4, 4], [4, 4]]   (2, 2) float32"]
    assert one.edges[edge_id(walk, "x", "op_0")] == "current" and one.edges[edge_id(walk, "%0", "op_1")] == "pending"
    assert not one.labels  # no gradients in a forward replay
    two = step_view(walk, 2, "forward")
    assert two.op_index == 1 and not two.dimmed and two.edges[edge_id(walk, "x", "op_0")] == "done"
    assert two.table[-1] == ("%1", "4", "output")


def test_the_schedule_is_what_the_views_are_made_of():
    tape, loss, variables = mlp()
    walk = walkthrough(tape, loss, variables)
    for mode in ("backward", "forward"):
        s = walk.schedules[mode]
        for p in range(s.count + 1):
            view = step_view(walk, p, mode)
            assert view.current == s.current[p]
            for e in walk.graph.edges:
                start = s.edge_start.get(e.id)
                assert (view.edges[e.id] == "pending") == (start is None or start > p)
        for node, p in s.step_of_node.items():  # a click on a node lands on a step that shows it
            view = step_view(walk, p, mode)
            assert node in view.current or any(
                state != "pending" and node in (e.tail, e.head) for e in walk.graph.edges
                for i, state in view.edges.items() if i == e.id)


def test_a_tape_that_let_go_of_large_arrays_shows_the_same_listing_picture_and_steps(monkeypatch):
    """Arrays no rule reads are let go (here all of them, as for large ones): the pictures recompute them."""
    from tapelab.engine import retention
    from tapelab.engine import tape as tape_module

    def pictures():
        tl.keras.backend.clear_session()  # (the same layer names both times)
        tape, loss, variables = mlp(persistent=True)
        walk = walkthrough(tape, loss, variables)
        views = [step_view(walk, p, mode) for mode in ("backward", "forward") for p in range(walk.count() + 1)]
        specs = sum(type(v).__name__ == "Spec" for e in tape.entries for v in e.kept)
        return str(tape), tl.viz.to_dot(tape, collapse=False), step_text(walk), [repr(v) for v in views], specs

    *kept, specs = pictures()
    assert specs == 0
    monkeypatch.setattr(retention, "SMALL", 0)
    monkeypatch.setattr(tape_module, "SWEEP", 0)  # (a sweep after every op)
    *let_go, specs = pictures()
    assert specs > 0 and let_go == kept


def test_step_text_writes_every_step():
    tape, y, x = used_twice()
    text = step_text(walkthrough(tape, y, x))
    assert text.count("Backward step") == 2 and text.startswith("Start: the backward pass begins at the target %1")
    assert text.rstrip().endswith("x  7    (final)")


def test_unconnected_source_and_empty_walk():
    x = tl.Variable(2.0, name="x")
    w = tl.Variable(5.0, name="w")
    with tl.GradientTape() as tape:
        y = x * 3.0
        w + 1.0  # w is watched (read inside the tape) but the target does not use it
    walk = walkthrough(tape, y, [x, w])
    assert step_view(walk, 1).table == [("x", "3", "final"), ("w", "None", "not connected to the target")]
    with tl.GradientTape() as tape:
        z = w * 2.0
    walk = walkthrough(tape, z, x)
    assert walk.count() == 0 and "nothing to step through" in step_view(walk, 0).text


def test_a_frame_is_the_same_picture_coloured_for_one_step():
    tape, x, y, _, loss = seed_000()
    walk = walkthrough(tape, loss, [x, y])
    frame = frame_dot(walk, 1)
    assert 'penwidth="3"' in frame.split('"op_1" [')[1].split("\n")[0]  # the current op is marked
    x_label = next(line for line in frame.splitlines() if 'label="∂%1/∂x' in line)  # every label is laid out...
    assert 'fontcolor="#ffffff00"' in x_label  # ...and the ones not reached yet are invisible: one layout per step
    assert f'rankdir={walk.rankdir}' in frame


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
    assert stepper.view.table[0].value == fmt.value_text(dx.numpy())
    assert stepper.view.table[1].value == fmt.value_text(dy.numpy())


def test_bad_positions_and_modes_are_explained():
    tape, x, y, _, loss = seed_000()
    walk = walkthrough(tape, loss, [x, y])
    with pytest.raises(ValueError, match=r"outside 0\.\.2 .*0 is the start"):
        step_view(walk, 3)
    with pytest.raises(ValueError, match="'backward' or 'forward'"):
        step_view(walk, 0, "sideways")
    with pytest.raises(TypeError, match="target"):
        tl.viz.BackwardStepper(tl.GradientTape(), 3.0, [x])
    with pytest.raises(ValueError, match="mode='up' should be"):
        tl.viz.BackwardStepper(tape, loss, [x, y], mode="up")


# --- the widget, driven through its controls -------------------------------------------------------------

def test_buttons_and_slider_move_the_view_and_the_picture():
    tape, x, y, _, loss = seed_000()
    s = tl.viz.BackwardStepper(tape, loss, [x, y])
    assert s.position == 0 and s.prev_button.disabled and not s.next_button.disabled
    assert 'data-position="0"' in s.panel.value and "Start: the backward pass" in s.panel.value
    assert s.graph.position == 0 and s.graph.mode == "backward" and "<svg" in s.graph.svg
    assert set(s.graph.schedules) == {"backward", "forward"} and s.graph.schedules["backward"]["count"] == 2

    s.next_button.click()
    assert s.slider.value == s.graph.position == 1 and s.view.op_index == 1
    assert 'data-op="1"' in s.panel.value and "%1 = reduce_mean(%0)" in s.panel.value
    assert "not reached yet" in s.table.value

    s.next_button.click()
    assert s.view.op_index == 0 and s.next_button.disabled
    assert "∂%1/∂%0 @ y.T = [[1, 1], [1, 1]]" in re.sub(r"<[^>]+>", "", s.panel.value)  # (values in nowrap spans)
    assert "<b>y</b>" in s.table.value and "<i>final</i>" in s.table.value
    s.next_button.click()  # at the end: stays
    assert s.position == 2

    s.prev_button.click()
    assert s.view.op_index == 1 and s.graph.position == 1
    s.slider.value = 2
    assert s.view.op_index == 0
    s.reset_button.click()
    assert s.position == 0 and s.view.op_index is None and not s.play.playing


def test_the_picture_keeps_the_ids_the_schedule_names():
    tape, loss, variables = mlp()
    s = tl.viz.BackwardStepper(tape, loss, variables)
    ids = set(re.findall(r'<g id="([^"]+)" class="(?:node|edge)"', s.graph.svg))
    plan = s.graph.schedules["backward"]
    assert set(plan["edge_start"]) <= ids and {n for nodes in plan["current"] for n in nodes} <= ids
    assert set(plan["step_of_node"]) <= ids


def test_play_and_the_mode_buttons():
    tape, x, y, _, loss = seed_000()
    s = tl.viz.BackwardStepper(tape, loss, [x, y])
    s.slider.value = 2  # what Play does in the browser, linked to the slider there
    assert s.view.op_index == 0
    s.mode_buttons.value = "forward"
    assert s.position == 0 and s.slider.max == 2 and s.view.mode == "forward" and s.graph.mode == "forward"
    s.next_button.click()
    assert s.view.op_index == 0 and "Forward step 1 of 2" in s.panel.value


def test_without_a_kernel_the_output_still_shows_a_picture_and_the_chain_rule():
    tape, x, y, _, loss = seed_000()
    s = tl.viz.BackwardStepper(tape, loss, [x, y])
    bundle, metadata = s._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == s.widget.model_id
    assert metadata["image/png"]["width"] > 100  # its size on screen: Jupyter shrinks it to a narrower cell
    assert bundle["text/plain"] == str(s) == step_text(s.walkthrough)
    assert base64.b64decode(bundle["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"  # the last step, still
    assert "text/html" not in bundle  # (an untrusted notebook would strip its SVG down to raw text)
    assert "BackwardStepper: 2 backward steps, at step 0" in repr(s)
    assert s.frame(1).source == frame_dot(s.walkthrough, 1)


def test_import_tapelab_does_not_import_widget_libraries():
    code = "import sys, tapelab, tapelab.viz.stepper; print('ipywidgets' in sys.modules, 'anywidget' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_docstring_examples():
    import doctest

    import tapelab.viz.stepper as module

    result = doctest.testmod(module, extraglobs={"tl": tl}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 5 and result.failed == 0


def test_a_saved_notebook_keeps_a_still_picture_and_the_chain_rule_in_the_codes_names(tmp_path):
    """Run a notebook in a real kernel, as nbval or a teacher saving it would: the stored output holds the
    widget's view model and, for a notebook opened without running it, GitHub and nbviewer, the last step
    as PNG and every step as text."""
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
    assert base64.b64decode(out.data["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Backward step 2 of 2 - op 0: %0 = multiply(x, x)" in out.data["text/plain"]
    assert "Backward step 1 of 2 - op 1: y = add(%0, x)" in out.data["text/plain"]  # y: the notebook's name
    assert out.data["text/plain"].rstrip().endswith("x  7    (final)")


SEED_PICTURES = """
import tapelab as tl
x = tl.Variable(tl.ones((2, 2)), name="x")
y = tl.Variable([[2, 2], [2, 2]], dtype=tl.float32, name="y")
with tl.GradientTape() as tape:
    z = tl.matmul(x, y)
    loss = tl.reduce_mean(z)
listing = str(tape)
svg = tl.viz.draw(tape, loss, [x, y]).svg
steps = str(tl.viz.BackwardStepper(tape, loss, [x, y]))
"""


def assert_seed_names(listing, svg, steps):
    assert "  z = matmul(x, y)" in listing and "  loss = reduce_mean(z)" in listing
    assert ">matmul(x, y)</text>" in svg and ">reduce_mean(z)</text>" in svg and ">loss (target)</text>" in svg
    assert "Backward step 1 of 2 - op 1: loss = reduce_mean(z)" in steps
    assert "  to x:  ∂loss/∂x = ∂loss/∂z @ y.T = [[1, 1], [1, 1]]" in steps


def test_the_seed_tape_shows_z_and_loss_from_a_script(tmp_path):
    script = tmp_path / "seed.py"
    script.write_text(SEED_PICTURES + "import json\nprint(json.dumps([listing, svg, steps]))\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True).stdout
    assert_seed_names(*json.loads(out))


def test_the_seed_tape_shows_z_and_loss_from_a_notebook():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SEED_PICTURES),
                nbformat.v4.new_code_cell("import json\nprint(json.dumps([listing, svg, steps]))")]
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    assert_seed_names(*json.loads(nb.cells[1].outputs[0]["text"]))


def test_without_anywidget_the_picture_is_each_steps_still_frame(monkeypatch):
    """The Python-only path: no custom front end, Graphviz draws each step's frame in the kernel."""
    monkeypatch.setitem(sys.modules, "tapelab.viz.graphview", None)  # `import` of it now raises ImportError
    tape, x, y, _, loss = seed_000()
    s = tl.viz.BackwardStepper(tape, loss, [x, y])
    assert type(s.graph).__name__ == "FramesView" and "<svg" in s.graph.value
    first = s.graph.value
    s.next_button.click()
    assert s.graph.position == 1 and s.graph.value != first and 'stroke="#dc2626"' in s.graph.value  # op 1 in red
    s.mode_buttons.value = "forward"
    assert s.graph.mode == "forward" and s.graph.position == 0
    s.slider.value = 2
    assert "Forward step 2 of 2" in s.panel.value and s.graph.value.count("<svg") == 1


def test_a_still_frame_marks_the_current_node_even_when_the_code_calls_a_tensor_like_a_node_id():
    namespace = {"tl": tl}
    exec(compile("x = tl.Variable(3.0, name='x')\nwith tl.GradientTape() as tape:\n    t3 = x * 2.0\n"
                 "    loss = t3 * x\nwalk = tl.viz.walkthrough(tape, loss, x)", "<cell>", "exec"), namespace)
    walk = namespace["walk"]
    marked = [line.split('"')[1] for line in frame_dot(walk, 0).splitlines() if 'penwidth="3"' in line]
    assert marked == step_view(walk, 0).current  # the target's node, not the tensor the code calls t3


def test_every_still_frame_has_the_same_layout():
    from tapelab.viz import render_dot

    tape, loss, variables = mlp()
    walk = walkthrough(tape, loss, variables)
    sizes = {re.search(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', render_dot(frame_dot(walk, p, mode), "svg")
                       .decode()).groups() for mode in ("backward", "forward") for p in (0, 3, walk.count(mode))}
    assert len(sizes) == 1


def test_the_start_says_what_the_backward_pass_starts_from():
    x = tl.Variable([1.0, 2.0], name="x")
    with tl.GradientTape(persistent=True) as tape:
        y = x * x
        z = tl.reduce_sum(y)
    given = walkthrough(tape, y, x, output_gradients=tl.constant([10.0, 0.0]))  # one target: no "∂/∂%0", no plural
    assert step_view(given, 0).panel[0] == "Start: the backward pass begins at the target %0 with the " \
        "output_gradients given as its gradient: [10, 0]."
    assert step_view(given, given.count()).table == [("x", "[20, 0]", "final")]
    two = walkthrough(tape, [y, z], x, output_gradients=[tl.constant([10.0, 0.0]), tl.constant(2.0)])
    assert step_view(two, 0).panel[0] == "Start: the backward pass begins at the targets with the output_gradients " \
        "given as their gradients: %0 gets [10, 0], %1 gets 2."
    both = walkthrough(tape, [y, z], x)  # z is computed from y: y's own 1 is part of what reaches it
    assert step_view(both, 0).panel[0].startswith("Start: the backward pass begins at the targets %0, %1 with 1 at "
                                                 "each, for every element ((%0 + %1) is their sum).")
    assert "∂(%0 + %1)/∂%0: [1, 1] + [1, 1] = [2, 2], final" in step_view(both, 1).text
    itself = walkthrough(tape, z, [x, z])  # a target that is also a source: its gradient is 1
    assert step_view(itself, itself.count()).table[1] == ("%1", "1", "final")


def test_a_target_that_another_target_reads_gets_its_seed_as_one_part_on_the_picture_too():
    x = tl.Variable([1.0, 2.0], name="x")
    with tl.GradientTape() as tape:
        a = x * 1.0
        b = a * x
    walk = walkthrough(tape, [a, b], x)
    # a starts with 1 (its seed) and gets x from b: the edge carries one part of two, as the panel says
    assert walk.labels[edge_id(walk, "%0", "op_1")] == "∂(%0 + %1)/∂%0\n+= [1, 2]"
    assert "∂(%0 + %1)/∂%0: [1, 1] + [1, 2] = [2, 3], final" in step_view(walk, 1).text
    assert walk.labels[out_edge(walk, 0)] == "∂(%0 + %1)/∂%0\n= [2, 3]"  # the whole of it arrives at op 0
    assert {t.name: t.parts for t in walk.data.tensors.values()} == {"x": 2, "1": 0, "%0": 2, "%1": 1}


def test_the_stepper_starts_from_the_backward_passs_own_seeds():
    x = tl.Variable([1.0, 2.0], name="x")
    with tl.GradientTape(persistent=True) as tape:
        y = x * x
    g1, g2 = tl.constant([1.0, 0.0]), tl.constant([0.0, 3.0])
    walk = walkthrough(tape, [y, y], x, output_gradients=[g1, g2])  # one target twice: its seeds add up
    (key, (_, seed)), = tape.last_backward.seeds.items()
    assert walk.seeds[key] is seed and fmt.array_text(seed) == "[1, 3]"
    assert step_view(walk, walk.count()).table == [("x", fmt.array_text(tape.gradient([y, y], x, [g1, g2])), "final")]


def test_with_no_op_to_step_through_a_source_that_is_the_target_has_its_seed_not_none():
    x = tl.Variable(3.0, name="x")
    w = tl.Variable(1.0, name="w")
    with tl.GradientTape(persistent=True) as tape:
        x * w
    start = step_view(walkthrough(tape, x, x), 0)
    assert start.panel[1] == ("  No recorded op lies between the sources and the target: there is nothing to step "
                              "through; x is the target itself, so its gradient is the one the pass starts from.")
    assert start.table == [("x", "1", "final")]
    both = step_view(walkthrough(tape, x, [x, w]), 0)
    assert both.panel[1].endswith("so its gradient is the one the pass starts from, and every other source's is None.")
    assert both.table[1] == ("w", "None", "not connected to the target")
    none = step_view(walkthrough(tape, x, w), 0)
    assert none.panel[1].endswith("nothing to step through, and every source's gradient is None (the table says why).")


def test_the_forward_replay_lists_the_inputs_the_listing_lists():
    v, w = tl.Variable(1.0, name="v"), tl.Variable(2.0, name="w")
    with tl.GradientTape() as tape:
        loss = (v * w) * 0.5
    listing = str(tape)
    start = step_view(walkthrough(tape, loss, [v, w]), 0, "forward")
    assert "Inputs: v, w. Press Next" in start.panel[0]  # 0.5 is written inside its op, as the listing writes it
    assert start.table == [("v", "1", "variable"), ("w", "2", "variable")]
    assert "0.5 :" not in listing and "multiply(%0, 0.5)" in listing


def test_without_anywidget_or_graphviz_the_stepper_still_steps_and_the_picture_says_why(monkeypatch):
    """No library the picture needs may surface as an error once the backward pass has used up the tape."""
    monkeypatch.setenv("TAPELAB_DOT", "browser")  # no Graphviz program in the kernel
    monkeypatch.setitem(sys.modules, "anywidget", None)  # what Python sees when anywidget is not installed
    for name in ("tapelab.viz.browser", "tapelab.viz.graphview"):  # imported afresh: they import anywidget
        monkeypatch.delitem(sys.modules, name, raising=False)
    tape, x, y, _, loss = seed_000()
    s = tl.viz.BackwardStepper(tape, loss, [x, y])
    assert tape.used and type(s.graph).__name__ == "FramesView"
    assert "no graph: GraphvizNotFound: TAPELAB_DOT=browser" in s.graph.value
    assert "pip install anywidget" in s.graph.value
    s.slider.value = 2
    assert s.view.table == [("x", "[[1, 1], [1, 1]]", "final"), ("y", "[[0.5, 0.5], [0.5, 0.5]]", "final")]


def test_a_picture_too_big_for_the_browser_does_not_stop_the_stepper(monkeypatch):
    from tapelab.viz import limits

    monkeypatch.setenv("TAPELAB_DOT", "browser")
    monkeypatch.setattr(limits, "MAX_NODES", 3)  # seed_000 draws 6 nodes
    tape, x, y, _, loss = seed_000()
    s = tl.viz.BackwardStepper(tape, loss, [x, y])
    assert tape.used and type(s.graph).__name__ == "GraphView" and s.graph.dot == ""  # nothing for the browser
    assert "BackwardStepper: this picture has about 6 nodes, too many to lay out in the browser" in s.graph.svg
    assert "digraph" not in s.graph.svg
    s.slider.value = 2
    assert s.view.table[1] == ("y", "[[0.5, 0.5], [0.5, 0.5]]", "final")


def test_a_broadcast_input_gets_the_sum_of_its_parts():
    x = tl.Variable([1.0, 2.0, 3.0], name="x")
    b = tl.Variable(0.5, name="b")
    with tl.GradientTape() as tape:
        y = tl.reduce_sum((x + b) * x)
    text = step_text(walkthrough(tape, y, [x, b]))
    assert "to b:  ∂%2/∂b = sum of ∂%2/∂%0 over the broadcast axes = 6" in text


def test_a_long_walk_stores_its_first_and_last_steps_as_text():
    x = tl.Variable(1.0, name="x")
    with tl.GradientTape() as tape:
        y = x
        for _ in range(30):
            y = tl.tanh(y)
    s = tl.viz.BackwardStepper(tape, y, x)
    stored = s._repr_mimebundle_()[0]["text/plain"]
    assert "... steps 13 to 18 of 30 (print(stepper) shows them all)" in stored
    assert stored.count("Backward step") == 24 and str(s).count("Backward step") == 30


def test_a_traced_graph_cannot_be_stepped_and_says_what_to_do():
    graph = tl.function(lambda v: v * v).get_concrete_function(tl.constant(1.0))
    with pytest.raises(TypeError, match=r"ConcreteFunction is not a GradientTape.*tl.viz.draw\(graph\)"):
        walkthrough(graph, None, [])


def test_a_stepper_warning_points_at_the_learners_line():
    x = tl.Variable(1.0, name="x")
    c = tl.constant(2.0)
    with tl.GradientTape() as tape:
        y = x * c
    with pytest.warns(UserWarning, match="never watched") as record:
        walkthrough(tape, y, [x, c])
    assert record[0].filename == __file__


def test_a_small_kernels_gradient_reads_as_its_grid_and_long_values_may_wrap():
    """A (3, 3, 1, 1) kernel's gradient is written as the 3x3 grid it is (its axes of size 1 left out, and said so),
    and a value too long for a narrow panel may wrap after its commas instead of widening the panel off screen."""
    from tapelab.viz.stepper import NOWRAP_CHARS, _nowrap

    conv = tl.keras.layers.Conv2D(1, 3, name="conv")
    patch = np.arange(25, dtype=np.float32).reshape(1, 5, 5, 1) / 25
    with tl.GradientTape(persistent=True) as tape:
        loss = tl.reduce_mean(conv(patch))
    kernel = tape.gradient(loss, conv.kernel).numpy()
    last = step_view(walkthrough(tape, loss, conv.trainable_variables), 3)
    grid = fmt.value_text(kernel.reshape(3, 3), fmt.PANEL_SMALL)
    assert f"= {grid} (shape (3, 3, 1, 1), its axes of size 1 left out)" in "\n".join(last.panel)
    assert last.table[0].value.startswith(f"{grid} (shape (3, 3, 1, 1)")
    short, long = "[[1, 1], [1, 1]]", "[" + ", ".join(["0.1111"] * 12) + "]"
    assert len(short) <= NOWRAP_CHARS < len(long)
    html = _nowrap(f"a = {short}, b = {long}")
    assert f'<span style="white-space: nowrap">{short}</span>' in html and f"b = {long}" in html
