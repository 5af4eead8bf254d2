"""The tape listing (print(tape)): exact text for small tapes, the code's names, scopes, params, gradients, reasons.

Tensors a test function holds in its locals are not looked up (CPython < 3.13 would keep them alive), so the
listings of tapes made in test functions show generated names (%0 is op 0's output); code run as a notebook
cell or a script, as in ``exec`` below, names them.
"""

import subprocess
import sys
import textwrap
import warnings

import pytest

import tapelab as tl
from tapelab.viz import format_tape, tape_data
from tests.tapes import seed_000

SEED_000 = """\
x = tl.Variable(tl.ones((2, 2)), name="x")
y = tl.Variable([[2, 2], [2, 2]], dtype=tl.float32, name="y")
with tl.GradientTape() as tape:
    z = tl.matmul(x, y)
    loss = tl.reduce_mean(z)
"""

SEED_000_BEFORE = """\
GradientTape: 2 ops
inputs:
  x : Variable             # (2, 2) float32  [[1, 1], [1, 1]]
  y : Variable             # (2, 2) float32  [[2, 2], [2, 2]]
ops:
  z = matmul(x, y)         # (2, 2) float32  [[4, 4], [4, 4]]
  loss = reduce_mean(z)    # () float32  4"""

SEED_000_AFTER = """\
GradientTape: 2 ops
inputs:
  x : Variable             # (2, 2) float32  source  [[1, 1], [1, 1]]
  y : Variable             # (2, 2) float32  source  [[2, 2], [2, 2]]
ops:
  z = matmul(x, y)         # (2, 2) float32  [[4, 4], [4, 4]]
  loss = reduce_mean(z)    # () float32  target  4
gradient of loss:
  ∂loss/∂x = [[1, 1], [1, 1]]
  ∂loss/∂y = [[0.5, 0.5], [0.5, 0.5]]"""


def run_cell(code, namespace=None):
    """Run code as a notebook cell runs it: at module level, in a namespace of its own."""
    namespace = {"tl": tl} if namespace is None else namespace
    exec(compile(code, "<notebook cell>", "exec"), namespace)
    return namespace


def test_seed_000_listing_uses_the_codes_names_before_and_after_gradient():
    ns = run_cell(SEED_000 + "before = str(tape)\ntape.gradient(loss, [x, y])\nafter = str(tape)")
    assert ns["before"] == SEED_000_BEFORE
    # the non-persistent tape released its entries; the listing reads the backward record
    assert ns["tape"].entries == [] and ns["after"] == SEED_000_AFTER


def test_a_plain_script_names_its_tensors_too(tmp_path):
    script = tmp_path / "seed.py"
    script.write_text("import tapelab as tl\n" + SEED_000 + "tape.gradient(loss, [x, y])\nprint(tape)\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True).stdout
    assert out.strip() == SEED_000_AFTER


def test_without_a_name_in_the_code_tensors_get_names_no_code_can_have():
    tape, x, y, z, loss = seed_000()  # made inside a helper function: z and loss are its locals
    assert str(tape) == SEED_000_BEFORE.replace("  z = matmul(x, y)         #", "  %0 = matmul(x, y)        #").replace(
        "  loss = reduce_mean(z)    #", "  %1 = reduce_mean(%0)     #").replace("   #", "  #")


def test_rebinding_a_name_and_two_names_for_one_tensor():
    ns = run_cell(textwrap.dedent("""
        w = tl.Variable(1.0, name="w")
        with tl.GradientTape() as tape:
            h = w * 3.0
            h = tl.tanh(h)       # h now holds the tanh: the product is %0 again
            out = h
        text = str(tape)
    """))
    assert "  %0 = multiply(w, 3)" in ns["text"]
    assert "  h = tanh(%0)" in ns["text"]  # two names (h, out): the first bound wins


def test_explicit_variable_names_win_over_the_codes_names():
    ns = run_cell("v = tl.Variable(2.0, name='weight')\nu = tl.Variable(1.0)\nwith tl.GradientTape() as t:\n"
                  "    p = v * u\ntext = str(t)")
    assert "  weight : Variable" in ns["text"] and "  u : Variable" in ns["text"]  # u has TF's default name
    assert "  p = multiply(weight, u)" in ns["text"]


def test_numpy_arrays_name_the_tensors_that_wrap_them():
    ns = run_cell("import numpy as np\nimages = np.ones((2, 3), np.float32)\nw = tl.Variable(np.ones((3, 1), "
                  "np.float32), name='w')\nwith tl.GradientTape() as t:\n    out = tl.matmul(images, w)\ntext = str(t)")
    assert "  out = matmul(images, w)" in ns["text"]


def test_print_is_format_tape(capsys):
    ns = run_cell(SEED_000 + "print(tape)\nlisting = tl.viz.format_tape(tape)")
    assert capsys.readouterr().out == SEED_000_BEFORE + "\n" and ns["listing"] == SEED_000_BEFORE


def test_listing_is_deterministic_across_runs():
    assert str(seed_000()[0]) == str(seed_000()[0])


def test_explicit_target_and_sources_mark_lines_before_any_gradient():
    tape, x, y, z, loss = seed_000(persistent=True)
    text = format_tape(tape, target=loss, sources=[y])
    assert "  y : Variable            # (2, 2) float32  source  [[2, 2], [2, 2]]" in text
    assert "  x : Variable            # (2, 2) float32  [[1, 1], [1, 1]]" in text
    assert "  %1 = reduce_mean(%0)    # () float32  target  4" in text
    assert "gradient of" not in text  # nothing computed yet, and y is connected: no None to explain


def test_scopes_params_and_every_none_reason():
    w = tl.Variable(3.0, name="w")
    i = tl.Variable(3, name="i")
    u = tl.Variable(1.0, name="u")
    c = tl.constant(2.0)
    with tl.GradientTape(persistent=True) as tape:
        with tl.name_scope("dense"):
            h = tl.reshape(w * 2.0, (1,))
            s = tl.reduce_sum(h, axis=0)
        with tape.stop_recording():
            k = w * 4.0
            k2 = w * 5.0
        loss = s * k
        u * c
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the engine warns about the integer source
        grads = tape.gradient(loss, [w, i, c, k2, u])
    assert float(grads[0]) == 24.0 and grads[1:] == [None] * 4
    assert format_tape(tape) == """\
GradientTape: 5 ops
inputs:
  w : Variable                                   # () float32  source  3
  %in0 : computed while recording was stopped    # () float32  12
  u : Variable                                   # () float32  source  1
  %in1 : constant                                # () float32  source  2
  i : Variable                                   # () int32  source  3
  %in2 : computed while recording was stopped    # () float32  source  15
ops:
  dense/
    %0 = multiply(w, 2)                          # () float32  6
    %1 = reshape(%0, shape=(1,))                 # (1,) float32  [6]
    %2 = reduce_sum(%1, axis=(0,))               # () float32  6
  %3 = multiply(%2, %in0)                        # () float32  target  72
  %4 = multiply(u, %in1)                         # () float32  2
gradient of %3:
  ∂%3/∂w = 24
  ∂%3/∂i = None    # integer dtype: only float tensors have gradients
  ∂%3/∂%in1 = None    # not watched by the tape
  ∂%3/∂%in2 = None    # computed while recording was stopped
  ∂%3/∂u = None    # not connected to the target"""


def test_a_source_whose_only_path_was_not_recorded_says_so():
    v = tl.Variable(2.0, name="v")
    w = tl.Variable(1.0, name="w")
    with tl.GradientTape() as tape:
        twice = v * 2.0
        with tape.stop_recording():
            hidden = twice * 3.0  # computed from v, unrecorded
        loss = hidden * w
    assert tape.gradient(loss, [v, w])[0] is None
    assert str(tape).splitlines()[-2:] == [
        "  ∂%1/∂v = None    # not connected to the target: its path runs through %in0, computed while recording "
        "was stopped", "  ∂%1/∂w = 12"]


def test_not_connected_without_stopped_tensors_is_plain():
    x = tl.Variable(1.0, name="x")
    v = tl.Variable(2.0, name="v")
    with tl.GradientTape() as tape:
        y = x * 3.0
        v * 2.0
    assert tape.gradient(y, v) is None
    assert str(tape).endswith("gradient of %0:\n  ∂%0/∂v = None    # not connected to the target")


def test_target_computed_while_stopped_gives_the_stopped_reason():
    x = tl.constant(3.0)
    with tl.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            y = x * x
    assert tape.gradient(y, x) is None
    text = str(tape)
    assert text.endswith("gradient of %in1:\n  ∂%in1/∂%in0 = None    # the target was computed while recording was "
                         "stopped")
    assert "  %in0 : watched                                 # () float32  source  3" in text
    assert "  %in1 : computed while recording was stopped    # () float32  target  9" in text


def test_variable_names_are_uniquified():
    a = tl.Variable([1.0, 2.0], name="a")
    k1 = tl.Variable(2.0, name="kernel")
    k2 = tl.Variable(3.0, name="kernel")
    steps = tl.Variable(0, trainable=False, name="steps")
    with tl.GradientTape() as tape:
        y = tl.reduce_sum(a * k1 * k2)
        tl.transpose(tl.reshape(y, (1, 1)), perm=(1, 0))
    text = str(tape)
    assert "  kernel : Variable" in text and "  kernel_1 : Variable" in text
    assert "  %0 = multiply(a, kernel)" in text and "  %1 = multiply(%0, kernel_1)" in text
    assert "  %3 = reshape(%2, shape=(1, 1))" in text and "  %4 = transpose(%3, perm=(1, 0))" in text
    assert "steps" not in text  # never used on the tape
    assert "steps : Variable (not trainable)" in format_tape(tape, sources=[steps])


def test_getitem_keys_and_dtypes_print_as_python():
    x = tl.Variable([[1.0, 2.0, 3.0]], name="x")
    with tl.GradientTape() as tape:
        y = x[0, 1:]
        tl.cast(y, tl.float64)
    text = str(tape)
    assert "%0 = getitem(x, key=[0, 1:])    # (2,) float32  [2, 3]" in text
    assert "%1 = cast(%0, dtype=float64)" in text and "# (2,) float64  [2, 3]" in text


def test_big_tensors_show_no_values_and_gradients_show_their_norm():
    x = tl.Variable(tl.ones((3, 4)), name="x")
    with tl.GradientTape() as tape:
        y = tl.reduce_sum(x * 2.0)
    tape.gradient(y, x)
    text = str(tape)
    assert "  x : Variable           # (3, 4) float32  source\n" in text
    assert "  %0 = multiply(x, 2)    # (3, 4) float32\n" in text
    assert "  ∂%1/∂x = (3, 4) float32, norm 6.928" in text  # sqrt(12 * 2^2)


def test_max_ops_and_values_off():
    tape, x, y, z, loss = seed_000(persistent=True)
    text = format_tape(tape, max_ops=1, values=False)
    assert text.splitlines()[-2:] == ["  ... 1 earlier ops (format_tape(tape, max_ops=None) lists them all)",
                                     "  %1 = reduce_mean(%0)    # () float32"]  # the ops nearest the target, as drawn


def test_empty_tape_says_what_to_do():
    with tl.GradientTape() as tape:
        tl.constant(1.0) + 2.0
    assert str(tape).startswith("GradientTape: 0 ops (nothing recorded yet")


def test_persistent_tape_keeps_showing_gradients_of_the_last_call_and_drops_them_for_other_targets():
    tape, x, y, z, loss = seed_000(persistent=True)
    tape.gradient(z, x)
    assert "gradient of %0:\n  ∂%0/∂x = [[4, 4], [4, 4]]" in str(tape)
    assert "gradient of" not in format_tape(tape, target=loss, sources=[x])


def test_tape_data_is_plain_data():
    tape, x, y, z, loss = seed_000(persistent=True)
    data = tape_data(tape, loss, [x, y])
    assert [t.name for t in data.tensors.values()] == ["x", "y", "%0", "%1"]
    assert [(op.name, [data.name(k) for k in op.inputs], data.name(op.output)) for op in data.ops] == [
        ("matmul", ["x", "y"], "%0"), ("reduce_mean", ["%0"], "%1")]
    assert data.ops[0].formulas == ("dx = g @ y.T", "dy = x.T @ g")
    assert data.grad_of(x._key) == "∂%1/∂x" and data.call_text(0) == "%0 = matmul(x, y)"
    with pytest.raises(KeyError):
        data.name(12345)


@pytest.mark.parametrize("module", ["tapelab.viz.text", "tapelab.viz.dot", "tapelab.viz.render",
                                    "tapelab.viz.steps", "tapelab.viz.fmt"])
def test_docstring_examples_hold(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), extraglobs={"tl": tl})
    assert result.attempted > 0 and result.failed == 0


def test_a_variable_read_only_while_recording_was_stopped_was_never_watched():
    w = tl.Variable(2.0, name="w")
    x = tl.Variable(1.0, name="x")
    with tl.GradientTape() as tape:
        with tape.stop_recording():
            s = w * 3.0
        y = x * s
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tape.gradient(y, [x, w])[1] is None
    assert str(tape).splitlines()[-1] == "  ∂%0/∂w = None    # read only while recording was stopped: never watched"


def test_sources_the_last_gradient_call_was_not_taken_for_still_show_their_gradients():
    x, y = tl.Variable(2.0, name="x"), tl.Variable(3.0, name="y")
    with tl.GradientTape(persistent=True) as tape:
        loss = x * y
    tape.gradient(loss, x)
    tape.gradient(loss, y)
    assert format_tape(tape, sources=[x, y]).endswith("gradient of %0:\n  ∂%0/∂x = 3\n  ∂%0/∂y = 2")
    with tl.GradientTape() as once:  # a one-shot tape: walked again from its backward record
        loss = x * y
    once.gradient(loss, y)
    assert format_tape(once, sources=[x, y]).endswith("gradient of %0:\n  ∂%0/∂x = 3\n  ∂%0/∂y = 2")


def test_unconnected_gradients_zero_lists_the_zeros_gradient_returned():
    x = tl.Variable(2.0, name="x")
    u = tl.constant([1.0, 2.0])
    with tl.GradientTape() as tape:
        loss = x * x
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, du = tape.gradient(loss, [x, u], unconnected_gradients="zero")
    assert du.numpy().tolist() == [0.0, 0.0]
    assert str(tape).splitlines()[-1] == ('  ∂%0/∂%in0 = [0, 0]    # not watched by the tape; '
                                          'unconnected_gradients="zero" gives zeros, not None')
    assert "gradient: None" not in tl.viz.to_dot(tape)


def test_a_traced_graphs_listing_is_headed_by_the_graph_itself():
    graph = tl.function(lambda v: v * v + 1.0).get_concrete_function(tl.constant(2.0))
    assert format_tape(graph).startswith("Graph '<lambda>_0': 2 ops\n")  # not only print(graph)
    assert str(graph.graph).startswith("Graph '<lambda>_0': 2 ops\n")
