"""A traced graph runs as a plan (engine/plan.py): the same values and dtypes as eager, on every call, with nothing
recording; the replay through the op table wherever a tape must see the ops."""

import numpy as np
import pytest

import tapelab as tl
from tapelab.engine.plan import Plan


def linear_step(W, B, x, y, lr):  # seed 001's step
    with tl.GradientTape() as tape:
        loss = tl.reduce_mean(tl.square(x * W + B - y))
    dW, dB = tape.gradient(loss, [W, B])
    W.assign_sub(dW * lr)
    B.assign_sub(dB * lr)
    return loss


def train(step, steps=20):
    tl.random.set_seed(0)
    W, B = tl.Variable(5.0), tl.Variable(10.0)
    x = tl.random.normal([100])
    y = x * 5 + 2
    losses = [step(W, B, x, y, 0.01) for _ in range(steps)]
    return losses, W, B


def test_the_linear_step_traced_equals_eager_value_for_value():
    eager, (W, B) = train(linear_step)[0], train(linear_step)[1:]
    traced_fn = tl.function(linear_step)
    traced, W2, B2 = train(traced_fn)
    assert traced_fn.trace_count == 1 and next(iter(traced_fn.graphs.values())).plan is not None
    assert [t.numpy().tobytes() for t in traced] == [t.numpy().tobytes() for t in eager]
    assert all(t.dtype == tl.float32 for t in traced)
    assert (float(W2), float(B2)) == (float(W), float(B))


def test_a_keras_mlp_step_traced_equals_eager_and_the_optimizer_counts_its_steps():
    rng = np.random.default_rng(0)
    X, Y = rng.random((96, 20), dtype=np.float32), rng.integers(0, 3, 96).astype(np.int32)

    def run(traced):
        tl.layers.clear_session()
        tl.random.set_seed(1)
        model = tl.layers.Sequential([tl.layers.Dense(8, activation="relu"), tl.layers.Dense(3)])
        model(X[:1])
        optimizer = tl.optimizers.Adam(learning_rate=0.01)
        loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True)

        def step(x, y):
            with tl.GradientTape() as tape:
                loss = loss_fn(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        step = tl.function(step) if traced else step
        losses = [step(X[k:k + 32], Y[k:k + 32]).numpy() for _ in range(3) for k in range(0, 96, 32)]
        return losses, [v.numpy() for v in model.trainable_variables], optimizer.iterations

    (eager, weights, steps), (traced, traced_weights, traced_steps) = run(False), run(True)
    assert steps == traced_steps == 9
    assert [a.tobytes() for a in traced] == [a.tobytes() for a in eager]
    assert all(np.array_equal(a, b) for a, b in zip(weights, traced_weights))


def test_an_outer_tape_sees_the_ops_of_a_planned_function():
    f = tl.function(lambda x: tl.reduce_sum(tl.tanh(x) * x))
    x = tl.constant([0.5, -1.0, 2.0])
    planned = f(x)  # (traced, then run as a plan)
    with tl.GradientTape() as tape:
        tape.watch(x)
        replayed = f(x)  # a tape records: the graph is replayed through the op table
    assert float(planned) == float(replayed)
    np.testing.assert_allclose(tape.gradient(replayed, x).numpy(),
                               np.tanh(x.numpy()) + x.numpy() * (1 - np.tanh(x.numpy()) ** 2), rtol=1e-6)


def test_a_variable_a_tape_recorded_keeps_its_old_array_while_the_plan_updates_it():
    v = tl.Variable([1.0, 2.0])
    step = tl.function(lambda: v.assign_sub(tl.constant([0.5, 0.5]), read_value=False))
    step()  # (traced, and run: 0.5, 1.5)
    with tl.GradientTape(persistent=True) as tape:
        y = v * v
    before = v._value
    kept = before.copy()
    step()  # the tape holds the old array: the plan makes a new one, as an eager assign would
    np.testing.assert_array_equal(before, kept)
    np.testing.assert_array_equal(v.numpy(), [0.0, 1.0])
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), 2 * kept)
    alone = id(v._value)
    step()  # nothing else holds the new array: updated in place
    assert id(v._value) == alone and v.numpy().tolist() == [-0.5, 0.5]


def test_a_traced_max_pool_gradient_follows_each_new_input():
    @tl.function
    def grad(x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = tl.reduce_sum(tl.nn.max_pool2d(x, 2, 2, "VALID") * tl.constant([[[[1.0], [2.0]], [[3.0], [4.0]]]]))
        return tape.gradient(y, x)

    rng = np.random.default_rng(0)
    first, second = (tl.constant(rng.random((1, 4, 4, 1), dtype=np.float32)) for _ in range(2))
    grad(first)
    tl.config.run_functions_eagerly(True)
    try:
        eager = grad(second).numpy()
    finally:
        tl.config.run_functions_eagerly(False)
    np.testing.assert_array_equal(grad(second).numpy(), eager)  # (the trace's maxima were baked in before)


def test_a_value_error_inside_the_plan_names_the_op_as_eager_does():
    f = tl.function(lambda params, i: tl.gather(params, i))
    params = tl.constant([1.0, 2.0, 3.0])
    f(params, tl.constant([0, 2]))
    with pytest.raises(tl.errors.InvalidArgumentError) as planned:
        f(params, tl.constant([0, 7]))
    with pytest.raises(tl.errors.InvalidArgumentError) as eager:
        tl.gather(params, tl.constant([0, 7]))
    assert str(planned.value) == str(eager.value) and str(planned.value).startswith("gather: ")


def test_the_plan_reads_as_the_program_it_runs():
    f = tl.function(linear_step)
    W, B = tl.Variable(5.0, name="W"), tl.Variable(10.0, name="B")
    x = tl.constant([1.0, 2.0])
    f(W, B, x, 2 * x, 0.01)
    plan = f.get_concrete_function(W, B, x, 2 * x, 0.01).graph.plan
    text = str(plan)
    assert text.startswith("def plan(x, y):") and "W._value" in text and "assign_sub(W, " in text
    assert text.count("\n") == len(plan.lines) + 2  # one line per node, the header and the return
    assert "divide" not in text  # (the mean's 1/n, from constants only: computed once, at trace time)


def test_a_graph_with_a_node_the_plan_does_not_know_says_why_and_is_replayed():
    f = tl.function(lambda x: x * 2.0)
    graph = f.get_concrete_function(tl.constant(1.0)).graph
    graph.entries[0].op = object()
    plan, why = Plan.of(graph)
    assert plan is None and "neither an op of the table" in why



def test_a_traced_cross_entropy_gradient_takes_the_residual_its_forward_saved():
    @tl.function
    def grad(labels, logits):
        with tl.GradientTape() as tape:
            tape.watch(logits)
            loss = tl.reduce_mean(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        return tape.gradient(loss, logits)

    labels, logits = tl.constant([0, 2]), tl.constant([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0]])
    plan = grad.get_concrete_function(labels, logits).graph.plan
    assert "sparse_xent_residual" not in str(plan) and "r = sparse_softmax_cross_entropy_with_logits" in str(plan)
    with tl.GradientTape() as tape:
        tape.watch(logits)
        loss = tl.reduce_mean(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    assert grad(labels, logits).numpy().tobytes() == tape.gradient(loss, logits).numpy().tobytes()
