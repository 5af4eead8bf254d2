"""The bad-input matrix: every mistake a learner makes gets a clear error or a teaching warning.

Each case is one row: what the learner does, the exception (or warning) type, and fragments the
message must contain, grouped as (1) the op or function, (2) the shapes / dtypes / values involved,
(3) what to do. Other test files check some of these situations for their own module; this table is
the one place that lists them all. The rows every op of the table gets (mismatched shapes for a
two-input elementwise op, zero-size and 0-d tensors for all) expand from its spec in tests/op_specs.py.

Policy for a gradient that cannot exist (decided here, applied by gradient(), backward_steps() and
jacobian()): TF returns ``None``, and tapelab keeps ``None`` (the API contract), but when the
``None`` comes from a tensor the tape never saw — a target not computed on it, or a non-Variable
source nobody watched — it also warns (``UserWarning``) with what to do. Sources the tape *did*
see but that are unconnected, not trainable or integer get ``None`` as in TF (integers warn too);
the listing and the graph give the reason.
"""

import os
import sys
import warnings
from dataclasses import dataclass

import numpy as np
import pytest

import tapelab as tl
from tapelab.datasets import mnist
from tapelab.viz import GraphvizNotFound, render
from tests.op_specs import SPEC, SPECS, missing

InvalidArgumentError = tl.errors.InvalidArgumentError
OPS = tl.OPS


@dataclass
class Case:
    id: str
    run: object  # a function doing the wrong thing (given pytest's tmp_path)
    error: type  # an exception type, or a Warning subclass (then the call must warn, not raise)
    op: str  # the op / function named in the message
    involved: tuple  # the shapes, dtypes or values named in the message
    fix: tuple  # what to do (fragments)


def _x():
    return tl.ones((2, 3))


def _y():
    return tl.ones((4,))


def shape_mismatch(spec):
    """A two-input elementwise op (its spec's ``mismatch``: the operands' dtype) on shapes (2, 3) and (4,)."""
    dtype = spec.mismatch
    return Case(f"shape-{spec.name}", lambda tmp: spec.call(tl.ones((2, 3), dtype), tl.ones((4,), dtype)),
                InvalidArgumentError, spec.name, ("(2, 3)", "(4,)"), ("tl.reshape",))


def recorded(persistent=False, watch_const=False):
    """A tape with y = x * x on a Variable x."""
    x = tl.Variable([1.0, 2.0], name="x")
    tape = tl.GradientTape(persistent=persistent)
    with tape:
        y = tl.reduce_sum(x * x)
    return tape, x, y


def used_one_shot(tmp):
    tape, x, y = recorded()
    tape.gradient(y, x)
    tape.gradient(y, x)


def after_reset(tmp):
    tape, x, y = recorded(persistent=True)
    tape.reset()
    tape.gradient(y, x)


def reenter(tmp):
    tape = tl.GradientTape()
    with tape:
        with tape:
            pass


def target_not_on_tape(tmp):
    tape, x, y = recorded()
    assert tape.gradient(tl.constant(3.0) * 2.0, x) is None  # TF's None, plus a warning


def jacobian_unwatched(tmp):
    c = tl.constant([1.0, 2.0])
    with tl.GradientTape() as tape:
        y = c * 3.0
    assert tape.jacobian(y, c) is None


def gradient_unwatched_constant(tmp):
    c, v = tl.constant(2.0), tl.Variable(1.0)
    with tl.GradientTape() as tape:
        y = c * v
    assert tape.gradient(y, [c, v])[0] is None


def integer_source(tmp):
    n = tl.Variable(3, name="n")
    with tl.GradientTape() as tape:
        y = tl.cast(n, tl.float32) * 2.0
    assert tape.gradient(y, n) is None


def bool_source(tmp):
    b = tl.constant([True, False])
    with tl.GradientTape() as tape:
        tape.watch(b)


def number_source(tmp):
    tape, x, y = recorded()
    tape.gradient(y, 3.0)


def nested_sources(tmp):
    tape, x, y = recorded()
    tape.gradient(y, {"w": [x, 2.0]})


def watch_number(tmp):
    with tl.GradientTape() as tape:
        tape.watch(3.0)


def watch_nested(tmp):
    with tl.GradientTape() as tape:
        tape.watch([tl.constant(1.0), np.float32(2.0)])


def apply_mismatched(tmp):
    w = tl.Variable(tl.zeros((3, 2)), name="w")
    tl.optimizers.SGD(0.1).apply_gradients([(tl.zeros((2, 3)), w)])


def apply_all_none(tmp):
    w = tl.Variable(tl.zeros((3, 2)), name="w")
    tl.optimizers.Adam().apply_gradients([(None, w)])


def optimizer_non_variable(tmp):
    tl.optimizers.SGD(0.1).apply_gradients([(tl.ones((2,)), tl.constant([1.0, 2.0]))])


def label_out_of_range(tmp):
    tl.losses.SparseCategoricalCrossentropy(from_logits=True)([0, 10], tl.zeros((2, 10)))


def logits_wrong_rank(tmp):
    tl.losses.SparseCategoricalCrossentropy(from_logits=True)([1, 2], tl.zeros((10,)))


def mnist_missing(tmp):
    mnist.load_data(tmp / "nope.npz")


def mnist_truncated(tmp):
    bad = tmp / "mnist.npz"
    bad.write_bytes(mnist.SAMPLE.read_bytes()[:5000])
    mnist.load_data(bad)


def mnist_wrong_checksum(tmp):
    cache = tmp / "cache"
    cache.mkdir()
    (cache / "mnist.npz").write_bytes(mnist.SAMPLE.read_bytes())  # a good npz, but not the file the sha256 names
    old = os.environ.get("TAPELAB_DATA_DIR")
    os.environ["TAPELAB_DATA_DIR"] = str(cache)
    try:
        mnist.load_data()
    finally:
        os.environ["TAPELAB_DATA_DIR"] = old


def draw_without_dot(tmp):
    tape, x, y = recorded()
    saved = os.environ["PATH"], render._scripts_dir
    os.environ["PATH"] = str(tmp)
    render._scripts_dir = lambda: str(tmp)  # nothing beside this Python either
    try:
        tl.viz.draw(tape)
    finally:
        os.environ["PATH"], render._scripts_dir = saved


def stepper_used_tape(tmp):
    tape, x, y = recorded()
    tape.gradient(y, x)
    tl.viz.BackwardStepper(tape, y, x)


def stepper_without_ipywidgets(tmp):
    tape, x, y = recorded()
    saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k == "ipywidgets" or k.startswith("ipywidgets.")}
    sys.modules["ipywidgets"] = None  # what Python sees when ipywidgets is not installed
    try:
        tl.viz.BackwardStepper(tape, y, x)
    finally:
        del sys.modules["ipywidgets"]
        sys.modules.update(saved)


def dtype_mix(tmp):
    tl.constant([1.0]) + tl.constant([1])


def download_into_a_file(tmp):
    (tmp / "file").write_text("")  # dest's folder is a file: mkdir fails before any download
    mnist.download("http://127.0.0.1:9/mnist.npz", tmp / "file" / "mnist.npz", quiet=True)


CASES = [
    *(shape_mismatch(s) for s in SPECS if s.mismatch),  # every two-input elementwise op (tests/op_specs.py)
    Case("shape-where", lambda tmp: tl.where(tl.ones((5,), tl.bool), _x(), _x()), InvalidArgumentError, "where",
         ("(5,)", "(2, 3)"), ("Reshape the condition",)),
    Case("shape-matmul", lambda tmp: tl.matmul(_x(), _x()), InvalidArgumentError, "matmul", ("(2, 3)", "3 != ", "2"),
         ("tl.transpose",)),
    Case("shape-matmul-vector", lambda tmp: tl.matmul(_y(), _x()), InvalidArgumentError, "matmul", ("(4,)", "(2, 3)"),
         ("tl.reshape(v, (1, -1))",)),
    Case("shape-matmul-batch", lambda tmp: tl.matmul(tl.ones((2, 2, 3)), tl.ones((3, 3, 4))), InvalidArgumentError,
         "matmul", ("(2,)", "(3,)"), ("Reshape",)),
    Case("reshape-size", lambda tmp: tl.reshape(_x(), (4, -1)), InvalidArgumentError, "reshape",
         ("6 elements", "(2, 3)", "(4, -1)"), ("-1",)),
    Case("dtype-mix", dtype_mix, InvalidArgumentError, "add", ("float32", "int32"), ("tl.cast(x, tl.float32)",)),
    Case("string-tensor", lambda tmp: tl.constant(["3.0", "4.0"]), tl.UnsupportedError, "string tensors",
         ("left to TensorFlow",), ("np.asarray(values, dtype=np.float32)", "[float(s) for s in strings]")),
    Case("object-array", lambda tmp: tl.constant(np.array([1.0, None])), TypeError, "convert_to_tensor", ("object",),
         ("Convert the data to numbers",)),
    Case("string-operand", lambda tmp: _x() + "1", TypeError, "add", ("float32 tensor (2, 3)", "str", "'1'"),
         ("Convert the data to numbers",)),
    Case("ragged-list", lambda tmp: tl.constant([[1.0, 2.0], [3.0]]), ValueError, "convert_to_tensor",
         ("[[1.0, 2.0], [3.0]]", "different lengths"), ("Pad the short rows",)),
    Case("integer-source", integer_source, UserWarning, "gradient()", ("int32",), ("tl.cast(x, tl.float32)",)),
    Case("bool-watch", bool_source, UserWarning, "watch()", ("bool",), ("tl.cast(x, tl.float32)",)),
    Case("target-not-on-tape", target_not_on_tape, UserWarning, "gradient()", ("float32, shape ()", "None"),
         ("inside `with tape:`", "tape.watch(x)")),
    Case("source-never-watched", gradient_unwatched_constant, UserWarning, "gradient()",
         ("source 0 (float32, shape ())", "None"), ("tape.watch(x)",)),
    Case("jacobian-unwatched", jacobian_unwatched, UserWarning, "jacobian()", ("float32, shape (2,)", "None"),
         ("tape.watch(x)",)),
    Case("source-number", number_source, TypeError, "gradient()", ("float (3.0)",), ("tl.Variable",)),
    Case("source-nested", nested_sources, TypeError, "gradient()", ("sources['w'][1]", "float (2.0)"),
         ("tl.Variable",)),
    Case("one-shot-reused", used_one_shot, RuntimeError, "gradient()", ("non-persistent",), ("persistent=True",)),
    Case("used-after-reset", after_reset, RuntimeError, "gradient()", ("reset()",), ("Compute the target again",)),
    Case("reenter-tape", reenter, ValueError, "GradientTape", ("already recording",), ("a new GradientTape()",)),
    Case("watch-number", watch_number, ValueError, "watch()", ("float (3.0)",), ("tl.constant(3.0)",)),
    Case("watch-nested", watch_nested, ValueError, "watch()", ("float32 (np.float32(2.0))",), ("tl.constant",)),
    Case("apply-shapes", apply_mismatched, ValueError, "SGD.apply_gradients", ("(2, 3)", "(3, 2)", "'w:0'"),
         ("zip(grads, variables)",)),
    Case("apply-all-none", apply_all_none, ValueError, "Adam.apply_gradients", ("['w:0']", "None"),
         ("inside `with tl.GradientTape() as tape:`",)),
    Case("optimizer-non-variable", optimizer_non_variable, TypeError, "SGD.apply_gradients", ("Tensor",),
         ("tl.Variable(...)",)),
    Case("loss-label-range", label_out_of_range, InvalidArgumentError, "sparse_softmax_cross_entropy_with_logits",
         ("label value of 10", "[0, 10)"), ("class ids 0..9",)),  # the loss leaves the range check to the op
    Case("loss-logits-rank", logits_wrong_rank, InvalidArgumentError, "sparse_categorical_crossentropy",
         ("(2,)", "(10,)", "no batch axis"), ("tl.reshape(y_pred, (1, -1))",)),
    Case("xent-logits-rank", lambda tmp: tl.nn.sparse_softmax_cross_entropy_with_logits(labels=[1], logits=_y()),
         InvalidArgumentError, "sparse_softmax_cross_entropy_with_logits", ("(1,)", "(4,)"), ("(batch, classes)",)),
    Case("xent-label-range", lambda tmp: tl.nn.sparse_softmax_cross_entropy_with_logits(labels=[4], logits=[_y()]),
         InvalidArgumentError, "sparse_softmax_cross_entropy_with_logits", ("4", "[0, 4)"), ("class ids 0..3",)),
    Case("xent-zero-classes", lambda tmp: tl.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tl.zeros((0,), tl.int32), logits=tl.zeros((0, 0))), InvalidArgumentError,
         "sparse_softmax_cross_entropy_with_logits", ("(0, 0)", "0 classes"), ("at least one", "number of units")),
    Case("one-hot-float", lambda tmp: tl.one_hot([1.0, 2.0], 3), InvalidArgumentError, "one_hot", ("float32", "(2,)"),
         ("tl.cast(indices, tl.int32)",)),
    Case("concat-scalars", lambda tmp: tl.concat([tl.constant(1.0), tl.constant(2.0)], 0), InvalidArgumentError,
         "concat", ("0-d", "()"), ("tl.stack",)),
    Case("argmax-empty", lambda tmp: tl.argmax(tl.zeros((0, 3))), InvalidArgumentError, "argmax", ("(0, 3)",),
         ("empty batch",)),
    Case("index-out-of-range", lambda tmp: _x()[5], InvalidArgumentError, "getitem", ("(2, 3)", "index 5"),
         ("0..size-1",)),
    Case("float-only-op", lambda tmp: tl.sqrt(4), InvalidArgumentError, "sqrt", ("int32",), ("4.0", "tl.cast")),
    Case("mnist-missing", mnist_missing, FileNotFoundError, "mnist", ("nope.npz",), ("leave it unset",)),
    Case("mnist-truncated", mnist_truncated, mnist.MnistFileError, "mnist", ("mnist.npz", "truncated"),
         ("--download",)),
    Case("mnist-checksum", mnist_wrong_checksum, mnist.MnistFileError, "mnist", ("sha256", mnist.SHA256),
         ("Delete it", "--download")),
    Case("draw-no-dot", draw_without_dot, GraphvizNotFound, "draw", ("graphviz-pure",),
         ("apt-get install graphviz", "print(tape)")),
    Case("stepper-used-tape", stepper_used_tape, RuntimeError, "BackwardStepper", ("already used by gradient()",),
         ("persistent=True",)),
    Case("stepper-no-ipywidgets", stepper_without_ipywidgets, ImportError, "BackwardStepper", ("ipywidgets",),
         ("pip install ipywidgets", "step_text")),
    Case("matmul-batch-of-empty-matrices", lambda tmp: tl.matmul(tl.zeros((2, 0, 3)), tl.zeros((3, 3, 4))),
         InvalidArgumentError, "matmul (batch dimensions)", ("(2,)", "(3,)"), ("tl.reshape",)),
    Case("matmul-transposed-inner", lambda tmp: tl.matmul(_x(), tl.ones((3, 4)), transpose_a=True),
         InvalidArgumentError, "matmul", ("(2, 3)", "transposed: (3, 2)", "(3, 4)"), ("transpose_a / transpose_b",)),
    Case("squeeze-scalar-axis", lambda tmp: tl.squeeze(5.0, axis=0), InvalidArgumentError, "squeeze",
         ("scalar", "axis=0"), ("Leave out",)),
    Case("pad-paddings-not-pairs", lambda tmp: tl.pad(_y(), [1, 2, 3]), InvalidArgumentError, "pad",
         ("(4,)", "(1, 2)", "[1, 2, 3]"), ("[[1, 1]]",)),
    Case("reduce-any-of-floats", lambda tmp: tl.reduce_any(_y()), InvalidArgumentError, "reduce_any",
         ("float32",), ("x > 0",)),
    Case("stack-unequal-shapes", lambda tmp: tl.stack([_x(), tl.ones((2, 4))]), InvalidArgumentError, "stack",
         ("(2, 3)", "(2, 4)"), ("tl.concat",)),
    Case("matrix-transpose-vector", lambda tmp: tl.linalg.matrix_transpose(_y()), InvalidArgumentError,
         "matrix_transpose", ("(4,)",), ("reshape",)),
    Case("axis-twice-once-negative", lambda tmp: tl.reduce_sum(_x(), axis=[0, -2]), InvalidArgumentError,
         "reduce_sum", ("[0, -2]", "(2, 3)"), ("each axis once",)),
    Case("top-k-negative", lambda tmp: tl.math.top_k(_y(), k=-1), InvalidArgumentError, "top_k", ("-1",),
         (">= 0",)),
    Case("variance-of-bools", lambda tmp: tl.math.reduce_variance(tl.constant([True, False])), TypeError,
         "reduce_variance", ("bool",), ("tl.cast",)),
    Case("input-after-a-function", lambda tmp: tl.keras.Sequential([lambda x: x, tl.keras.Input((3,))]),
         ValueError, "keras.Input", ("<function",), ("must come first",)),
    Case("generator-yields-the-wrong-structure", lambda tmp: list(tl.data.Dataset.from_generator(
        lambda: iter([1.0]), output_signature=(tl.TensorSpec((), tl.float32), tl.TensorSpec((), tl.float32)))),
         InvalidArgumentError, "from_generator", ("1.0", "2 value(s)"), ("one value per TensorSpec",)),
    Case("batch-of-a-fraction", lambda tmp: tl.data.Dataset.range(3).batch(2.5), InvalidArgumentError, "batch",
         ("whole number", "2.5"), (".batch(32)",)),
    Case("uniform-empty-int-range", lambda tmp: tl.random.uniform([2], 5, 5, dtype=tl.int32), ValueError, "uniform",
         ("minval=5", "maxval=5"), ("minval < maxval",)),
    Case("loss-plot-of-a-vector", lambda tmp: tl.plots.LossPlot().update(loss=np.ones(3), draw=False), ValueError,
         "LossPlot.update: loss", ("(3,)",), ("tl.reduce_mean(loss)",)),
    Case("gradient-check-of-a-float32-weight", lambda tmp: tl.check_gradients(
        lambda x: tl.matmul(x, tl.Variable([[1.0], [2.0]])), [[1.0, 2.0]]), InvalidArgumentError, "check_gradients",
         ("float64", "float32"), ("tl.cast(w, x.dtype)",)),
    Case("accuracy-of-nothing", lambda tmp: tl.metrics.evaluate_accuracy(lambda x: x, np.zeros((0, 3)), []),
         ValueError, "evaluate_accuracy", ("no rows",), ("test set",)),
    Case("numpy-floats-to-int", lambda tmp: tl.constant(np.array([1.7, -2.9]), dtype=tl.int32), TypeError,
         "Cannot convert", ("numpy float64", "int32"), ("np.round(x)", "tl.cast(x, tl.int32)")),
    Case("numpy-ints-to-bool", lambda tmp: tl.constant(np.array([0, 2]), dtype=tl.bool), TypeError,
         "Cannot convert", ("numpy int64", "bool"), ("x != 0",)),
    Case("assign-numpy-floats-to-int-variable", lambda tmp: tl.Variable([1, 2]).assign(np.array([1.9, 2.9])),
         TypeError, "assign", ("'Variable:0'", "float64", "int32"), ("np.round(x)", "tl.cast")),
    Case("int-beyond-int64", lambda tmp: tl.constant(2**64, tl.int32), ValueError, "int32 tensor",
         ("18446744073709551616", "-2147483648 .. 2147483647", "int64"), ("smaller numbers",)),
    Case("assign-int-tensor-to-float-variable", lambda tmp: tl.Variable([1.0, 2.0], name="w").assign(
        tl.constant([1, 2])), ValueError, "assign", ("'w:0'", "float32", "int32"), ("tl.cast(x, tl.float32)",)),
    Case("assign-sub-int-tensor-to-float-variable", lambda tmp: tl.Variable(1.0, name="b").assign_sub(
        tl.constant(1)), ValueError, "assign_sub", ("'b:0'", "float32", "int32"), ("tl.cast(x, tl.float32)",)),
    Case("unsupported-numpy-dtype", lambda tmp: tl.constant(np.array([1, 2], np.uint16)), TypeError,
         "convert_to_tensor", ("uint16", "not supported", "int64, uint8, bool"), (".astype(np.int32)",)),
    Case("relu-threshold", lambda tmp: tl.keras.activations.relu(tl.ones((2,)), threshold=0.5), NotImplementedError,
         "relu", ("threshold", "0.5"), ("tl.where(x > 0.5, x, 0.)",)),
    Case("download-into-a-file", download_into_a_file, mnist.DownloadError, "mnist",
         ("could not save", "mnist.npz"), ("dest=",)),
    Case("to-categorical-of-nothing", lambda tmp: tl.keras.utils.to_categorical([]), ValueError, "to_categorical",
         ("no labels", "(0,)"), ("num_classes",)),
]


def test_the_matrix_has_at_least_30_cases_with_unique_ids():
    ids = [c.id for c in CASES]
    assert len(ids) >= 30 and len(set(ids)) == len(ids)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case, tmp_path):
    if issubclass(case.error, Warning):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            case.run(tmp_path)
        messages = [str(w.message) for w in caught if issubclass(w.category, case.error)]
        assert messages, f"{case.id}: expected a {case.error.__name__}"
        message = messages[0]
        assert caught[0].filename == __file__, "the warning should point at the learner's line"
    else:
        with pytest.raises(case.error) as err:
            case.run(tmp_path)
        message = str(err.value)
    for fragment in (case.op, *case.involved, *case.fix):
        assert fragment in message, f"{case.id}: {fragment!r} missing from:\n{message}"


# --- empty tapes: not an error, but the picture says what to do ------------------------------------

def test_to_dot_and_draw_of_an_empty_tape_say_how_to_record():
    with tl.GradientTape() as tape:
        tl.constant(1.0) * 2.0  # constants only: nothing to record
    dot = tl.viz.to_dot(tape)
    assert "nothing recorded yet" in dot and "tape.watch()" in dot and "op_" not in dot
    assert "nothing recorded yet" in tl.viz.to_dot(tape, detail="names")
    assert "nothing recorded yet" not in tl.viz.to_dot(recorded()[0])
    if render.find_dot.__module__ and _has_graphviz():
        assert "nothing recorded yet" in tl.viz.draw(tape).svg


def _has_graphviz():
    try:
        render.find_dot()
    except GraphvizNotFound:
        return False
    return True


# --- zero-size and 0-d tensors through every op of the table ---------------------------------------------
# (each op's call on one float64 tensor x, and the shapes where it must raise: its spec's zero_size / undefined)

SHAPES = [(), (0,), (2, 0), (0, 3)]


def test_every_op_of_the_table_has_a_zero_size_call():
    assert not missing(OPS), missing(OPS)
    assert set(SPEC) <= set(OPS), f"specs of ops not in tl.OPS: {sorted(set(SPEC) - set(OPS))}"
    without = [s.name for s in SPECS if s.zero_size is None]
    assert not without, f"give the specs of {without} a zero_size call in tests/op_specs.py"


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"shape{s}".replace(" ", ""))
@pytest.mark.parametrize("name", sorted(OPS))
def test_zero_size_and_0d_tensors_through_every_op(name, shape):
    assert name in SPEC, missing([name])
    call, undefined = SPEC[name].zero_size, SPEC[name].undefined
    x = tl.constant(np.full(shape, 0.7))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy RuntimeWarning (e.g. "mean of empty slice") leaks to the learner
        if shape in undefined:
            with pytest.raises(InvalidArgumentError, match=undefined[shape]) as err:
                call(x)
            assert name in str(err.value) and str(tuple(shape)) in str(err.value)
            return
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = call(x)
        if OPS[name].differentiable and y.dtype.is_floating and tape.tracks(y):
            g = tape.gradient(y, x)
            assert g.shape == x.shape and g.dtype == x.dtype
            assert np.all(np.isfinite(g.numpy()))


def test_zero_size_results_match_numpy_and_tf():
    empty = tl.zeros((0, 3))
    assert tl.reduce_sum(empty).numpy() == 0.0
    assert np.isnan(tl.reduce_mean(empty).numpy())  # TF: the mean of nothing is nan
    assert tl.reduce_max(empty).numpy() == -np.inf  # TF: the max of nothing is -inf
    assert tl.reduce_max(tl.zeros((0,), tl.int32)).numpy() == np.iinfo(np.int32).min
    np.testing.assert_array_equal(tl.reduce_max(tl.zeros((3, 0)), axis=1).numpy(), [-np.inf] * 3)
    assert tl.matmul(tl.zeros((2, 0)), tl.zeros((0, 4))).numpy().tolist() == [[0.0] * 4] * 2
    assert tl.constant([], dtype=tl.int32).shape == (0,)
