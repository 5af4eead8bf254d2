"""The lessons' answer key, kept out of the notebooks: what each exercise asks, how an answer is judged, a hint.

(If you are a learner reading this: the answers are worked out below, so try the exercise first.)

Expected values are computed, with tapelab itself or from the lesson's own objects (``needs``: passed by keyword
to :func:`tapelab.lessons.exercises.self_check`); answers that are a word or a letter are stored base64-encoded, so a
glance does not give them away. A judge returns ``True`` or a string saying what is wrong (the learner's ``...``
never reaches it: that is "not answered yet").
"""

import base64
from typing import Callable, NamedTuple

import numpy as np

import tapelab as tl
from tapelab.lessons.judging import compare, compare_numbers, compare_shape, echo, printed


class Question(NamedTuple):
    label: str  # "1a. what is asked", as the self-check line shows it
    judge: Callable  # judge(answer, lesson_objects) -> True | "what is wrong"
    hint: str = ""
    needs: tuple = ()  # the lesson's objects the judge reads


def _word(encoded):
    return base64.b64decode(encoded).decode("utf-8")


def _equal(expected, tol=1e-4):
    """A judge comparing with ``expected(lesson_objects)`` (see :func:`tapelab.lessons.judging.compare`)."""
    return lambda answer, lesson: compare(answer, expected(lesson), tol)


def _choice(encoded, options, why_not=None):
    """A judge for a word or a letter among ``options``; ``why_not``: what to say of each wrong option."""
    def judge(answer, lesson):
        if not isinstance(answer, str) or answer.strip().lower() not in options:
            return f"your answer is {echo(answer)}: answer " + " or ".join(f'"{o}"' for o in options)
        picked = answer.strip().lower()
        return picked == _word(encoded) or (why_not or {}).get(picked) or f"your answer is {picked!r}"
    return judge


# --- 01 · eager basics ---------------------------------------------------------------------------------------
def _prints_hello_for_multiples_of_4(function_fixed, lesson):
    lines = printed(function_fixed, 16)
    expected = ["hello" if n % 4 == 0 else "hi" if n % 2 == 0 else str(n) for n in range(1, 18)]
    if lines == expected:
        return True
    return f"function_fixed(16) prints {' '.join(lines) or 'nothing'}" + (
        "" if "hello" in lines else " (no hello at all)")


def _mean_of_1_to_4(lesson):
    return float(tl.reduce_mean(tl.constant([1.0, 2.0, 3.0, 4.0])))


LESSON_01 = (
    Question("1a. dtype of tf.constant([1, 2.5])", _equal(lambda _: tl.constant([1, 2.5]).dtype),
             "section 1's table: what does one float in the list make of every element, and which float is that?"),
    Question("1b. dtype of tf.constant(np.arange(3))", _equal(lambda _: tl.constant(np.arange(3)).dtype),
             "section 1's table: what does a numpy array keep when it becomes a tensor? numpy can tell you too"),
    Question("1c. dtype of tf.constant(3) / tf.constant(2)",
             _equal(lambda _: (tl.constant(3) / tl.constant(2)).dtype),
             "`/` gives a float even for integers, as in TensorFlow: which float holds every int32 exactly?"),
    Question("2. function_fixed(16) prints hello for multiples of 4", _prints_hello_for_multiples_of_4,
             "Python runs the first branch whose test is true, and every multiple of 4 is also even"),
    Question("3. the mean of [1, 2, 3, 4]", _equal(_mean_of_1_to_4),
             "tf.reduce_mean keeps the dtype of its input: which dtype does [1, 2, 3, 4] become?"),
)


# --- 02 · the gradient tape ----------------------------------------------------------------------------------
def _derivatives_of_cube(lesson):
    x = tl.Variable(2.0)
    with tl.GradientTape() as outer:
        with tl.GradientTape() as inner:
            f = x ** 3
        df = inner.gradient(f, x)
    return float(df), float(outer.gradient(df, x))


def _dloss_dy(lesson):
    x = tl.Variable([[1.0, 2.0], [3.0, 4.0]])
    y = tl.Variable([[2.0, 2.0], [2.0, 2.0]])
    with tl.GradientTape() as tape:
        loss = tl.reduce_mean(tl.matmul(x, y))
    return tape.gradient(loss, y).numpy()


def _c_gets_its_gradient(record, lesson):
    x, c = tl.Variable(2.0, name="x"), tl.constant(3.0)
    recorded = record(x, c)
    if not (isinstance(recorded, tuple) and len(recorded) == 2 and isinstance(recorded[0], tl.GradientTape)):
        return f"record(x, c) returns {echo(recorded)}: keep its last line, `return tape, target`"
    tape, target = recorded
    if any(w is c for w in tape.watched):
        dc = tape.gradient(target, c)
        return dc is not None and float(dc) == 2.0 or f"∂target/∂c is {echo(dc)}, not x = 2"
    followed = [w.name.split(":")[0] for w in tape.watched]
    return "the tape does not follow c" + (
        f", only {' and '.join(followed)} (a trainable Variable is followed without being asked)" if followed else "")


LESSON_02 = (
    Question("1a. f'(2) for f(x) = x³", _equal(lambda _: _derivatives_of_cube(_)[0]),
             "differentiate x³ with the power rule, then put x = 2"),
    Question("1b. f''(2) for f(x) = x³", _equal(lambda _: _derivatives_of_cube(_)[1]),
             "differentiate once more, then put x = 2"),
    Question("2. d loss / d y", _equal(_dloss_dy),
             "write xᵀ out, multiply it by the 2x2 matrix of 1/4s (reduce_mean sends 1/4 to each element)"),
    Question("3. the constant c receives a gradient", _c_gets_its_gradient,
             "section 4: a tape follows trainable Variables by itself, and any other tensor only when asked"),
)


# --- 03 · the tape as a graph --------------------------------------------------------------------------------
def _d_exp_ab_plus_a(lesson):
    a, b = tl.Variable(2.0), tl.Variable(-1.0)
    with tl.GradientTape() as tape:
        d = tl.exp(a * b) + a
    return [float(g) for g in tape.gradient(d, [a, b])]


def _contributions_to_x_in_cube(lesson):
    x = tl.Variable(2.0)
    with tl.GradientTape() as tape:
        cube = x * x * x
    return sorted(float(c.value) for step in tape.backward_steps(cube, x) for c in step.contributions
                  if c.tensor is x)


def _contribution_values(answer, lesson):
    if not isinstance(answer, (list, tuple)) and not hasattr(answer, "shape"):
        return f"your answer is {echo(answer)}: a list of numbers is expected, one per contribution"
    want = _contributions_to_x_in_cube(lesson)
    values = list(np.ravel(np.asarray(answer, dtype=np.float64))) if len(np.shape(answer)) else [answer]
    if len(values) != len(want):
        return f"your list has {len(values)} numbers; x receives a different number of contributions"
    return compare_numbers(sorted(values), np.asarray(want), 1e-4)


LESSON_03 = (
    Question("1a. dd/da at a = 2, b = -1", _equal(lambda _: _d_exp_ab_plus_a(_)[0], tol=1e-3),
             "a reaches d along two paths, through exp(a * b) and straight into the +: add what each sends back"),
    Question("1b. dd/db at a = 2, b = -1", _equal(lambda _: _d_exp_ab_plus_a(_)[1], tol=1e-3),
             "b reaches d along one path: through multiply, then exp, then add"),
    Question("2a. contributions x receives in x * x * x", _equal(lambda _: len(_contributions_to_x_in_cube(_))),
             "count the places x appears as an input of an op (x * x * x is two multiplies)"),
    Question("2b. their values at x = 2", _contribution_values,
             "step through x * x * x with tf.viz.BackwardStepper and read what each multiply sends to x"),
    Question("3. why reversed recording order works",
             _choice("Yg==", ("a", "b", "c"), {
                 "a": "a tape may record ops after the target, so the last op need not produce it",
                 "c": "an op visited too early would pass on a gradient still missing some of its parts"}),
             "walking backwards, has every part of an op's output gradient arrived when the op is reached?"),
)


# --- 04 · linear regression ----------------------------------------------------------------------------------
def _train(lesson, W, B, learning_rate, steps=200):
    W, B = tl.Variable(W), tl.Variable(B)
    for _ in range(steps):
        with tl.GradientTape() as tape:
            loss_value = lesson["loss"](W, B)
        dW, dB = tape.gradient(loss_value, [W, B])
        W.assign_sub(dW * learning_rate)
        B.assign_sub(dB * learning_rate)
    return float(W), float(B)


def _op_sending_to_b(lesson):
    W, B = tl.Variable(5.0), tl.Variable(10.0)
    with tl.GradientTape() as tape:
        loss_value = lesson["loss"](W, B)
    return [step.entry.op.name for step in tape.backward_steps(loss_value, B)
            if any(c.tensor is B for c in step.contributions)][0]


def _op_name(answer, lesson):
    if not isinstance(answer, str):
        return f"your answer is {echo(answer)}: write the op's name as a string, e.g. \"matmul\""
    name = answer.strip().lower().removeprefix("tf.").removeprefix("tl.")
    if name not in tl.OPS:
        return f"there is no op named {answer!r}: the listing and the stepper name each op (multiply, add, ...)"
    return name == _op_sending_to_b(lesson) or f"your answer is {answer!r}"


LESSON_04 = (
    # (within 0.001: B ends at 2.0023, so the limit 2 alone, without the factor's remainder, is not yet an answer)
    Question("1. B after 200 steps of learning rate 0.02", _equal(lambda o: _train(o, 5.0, 10.0, 0.02)[1], 0.001),
             "B − 2 starts at 8, and each step multiplies it by the factor the exercise gives", needs=("loss",)),
    Question("2. W after 200 steps from W = 0", _equal(lambda o: _train(o, 0.0, 10.0, 0.01)[0], 0.05),
             "the gap 5 − W starts at 5 and shrinks by the same factor at every step", needs=("loss",)),
    Question("3. the op that sends B its gradient", _op_name,
             "find B in the stepper's picture: which op takes it as an input?", needs=("loss",)),
)


# --- 05 · MNIST ----------------------------------------------------------------------------------------------
def _mlp(hidden):
    model = tl.keras.Sequential([tl.keras.layers.Flatten(), tl.keras.layers.Dense(hidden, activation="relu"),
                                 tl.keras.layers.Dense(10)])
    model(np.zeros((1, 28, 28), np.float32))
    return model


def _untrained_loss(lesson):
    loss_fn = tl.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    return float(loss_fn(lesson["y_train"][:1000], _mlp(128)(lesson["x_train"][:1000])))


LESSON_05 = (
    Question("1. the loss of an untrained model", _equal(_untrained_loss, 0.25),
             "the loss is -log(the probability the model gives the right digit): what is that probability when "
             "the model has no preference?", needs=("x_train", "y_train")),
    Question("2. Dense layers without an activation", _choice("bGluZWFy", ("linear", "nonlinear")),
             "write the model as one formula, x @ W1 + b1 fed into (...) @ W2 + b2, and multiply it out"),
    Question("3. parameters of a 784-256-10 network",
             _equal(lambda _: sum(int(np.prod(v.shape)) for v in _mlp(256).trainable_variables), 0),
             "each Dense layer has inputs × outputs weights and one bias per output"),
)


# --- 06 · static graph versus eager --------------------------------------------------------------------------
def _traces(lesson, *calls):
    """A fresh f traced for section 3's calls, then ``calls``: its trace count before and after them."""
    fresh = tl.function(lesson["f"].python_function)
    seen = (tl.constant(3.0), tl.constant([1.0, 2.0]), tl.constant(1.0, dtype=tl.float64))
    printed(lambda: [fresh(v) for v in seen])  # (f's own print kept quiet)
    before = fresh.trace_count
    printed(lambda: [fresh(v) for v in calls])
    return before, fresh.trace_count


def _retraces(lesson):
    before, after = _traces(lesson, tl.constant([[2.0]]))
    return after > before


def _clips(clip, lesson):
    out = clip(tl.constant([-1.0, 2.0]))
    if out is None:
        return "clip([-1.0, 2.0]) returns None: the function needs a `return`"
    got = np.asarray(out).tolist()
    return got == [0.0, 2.0] or f"clip([-1.0, 2.0]) gives {got}"


LESSON_06 = (
    Question("1. f(tf.constant([[2.0]])) traces again", _equal(_retraces),
             "a graph is traced for one signature, the shapes and dtypes of the tensor arguments: has f seen this "
             "one?", needs=("f",)),
    Question("2. clip without a Python if", _clips, "section 3: which op picks between two tensors elementwise?"),
    Question("3. f.trace_count after those two calls",
             _equal(lambda o: _traces(o, tl.constant([[2.0]]), tl.constant(9.0))[1]),
             "which of the two calls brings a signature f has not seen before?", needs=("f",)),
)


# --- 07 · a CNN ----------------------------------------------------------------------------------------------
def _conv(filters, size, channels=1, **options):
    layer = tl.keras.layers.Conv2D(filters, size, **options)
    return layer, layer(np.zeros((1, 28, 28, channels), np.float32))


LESSON_07 = (
    Question("1. the output shape of Conv2D(32, 3)",
             lambda answer, lesson: compare_shape(answer, _conv(32, 3)[1].shape[1:]),
             "how many times does a 3x3 window fit across 28 pixels inside the image, and how many channels do "
             "32 filters make? (leave out the batch axis)"),
    Question("2. parameters of Conv2D(16, 5) on 3 channels",
             _equal(lambda _: _conv(16, 5, channels=3)[0].count_params(), 0),
             "each filter looks at all 3 channels through its 5x5 window, and has one bias"),
    Question("3. the height with padding='same'",
             _equal(lambda _: _conv(32, 3, padding="same")[1].shape[1], 0),
             "the zeros around the border are there so that the window fits as often as there are pixels"),
)

# --- 08 · when gradients vanish or explode -----------------------------------------------------------------
def _sigmoid_slope_max(lesson):
    x = tl.constant(np.linspace(-6.0, 6.0, 1201))  # (0 is on the grid)
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.sigmoid(x)
    return float(tl.reduce_max(tape.gradient(y, x)))


def _clipped(lesson):
    (clipped,), _ = tl.clip_by_global_norm([tl.constant([3.0, 4.0])], 1.0)
    return clipped.numpy()


LESSON_08 = (
    Question("1. the largest slope of the sigmoid", _equal(_sigmoid_slope_max),
             "sigmoid'(x) = sigmoid(x) * (1 - sigmoid(x)), a product of two numbers that add up to 1: where is it "
             "largest?"),
    Question("2. [3, 4] clipped to a global norm of 1", _equal(_clipped),
             "clip_by_global_norm scales the whole list by clip_norm / global_norm when the norm is larger: what "
             "is the norm of [3, 4]?"),
    Question("3. the layer whose weights get the smallest gradient", _choice("Zmlyc3Q=", ("first", "last")),
             "section 2's table: the gradient arrives from the loss, and each sigmoid layer passes on a fraction "
             "of it"),
)

# --- 09 · backpropagation through time ---------------------------------------------------------------------
def _rnn_ops(steps, units=4):
    """The ops lesson 09's hand-written RNN records inside its ``rnn`` scope for windows of ``steps`` steps."""
    W_x, W_h = tl.Variable(tl.ones((1, units)) * 0.1), tl.Variable(tl.ones((units, units)) * 0.1)
    b = tl.Variable(tl.zeros((units,)))
    x = tl.constant(np.ones((2, steps, 1), np.float32))
    with tl.GradientTape() as tape:
        h = tl.zeros((2, units))
        with tl.name_scope("rnn"):
            for t in range(steps):
                with tl.name_scope(f"t{t:02d}"):
                    h = tl.tanh(x[:, t, :] @ W_x + h @ W_h + b)
    return sum(1 for e in tape.entries if e.scope.startswith("rnn/"))


def _linear_rnn_gradient_at_h0(lesson, w=0.9, steps=20):
    h0 = tl.constant(0.5, tl.float64)
    with tl.GradientTape() as tape:
        tape.watch(h0)
        h = h0
        for t in range(steps):
            h = w * h + tl.constant(float(t % 3), tl.float64)  # (any inputs: they do not change dL/dh_0)
    return float(tape.gradient(h, h0))


LESSON_09 = (
    Question("1. ops the hand-written rnn records in 30 steps", _equal(lambda _: _rnn_ops(30), 0),
             "section 2 printed the ops of one time step, rnn/t00/: each step records the same ones again"),
    Question("2. dL/dh_0 for h_t = 0.9 * h_(t-1) + x_t over 20 steps", _equal(_linear_rnn_gradient_at_h0, 1e-3),
             "going back one step multiplies the gradient by dh_t/dh_(t-1): what is it here, and how many steps "
             "lie between h_0 and h_20?"),
    Question("3. the GRU gate that copies the state forward", _choice("eg==", ("z", "r"), {
                 "r": "r decides how much of h_(t-1) the candidate c sees; the mix h_t = z * h_(t-1) + (1 - z) * c "
                      "is another gate's"}),
             "section 9's formula h_t = z * h_(t-1) + (1 - z) * c: which gate makes h_t a copy of h_(t-1)?"),
)

# --- 10 · build your own tape ---------------------------------------------------------------------------------
def _parts_of_err(lesson):
    x, W, B = (tl.constant(np.linspace(-1, 1, 5)), tl.Variable(4.0, dtype=tl.float64),
               tl.Variable(10.0, dtype=tl.float64))
    with tl.GradientTape() as tape:
        err = x * W + B - tl.constant(5 * np.linspace(-1, 1, 5) + 2)
        loss = tl.reduce_mean(err * err)
    return sum(c.tensor._key == err._key for step in tape.backward_steps(loss, [W, B]) for c in step.contributions)


def _buggy_ratio(lesson):
    from tapelab.lessons import own_tape

    grads = []
    for tape_class in (own_tape.Tape, own_tape.OverwritingTape):
        loss, _, B, _ = own_tape.seed_001_example(tape := tape_class())
        tape.backward(loss)
        grads.append(float(B.grad))
    return grads[0] / grads[1]


LESSON_10 = (
    Question("1. parts err's gradient adds up from", _equal(_parts_of_err, 0),
             "count the inputs of the ops that read err: multiply(err, err) has two"),
    Question("2. the value whose total is wrong at step 2", _choice("ZXJy", ("x", "w", "b", "y", "err", "loss"), {
                 "w": "W gets its part at the last step; look at the value the multiply at step 2 reads twice",
                 "b": "B's total is wrong too, but later: the mistake happens first at step 2"}),
             "read the ⚠ line of the buggy stepper's panel at step 2: whose total is not the sum?"),
    Question("3. right dloss/dB over the buggy one", _equal(_buggy_ratio, 1e-6),
             "err's two parts are equal and the buggy pass keeps one of them: what happens to everything below?"),
)

# --- 11 · attention, step by step -----------------------------------------------------------------------------
def _softmax_part(lesson):
    x = tl.constant([0.0, 0.0])  # softmax([0, 0]) = [0.5, 0.5]
    with tl.GradientTape() as tape:
        tape.watch(x)
        weights = tl.nn.softmax(x)
    return tape.gradient(weights, x, output_gradients=tl.constant([1.0, 0.0])).numpy()


LESSON_11 = (
    Question("1. the standard deviation of q . k for d = 64", _equal(lambda _: float(np.sqrt(64)), 1e-6),
             "the variance of a sum of independent terms is the sum of their variances; then take the root"),
    Question("2. where the trained output position 1 looks", _equal(lambda o: int(np.argmax(o["after"][1])), 0),
             "read row 1 of the heat map after training (rows and columns count from 0)", needs=("after",)),
    Question("3. the softmax's gradient for weights [0.5, 0.5], g = [1, 0]", _equal(_softmax_part, 1e-6),
             "section 4's rule dx = out * (g - sum(g * out)): work out sum(g * out) first"),
)

LESSONS = {"01": LESSON_01, "02": LESSON_02, "03": LESSON_03, "04": LESSON_04, "05": LESSON_05, "06": LESSON_06,
           "07": LESSON_07, "08": LESSON_08, "09": LESSON_09,
           "10": LESSON_10, "11": LESSON_11}
