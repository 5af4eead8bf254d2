"""gradient_flow: the gradient's size per name scope, read off a real backward pass."""

import numpy as np
import pytest

import tapelab as tl


def _rnn(steps=6, seed=0):
    """h = tanh(x_t W_x + h W_h), one name scope per step: W_x and W_h are read by every step."""
    rng = np.random.default_rng(seed)
    W_x = tl.Variable(rng.normal(size=(3, 4)).astype(np.float32) * 0.5, name="W_x")
    W_h = tl.Variable(rng.normal(size=(4, 4)).astype(np.float32) * 0.5, name="W_h")
    xs = [tl.constant(rng.normal(size=(2, 3)).astype(np.float32)) for _ in range(steps)]
    with tl.GradientTape() as tape:
        h = tl.zeros((2, 4))
        with tl.name_scope("rnn"):
            for t, x in enumerate(xs):
                with tl.name_scope(f"t{t:02d}"):
                    h = tl.tanh(x @ W_x + h @ W_h)
        loss = tl.reduce_sum(h * h)
    grads = tape.gradient(loss, [W_x, W_h])
    return tape, grads, h


def test_a_layer_s_weight_norm_is_its_gradients_norm_and_the_output_norm_is_dloss_dy():
    tl.random.set_seed(1)
    model = tl.keras.Sequential([tl.keras.layers.Dense(5, activation="relu"), tl.keras.layers.Dense(2)])
    x = tl.random.normal([4, 3])
    with tl.GradientTape(persistent=True) as tape:
        hidden = model.layers[0](x)
        y = model.layers[1](hidden)
        loss = tl.reduce_sum(y * y)
    grads = tape.gradient(loss, model.trainable_variables)
    flow = tl.viz.gradient_flow(tape)
    assert [r.scope for r in flow] == ["dense", "dense_1", "(no scope)"]
    first = np.sqrt(sum(float(np.sum(g.numpy().astype(np.float64) ** 2)) for g in grads[:2]))
    np.testing.assert_allclose(flow["dense"].weight_norm, first, rtol=1e-6)
    np.testing.assert_allclose(flow["dense"].output_norm, np.linalg.norm(tape.gradient(loss, hidden).numpy()),
                               rtol=1e-6)
    np.testing.assert_allclose(flow["dense_1"].output_norm, np.linalg.norm(2 * y.numpy()), rtol=1e-6)
    assert flow["(no scope)"].weight_norm is None and flow["(no scope)"].output_norm == 1.0  # d loss / d loss


def test_the_steps_shares_of_a_shared_weight_add_up_to_its_gradient():
    tape, (dW_x, dW_h), _ = _rnn()
    whole = np.sqrt(np.sum(dW_x.numpy().astype(np.float64) ** 2) + np.sum(dW_h.numpy().astype(np.float64) ** 2))
    (rnn, top) = tl.viz.gradient_flow(tape)  # depth 1: the whole unrolled loop is one row, its parts the gradient
    assert rnn.scope == "rnn" and rnn.ops == 6 * 4
    np.testing.assert_allclose(rnn.weight_norm, whole, rtol=1e-6)
    steps = tl.viz.gradient_flow(tape, depth=None)
    assert [r.scope for r in steps] == [f"rnn/t{t:02d}" for t in range(6)] + ["(no scope)"]
    assert whole <= sum(r.weight_norm for r in steps if r.weight_norm is not None) * (1 + 1e-6)  # parts of it


def test_a_deep_sigmoid_network_s_gradient_falls_layer_by_layer():
    tl.random.set_seed(0)
    model = tl.keras.Sequential([tl.keras.layers.Dense(32, activation="sigmoid") for _ in range(8)]
                                + [tl.keras.layers.Dense(10)])
    x, y = tl.random.normal([64, 20]), tl.constant(np.arange(64) % 10)
    with tl.GradientTape() as tape:
        loss = tl.keras.losses.SparseCategoricalCrossentropy(from_logits=True)(y, model(x))
    tape.gradient(loss, model.trainable_variables)
    norms = tl.viz.gradient_flow(tape).norms("output")
    hidden = [norms[f"dense{'' if k == 0 else f'_{k}'}"] for k in range(8)]
    assert all(a < b for a, b in zip(hidden, hidden[1:])), hidden  # (sigmoid' <= 1/4 at every layer)
    assert hidden[-1] / hidden[0] > 1e3


def test_the_table_shows_each_scope_with_a_log_bar():
    tape, _, _ = _rnn(steps=3)
    text = str(tl.viz.gradient_flow(tape, depth=None))
    lines = text.splitlines()
    assert lines[0].startswith("scope") and "log scale" in lines[0]
    assert [line.split()[0] for line in lines[1:]] == ["rnn/t00", "rnn/t01", "rnn/t02", "(no"]
    bars = [len(line.split()[-1]) for line in lines[1:]]
    assert max(bars) == 20 and min(bars) == 1


def test_depth_none_keeps_whole_scope_paths():
    x = tl.Variable(2.0)
    with tl.GradientTape() as tape:
        with tl.name_scope("block"):
            with tl.name_scope("inner"):
                y = x * x
            z = y * 3.0
    tape.gradient(z, x)
    assert [r.scope for r in tl.viz.gradient_flow(tape)] == ["block"]
    assert [r.scope for r in tl.viz.gradient_flow(tape, depth=None)] == ["block/inner", "block"]


def test_before_gradient_and_an_unknown_scope_say_what_to_do():
    x = tl.Variable(2.0)
    with tl.GradientTape() as tape:
        y = x * x
    with pytest.raises(ValueError, match=r"no backward pass to measure yet. Call tape.gradient\(loss, sources\)"):
        tl.viz.gradient_flow(tape)
    tape.gradient(y, x)
    flow = tl.viz.gradient_flow(tape)
    with pytest.raises(KeyError, match=r"no scope 'dense'.*its scopes are \(no scope\)"):
        flow["dense"]
    with pytest.raises(ValueError, match=r"which must be 'output' or 'weights'"):
        flow.norms("input")


# --- the drawn flow view: draw(tape, flow=True) -------------------------------------------------------------
def _edge_attrs(source, tail, head):
    """The attribute text of every drawn edge tail -> head in DOT text."""
    import re
    return re.findall(rf'"{tail}" -> "{head}" \[([^\]]*)\]', source)


def _deep_sigmoid_tape(layers=8):
    tl.random.set_seed(0)
    model = tl.keras.Sequential([tl.keras.layers.Dense(16, activation="sigmoid") for _ in range(layers)]
                                + [tl.keras.layers.Dense(10)])
    x, y = tl.random.normal([16, 20]), tl.constant(np.arange(16) % 10)
    with tl.GradientTape() as tape:
        loss = tl.reduce_mean(tl.keras.losses.sparse_categorical_crossentropy(y, model(x), from_logits=True))
    tape.gradient(loss, model.trainable_variables)
    return tape


def test_flow_colours_and_thickens_the_edges_by_the_gradient_s_size_with_a_legend():
    tape = _deep_sigmoid_tape()
    graph = tl.viz.dot.build(tape, collapse=True, flow=True)
    source = graph.source(flow=True)
    flow = tl.viz.gradient_flow(tape)
    # the edge out of each layer's box carries dL/d(its output): the widths rise with the flow's norms
    widths, norms = [], []
    for u in graph.units:
        if u.box_scope is None:
            continue
        (out,) = [e for e in graph.edges if e.tail == u.id]
        (attrs,) = _edge_attrs(source, out.tail, out.head)
        widths.append(float(attrs.split('penwidth="')[1].split('"')[0]))
        norms.append(flow[u.box_scope].output_norm)
    sigmoid = slice(0, 8)  # (the last layer, a linear one, may get less than the one before it)
    assert len(widths) == 9 and widths[sigmoid] == sorted(widths[sigmoid]) and norms[sigmoid] == sorted(norms[sigmoid])
    assert widths[0] < 2 < 5 < widths[7]  # the smallest gradient is drawn thin, the largest thick
    assert '"legend"' in source and "gradient norm on each edge (log scale)" in source
    for colour in tl.viz.dot.FLOW_RAMP:
        assert f'BGCOLOR="{colour}"' in source
    # the integer labels get no gradient: a grey dashed edge
    assert any("dashed" in a and tl.viz.dot.GREY in a for a in _edge_attrs(source, r"t\d+", r"op_\d+"))


def test_an_edge_into_a_time_step_carries_that_step_s_part_of_a_shared_weight_s_gradient():
    tape, (dW_x, dW_h), _ = _rnn(steps=6)
    graph = tl.viz.dot.build(tape, collapse=True, flow=True)
    data = graph.data
    key_of = {t.name: k for k, t in data.tensors.items()}
    parts = [graph._flowing(e) for e in graph.edges if e.tensor == key_of["W_h"]]
    assert len(parts) == 6  # one edge into each step's box: the first from W_h itself, the others from its copies
    np.testing.assert_allclose(sum(parts), dW_h.numpy(), rtol=1e-5, atol=1e-7)
    # the weights are drawn in full once, then again (dashed, by name) beside each later step
    copies = graph.copies[key_of["W_h"]]
    assert len(copies) == 5 and all(graph._is_again(c, key_of["W_h"]) for c in copies)
    assert 'label="W_h", tooltip="W_h again' in graph.source()


def test_a_50_step_rnn_collapsed_per_step_has_no_edge_across_steps():
    """Graphviz routes an edge through every rank it spans: one W_h node feeding 50 steps took ~17 s to lay out.
    Drawn again beside each step, every edge into a step's box starts next to it (benchmarks/bench_viz.py times
    the drawing)."""
    tape, _, _ = _rnn(steps=50)
    graph = tl.viz.dot.build(tape, collapse=True, flow=True)
    boxes = [u.id for u in graph.units if u.box_scope is not None]
    assert len(boxes) == 50
    readers = {}
    for e in graph.edges:
        if e.head in boxes:
            readers.setdefault(e.tail, set()).add(e.head)
    assert max(len(r) for r in readers.values()) == 1


def test_flow_before_gradient_says_what_to_do():
    x = tl.Variable(2.0, name="x")
    with tl.GradientTape() as tape:
        y = x * x
    with pytest.raises(ValueError, match=r"flow=True.*tape.gradient\(loss, sources\) first"):
        tl.viz.to_dot(tape, flow=True)
    del y
