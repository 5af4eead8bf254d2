"""GradientTape behaviour, checked against TensorFlow's documented semantics."""

import threading
import warnings

import numpy as np
import pytest

import tapelab as tl


def test_tf_docs_example_x3_gives_6():
    x = tl.constant(3.0)
    with tl.GradientTape() as g:
        g.watch(x)
        y = x * x
    assert float(g.gradient(y, x)) == 6.0


def test_tf_docs_persistent_tape_gives_108_and_6():
    x = tl.constant(3.0)
    with tl.GradientTape(persistent=True) as g:
        g.watch(x)
        y = x * x
        z = y * y
    assert float(g.gradient(z, x)) == 108.0
    assert float(g.gradient(y, x)) == 6.0


def test_tf_docs_nested_tapes_at_5_give_10_and_2():
    x = tl.constant(5.0)
    with tl.GradientTape() as g:
        g.watch(x)
        with tl.GradientTape() as gg:
            gg.watch(x)
            y = x * x
        dy_dx = gg.gradient(y, x)
    d2y_dx2 = g.gradient(dy_dx, x)
    assert float(dy_dx) == 10.0 and float(d2y_dx2) == 2.0


def test_third_derivative_with_three_tapes():
    x = tl.Variable(2.0)
    with tl.GradientTape() as t3:
        with tl.GradientTape() as t2:
            with tl.GradientTape() as t1:
                y = x * x * x * x  # x^4
            d1 = t1.gradient(y, x)  # 4x^3 = 32
        d2 = t2.gradient(d1, x)  # 12x^2 = 48
    d3 = t3.gradient(d2, x)  # 24x = 48
    assert [float(d1), float(d2), float(d3)] == [32.0, 48.0, 48.0]


def test_ordinary_gradient_does_not_record_backward_ops():
    x = tl.Variable(2.0)
    with tl.GradientTape() as tape:
        y = x * x
    n = len(tape.entries)
    tape_entries_before = list(tape.entries)
    tape.gradient(y, x)
    assert n == 1 and tape_entries_before[0].op.name == "multiply"


def test_second_gradient_on_one_shot_tape_teaches_persistent():
    x = tl.Variable(1.0)
    with tl.GradientTape() as tape:
        y = x * 2.0
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match=r"persistent=True"):
        tape.gradient(y, x)


def test_one_shot_tape_releases_its_entries():
    x = tl.Variable(1.0)
    with tl.GradientTape() as tape:
        y = x * 2.0
    assert len(tape.entries) == 1
    tape.gradient(y, x)
    assert tape.entries == []
    assert tape.last_backward is not None and len(tape.last_backward.entries) == 1  # kept for display


def test_sources_structures_come_back_in_the_same_structure():
    a, b = tl.Variable(1.0), tl.Variable(2.0)
    with tl.GradientTape(persistent=True) as tape:
        y = a * b
    assert isinstance(tape.gradient(y, [a, b]), list)
    assert isinstance(tape.gradient(y, (a, b)), tuple)
    d = tape.gradient(y, {"a": a, "b": b})
    assert set(d) == {"a", "b"} and float(d["a"]) == 2.0 and float(d["b"]) == 1.0
    nested = tape.gradient(y, {"w": [a, b]})
    assert [float(g) for g in nested["w"]] == [2.0, 1.0]
    assert float(tape.gradient(y, a)) == 2.0


def test_non_scalar_and_list_targets_are_summed():
    x = tl.Variable([1.0, 2.0, 3.0])
    with tl.GradientTape(persistent=True) as tape:
        y = x * x
        z = x * 3.0
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2, 4, 6])
    np.testing.assert_array_equal(tape.gradient([y, z], x).numpy(), [5, 7, 9])


def test_output_gradients_weight_the_target():
    x = tl.Variable([1.0, 2.0])
    with tl.GradientTape() as tape:
        y = x * x
    np.testing.assert_array_equal(tape.gradient(y, x, output_gradients=[10.0, 1.0]).numpy(), [20, 4])


def test_unconnected_gradients_none_and_zero():
    x, u = tl.Variable(1.0), tl.Variable([1.0, 2.0])
    with tl.GradientTape(persistent=True) as tape:
        y = x * 2.0
    assert tape.gradient(y, u) is None
    assert tape.gradient(y, u, unconnected_gradients=tl.UnconnectedGradients.NONE) is None
    np.testing.assert_array_equal(tape.gradient(y, u, unconnected_gradients="zero").numpy(), [0, 0])
    np.testing.assert_array_equal(tape.gradient(y, u, unconnected_gradients=tl.UnconnectedGradients.ZERO).numpy(),
                                  [0, 0])
    with pytest.raises(ValueError, match="UnconnectedGradients.ZERO"):
        tape.gradient(y, u, unconnected_gradients="nan")


def test_integer_sources_get_none_and_watch_warns():
    i = tl.constant(3)
    with tl.GradientTape() as tape:
        with pytest.warns(UserWarning, match="only float tensors have gradients"):
            tape.watch(i)
        y = i * i
    with pytest.warns(UserWarning, match="only float tensors have gradients"):
        assert tape.gradient(y, i) is None


def test_stop_gradient_blocks_flow():
    x = tl.Variable(2.0)
    with tl.GradientTape() as tape:
        y = tl.stop_gradient(x * x) * x
    assert float(tape.gradient(y, x)) == 4.0  # only the outer factor's path counts


def test_constants_need_watch_variables_are_automatic():
    c, v = tl.constant(2.0), tl.Variable(2.0)
    with tl.GradientTape(persistent=True) as tape:
        y = c * v
    assert tape.gradient(y, c) is None
    assert float(tape.gradient(y, v)) == 2.0
    assert tape.watched_variables() == (v,)


def test_watch_accessed_variables_false_and_untrainable_variables():
    v, frozen = tl.Variable(2.0), tl.Variable(3.0, trainable=False)
    with tl.GradientTape(watch_accessed_variables=False, persistent=True) as tape:
        y = v * frozen
    assert tape.gradient(y, v) is None and tape.watched_variables() == ()
    with tl.GradientTape(persistent=True) as tape:
        y = v * frozen
    assert tape.gradient(y, frozen) is None and float(tape.gradient(y, v)) == 3.0
    with tl.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(v)
        y = v * v
    assert float(tape.gradient(y, v)) == 4.0


def test_watch_rejects_non_tensors_with_a_teaching_message():
    with tl.GradientTape() as tape:
        with pytest.raises(ValueError, match=r"watch\(\) takes tensors.*tl.constant\(3.0\)"):
            tape.watch(3.0)
        with pytest.raises(ValueError, match="list"):
            tape.watch([tl.constant(1.0), [1, 2]] if False else [tl.constant(1.0), "list"])


def test_stop_recording():
    x = tl.Variable(2.0)
    with tl.GradientTape() as tape:
        y = x * x
        with tape.stop_recording():
            z = x * 10.0
        w = y + z
    assert len(tape.entries) == 2  # multiply and add, not the unrecorded multiply
    assert float(tape.gradient(w, x)) == 4.0


def test_a_tape_differentiating_inside_its_own_block_notes_nothing_as_stopped():
    """Under an outer tape the rules run as recorded ops; the inner tape, paused for its own backward pass, must not
    take them for the learner's stop_recording() work (the pictures would draw them as unrecorded links)."""
    x = tl.Variable(2.0)
    with tl.GradientTape() as outer:
        with tl.GradientTape(persistent=True) as inner:
            y = x * x * x
            g = inner.gradient(y, x)
            with inner.stop_recording():
                z = x * 10.0  # (the learner's own unrecorded op is still noted)
    assert float(g) == 12.0 and float(outer.gradient(g, x)) == 12.0  # d(3x^2)/dx at 2
    assert [t._key for t in inner.stopped] == [z._key]
    assert list(inner.stopped_from) == [z._key]


def test_stop_recording_outside_the_tape_is_an_error():
    tape = tl.GradientTape()
    with pytest.raises(RuntimeError, match="inside"):
        with tape.stop_recording():
            pass


def test_reset_forgets_and_keeps_recording():
    x = tl.Variable(2.0)
    with tl.GradientTape() as tape:
        x * x
        tape.reset()
        z = x * 3.0
    assert len(tape.entries) == 1
    assert float(tape.gradient(z, x)) == 3.0


def test_gradient_of_a_target_computed_before_reset_explains():
    x = tl.Variable(2.0)
    with tl.GradientTape() as tape:
        y = x * x
        tape.reset()
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        tape.gradient(y, x)


def test_a_target_from_before_an_earlier_reset_explains_too():
    x = tl.Variable(2.0)
    with tl.GradientTape(persistent=True) as tape:
        y = x * x
        tape.reset()
        x * 3.0
        tape.reset()
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        tape.gradient(y, x)


def test_copies_of_tensors_are_other_tensors_to_a_tape():
    """A copy (copy, deepcopy, pickle) gets its own key: a tape tells it from the original."""
    import copy
    import pickle

    v = tl.Variable(1.0)
    deep, pickled = copy.deepcopy(v), pickle.loads(pickle.dumps(v))
    with tl.GradientTape() as tape:
        y = v * 2.0 + deep * 3.0 + pickled * 4.0
    assert [float(g) for g in tape.gradient(y, [v, deep, pickled])] == [2.0, 3.0, 4.0]
    c = tl.constant([1.0, 2.0])
    assert copy.copy(c)._key != c._key and copy.copy(c).numpy().tolist() == [1.0, 2.0]


def test_reentering_an_active_tape_is_an_error():
    with tl.GradientTape() as tape:
        with pytest.raises(ValueError, match="already recording"):
            with tape:
                pass


def test_tf_gradients_says_use_a_tape():
    with pytest.raises(RuntimeError, match="Use tl.GradientTape instead"):
        tl.gradients(tl.constant(1.0), [tl.constant(1.0)])


def test_sources_must_be_tensors():
    x = tl.Variable(1.0)
    with tl.GradientTape() as tape:
        y = x * 2.0
    with pytest.raises(TypeError, match=r"every source must be a tensor.*tl.Variable"):
        tape.gradient(y, 3.0)


def test_jacobian():
    x = tl.Variable([1.0, 2.0, 3.0])
    with tl.GradientTape() as tape:
        y = x * x
    j = tape.jacobian(y, x)
    np.testing.assert_array_equal(j.numpy(), np.diag([2.0, 4.0, 6.0]))
    w = tl.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    with tl.GradientTape() as tape:
        y = tl.matmul(w, tl.reshape(x, (3, 1)))
    jw, jx = tape.jacobian(y, [w, x])
    assert jw.shape == (2, 1, 2, 3) and jx.shape == (2, 1, 3)
    np.testing.assert_array_equal(jx.numpy()[:, 0, :], w.numpy())


def test_fan_out_gradients_accumulate():
    x = tl.Variable(3.0)
    with tl.GradientTape() as tape:
        y = x * x + x  # x used three times
    assert float(tape.gradient(y, x)) == 7.0


def test_gradient_uses_values_seen_when_recorded_even_after_assign():
    x = tl.Variable(3.0)
    with tl.GradientTape() as tape:
        y = x * x
    x.assign(100.0)
    assert float(tape.gradient(y, x)) == 6.0


def test_gradient_wrt_an_intermediate_tensor():
    x = tl.Variable(3.0)
    with tl.GradientTape() as tape:
        h = x * 2.0
        y = h * h
    dh, dx = tape.gradient(y, [h, x])
    assert float(dh) == 12.0 and float(dx) == 24.0


def test_gradient_called_inside_the_tape_context():
    x = tl.Variable(3.0)
    with tl.GradientTape(persistent=True) as tape:
        y = x * x
        g = tape.gradient(y, x)
        n = len(tape.entries)
    assert float(g) == 6.0 and n == 1  # the backward pass is not added to the tape itself


def test_tapes_are_local_to_their_thread():
    x = tl.Variable(1.0)
    barrier = threading.Barrier(2)
    counts = {}

    def train(name, steps):
        with tl.GradientTape() as tape:
            barrier.wait()
            for _ in range(steps):
                y = x * 2.0
            barrier.wait()
        counts[name] = len(tape.entries)
        assert float(tape.gradient(y, x)) == 2.0

    threads = [threading.Thread(target=train, args=(n, s)) for n, s in [("a", 3), ("b", 50)]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counts == {"a": 3, "b": 50}


def test_backward_steps_equal_gradient_on_every_op_program():
    rng = np.random.default_rng(0)
    w = tl.Variable(rng.normal(size=(3, 4)).astype(np.float32), name="w")
    b = tl.Variable(np.zeros(4, np.float32), name="b")
    x = tl.constant(rng.normal(size=(2, 3)).astype(np.float32))
    with tl.GradientTape(persistent=True) as tape:
        h = tl.tanh(tl.matmul(x, w) + b)
        loss = tl.reduce_mean(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=[1, 3], logits=h)) + \
            tl.reduce_sum(w * w) * 0.01
    steps = tape.backward_steps(loss, [w, b])
    final = steps[-1].totals
    for v, g in zip([w, b], tape.gradient(loss, [w, b])):
        np.testing.assert_array_equal(final[v._key], g.numpy())


def test_seed_000_steps_back_in_two_steps():
    x = tl.Variable(tl.ones((2, 2)), name="x")
    y = tl.Variable([[2, 2], [2, 2]], dtype=tl.float32, name="y")
    with tl.GradientTape() as tape:
        loss = tl.reduce_mean(tl.matmul(x, y))
    steps = tape.backward_steps(loss, [x, y])
    assert [s.entry.op.name for s in steps] == ["reduce_mean", "matmul"]
    np.testing.assert_array_equal(steps[1].upstream, np.full((2, 2), 0.25))
    np.testing.assert_array_equal(steps[1].totals[x._key], np.ones((2, 2)))
    np.testing.assert_array_equal(steps[1].totals[y._key], np.full((2, 2), 0.5))
    assert steps[1].contributions[0][2] == "dx = g @ y.T"
    with pytest.raises(RuntimeError, match="persistent=True"):
        tape.backward_steps(loss, [x, y])


def test_fan_out_shows_three_contributions_summing_up():
    x = tl.Variable(3.0, name="x")
    with tl.GradientTape() as tape:
        y = x * x + x
    steps = tape.backward_steps(y, x)
    to_x = [(float(c), float(total)) for s in steps for i, t, f, c, total in s.contributions if t is x]
    assert to_x == [(1.0, 1.0), (3.0, 4.0), (3.0, 7.0)]


def test_name_scope_reaches_entries():
    x = tl.Variable(1.0)
    with tl.GradientTape() as tape:
        with tl.name_scope("layer"):
            with tl.name_scope("inner"):
                y = x * 2.0
            z = y + 1.0
        z * z
    assert [e.scope for e in tape.entries] == ["layer/inner/", "layer/", ""]


def test_no_warning_in_ordinary_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = tl.Variable([1.0, 2.0])
        with tl.GradientTape() as tape:
            y = tl.reduce_sum(x * x)
        tape.gradient(y, x)


def test_integer_source_gradient_is_none_with_a_teaching_warning():
    i = tl.Variable(3)
    with tl.GradientTape() as tape:
        y = tl.cast(i, tl.float32) * 2.0
    with pytest.warns(UserWarning, match=r"dtype int32; only float tensors have gradients.*tl.cast"):
        assert tape.gradient(y, i) is None


def test_integer_sources_with_unconnected_zero_get_zeros_of_their_dtype():
    i, w = tl.Variable([1, 2]), tl.Variable(2.0)
    with tl.GradientTape(persistent=True) as tape:
        y = tl.cast(i, tl.float32) * w
    with pytest.warns(UserWarning, match=r"dtype int32; only float tensors have gradients, so its gradient is zeros"):
        g = tape.gradient(y, i, unconnected_gradients=tl.UnconnectedGradients.ZERO)
    assert g.dtype == tl.int32 and g.numpy().tolist() == [0, 0]  # (TF's answer: an int32 0 per element)
    j = tape.jacobian(y, i, unconnected_gradients="zero")
    assert j.dtype == tl.int32 and j.shape == (2, 2)
    assert tape.gradient(i, i).numpy().tolist() == [1, 1]  # the target is the source: its seed comes back, as in TF


def test_a_variable_read_before_it_is_watched_stays_a_constant_there():
    # TF: each read of a Variable is a new tensor, so only reads after tape.watch(v) lead back to v
    x, v = tl.constant(2.0), tl.Variable(3.0, name="v")
    with tl.GradientTape(watch_accessed_variables=False, persistent=True) as tape:
        tape.watch(x)
        y = x * v  # v is not watched yet: recorded (x is), but as a constant 3.0
        tape.watch(v)
        z = y + v * v
    gx, gv = tape.gradient(z, [x, v])
    assert float(gx) == 3.0 and float(gv) == 6.0  # not 2.0 + 6.0
    assert tape.gradient(y, v) is None
    assert str(tape)  # the listing still draws the earlier read (a constant now)
    c = tl.constant(3.0)  # a constant is one tensor: its earlier use counts once it is watched (TF: 9.0)
    with tl.GradientTape() as tape:
        y = c * c
        tape.watch(c)
        z = y * c
    assert float(tape.gradient(z, c)) == 9.0


def test_jacobian_of_a_target_the_tape_does_not_track_is_none():
    x = tl.constant([1.0, 2.0])
    with tl.GradientTape(persistent=True) as tape:
        pass
    with pytest.warns(UserWarning, match="was not computed on this tape"):
        assert tape.jacobian(x, x) is None  # TF reshapes the target on the tape first: unrecorded, no gradient
    np.testing.assert_array_equal(tape.jacobian(x, x, unconnected_gradients="zero").numpy(), np.zeros((2, 2)))
    np.testing.assert_array_equal(tape.gradient(x, x).numpy(), [1.0, 1.0])  # gradient() of itself stays ones
    np.testing.assert_array_equal(tape.batch_jacobian(tl.reshape(x, (2, 1)), x[:, None]).numpy(), np.zeros((2, 1, 1)))
    v, frozen = tl.Variable(2.0), tl.Variable(2.0, trainable=False)
    with tl.GradientTape(persistent=True) as tape:
        pass
    assert float(tape.jacobian(v, v)) == 1.0 and tape.watched_variables() == (v,)  # the reshape read watches it
    assert tape.jacobian(frozen, frozen) is None
    with tl.GradientTape(watch_accessed_variables=False) as tape:
        pass
    assert tape.jacobian(v, v) is None


def test_second_order_with_respect_to_a_quotient_is_none_as_in_tf():
    # d(w / x)/dx = -w / x^2 is computed from x and w (TF's rule), not from the quotient q: so d/dq of it is None
    x, w = tl.constant(0.4), tl.constant(1.5)
    with tl.GradientTape() as outer:
        outer.watch([x, w])
        with tl.GradientTape() as inner:
            inner.watch(x)
            q = w / x
        g = inner.gradient(q, x)
    gx, gw, gq = outer.gradient(g, [x, w, q])
    np.testing.assert_allclose([float(gx), float(gw)], [2 * 1.5 / 0.4 ** 3, -1 / 0.4 ** 2], rtol=1e-6)
    assert gq is None


def test_watched_variables_lists_int_variables_read_but_not_untrainable_ones():
    a, b, c = tl.Variable(3.0, trainable=False), tl.Variable(2.0), tl.Variable(1)
    with tl.GradientTape() as tape:
        a * b
        c * 2
    assert tape.watched_variables() == (b, c)
    with tl.GradientTape(watch_accessed_variables=False) as tape:
        c * 2
    assert tape.watched_variables() == ()


def test_an_op_without_a_rule_for_a_tracked_input_fails_loudly(monkeypatch):
    from tapelab.engine.primitives import OPS, Op
    from tapelab.engine.tape import run

    monkeypatch.setitem(OPS, "twice", Op("twice", lambda x: 2 * x, vjps=(None,)))
    x = tl.Variable(1.0)
    with tl.GradientTape() as tape:
        y = run(OPS["twice"], (x,))
    with pytest.raises(LookupError, match=r"twice: no gradient is defined for input 0.*stop_gradient"):
        tape.gradient(y, x)


def test_check_gradients_reports_a_wrong_rule(monkeypatch):
    from tapelab.engine.primitives import OPS

    assert tl.check_gradients(tl.square, [1.0, 2.0]).ok
    monkeypatch.setattr(OPS["square"], "vjps", (lambda B, g, out, x: g * 3 * x,))  # wrong: d(x^2) = 2x
    check = tl.check_gradients(tl.square, [1.0, 2.0])
    assert not check.ok and "DISAGREE" in repr(check)
    np.testing.assert_allclose(check.analytic[0] / check.numeric[0], [1.5, 1.5], rtol=1e-6)  # 3x vs 2x


def test_after_reset_an_unrelated_target_gets_none_not_the_reset_error():
    x = tl.Variable(2.0)
    other = tl.constant(1.0) * 3.0
    with tl.GradientTape() as tape:
        x * x
        tape.reset()
        x * 3.0
    with pytest.warns(UserWarning):
        assert tape.gradient(other, x) is None


def test_one_name_scope_object_can_be_reused_and_nested():
    outer, inner = tl.name_scope("outer"), tl.name_scope("inner")
    x = tl.Variable(1.0)
    with tl.GradientTape() as tape:
        with outer:
            with inner:
                with inner:  # the same object twice: each exit goes back one level
                    a = x * 2.0
                b = x * 3.0
            c = x * 4.0
        with outer:
            d = x * 5.0
        e = x * 6.0
    assert [entry.scope for entry in tape.entries] == ["outer/inner/inner/", "outer/inner/", "outer/", "outer/", ""]
    assert all(t is not None for t in (a, b, c, d, e))


def test_a_long_recording_holds_full_garbage_collections_back_until_it_stops():
    import gc

    from tapelab.engine.tape import LONG

    before = gc.get_threshold()
    x = tl.Variable(1.0)
    with tl.GradientTape() as outer:
        with tl.GradientTape() as inner:
            y = x * 1.0
            assert gc.get_threshold() == before  # (a short recording changes nothing)
            for _ in range(LONG):
                y = y * 1.0
            assert gc.get_threshold()[2] > before[2] and gc.get_threshold()[:2] == before[:2]
        assert gc.get_threshold()[2] > before[2]  # (the outer tape recorded as long: it holds them too)
    assert gc.get_threshold() == before
    assert float(inner.gradient(y, x)) == 1.0 and outer.gradient(y, x) is not None


def test_an_eager_update_writes_in_place_only_into_an_array_nothing_else_holds():
    v = tl.Variable([1.0, 2.0])
    optimizer = tl.optimizers.SGD(learning_rate=0.5)
    optimizer.apply_gradients([(tl.constant([1.0, 1.0]), v)])
    alone = id(v._value)
    optimizer.apply_gradients([(tl.constant([1.0, 1.0]), v)])  # nothing holds the old array: written in place
    assert id(v._value) == alone and v.numpy().tolist() == [0.0, 1.0]
    with tl.GradientTape() as tape:
        y = tl.reduce_sum(v * v)
    held = v._value
    optimizer.apply_gradients([(tape.gradient(y, v), v)])  # the tape's record holds it: a new array
    assert v._value is not held and held.tolist() == [0.0, 1.0] and v.numpy().tolist() == [0.0, 0.0]
