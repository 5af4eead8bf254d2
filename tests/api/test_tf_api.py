"""The TF API that TF's own guides use: tl.function's signatures and concrete functions, custom
gradients on the tape, tf.print in graphs, devices, what is left to TensorFlow, and tapelab's deliberate
differences. Values TF itself gives are checked in test_tf_contract.py; these are tapelab's own promises."""

import io
import sys

import numpy as np
import pytest

import tapelab as tl
from tapelab.engine.errors import LeakedTensorError, Unsupported, UnsupportedAttributeError

STAND_INS = [(module, name) for module in (tl, tl.math) for name in getattr(module, "__all__", dir(module))
             if isinstance(getattr(module, name, None), Unsupported)]


# ------------------------------------------------------------------------------------------ left to TensorFlow
@pytest.mark.parametrize("module, name", STAND_INS, ids=[f"{m.__name__}.{n}" for m, n in STAND_INS])
def test_what_is_left_to_tensorflow_says_so_however_it_is_used(module, name):
    stand_in = getattr(module, name)
    with pytest.raises(tl.UnsupportedError, match="left to TensorFlow") as err:
        stand_in()
    assert isinstance(err.value, NotImplementedError) and name in str(err.value)
    with pytest.raises(UnsupportedAttributeError, match=rf"{name}\.anything .*left to TensorFlow"):
        stand_in.anything  # noqa: B018
    assert not hasattr(stand_in, "anything")  # (an AttributeError too: hasattr and IPython's completion work)
    assert not isinstance(tl.constant(1.0), stand_in) and "left to TensorFlow" in repr(stand_in)


def test_strings_complex_and_gpus_are_left_to_tensorflow_with_the_tapelab_way():
    with pytest.raises(tl.UnsupportedError, match=r"string tensors.*vocabulary"):
        tl.constant(["a", "b"])
    with pytest.raises(tl.UnsupportedError, match=r"complex.*two float tensors"):
        tl.Variable([5 + 4j])
    with pytest.raises(tl.UnsupportedError, match=r"string"):
        tl.constant(1, dtype=tl.string)
    with pytest.raises(tl.UnsupportedError, match=r"GPU.*runs every op on the CPU"):
        with tl.device("/GPU:0"):
            pass
    with pytest.raises(tl.UnsupportedError, match="tl.TensorArray.*tl.stack"):
        tl.TensorArray(tl.float32, size=2)
    with pytest.raises(UnsupportedAttributeError, match="tl.config.set_memory_growth"):
        tl.config.set_memory_growth(None, True)
    assert not hasattr(tl.config, "set_memory_growth")


def test_autograph_is_left_to_tensorflow_and_the_error_teaches_cond_and_where():
    @tl.function
    def f(n):
        total = tl.constant(0)
        for i in tl.range(n):  # the loop's length would be a value of the graph
            total += i
        return total

    with pytest.raises(tl.UnsupportedError, match=r"tl.where.*tl.cond.*autograph.*left to TensorFlow") as err:
        f(tl.constant(4))
    assert isinstance(err.value, (tl.TracingError, TypeError))


def test_devices_and_running_functions_eagerly():
    assert [d.device_type for d in tl.config.list_physical_devices()] == ["CPU"]
    assert tl.config.list_physical_devices("GPU") == []
    with tl.device("/CPU:0"):
        assert float(tl.constant(1.0) + 1.0) == 2.0
    calls = []
    f = tl.function(lambda x: calls.append(1) or x * 2)
    tl.config.run_functions_eagerly(True)
    try:
        f(tl.constant(1.0)), f(tl.constant(2.0))
        assert tl.config.functions_run_eagerly() and calls == [1, 1] and f.trace_count == 0
    finally:
        tl.config.run_functions_eagerly(False)
    f(tl.constant(1.0)), f(tl.constant(2.0))
    assert calls == [1, 1, 1] and f.trace_count == 1


# ------------------------------------------------------------------------------------------------ tf.print
def test_print_is_an_op_so_a_traced_function_prints_on_every_call(capsys):
    @tl.function
    def f(x):
        print("tracing")
        tl.print("x is", x, [x, 1])
        return x + 1

    f(tl.constant([1, 2])), f(tl.constant([3, 4]))
    assert capsys.readouterr().out == "tracing\nx is [1 2] [[1 2], 1]\nx is [3 4] [[3 4], 1]\n"
    assert "print" in str(f.get_concrete_function(tl.constant([1, 2])))
    stream = io.StringIO()
    tl.print(tl.constant([0.5, 1 / 3]), output_stream=stream, sep="|", end="")
    assert stream.getvalue() == "[0.5 0.333333343]"
    tl.print("to stderr", output_stream=sys.stderr)
    assert capsys.readouterr().err == "to stderr\n"


# ------------------------------------------------------------------------------------------------ tl.function
def test_an_optimizer_step_in_a_traced_function_trains_as_the_eager_step():
    for make in (lambda: tl.keras.optimizers.SGD(0.1), lambda: tl.keras.optimizers.SGD(0.1, momentum=0.9),
                 lambda: tl.keras.optimizers.Adam(0.1)):
        results = []
        for traced in (True, False):
            w, opt = tl.Variable(2.0), make()

            def step(x, w=w, opt=opt):
                with tl.GradientTape() as tape:
                    loss = tl.reduce_sum(tl.square(w * x - 2.0))
                opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
                return loss

            run = tl.function(step) if traced else step
            results.append([(float(run(tl.constant([x]))), float(w)) for x in (1.0, 2.0, 3.0, 0.5)])
        assert np.allclose(results[0], results[1]), results
        assert opt.iterations == 4


def test_a_second_optimizer_in_a_traced_step_is_refused_as_in_tf():
    opt1, opt2 = tl.keras.optimizers.Adam(1e-2), tl.keras.optimizers.Adam(1e-3)

    @tl.function
    def train_step(w, x, optimizer):
        with tl.GradientTape() as tape:
            loss = tl.reduce_sum(tl.square(w * x))
        optimizer.apply_gradients(zip(tape.gradient(loss, [w]), [w]))

    w = tl.Variable(2.0)
    train_step(w, tl.constant([1.0]), opt1)
    with pytest.raises(ValueError, match="singleton tl.Variables created on the first call"):
        train_step(w, tl.constant([1.0]), opt2)


def test_variables_are_made_once_and_the_first_call_traces_twice(capsys):
    class Scale:
        v = None

    s = Scale()

    @tl.function
    def f(x):
        print("tracing")
        if s.v is None:
            s.v = tl.Variable(2.0)
        return s.v * x

    assert float(f(tl.constant(3.0))) == 6.0 and capsys.readouterr().out == "tracing\ntracing\n"
    assert float(f(tl.constant([1.0]))[0]) == 2.0 and f.trace_count == 2

    @tl.function
    def g(x):
        return tl.Variable(1.0) * x

    with pytest.raises(ValueError, match="Make the Variable outside the function"):
        g(tl.constant(1.0))


def test_python_numbers_returned_become_tensors():
    f = tl.function(lambda x: (x * 2, 3, 2.5, None))
    doubled, three, half, nothing = f(tl.constant(1.0))
    assert isinstance(three, tl.Tensor) and three.dtype == tl.int32 and int(three) == 3
    assert half.dtype == tl.float32 and nothing is None


def test_input_signature_refuses_other_tensors_and_converts_python_values():
    @tl.function(input_signature=[tl.TensorSpec(shape=[None], dtype=tl.int32)])
    def collatz(x):
        return tl.where(x % 2 == 0, x // 2, 3 * x + 1)

    assert collatz(tl.constant([1, 2])).numpy().tolist() == [4, 1]
    assert collatz([5, 6, 7]).numpy().tolist() == [16, 3, 22]  # a Python list becomes an int32 tensor
    with pytest.raises(TypeError, match=r"can not cast TensorSpec\(shape=\(2, 2\).*TensorSpec\(shape=\(None,\)"):
        collatz(tl.constant([[1, 2], [3, 4]]))
    with pytest.raises(TypeError, match="float32"):
        collatz(tl.constant([1.0, 2.0]))


def test_concrete_functions_take_the_tensor_arguments_only():
    @tl.function
    def power(a, b):
        return a ** b

    square = power.get_concrete_function(a=tl.TensorSpec(None, tl.float32), b=2)
    assert float(square(tl.constant(10.0))) == 100.0 and float(square(a=tl.constant(3.0))) == 9.0
    assert square(tl.constant([1.0, 2.0])).numpy().tolist() == [1.0, 4.0]  # any shape fits TensorSpec(None)
    with pytest.raises(TypeError, match="b was fixed to 2"):
        square(tl.constant(10.0), b=3)
    with pytest.raises(TypeError, match="must fit TensorSpec"):
        square(tl.constant(10, tl.int32))
    text = power.pretty_printed_concrete_signatures()
    assert "a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tapelab.float32, name='a')" in text
    assert "b (POSITIONAL_OR_KEYWORD): Literal[2]" in text and "Output Type:" in text
    assert str(square).startswith("Graph 'power_0'") and "ConcreteFunction Input Parameters:" in str(square)
    nodes = square.graph.as_graph_def().node
    assert [(n.op, n.input) for n in nodes] == [("Placeholder", []), ("Const", []), ("pow", ["a", "Const"]),
                                                ("Identity", ["pow"])]


def test_a_tensor_leaked_from_a_trace_refuses_to_be_used():
    leaked = []

    @tl.function
    def f(a):
        leaked.append(a + 1)
        return a + 2

    assert int(f(tl.constant(1))) == 3
    x = leaked[0]
    with pytest.raises(AttributeError, match="leaked out"):
        x.numpy()
    with pytest.raises(LeakedTensorError, match="Return it from the function") as err:
        tl.add(x, 1)
    assert isinstance(err.value, TypeError)
    with pytest.raises(LeakedTensorError, match="graph .f_0.*Return it"):
        tl.function(lambda b: b + x)(tl.constant(2))
    assert "<leaked from graph 'f_0'>" in str(x)


def test_a_traced_integer_index_becomes_a_gather_and_init_scope_runs_once():
    @tl.function
    def pick(x, i):
        return x[i] * 2.0

    x = tl.constant([1.0, 2.0, 3.0])
    assert [float(pick(x, tl.constant(i))) for i in (0, 2, 1)] == [2.0, 6.0, 4.0] and pick.trace_count == 1

    counter = tl.Variable(0)

    @tl.function
    def bump():
        with tl.init_scope():
            counter.assign_add(1)  # runs now, while tracing: not part of the graph
        return counter + 0

    assert [int(bump()) for _ in range(3)] == [1, 1, 1] and int(counter) == 1


# ------------------------------------------------------------------------------------------- custom_gradient
def _clip_gradients():
    @tl.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            calls.append(1)
            return tl.clip_by_norm(dy, 0.5)

        return y, backward

    calls = []
    return clip_gradients, calls


def test_a_custom_gradient_is_one_tape_entry_with_the_users_rule():
    clip_gradients, calls = _clip_gradients()
    v = tl.Variable(2.0)
    with tl.GradientTape(persistent=True) as tape:
        output = clip_gradients(v * v)
    assert [e.op.name for e in tape.entries] == ["multiply", "clip_gradients"]
    assert tape.entries[1].op.formulas == ("dy = backward(g)",)
    assert float(tape.gradient(output, v)) == 2.0 and calls == [1]  # 4 clipped to 0.5, times dv*v/dv = 4
    assert "clip_gradients(" in str(tape)
    text = tl.viz.step_text(tl.viz.walkthrough(tape, output, [v]))
    assert "backward(" in text and "clip_gradients" in text  # the stepper writes the user's rule
    steps = tape.backward_steps(output, v)
    assert [s.entry.op.name for s in steps] == ["clip_gradients", "multiply"]
    assert float(steps[0].contributions[0].value) == 0.5
    assert "clip_gradients" in tl.viz.to_dot(tape, output, [v])


def test_custom_gradients_with_several_inputs_variables_and_mistakes():
    @tl.custom_gradient
    def scaled(a, b):
        def grad(g, variables=None):
            return (g * 2.0, None), [g * 10.0]

        return a * b * w, grad

    w = tl.Variable(3.0)
    a, b = tl.constant(1.0), tl.constant(2.0)
    with tl.GradientTape() as tape:
        tape.watch([a, b])
        y = scaled(a, b)
    assert [None if g is None else float(g) for g in tape.gradient(y, [a, b, w])] == [2.0, None, 10.0]

    @tl.custom_gradient
    def forgets(x):
        return x * w, lambda g: g

    with pytest.raises(TypeError, match="must accept a keyword argument 'variables'"):
        forgets(tl.constant(1.0))

    @tl.custom_gradient
    def wrong_shape(x):
        return x * 2.0, lambda g: tl.ones((3,))

    x = tl.constant(1.0)
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = wrong_shape(x)
    with pytest.raises(ValueError, match=r"returned shape \(3,\) for input 0 of shape \(\)"):
        tape.gradient(y, x)


# ------------------------------------------------------------------------------------ deliberate differences
def test_deliberate_differences_from_tensorflow():
    # float16 adds up in float32: the mean of 70,000 halves of 0.1 is 0.1 (TF 2.21: 0.0, its count overflows)
    assert abs(float(tl.reduce_mean(tl.fill([70000], tl.constant(0.1, tl.float16)))) - 0.1) < 1e-3
    assert float(tl.reduce_sum(tl.fill([1000], tl.constant(0.1, tl.float16)))) == 100.0  # (TF: 99.75)
    assert float(tl.add(3, tl.constant(2.5))) == 5.5  # as 3 + t (TF refuses: 3 becomes an int32 first)


def test_batch_jacobian_is_the_diagonal_blocks_of_the_jacobian():
    x = tl.random.normal([4, 3], seed=1)
    w = tl.random.normal([3, 2], seed=2)
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tl.nn.elu(x @ w)
    full, batched = tape.jacobian(y, x).numpy(), tape.batch_jacobian(y, x).numpy()
    assert batched.shape == (4, 2, 3)
    assert np.allclose(batched, np.stack([full[b, :, b, :] for b in range(4)]))


def test_custom_gradient_on_a_method_binds_self_first():
    class Scaler:
        def __init__(self, factor):
            self.factor = factor

        @tl.custom_gradient
        def scale(self, x):
            def grad(g):
                return g * self.factor * 10.0

            return x * self.factor, grad

    s, x = Scaler(3.0), tl.constant(2.0)
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = s.scale(x)
    assert float(y) == 6.0 and float(tape.gradient(y, x)) == 30.0
    assert tape.entries[0].op.name == "scale" and tape.entries[0].op.formulas == ("dx = grad(g)",)
    assert Scaler.scale.__name__ == "scale"


# ------------------------------------------------------------------------------------ dtypes and conversions as TF
def test_dtype_names_none_and_initializer_defaults_follow_tf():
    assert tl.dtypes.as_dtype(float) == tl.float32 and tl.dtypes.as_dtype("float") == tl.float32
    assert tl.dtypes.as_dtype("double") == tl.float64
    assert (tl.float64 == None) is False and (tl.float64 != None) is True  # noqa: E711
    assert tl.keras.initializers.Zeros()((2,), dtype=None).dtype == np.float32  # Keras: None is float32
    assert tl.keras.initializers.GlorotUniform(seed=0)((2, 2), None).dtype == np.float32


def test_a_list_of_tensors_or_arrays_keeps_their_dtype():
    assert tl.convert_to_tensor([tl.constant(1.0, tl.float64)]).dtype == tl.float64
    assert tl.constant([tl.constant(1, tl.int64), 2]).dtype == tl.int64
    assert tl.constant([np.array([1.0, 2.0])]).dtype == tl.float64
    assert tl.constant([tl.constant(1.0), 2.5]).dtype == tl.float32
    assert tl.constant([1.0, 2.5]).dtype == tl.float32 and tl.constant([1, 2]).dtype == tl.int32


def test_numpy_floats_are_not_truncated_to_integers_or_bools():
    with pytest.raises(TypeError, match="numpy float64 value to a tensor of dtype int32"):
        tl.constant(np.array([1.7, -2.9]), dtype=tl.int32)
    with pytest.raises(TypeError, match="numpy float64 value to a tensor of dtype bool"):
        tl.constant(np.array([0.0, 2.0]), dtype=tl.bool)
    v = tl.Variable([1, 2])
    with pytest.raises(TypeError, match="assign"):
        v.assign(np.array([1.9, 2.9]))
    assert v.numpy().tolist() == [1, 2]
    assert tl.constant(np.array([1, 2]), dtype=tl.float32).numpy().tolist() == [1.0, 2.0]  # widening is fine
    assert tl.constant(np.array([True]), dtype=tl.bool).numpy().tolist() == [True]


def test_np_asarray_of_a_variable_cannot_change_it():
    v = tl.Variable([1.0, 2.0])
    with tl.GradientTape() as tape:
        y = tl.reduce_sum(v * v)
    view = np.asarray(v)
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 100.0
    assert v.numpy().tolist() == [1.0, 2.0] and tape.gradient(y, v).numpy().tolist() == [2.0, 4.0]
    copy = np.array(v)  # a copy is the learner's to change
    copy[0] = 5.0
    assert v.numpy().tolist() == [1.0, 2.0]
    assert np.asarray(v, dtype=np.float64).dtype == np.float64
    v.assign([3.0, 4.0])
    assert np.asarray(v).tolist() == [3.0, 4.0]


def test_relu_max_value_takes_the_inputs_dtype():
    relu = tl.keras.activations.relu
    assert relu(tl.constant([1, 7, -2]), max_value=6).numpy().tolist() == [1, 6, 0]
    y = relu(tl.constant([1.0, 7.0], tl.float64), max_value=6)
    assert y.dtype == tl.float64 and y.numpy().tolist() == [1.0, 6.0]


def test_to_categorical_of_no_labels_with_num_classes():
    assert tl.keras.utils.to_categorical([], num_classes=3).shape == (0, 3)


def test_basics_guide_keras_model_with_a_tf_function_as_initializer_fits():
    # TF's basics guide: Dense(kernel_initializer=tf.random.normal). Keras calls an initializer f(shape, dtype=...),
    # by keyword: positionally the dtype would land on tf.random.normal's `mean`
    x = tl.cast(tl.linspace(-2, 2, 201), tl.float32)
    y = x ** 2 + 2 * x - 5 + tl.constant(np.random.default_rng(0).normal(size=201).astype(np.float32))
    model = tl.keras.Sequential([tl.keras.layers.Lambda(lambda x: tl.stack([x, x ** 2], axis=1)),
                                 tl.keras.layers.Dense(units=1, kernel_initializer=tl.random.normal)])
    model.compile(loss=tl.keras.losses.MSE, optimizer=tl.keras.optimizers.SGD(learning_rate=0.01))
    history = model.fit(x, y, epochs=30, batch_size=32, verbose=0)
    assert model.layers[1].kernel.shape == (2, 1) and model.layers[1].kernel.dtype == tl.float32
    assert history.history["loss"][-1] < history.history["loss"][0]
    calls = []
    layer = tl.keras.layers.Dense(2, kernel_initializer=lambda shape, dtype=None: calls.append(dtype) or tl.ones(shape))
    layer(tl.ones((1, 3)))
    assert calls == [tl.float32]
