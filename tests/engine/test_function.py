"""tl.function: trace once, replay; print at trace time; retrace per signature; honest limits."""

import numpy as np
import pytest

import tapelab as tl


def test_trace_once_then_replay_without_running_python(capsys):
    calls = []

    @tl.function
    def f(x):
        calls.append(1)
        print("tracing")
        return x * x + 1.0

    assert float(f(tl.constant(2.0))) == 5.0
    assert float(f(tl.constant(3.0))) == 10.0
    assert float(f(tl.constant(-1.0))) == 2.0
    assert calls == [1] and f.trace_count == 1 and f.experimental_get_tracing_count() == 1
    assert capsys.readouterr().out == "tracing\n"  # print runs only while tracing


def test_a_new_signature_traces_again():
    @tl.function
    def f(x, scale):
        return x * scale

    f(tl.constant(1.0), 2.0)
    f(tl.constant(5.0), 2.0)  # same shape, dtype and Python value: replay
    assert f.trace_count == 1
    f(tl.constant([1.0, 2.0]), 2.0)  # new shape
    f(tl.constant(1.0, dtype=tl.float64), 2.0)  # new dtype
    f(tl.constant(1.0), 3.0)  # new Python value
    assert f.trace_count == 4
    np.testing.assert_array_equal(f(tl.constant([1.0, 2.0]), 2.0).numpy(), [2.0, 4.0])
    assert f.trace_count == 4


def test_numpy_arrays_are_tensor_arguments():
    @tl.function
    def f(x):
        return tl.reduce_sum(x)

    assert float(f(np.ones(3, np.float32))) == 3.0 and float(f(np.arange(3, dtype=np.float32))) == 3.0
    assert f.trace_count == 1


def test_variables_are_captured_by_reference():
    w = tl.Variable(2.0)

    @tl.function
    def f(x):
        return x * w

    assert float(f(tl.constant(3.0))) == 6.0
    w.assign_sub(1.5)
    assert float(f(tl.constant(3.0))) == 1.5 and f.trace_count == 1


def test_python_branch_on_a_traced_tensor_raises_and_teaches():
    @tl.function
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(tl.TracingError, match=r"bool\(\).*tl.where.*tl.cond"):
        f(tl.constant(1.0))
    for call in (int, float, lambda t: t.numpy(), np.asarray, lambda t: [0, 1][t]):
        g = tl.function(lambda x, call=call: call(x))
        with pytest.raises(tl.TracingError, match="inside tl.function"):
            g(tl.constant(1))


def test_the_graph_friendly_alternatives():
    @tl.function
    def relu_ish(x):
        return tl.where(x > 0, x, x * 0.1)

    @tl.function
    def absolute(x):
        return tl.cond(x > 0, lambda: x, lambda: -x)

    np.testing.assert_allclose(relu_ish(tl.constant([-2.0, 3.0])).numpy(), [-0.2, 3.0])
    assert float(absolute(tl.constant(-3.0))) == 3.0 and float(absolute(tl.constant(4.0))) == 4.0
    assert absolute.trace_count == 1
    assert float(tl.cond(tl.constant(True), lambda: 1.0, lambda: 2.0)) == 1.0  # eagerly: one branch


def train_data():
    tl.random.set_seed(0)
    x = tl.random.normal([1000])
    return x, x * 5 + 2


def test_traced_training_step_gives_the_eager_numbers():
    x, y = train_data()

    def step(W, B, x, y):
        with tl.GradientTape() as tape:
            loss = tl.reduce_mean(tl.square(x * W + B - y))
        dW, dB = tape.gradient(loss, [W, B])
        W.assign_sub(dW * 0.01)
        B.assign_sub(dB * 0.01)
        return loss

    eager_w, eager_b = tl.Variable(5.0), tl.Variable(10.0)
    traced_w, traced_b = tl.Variable(5.0), tl.Variable(10.0)
    traced = tl.function(step)
    for _ in range(50):
        le = step(eager_w, eager_b, x, y)
        lt = traced(traced_w, traced_b, x, y)
        assert float(le) == float(lt)
    assert traced.trace_count == 1
    assert float(eager_w) == float(traced_w) and float(eager_b) == float(traced_b)


def test_gradients_flow_through_a_traced_function_called_inside_a_tape():
    @tl.function
    def f(x, w):
        return tl.reduce_sum(tl.tanh(x * w))

    x = tl.constant([0.5, -1.0])
    w = tl.Variable(1.5)
    f(x, w)  # trace first: later calls replay
    for _ in range(2):
        with tl.GradientTape() as tape:
            y = f(x, w)
        with tl.GradientTape() as eager_tape:
            y_eager = tl.reduce_sum(tl.tanh(x * w))
        assert float(tape.gradient(y, w)) == float(eager_tape.gradient(y_eager, w))
        assert float(y) == float(y_eager)


def test_define_then_run_with_feeds():
    @tl.function
    def f(a, b):
        return tl.matmul(a, b) + 1.0

    graph = f.get_concrete_function(tl.ones((1, 2)), tl.ones((2, 1)))
    a, b = graph.placeholders
    out = graph.run({a: [[1.0, 2.0]], b: [[3.0], [4.0]]})
    assert out.numpy().tolist() == [[12.0]]
    assert graph.run([np.ones((1, 2), np.float32), np.zeros((2, 1), np.float32)]).numpy().tolist() == [[1.0]]
    with pytest.raises(ValueError, match=r"no value fed for 1 placeholder"):
        graph.run({a: [[1.0, 2.0]]})
    with pytest.raises(ValueError, match=r"traced for a float32 input of shape \(1, 2\)"):
        graph.run({a: [[1.0, 2.0, 3.0]], b: [[3.0], [4.0]]})


def test_graph_lists_and_draws_like_a_tape():
    @tl.function
    def f(x):
        return x * x + 1.0

    graph = f.get_concrete_function(tl.constant(2.0))
    text = str(graph)
    assert text.startswith("Graph 'f_0': 2 ops") and "multiply(" in text and "add(" in text
    dot = tl.viz.to_dot(graph)
    assert dot.startswith("digraph") and "multiply" in dot and "add" in dot


def test_outputs_keep_their_structure_and_python_values():
    @tl.function
    def f(x):
        return {"double": x * 2.0, "pair": (x, 7)}

    out = f(tl.constant(1.0))
    out = f(tl.constant(2.0))
    assert float(out["double"]) == 4.0 and float(out["pair"][0]) == 2.0 and out["pair"][1] == 7


def test_nested_traced_functions_inline():
    @tl.function
    def inner(x):
        return x + 1.0

    @tl.function
    def outer(x):
        return inner(x) * 2.0

    assert float(outer(tl.constant(1.0))) == 4.0 and float(outer(tl.constant(2.0))) == 6.0
    assert outer.trace_count == 1


def test_the_tracing_call_itself_is_recorded_by_an_outer_tape():
    w = tl.Variable(2.0)
    f = tl.function(lambda x: w * x * x)
    x = tl.Variable(3.0)
    for _ in range(2):  # the first call traces, the second replays: both give TF's numbers
        with tl.GradientTape() as tape:
            y = f(x)
        assert [float(g) for g in tape.gradient(y, [w, x])] == [9.0, 12.0]
    assert f.trace_count == 1


def test_updates_happen_once_on_the_tracing_call():
    counter = tl.Variable(0.0)

    @tl.function
    def bump():
        counter.assign_add(1.0)
        return counter * 1.0

    assert float(bump()) == 1.0 and float(counter) == 1.0
    assert float(bump()) == 2.0 and float(counter) == 2.0


# ------------------------------------------------------------------------------------------- review fixes
def test_a_decorated_method_has_a_function_per_instance_each_making_its_variables_once():
    class M:
        def __init__(self):
            self.v = None

        @tl.function
        def step(self, x):
            if self.v is None:
                self.v = tl.Variable(1.0)
            return self.v * x

    a, b = M(), M()
    assert float(a.step(tl.constant(2.0))) == 2.0 and float(b.step(tl.constant(3.0))) == 3.0
    assert a.v is not b.v and a.step.trace_count == 1 and b.step.trace_count == 1
    assert float(M().step(tl.constant(2.0))) == 2.0  # a temporary instance lives through its call

    class Unhashable(M):
        __hash__ = None

        def __eq__(self, other):
            return True  # all "equal": each still gets its own function

    c, d = Unhashable(), Unhashable()
    assert float(c.step(tl.constant(2.0))) == 2.0 and float(d.step(tl.constant(2.0))) == 2.0 and c.v is not d.v
    c.v.assign(5.0)
    assert float(c.step(tl.constant(2.0))) == 10.0 and float(d.step(tl.constant(2.0))) == 2.0


def test_a_concrete_function_converts_python_numbers_instead_of_retracing():
    f = tl.function(lambda x: x * 2.0)
    cf = f.get_concrete_function(tl.constant(2.0))
    assert float(cf(3.0)) == 6.0 and float(cf(np.float64(4.0))) == 8.0
    assert f.trace_count == 1
    with pytest.raises(TypeError, match=r"<lambda>: x must fit TensorSpec\(shape=\(\), dtype=tapelab.float32.*got "
                                        r"TensorSpec\(shape=\(2,\).*call the tl.function itself"):
        cf([1.0, 2.0])
    with pytest.raises(TypeError, match=r"<lambda>: x must be a tensor that fits TensorSpec.*got 'two'"):
        cf("two")
    assert f.trace_count == 1

    g = tl.function(lambda pair: pair[0] + pair[1])
    cg = g.get_concrete_function((tl.constant(1.0), tl.constant(2.0)))
    assert float(cg([3.0, 4.0])) == 7.0 and g.trace_count == 1
    with pytest.raises(TypeError, match=r"pair was traced as \(.*got \(1.0, 2.0, 3.0\).*call the tl.function itself"):
        cg((1.0, 2.0, 3.0))


def test_concrete_functions_of_methods_take_the_tensor_arguments_after_self():
    class N:
        @tl.function(input_signature=[tl.TensorSpec([], tl.float32)])
        def g(self, x):
            return x * 2.0

        @tl.function
        def h(self, x, y):
            return x + y

    n, spec = N(), tl.TensorSpec([], tl.float32)
    assert float(n.g.get_concrete_function()(tl.constant(1.0))) == 2.0
    assert float(n.g.get_concrete_function(tl.constant(1.0))(tl.constant(2.0))) == 4.0
    cf = n.h.get_concrete_function(spec, spec)
    assert float(cf(tl.constant(1.0), tl.constant(2.0))) == 3.0 and float(cf(y=tl.constant(2.0), x=1.0)) == 3.0
    assert "self" not in n.h.pretty_printed_concrete_signatures()
    assert n.h.trace_count == 1


def test_cond_refuses_branches_of_different_structures():
    @tl.function
    def f(p):
        return tl.cond(p, lambda: {"a": p}, lambda: (p,))

    with pytest.raises(ValueError, match=r"cond: true_fn and false_fn must return the same structure.*"
                                         r"true_fn returned \{'a': _\} and false_fn returned \(_,\)"):
        f(tl.constant(True))

    @tl.function
    def g(p, x):
        return tl.cond(p, lambda: {"a": x, "b": [x]}, lambda: {"a": -x, "b": [x * 2.0]})

    out = g(tl.constant(False), tl.constant(1.0))
    assert float(out["a"]) == -1.0 and float(out["b"][0]) == 2.0


def test_graph_def_node_names_are_unique_when_a_parameter_looks_numbered():
    def f(x_1, x):
        return x_1 + x + x

    graph = tl.function(f).get_concrete_function(tl.constant(1.0), tl.constant(2.0)).graph
    names = [n.name for n in graph.as_graph_def().node]
    assert names == ["x_1", "x", "add", "add_1", "Identity"]


def test_trace_count_counts_a_first_call_that_makes_variables_once():
    made = []

    @tl.function
    def f(x):
        if not made:
            made.append(tl.Variable(2.0))
        return made[0] * x

    assert float(f(tl.constant(3.0))) == 6.0 and f.trace_count == 1 == f.experimental_get_tracing_count()
    assert "counts once" in type(f).trace_count.__doc__  # (it said "twice")


# --- the trace key, as TF's trace types (issue 29, item 6); the numbers are TF 2.21's (function_* contract cases) ---
def test_python_numbers_key_a_trace_by_value_and_the_graph_keeps_the_traced_one(capsys):
    @tl.function
    def f(x):
        print("tracing with", repr(x))
        return x + 1

    out = [f(1), f(1.5), f(1.0), f(True), f(float("nan")), f(float("nan"))]
    assert f.trace_count == 3  # 1 == 1.0 == True; NaN matches NaN (as TF's Literal)
    assert [t.dtype for t in out[:4]] == [tl.int32, tl.float32, tl.int32, tl.int32]  # the graph traced with 1
    assert [float(t) for t in out[:4]] == [2.0, 2.5, 2.0, 2.0]
    assert capsys.readouterr().out == "tracing with 1\ntracing with 1.5\ntracing with nan\n"


def test_containers_key_by_kind_and_dicts_by_their_keys():
    g = tl.function(lambda x: tl.constant(1.0))
    g([1]), g((1,)), g([1.0]), g([True]), g({"a": 1, "b": 2}), g({"b": 2, "a": 1}), g("a"), g("a"), g(None)
    assert g.trace_count == 5  # a list, a tuple, one dict, "a", None


def test_arguments_are_bound_to_the_parameters_before_the_trace_is_looked_up():
    @tl.function
    def k(x, n=2, **opts):
        return x * n * opts.get("a", 1)

    t, t2 = tl.constant([1.0]), tl.constant([2.0])
    out = [k(t, 2), k(t2, 2), k(t2, n=2), k(x=t2, n=2), k(t), k(x=t2)]
    assert k.trace_count == 1 and [float(v[0]) for v in out] == [2.0, 4.0, 4.0, 4.0, 2.0, 4.0]
    k(t, a=3, n=2), k(t, n=2, a=3.0)
    assert k.trace_count == 2
    with pytest.raises(TypeError, match="Binding inputs to tl.function k failed due to `too many positional"):
        k(t, 2, 3)


def test_variables_of_one_shape_dtype_and_trainability_share_a_trace_and_each_call_uses_its_own():
    @tl.function
    def step(v, x):
        v.assign_add(x)
        return v.read_value() * 10

    v1, v2 = tl.Variable([1.0]), tl.Variable([5.0])
    out = [step(v1, tl.constant([1.0])), step(v2, tl.constant([2.0])), step(v2, tl.constant([3.0]))]
    assert [float(t[0]) for t in out] == [20.0, 70.0, 100.0] and step.trace_count == 1
    assert float(v1[0]) == 2.0 and float(v2[0]) == 10.0
    with tl.GradientTape():  # (replayed through the op table while a tape records)
        y = step(v1, tl.constant([1.0]))
    assert float(y[0]) == 30.0 and float(v1[0]) == 3.0 and float(v2[0]) == 10.0

    def count(*calls):
        g = tl.function(lambda *vs: vs[0] * 2)
        for c in calls:
            g(*c)
        return g.trace_count

    assert count((v1,), (tl.Variable([1.0], trainable=False),)) == 2
    assert count((v1,), (tl.Variable([1.0], dtype=tl.float64),), (tl.Variable([1.0, 2.0]),)) == 3
    assert count((tl.Variable(1.0),), (tl.Variable(2.0),), (v1,)) == 2
    assert count((v1, v2), (v1, v1), (v2, v2), (v2, v1)) == 2  # the same Variable twice is another signature
    assert count((v1,), (tl.constant([1.0]),)) == 2


def test_a_variable_argument_is_an_input_even_where_the_function_also_reads_it_as_a_global():
    v1, v2 = tl.Variable([1.0]), tl.Variable([10.0])

    @tl.function
    def g(v):
        return v + v1 * 100

    # TF 2.21 too: the traced graph has one input for v1, the argument, so g(v2) reads v2 in both places
    assert float(g(v1)[0]) == 101.0 and float(g(v2)[0]) == 1010.0 and g.trace_count == 1

    grad = tl.function(lambda v: v * v)
    with tl.GradientTape() as tape:
        y = grad(v1) + grad(v2)
    assert [float(d[0]) for d in tape.gradient(y, [v1, v2])] == [2.0, 20.0] and grad.trace_count == 1
