"""The pure DOT export: nodes, edges, labels, greyed sources with their reason, clusters, collapse, node cap."""

import re
import subprocess
import sys
import warnings

import pytest

import tapelab as tl
from tapelab.viz import to_dot
from tests.tapes import mlp_tape, seed_000

NODE = re.compile(r'^\s*"([^"]+)" \[(.*)\];$')
EDGE = re.compile(r'^\s*"([^"]+)" -> "([^"]+)"(?: \[(.*)\])?;$')
ATTR = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def parse(dot):
    """DOT text -> ({node id: attrs}, {(from, to): attrs}, [cluster labels]); every line must be understood."""
    nodes, edges, clusters = {}, {}, []
    lines = dot.splitlines()
    assert lines[0] == "digraph tape {" and lines[-1] == "}"
    for line in lines[1:-1]:
        if m := EDGE.match(line):
            edges[(m[1], m[2])] = dict(ATTR.findall(m[3] or ""))
        elif m := NODE.match(line):
            nodes[m[1]] = {k: v.replace("\\n", "\n") for k, v in ATTR.findall(m[2])}
        elif m := re.match(r'^\s*label="([^"]*)"; style=', line):
            clusters.append(m[1])
        else:
            assert re.match(r"^\s*(graph|node|edge) \[|^\s*subgraph cluster_\d+ \{$|^\s*\}$", line), line
    return nodes, edges, clusters


def test_seed_000_nodes_edges_and_labels():
    tape, x, y, z, loss = seed_000(persistent=True)
    nodes, edges, clusters = parse(to_dot(tape))
    assert set(nodes) == {"t_x", "t_y", "t_a", "t_b", "op_0", "op_1"}
    assert set(edges) == {("t_x", "op_0"), ("t_y", "op_0"), ("op_0", "t_a"), ("t_a", "op_1"), ("op_1", "t_b")}
    assert edges[("t_x", "op_0")]["label"] == "x" and edges[("t_y", "op_0")]["label"] == "y"  # matmul(x, y)
    assert nodes["t_x"]["label"] == "x (Variable)\n(2, 2) float32\n[[1, 1], [1, 1]]"
    assert nodes["t_a"]["label"] == "a\n(2, 2) float32\n[[4, 4], [4, 4]]"
    assert nodes["op_0"]["label"] == "matmul" and nodes["op_0"]["shape"] == "ellipse"
    assert nodes["op_0"]["tooltip"] == "dx = g @ y.T; dy = x.T @ g"
    assert nodes["t_x"]["fillcolor"] != nodes["t_a"]["fillcolor"]  # Variables stand out
    assert clusters == []


def test_gradients_show_after_gradient_and_the_target_is_marked():
    tape, x, y, z, loss = seed_000(persistent=True)
    tape.gradient(loss, [x, y])
    nodes, _, _ = parse(to_dot(tape))
    assert nodes["t_x"]["label"] == "x (Variable, source)\n(2, 2) float32\n[[1, 1], [1, 1]]\ngrad [[1, 1], [1, 1]]"
    assert nodes["t_y"]["label"].endswith("grad [[0.5, 0.5], [0.5, 0.5]]")
    assert nodes["t_a"]["label"].endswith("grad [[0.25, 0.25], [0.25, 0.25]]")
    assert nodes["t_b"]["label"] == "b (target)\n() float32\n4\ngrad 1"
    assert nodes["t_b"]["fillcolor"] == "#fecaca"


def test_non_persistent_tape_is_drawn_from_its_backward_record():
    x = tl.Variable(3.0, name="x")
    with tl.GradientTape() as tape:
        y = x * x
    tape.gradient(y, x)
    assert tape.entries == []
    nodes, edges, _ = parse(to_dot(tape))
    assert ("t_x", "op_0") in edges and nodes["t_x"]["label"].endswith("grad 6")


def test_detail_levels():
    tape, x, y, z, loss = seed_000(persistent=True)
    tape.gradient(loss, x)
    names, _, _ = parse(to_dot(tape, detail="names"))
    shapes, edges, _ = parse(to_dot(tape, detail="shapes"))
    assert names["t_x"]["label"] == "x (Variable, source)"
    assert shapes["t_x"]["label"] == "x (Variable, source)\n(2, 2) float32"
    assert "label" in edges[("t_x", "op_0")]
    assert "label" not in parse(to_dot(tape, detail="names"))[1][("t_x", "op_0")]
    with pytest.raises(ValueError, match="detail='everything' is not one of"):
        to_dot(tape, detail="everything")


def test_params_show_on_op_nodes():
    x = tl.Variable(tl.ones((2, 3)), name="x")
    with tl.GradientTape() as tape:
        tl.reduce_sum(tl.transpose(x, perm=(1, 0)), axis=1)
    nodes, _, _ = parse(to_dot(tape))
    assert nodes["op_0"]["label"] == "transpose\nperm=(1, 0)"
    assert nodes["op_1"]["label"] == "reduce_sum\naxis=(1,)"


def greyed(node):
    return "dashed" in node["style"] and "gradient: None" in node["label"]


def test_each_none_reason_greys_the_source_out():
    w = tl.Variable(3.0, name="w")
    steps = tl.Variable(3, name="steps")  # integer
    u = tl.Variable(1.0, name="u")  # used, but not on the way to the target
    c = tl.constant(2.0)  # never watched
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(w)
        with tape.stop_recording():
            k = w * 4.0  # computed while recording was stopped
        loss = w * w
        u * 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tape.gradient(loss, [steps, u, c, k])[:] == [None] * 4
    nodes, edges, _ = parse(to_dot(tape, target=loss, sources=[w, steps, u, c, k]))
    by_name = {n["label"].split(" (")[0].split("\n")[0]: n for n in nodes.values()}
    assert not greyed(by_name["w"])
    reasons = {name: by_name[name]["label"].split("gradient: None\n")[1].replace("\n", " ")
               for name in ("steps", "u", "b", "c")}  # a is the 2.0; c and k are named b, c
    assert reasons == {"steps": "integer dtype: only float tensors have gradients",
                       "u": "not connected to the target",
                       "b": "not watched by the tape",
                       "c": "computed while recording was stopped"}
    assert by_name["c"]["label"].startswith("c (stopped, source)\n")
    for name in reasons:
        assert greyed(by_name[name]) and "gradient None" in by_name[name]["tooltip"]
    # unconnected sources are drawn even though no edge touches them
    assert not any("t_steps" in e for e in edges)


def test_the_same_reasons_after_gradient_without_naming_target_and_sources():
    x = tl.Variable(1.0, name="x")
    v = tl.Variable(2.0, name="v")
    with tl.GradientTape() as tape:
        y = x * 3.0
        v * 2.0
    tape.gradient(y, [x, v])
    nodes, _, _ = parse(to_dot(tape))
    assert greyed(nodes["t_v"]) and "not connected to the target" in nodes["t_v"]["label"]
    assert not greyed(nodes["t_x"]) and nodes["t_x"]["label"].endswith("grad 3")


def test_name_scopes_become_clusters_with_their_variables_inside():
    tape, loss, (w1, b1, w2, b2) = mlp_tape()
    dot = to_dot(tape, collapse=False)
    nodes, edges, clusters = parse(dot)
    assert clusters == ["dense/", "dense_1/"]
    dense = dot.split("subgraph cluster_0 {")[1].split("}")[0]
    for name in ("t_kernel", "t_bias", "op_0", "op_1", "op_2"):
        assert f'"{name}"' in dense
    assert '"t_kernel_1"' not in dense and '"op_3"' not in dense
    assert nodes["op_0"]["label"] == "matmul" and nodes["op_2"]["label"] == "relu"


def test_nested_scopes_nest_clusters():
    x = tl.Variable(1.0, name="x")
    with tl.GradientTape() as tape:
        with tl.name_scope("model"):
            with tl.name_scope("dense"):
                y = x * 2.0
            y = y + 1.0
    dot = to_dot(tape)
    assert parse(dot)[2] == ["model/", "model/dense/"]
    assert "\n  subgraph cluster_0 {\n" in dot and "\n    subgraph cluster_1 {\n" in dot  # inner sits in outer
    assert '\n      "op_0" [' in dot and '\n    "op_1" [' in dot


def test_collapse_draws_one_box_per_scope_and_expand_opens_one():
    tape, loss, (w1, b1, w2, b2) = mlp_tape()
    tape.gradient(loss, [w1, b1, w2, b2])
    nodes, edges, clusters = parse(to_dot(tape, collapse=True))
    boxes = {k: v for k, v in nodes.items() if k.startswith("scope_")}
    assert [b["label"].split("\n")[:2] for b in boxes.values()] == [
        ["dense/", "3 ops: matmul, add, relu"], ["dense_1/", "2 ops: matmul, add"]]
    assert "expand=['dense'] opens it" in boxes["scope_0"]["label"]
    assert clusters == []
    assert {"t_kernel", "t_bias", "t_kernel_1", "t_bias_1"} <= set(nodes)  # the sources stay visible
    assert nodes["t_kernel"]["label"].split("\n")[-1].startswith("grad norm ")
    assert ("t_kernel", "scope_0") in edges and ("scope_0", "t_e") in edges and ("t_e", "scope_3") in edges
    assert "t_c" not in nodes and "t_d" not in nodes  # the intermediates inside a box are hidden
    assert not any(k.startswith("op_") and int(k[3:]) < 5 for k in nodes)
    # expand one scope: it is a cluster again, the other stays a box
    nodes, edges, clusters = parse(to_dot(tape, collapse=True, expand=["dense"]))
    assert clusters == ["dense/"] and "scope_3" in nodes and "op_0" in nodes and "scope_0" not in nodes
    # collapse by name
    nodes, _, clusters = parse(to_dot(tape, collapse=["dense_1"]))
    assert clusters == ["dense/"] and "scope_3" in nodes


def test_big_tapes_collapse_by_default():
    small, _, _ = mlp_tape(steps=1)
    big, _, _ = mlp_tape(steps=12)  # 12 * 7 = 84 ops > COLLAPSE_OVER
    assert "scope_" not in to_dot(small)
    nodes, _, _ = parse(to_dot(big))
    assert sum(k.startswith("scope_") for k in nodes) == 24
    assert "scope_" not in to_dot(big, collapse=False, max_ops=None)


def test_node_cap_keeps_the_ops_nearest_the_target_and_summarises_the_rest():
    x = tl.Variable(1.0, name="x")
    half = tl.constant(0.5)
    with tl.GradientTape() as tape:
        y = x
        for _ in range(10):
            y = tl.tanh(y * half)
    nodes, edges, _ = parse(to_dot(tape, max_ops=4))
    ops = sorted(k for k in nodes if k.startswith("op_"))
    assert ops == ["op_16", "op_17", "op_18", "op_19"]
    assert nodes["more"]["label"] == ("... 16 more ops\n(earlier on the tape: multiply (8), tanh (8))\n"
                                      "max_ops=None draws them all")
    assert ("more", "t_r") in edges and edges[("more", "t_r")]["style"] == "dashed"  # r = op 15's output (no g)
    assert "t_x" not in nodes  # only read by hidden ops
    full, _, _ = parse(to_dot(tape, max_ops=None))
    assert sum(k.startswith("op_") for k in full) == 20 and "more" not in full
    with pytest.raises(ValueError, match="max_ops=0 must be at least 1"):
        to_dot(tape, max_ops=0)


def test_highlight_nodes_and_edges_and_per_edge_colours_and_labels():
    tape, x, y, z, loss = seed_000(persistent=True)
    dot = to_dot(tape, highlight=[x, 1, (x, 0), ("a", 1)],
                 edge_colors=[((y, 0), "#2563eb")], edge_labels={(0, "a"): "g = 0.25"})
    nodes, edges, _ = parse(dot)
    assert nodes["t_x"]["color"] == "#dc2626" and nodes["op_1"]["penwidth"] == "3"
    assert "color" not in nodes["t_y"]
    assert edges[("t_x", "op_0")]["color"] == "#dc2626" and edges[("t_a", "op_1")]["penwidth"] == "2.5"
    assert edges[("t_y", "op_0")]["color"] == "#2563eb"
    assert edges[("op_0", "t_a")]["label"] == "g = 0.25"
    assert "color" not in edges[("op_1", "t_b")]
    with pytest.raises(ValueError, match="no op 7"):
        to_dot(tape, highlight=[7])
    with pytest.raises(ValueError, match="no tensor or node named 'zz'"):
        to_dot(tape, highlight=["zz"])
    with pytest.raises(ValueError, match="not on this tape"):
        to_dot(tape, highlight=[tl.constant(1.0)])


def test_labels_are_escaped():
    x = tl.Variable(1.0, name='say "hi"\\')
    with tl.GradientTape() as tape:
        x * 2.0
    dot = to_dot(tape, title='a "quoted" title')
    assert '"t_say \\"hi\\"\\\\"' in dot and 'label="a \\"quoted\\" title"' in dot


def test_to_dot_does_not_import_graphviz():
    code = ("import sys, tapelab as tl\n"
            "x = tl.Variable(2.0)\n"
            "with tl.GradientTape() as t:\n    y = x * x\n"
            "assert tl.viz.to_dot(t).startswith('digraph')\n"
            "str(t)\n"
            "print('graphviz' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_a_traced_graph_with_nodes_that_have_no_gradient_rule_lists_and_draws():
    w = tl.Variable(5.0, name="w")

    def step(x):
        w.assign_sub(x * 0.5)
        return tl.argmax(tl.stack([x, 2.0 * x]))

    graph = tl.function(step).get_concrete_function(tl.constant(1.0))
    assert "e = assign_sub(w, d)" in str(graph) and "argmax(" in str(graph)
    nodes, edges, _ = parse(to_dot(graph))
    op = next(k for k, n in nodes.items() if n["label"] == "assign_sub")
    assert nodes[op]["tooltip"] == "assign_sub"  # no formulas to show
    assert [edges[(a, b)]["label"] for a, b in edges if b == op] == ["#0", "#1"]  # arguments by position


def test_inputs_without_a_gradient_are_named_by_their_role():
    # the labels of a cross-entropy and the mask of a where() have no gradient, but their edge still says what they are
    logits = tl.Variable([[2.0, 1.0, 0.0]])
    with tl.GradientTape() as tape:
        loss = tl.nn.sparse_softmax_cross_entropy_with_logits(labels=tl.constant([0]), logits=logits)
        picked = tl.where(logits > 1.0, logits, tl.zeros_like(logits))
    nodes, edges, _ = parse(to_dot(tape))
    labels = {}
    for (_, op), attrs in edges.items():
        labels.setdefault(nodes[op]["label"], []).append(attrs.get("label"))
    assert labels["sparse_softmax_cross_entropy_with_logits"] == ["labels", "logits"]
    assert labels["where"][0] == "cond"
    assert loss.shape == (1,) and picked.shape == (1, 3)
