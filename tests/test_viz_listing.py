"""The tape listing (print(tape)): exact text for small tapes, names, scopes, params, gradients, None reasons."""

import warnings

import pytest

import tapelab as tl
from tapelab.viz import format_tape, listing
from tapelab.viz.trace import letters, trace
from tests.tapes import seed_000

SEED_000_BEFORE = """\
GradientTape: 2 ops
inputs:
  x : Variable          # (2, 2) float32  [[1, 1], [1, 1]]
  y : Variable          # (2, 2) float32  [[2, 2], [2, 2]]
ops:
  a = matmul(x, y)      # (2, 2) float32  [[4, 4], [4, 4]]
  b = reduce_mean(a)    # () float32  4"""

SEED_000_AFTER = """\
GradientTape: 2 ops
inputs:
  x : Variable          # (2, 2) float32  source  [[1, 1], [1, 1]]
  y : Variable          # (2, 2) float32  source  [[2, 2], [2, 2]]
ops:
  a = matmul(x, y)      # (2, 2) float32  [[4, 4], [4, 4]]
  b = reduce_mean(a)    # () float32  target  4
gradient of b:
  dx = [[1, 1], [1, 1]]
  dy = [[0.5, 0.5], [0.5, 0.5]]"""


def test_seed_000_listing_before_and_after_gradient():
    tape, x, y, z, loss = seed_000()
    assert str(tape) == SEED_000_BEFORE
    tape.gradient(loss, [x, y])
    # the non-persistent tape released its entries; the listing reads the backward record
    assert tape.entries == []
    assert str(tape) == SEED_000_AFTER


def test_print_is_format_tape_and_listing_is_an_alias(capsys):
    tape, x, y, z, loss = seed_000(persistent=True)
    print(tape)
    assert capsys.readouterr().out == SEED_000_BEFORE + "\n"
    assert listing is format_tape
    assert format_tape(tape) == SEED_000_BEFORE


def test_listing_is_deterministic_across_runs():
    assert str(seed_000()[0]) == str(seed_000()[0])


def test_explicit_target_and_sources_mark_lines_before_any_gradient():
    tape, x, y, z, loss = seed_000(persistent=True)
    text = format_tape(tape, target=loss, sources=[y])
    assert "  y : Variable          # (2, 2) float32  source  [[2, 2], [2, 2]]" in text
    assert "  x : Variable          # (2, 2) float32  [[1, 1], [1, 1]]" in text
    assert "  b = reduce_mean(a)    # () float32  target  4" in text
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
  w : Variable                                # () float32  source  3
  a : constant                                # () float32  2
  b : computed while recording was stopped    # () float32  12
  u : Variable                                # () float32  source  1
  c : constant                                # () float32  source  2
  i : Variable                                # () int32  source  3
  d : computed while recording was stopped    # () float32  source  15
ops:
  dense/
    e = multiply(w, a)                        # () float32  6
    f = reshape(e, shape=(1,))                # (1,) float32  [6]
    h = reduce_sum(f, axis=(0,))              # () float32  6
  j = multiply(h, b)                          # () float32  target  72
  k = multiply(u, c)                          # () float32  2
gradient of j:
  dw = 24
  di = None    # integer dtype: only float tensors have gradients
  dc = None    # not watched by the tape
  dd = None    # computed while recording was stopped
  du = None    # not connected to the target"""


def test_generated_names_skip_g_which_the_formulas_use_for_the_upstream_gradient():
    x = tl.Variable(1.0, name="x")
    with tl.GradientTape() as tape:
        y = x
        for _ in range(8):
            y = y * 2.0
    names = [line.split()[0] for line in str(tape).splitlines()[2:] if line.startswith("  ")]
    assert names == ["x", "a", "b", "c", "d", "e", "f", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q"]


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
        "  dv = None    # not connected to the target: its path runs through b, computed while recording was stopped",
        "  dw = 12"]


def test_not_connected_without_stopped_tensors_is_plain():
    x = tl.Variable(1.0, name="x")
    v = tl.Variable(2.0, name="v")
    with tl.GradientTape() as tape:
        y = x * 3.0
        v * 2.0
    assert tape.gradient(y, v) is None
    assert str(tape).endswith("gradient of c:\n  dv = None    # not connected to the target")


def test_target_computed_while_stopped_gives_the_stopped_reason():
    x = tl.constant(3.0)
    with tl.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            y = x * x
    assert tape.gradient(y, x) is None
    assert str(tape).endswith("gradient of b:\n  da = None    # the target was computed while recording was stopped")
    assert "  a : watched                                 # () float32  source  3" in str(tape)
    assert "  b : computed while recording was stopped    # () float32  target  9" in str(tape)


def test_variable_names_are_uniquified_and_letters_skip_them():
    a = tl.Variable([1.0, 2.0], name="a")
    k1 = tl.Variable(2.0, name="kernel")
    k2 = tl.Variable(3.0, name="kernel")
    steps = tl.Variable(0, trainable=False, name="steps")
    with tl.GradientTape() as tape:
        y = tl.reduce_sum(a * k1 * k2)
        tl.transpose(tl.reshape(y, (1, 1)), perm=(1, 0))
    text = str(tape)
    assert "  kernel : Variable" in text and "  kernel_1 : Variable" in text
    assert "  b = multiply(a, kernel)" in text  # 'a' is the Variable's: intermediates start at b
    assert "  c = multiply(b, kernel_1)" in text
    assert "  e = reshape(d, shape=(1, 1))" in text
    assert "  f = transpose(e, perm=(1, 0))" in text
    assert "steps" not in text  # never used on the tape
    assert "steps : Variable (not trainable)" in format_tape(tape, sources=[steps])


def test_getitem_keys_and_dtypes_print_as_python():
    x = tl.Variable([[1.0, 2.0, 3.0]], name="x")
    with tl.GradientTape() as tape:
        y = x[0, 1:]
        tl.cast(y, tl.float64)
    text = str(tape)
    assert "a = getitem(x, key=[0, 1:])    # (2,) float32  [2, 3]" in text
    assert "b = cast(a, dtype=float64)" in text and "# (2,) float64  [2, 3]" in text


def test_big_tensors_show_no_values_and_gradients_show_their_norm():
    x = tl.Variable(tl.ones((3, 4)), name="x")
    with tl.GradientTape() as tape:
        y = tl.reduce_sum(x * 2.0)
    tape.gradient(y, x)
    text = str(tape)
    assert "  x : Variable          # (3, 4) float32  source\n" in text
    assert "  b = multiply(x, a)    # (3, 4) float32\n" in text
    assert "  dx = (3, 4) float32, norm 6.928" in text  # sqrt(12 * 2^2)


def test_max_ops_and_values_off():
    tape, x, y, z, loss = seed_000(persistent=True)
    text = format_tape(tape, max_ops=1, values=False)
    assert text.splitlines()[-2:] == ["  a = matmul(x, y)    # (2, 2) float32",
                                     "  ... 1 more ops (format_tape(tape, max_ops=None) lists them all)"]


def test_empty_tape_says_what_to_do():
    with tl.GradientTape() as tape:
        tl.constant(1.0) + 2.0
    assert str(tape).startswith("GradientTape: 0 ops (nothing recorded yet")


def test_persistent_tape_keeps_showing_gradients_of_the_last_call_and_drops_them_for_other_targets():
    tape, x, y, z, loss = seed_000(persistent=True)
    tape.gradient(z, x)
    assert "gradient of a:\n  dx = [[4, 4], [4, 4]]" in str(tape)
    assert "gradient of" not in format_tape(tape, target=loss, sources=[x])


def test_letters():
    assert [letters(i) for i in (0, 1, 25, 26, 27, 51, 52)] == ["a", "b", "z", "aa", "ab", "az", "ba"]


def test_trace_is_plain_data():
    tape, x, y, z, loss = seed_000(persistent=True)
    tr = trace(tape, loss, [x, y])
    assert [t.name for t in tr.tensors.values()] == ["x", "y", "a", "b"]
    assert [(op.name, [tr.name(k) for k in op.inputs], tr.name(op.output)) for op in tr.ops] == [
        ("matmul", ["x", "y"], "a"), ("reduce_mean", ["a"], "b")]
    assert tr.ops[0].formulas == ("dx = g @ y.T", "dy = x.T @ g")
    with pytest.raises(KeyError):
        tr.name(12345)


@pytest.mark.parametrize("module", ["tapelab.viz.listing", "tapelab.viz.dot", "tapelab.viz.render"])
def test_docstring_examples_hold(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), extraglobs={"tl": tl})
    assert result.attempted > 0 and result.failed == 0
