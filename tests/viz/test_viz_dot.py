"""The pure DOT export: nodes, edges, labels, greyed sources with their reason, clusters, collapse, node cap, layout."""

import re
import subprocess
import sys
import warnings

import pytest

import tapelab as tl
from tapelab.viz import build, to_dot
from tapelab.viz.dot import edge_count
from tests.tapes import mlp_tape, seed_000

NODE = re.compile(r'^\s*"([^"]+)" \[(.*)\];$')
EDGE = re.compile(r'^\s*"([^"]+)" -> "([^"]+)"(?: \[(.*)\])?;$')
ATTR = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def parse(dot):
    """DOT text -> ({node id: attrs}, [(from, to, attrs)], [cluster labels]); every line must be understood."""
    nodes, edges, clusters = {}, [], []
    lines = dot.splitlines()
    assert lines[0] == "digraph tape {" and lines[-1] == "}"
    for line in lines[1:-1]:
        if m := EDGE.match(line):
            edges.append((m[1], m[2], {k: v.replace("\\n", "\n") for k, v in ATTR.findall(m[3] or "")}))
        elif m := NODE.match(line):
            nodes[m[1]] = {k: v.replace("\\n", "\n") for k, v in ATTR.findall(m[2])}
        elif m := re.match(r'^\s*label="([^"]*)"; style=', line):
            clusters.append(m[1])
        else:
            assert re.match(r"^\s*(graph|node|edge) \[|^\s*subgraph cluster_\d+ \{$|^\s*\}$", line), line
    return nodes, edges, clusters


def named(nodes):
    """Node attrs by the name they are drawn with (the first word of the label)."""
    return {n["label"].split("\n")[0].split(" (")[0]: dict(n, id=k) for k, n in nodes.items()}


def pairs(edges):
    return {(a, b) for a, b, _ in edges}


def test_seed_000_nodes_edges_and_labels():
    tape, x, y, z, loss = seed_000(persistent=True)
    nodes, edges, clusters = parse(to_dot(tape))
    by = named(nodes)
    assert set(by) == {"x", "y", "%0", "%1", "matmul(x, y)", "reduce_mean(%0)"}  # z and loss are a helper's locals
    tx, ty, tz, tl_, mm, rm = (by[k]["id"] for k in ("x", "y", "%0", "%1", "matmul(x, y)", "reduce_mean(%0)"))
    assert pairs(edges) == {(tx, mm), (ty, mm), (mm, tz), (tz, rm), (rm, tl_)}
    assert all("label" not in attrs for *_, attrs in edges)  # the op's label names its inputs in order
    assert by["x"]["label"] == "x (Variable)\n(2, 2) float32\n[[1, 1], [1, 1]]"
    assert by["%0"]["label"] == "%0\n(2, 2) float32\n[[4, 4], [4, 4]]"
    assert mm == "op_0" and by["matmul(x, y)"]["shape"] == "ellipse"
    assert by["matmul(x, y)"]["tooltip"] == "grad x = grad %0 @ y.T; grad y = x.T @ grad %0"  # no target yet
    assert by["x"]["fillcolor"] != by["%0"]["fillcolor"]  # Variables stand out
    assert clusters == []
    assert all(attrs["id"] == k for k, attrs in nodes.items()) and [a["id"] for *_, a in edges] == [
        f"e{i}" for i in range(5)]  # ids the SVG keeps, for the stepper's front end


def test_the_names_are_the_codes_names():
    namespace = {"tl": tl}
    exec(compile("x = tl.Variable(tl.ones((2, 2)), name='x')\ny = tl.Variable([[2.0, 2.0], [2.0, 2.0]], name='y')\n"
                 "with tl.GradientTape() as tape:\n    z = tl.matmul(x, y)\n    loss = tl.reduce_mean(z)\n"
                 "tape.gradient(loss, [x, y])\ndot = tl.viz.to_dot(tape)", "<notebook cell>", "exec"), namespace)
    by = named(parse(namespace["dot"])[0])
    assert {"z", "loss", "matmul(x, y)", "reduce_mean(z)"} <= set(by)
    assert by["reduce_mean(z)"]["tooltip"] == "∂loss/∂z = broadcast(∂loss/∂loss) / 4"
    assert by["matmul(x, y)"]["tooltip"] == "∂loss/∂x = ∂loss/∂z @ y.T; ∂loss/∂y = x.T @ ∂loss/∂z"


def test_the_labels_a_keras_loss_reads_keep_the_codes_name():
    """A loss object converts its labels to a tensor; when they need no reshape or cast, it is the learner's own
    array, so the picture names it as the code does (lesson 08: ``labels``, not ``%in0``)."""
    namespace = {"tl": tl}
    exec(compile("import numpy as np\nimages = np.ones((4, 5), np.float32)\nlabels = np.array([0, 1, 2, 1])\n"
                 "model = tl.keras.Sequential([tl.keras.layers.Dense(3)])\n"
                 "loss_fn = tl.keras.losses.SparseCategoricalCrossentropy(from_logits=True)\n"
                 "with tl.GradientTape() as tape:\n    loss = loss_fn(labels, model(images))\n"
                 "dot = tl.viz.to_dot(tape)", "<notebook cell>", "exec"), namespace)
    labels = [n["label"] for n in parse(namespace["dot"])[0].values() if "(constant)" in n["label"]]
    assert sorted(label.split(" ")[0] for label in labels) == ["images", "labels"]


def test_gradients_show_after_gradient_and_the_target_is_marked():
    tape, x, y, z, loss = seed_000(persistent=True)
    tape.gradient(loss, [x, y])
    by = named(parse(to_dot(tape))[0])
    assert by["x"]["label"] == "x (Variable, source)\n(2, 2) float32\n[[1, 1], [1, 1]]\ngrad [[1, 1], [1, 1]]"
    assert by["y"]["label"].endswith("grad [[0.5, 0.5], [0.5, 0.5]]")
    assert by["%0"]["label"].endswith("grad [[0.25, 0.25], [0.25, 0.25]]")
    assert by["%1"]["label"] == "%1 (target)\n() float32\n4\ngrad 1"
    assert by["%1"]["fillcolor"] == "#fecaca"


def test_non_persistent_tape_is_drawn_from_its_backward_record():
    x = tl.Variable(3.0, name="x")
    with tl.GradientTape() as tape:
        y = x * x
    tape.gradient(y, x)
    assert tape.entries == []
    nodes, edges, _ = parse(to_dot(tape))
    by = named(nodes)
    assert [(a, b) for a, b, _ in edges if b == "op_0"] == [(by["x"]["id"], "op_0")] * 2  # x * x: one edge each
    assert by["x"]["label"].endswith("grad 6") and "multiply(x, x)" in by


def test_detail_levels():
    tape, x, y, z, loss = seed_000(persistent=True)
    tape.gradient(loss, x)
    names = named(parse(to_dot(tape, detail="names"))[0])
    shapes = named(parse(to_dot(tape, detail="shapes"))[0])
    assert names["x"]["label"] == "x (Variable, source)"
    assert shapes["x"]["label"] == "x (Variable, source)\n(2, 2) float32"
    with pytest.raises(ValueError, match="detail='everything' is not one of"):
        to_dot(tape, detail="everything")


def test_params_show_on_op_nodes():
    x = tl.Variable(tl.ones((2, 3)), name="x")
    with tl.GradientTape() as tape:
        tl.reduce_sum(tl.transpose(x, perm=(1, 0)), axis=1)
    nodes, _, _ = parse(to_dot(tape))
    assert nodes["op_0"]["label"] == "transpose(x)\nperm=(1, 0)"
    assert nodes["op_1"]["label"] == "reduce_sum(%0)\naxis=(1,)"


def test_unnamed_scalar_constants_are_written_inside_the_op_and_shared_constants_repeat():
    x = tl.Variable([1.0, 2.0], name="x")
    half = tl.constant([0.5, 0.5])
    with tl.GradientTape() as tape:
        y = x * 2.0
        y = y * half
        y = y * half
    nodes, edges, _ = parse(to_dot(tape))
    labels = sorted(n["label"].split("\n")[0] for n in nodes.values())
    assert "multiply(x, 2)" in labels and not any(label.startswith("2 (") for label in labels)  # no node for 2.0
    copies = [k for k, n in nodes.items() if n["label"].startswith("%in0 (constant)")]  # half: a local, so unnamed
    assert len(copies) == 2 and {b for a, b, _ in edges if a in copies} == {"op_1", "op_2"}  # one beside each op


def test_long_calls_wrap_their_arguments():
    logits = tl.Variable([[2.0, 1.0, 0.0]], name="logits")
    with tl.GradientTape() as tape:
        tl.nn.sparse_softmax_cross_entropy_with_logits(labels=tl.constant([0]), logits=logits)
    label = parse(to_dot(tape))[0]["op_0"]["label"]
    assert label == "sparse_softmax_cross_entropy_with_logits\n(%in0, logits)"


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
    dot = to_dot(tape, target=loss, sources=[w, steps, u, c, k])
    nodes, edges, _ = parse(dot)
    assert edge_count(dot) == len([e for e in edges if e[2].get("style") != "invis"]) < len(edges)
    by = named(nodes)
    assert not greyed(by["w"])
    reasons = {name: by[name]["label"].split("gradient: None\n")[1].replace("\n", " ")
               for name in ("steps", "u", "%in0", "%in1")}  # c and k are locals here: they get generated names
    assert reasons == {"steps": "integer dtype: only float tensors have gradients",
                       "u": "not connected to the target",
                       "%in0": "not watched by the tape",
                       "%in1": "computed while recording was stopped"}
    assert by["%in1"]["label"].startswith("%in1 (stopped, source)\n")
    for name in reasons:
        assert greyed(by[name]) and "gradient None" in by[name]["tooltip"]
    # unconnected sources are drawn even though no edge touches them: an invisible one hangs them below the target
    target = next(k for k, n in nodes.items() if "(target)" in n["label"])
    touching = [(a, attrs.get("style")) for a, b, attrs in edges if by["steps"]["id"] in (a, b)]
    assert touching == [(target, "invis")]


def test_the_same_reasons_after_gradient_without_naming_target_and_sources():
    x = tl.Variable(1.0, name="x")
    v = tl.Variable(2.0, name="v")
    with tl.GradientTape() as tape:
        y = x * 3.0
        v * 2.0
    tape.gradient(y, [x, v])
    by = named(parse(to_dot(tape))[0])
    assert greyed(by["v"]) and "not connected to the target" in by["v"]["label"].replace("\n", " ")
    assert not greyed(by["x"]) and by["x"]["label"].endswith("grad 3")


def test_name_scopes_become_clusters_with_their_variables_inside():
    tape, loss, (w1, b1, w2, b2) = mlp_tape()
    dot = to_dot(tape, collapse=False)
    nodes, edges, clusters = parse(dot)
    by = named(nodes)
    assert clusters == ["dense/", "dense_1/"]
    dense = dot.split("subgraph cluster_0 {")[1].split("}")[0]
    for node in (by["kernel"]["id"], by["bias"]["id"], "op_0", "op_1", "op_2"):
        assert f'"{node}"' in dense
    assert f'"{by["kernel_1"]["id"]}"' not in dense and '"op_3"' not in dense
    assert nodes["op_0"]["label"] == "matmul(%in0, kernel)" and nodes["op_2"]["label"] == "relu(%1)"


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
    by = named(nodes)
    boxes = {k: v for k, v in nodes.items() if k.startswith("box_")}
    assert [b["label"].split("\n")[:2] for b in boxes.values()] == [
        ["dense/", "3 ops: matmul, add, relu"], ["dense_1/", "2 ops: matmul, add"]]
    assert "expand=['dense'] opens it" in boxes["box_0"]["label"]
    assert clusters == []
    assert {"kernel", "bias", "kernel_1", "bias_1"} <= set(by)  # the sources stay visible
    assert by["kernel"]["label"].split("\n")[-1].startswith("grad norm ")
    assert {(by["kernel"]["id"], "box_0"), ("box_0", by["%2"]["id"]), (by["%2"]["id"], "box_3")} <= pairs(edges)
    assert "%0" not in by and "%1" not in by  # the intermediates inside a box are hidden
    assert not any(k.startswith("op_") and int(k[3:]) < 5 for k in nodes)
    # expand one scope: it is a cluster again, the other stays a box
    nodes, edges, clusters = parse(to_dot(tape, collapse=True, expand=["dense"]))
    assert clusters == ["dense/"] and "box_3" in nodes and "op_0" in nodes and "box_0" not in nodes
    # collapse by name
    nodes, _, clusters = parse(to_dot(tape, collapse=["dense_1"]))
    assert clusters == ["dense/"] and "box_3" in nodes


def test_big_tapes_collapse_by_default():
    small, _, _ = mlp_tape(steps=1)
    big, _, _ = mlp_tape(steps=12)  # 12 * 7 = 84 ops > COLLAPSE_OVER
    assert "box_" not in to_dot(small)
    nodes, _, _ = parse(to_dot(big))
    assert sum(k.startswith("box_") for k in nodes) == 24
    assert "box_" not in to_dot(big, collapse=False, max_ops=None)


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
    by = named(nodes)
    assert [(a, attrs["style"]) for a, b, attrs in edges if b == by["%15"]["id"]] == [("more", "dashed")]
    assert "x" not in by  # only read by hidden ops
    full, _, _ = parse(to_dot(tape, max_ops=None))
    assert sum(k.startswith("op_") for k in full) == 20 and "more" not in full
    with pytest.raises(ValueError, match="max_ops=0 must be at least 1"):
        to_dot(tape, max_ops=0)


def test_highlight_nodes_and_edges_and_per_edge_colours_and_labels():
    tape, x, y, z, loss = seed_000(persistent=True)
    dot = to_dot(tape, highlight=[x, 1, (x, 0), ("%0", 1)],
                 edge_colors=[((y, 0), "#2563eb")], edge_labels={(0, "%0"): "grad 0.25", "e4": "last"})
    nodes, edges, _ = parse(dot)
    by = named(nodes)
    attrs = {(a, b): e for a, b, e in edges}
    tx, ty, tz, tt = (by[k]["id"] for k in ("x", "y", "%0", "%1"))
    assert by["x"]["color"] == "#dc2626" and nodes["op_1"]["penwidth"] == "3"
    assert "color" not in by["y"]
    assert attrs[(tx, "op_0")]["color"] == "#dc2626" and attrs[(tz, "op_1")]["penwidth"] == "2.5"
    assert attrs[(ty, "op_0")]["color"] == "#2563eb"
    assert attrs[("op_0", tz)]["label"] == "grad 0.25" and attrs[("op_1", tt)]["label"] == "last"
    assert "color" not in attrs[("op_1", tt)]
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
    assert 'label="say \\"hi\\"\\\\ (Variable)' in dot and 'label="a \\"quoted\\" title"' in dot


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
    assert "%1 = assign_sub(w, %0)" in str(graph) and "argmax(" in str(graph)
    assert str(graph).splitlines()[2].split() == ["x", ":", "placeholder", "#", "()", "float32"]  # step's parameter
    nodes, edges, _ = parse(to_dot(graph))
    op = next(k for k, n in nodes.items() if n["label"] == "assign_sub(w, %0)")
    assert nodes[op]["tooltip"] == "assign_sub: no gradient flows back through it here"


def test_the_direction_follows_the_tapes_shape():
    x = tl.Variable(1.0, name="x")
    with tl.GradientTape() as tape:  # a long chain: top to bottom stays a cell wide
        y = x
        for _ in range(30):
            y = tl.tanh(y) * 1.5
    assert "rankdir=TB" in to_dot(tape)
    wide = [tl.Variable(float(k), name=f"w{k}") for k in range(12)]
    with tl.GradientTape() as tape:  # many inputs into one short sum: left to right is narrower
        total = tl.reduce_sum(tl.stack(wide))
    assert "rankdir=LR" in to_dot(tape, target=total, sources=wide)
    assert "rankdir=TB" in to_dot(tape, rankdir="TB")
    assert build(tape).rankdir() == "LR"


def test_a_50_op_tape_draws_a_cell_wide():
    x = tl.Variable(1.0, name="x")
    half = tl.constant(0.5)
    with tl.GradientTape() as tape:
        y = x
        for _ in range(25):
            y = tl.tanh(y * half)
    tape.gradient(y, x)
    svg = tl.viz.draw(tape).svg
    width_px = float(re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', svg)[1]) * 4 / 3
    assert "rankdir=TB" in to_dot(tape) and width_px < 600  # a straight column, not a diagonal


def test_a_scope_name_that_matches_nothing_is_an_error():
    tape, loss, _ = mlp_tape()
    with pytest.raises(ValueError, match=r"expand=\['dense_7'\] names no name scope on this tape; its scopes are "
                                         r"dense/, dense_1/"):
        to_dot(tape, collapse=True, expand=["dense_7"])
    with pytest.raises(ValueError, match=r"collapse=\['dens'\] names no name scope"):
        to_dot(tape, collapse=["dens"])


def test_a_tensor_that_is_not_drawn_cannot_be_highlighted_silently():
    tape, loss, _ = mlp_tape()
    with pytest.raises(ValueError, match=r"%0 is not drawn as a node: it is inside a collapsed box"):
        to_dot(tape, collapse=True, highlight=["%0"])


def test_op_tooltips_say_plus_equals_for_every_part_and_give_no_rule_where_no_gradient_flows():
    x = tl.Variable(1.0, name="x")
    v = tl.Variable(2.0, name="v", trainable=False)  # not watched: the listing says its gradient is None
    with tl.GradientTape() as tape:
        a = x * 3.0
        b = tl.exp(x)
        loss = a * v + b
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tape.gradient(loss, [x, v])
    nodes, _, _ = parse(to_dot(tape))
    # x is read by two ops: each sends one of its two parts
    assert nodes["op_0"]["tooltip"] == "∂%3/∂x += ∂%3/∂%0 * 3"
    assert nodes["op_1"]["tooltip"] == "∂%3/∂x += ∂%3/∂%1 * exp(x)"
    assert nodes["op_2"]["tooltip"] == "∂%3/∂%0 = ∂%3/∂%2 * v"  # no rule for v: no gradient reaches it
    assert "∂%3/∂v = None    # not watched by the tape" in str(tape)
    data = tl.viz.tape_data(tape)
    assert [(t.name, t.reachable, t.parts) for t in data.tensors.values() if not t.literal] == [
        ("x", True, 2), ("v", False, 0), ("%0", True, 1), ("%1", True, 1), ("%2", True, 1), ("%3", True, 1)]


def test_a_target_read_by_another_target_gets_plus_equals_in_its_tooltip():
    x = tl.Variable([1.0, 2.0], name="x")
    with tl.GradientTape() as tape:
        a = x * 2.0
        b = a * x
    tape.gradient([a, b], x)
    nodes, _, _ = parse(to_dot(tape))
    assert nodes["op_1"]["tooltip"] == "∂(%0 + %1)/∂%0 += ∂(%0 + %1)/∂%1 * x; ∂(%0 + %1)/∂x += ∂(%0 + %1)/∂%1 * %0"


def test_one_node_to_highlight_need_not_be_in_a_list():
    weight = tl.Variable(2.0, name="weight")
    with tl.GradientTape() as tape:
        weight * 3.0
    for one in ("weight", weight):  # a name is not a list of letters; a tensor is not a list of elements
        assert named(parse(to_dot(tape, highlight=one))[0])["weight"]["color"] == "#dc2626"
    assert parse(to_dot(tape, highlight=0))[0]["op_0"]["penwidth"] == "3"
