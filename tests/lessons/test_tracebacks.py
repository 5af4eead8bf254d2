"""In IPython and Jupyter a tapelab error shows the learner's lines and the message, not tapelab's own frames
(tapelab/engine/learner.py). The kernel tests run cells in a real kernel, as Jupyter does, and read the error output's
traceback; everything else about tracebacks (the learner's own errors, scripts, %debug) stays as it was."""

import contextlib
import re
import subprocess
import sys

import numpy as np
import pytest

import tapelab as tl
from tapelab.lessons.tracebacks import trim_traceback

MATMUL = "tf.matmul(tf.ones((3, 2)), tf.ones((4, 3)))"
MESSAGE = "InvalidArgumentError: matmul: inner dimensions must match, but a has shape (3, 2) and b has shape (4, 3)"
NOTE = "[... 1 frame inside tapelab hidden: %tb or %xmode Verbose shows every frame]"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run_cells(*cells):
    """Run ``cells`` in a new python3 kernel; per cell, its output as text: each error's traceback (the list
    Jupyter shows, colour codes stripped) and each stream, one after the other."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell) for cell in cells])
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True).execute()
    texts = []
    for cell in nb.cells:
        parts = ["\n".join(o.traceback) if o.output_type == "error" else o.get("text", "") for o in cell.outputs]
        texts.append(_ANSI.sub("", "\n".join(parts)))
    return texts


def frame_files(tb):
    files = []
    while tb is not None:
        files.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    return files


def raised(fn, *args):
    try:
        fn(*args)
    except Exception as err:
        return err
    raise AssertionError("nothing raised")


# --- the trimming, on real tracebacks ---

def test_trimming_a_tapelab_error_leaves_the_callers_frames():
    err = raised(tl.matmul, tl.ones((3, 2)), tl.ones((4, 3)))
    shown, hidden = trim_traceback(err.__traceback__)
    ours = [f for f in frame_files(err.__traceback__) if f.startswith(tl.engine.learner.HOME)]
    assert frame_files(shown) == [__file__] and hidden == len(ours) > 0  # (raised() is this file's)
    assert frame_files(err.__traceback__)[-1].endswith("linalg.py")  # the exception keeps its own traceback


def test_an_error_in_the_learners_code_is_not_trimmed():
    err = raised(lambda: 1 / 0)
    assert trim_traceback(err.__traceback__) == (err.__traceback__, 0)
    assert trim_traceback(None) == (None, 0)


def test_an_error_in_a_function_tapelab_calls_back_keeps_every_frame():
    def learners(x):
        return 1 / 0

    err = raised(tl.function(learners), tl.ones(2))
    assert trim_traceback(err.__traceback__) == (err.__traceback__, 0)


def test_a_tapelab_error_in_a_function_tapelab_calls_back_keeps_that_function():
    def learners(x):
        return tl.matmul(x, tl.ones((4, 3)))

    err = raised(tl.function(learners), tl.ones((3, 2)))
    shown, hidden = trim_traceback(err.__traceback__)
    tb = shown
    while tb.tb_next is not None:
        tb = tb.tb_next
    assert tb.tb_frame.f_code is learners.__code__ and hidden >= 1
    assert any(f.endswith("function.py") for f in frame_files(shown))  # (the frames on the way stay: it called it)


def test_library_code_tapelab_calls_is_hidden_with_it_but_not_library_code_the_learner_calls():
    x = tl.Variable([0.0, 1.0], name="x")
    with tl.debugging.enable_check_numerics(), np.errstate(divide="ignore", invalid="ignore"):
        with tl.GradientTape():
            with tl.GradientTape() as inner:
                y = tl.reduce_sum(tl.sqrt(x) * 0.0 + x)
            err = raised(inner.gradient, y, x)  # numpy's errstate wraps tapelab's backward pass
    assert any("numpy" in f for f in frame_files(err.__traceback__))
    assert frame_files(trim_traceback(err.__traceback__)[0]) == [__file__]
    assert trim_traceback(err.__cause__.__traceback__)[0] is None  # (raised and caught inside tapelab)

    def exit_stack():
        with contextlib.ExitStack() as stack:  # contextlib (the standard library) calls tl.matmul
            stack.callback(tl.matmul, tl.ones((3, 2)), tl.ones((4, 3)))

    shown, hidden = trim_traceback(raised(exit_stack).__traceback__)
    assert frame_files(shown)[-1] == contextlib.__file__ and hidden == 1


# --- in a real kernel ---

def test_a_tapelab_error_shows_the_learners_line_and_the_message():
    outputs = run_cells("import tapelab as tf", MATMUL, "%xmode Plain", MATMUL)
    for text in outputs[1], outputs[3]:
        assert MATMUL in text and MESSAGE in text and "maybe one of them needs tf.transpose()" in text
        assert "tapelab/" not in text and "raise" not in text
        assert text.count(NOTE) == 1 and text.index(MATMUL) < text.index(NOTE) < text.index(MESSAGE)


def test_the_full_traceback_stays_one_command_away():
    outputs = run_cells("import tapelab as tf", MATMUL, "%tb", "%xmode --show", MATMUL,
                        "%xmode --hide\n%xmode Verbose", MATMUL)
    for text in outputs[2], outputs[4], outputs[6]:
        assert MATMUL in text and "tapelab/linalg.py" in text and "raise InvalidArgumentError(" in text
        assert MESSAGE in text and "hidden" not in text


LEARNER_ERRORS = [
    "1 / 0",
    "def f():\n    return g()\ndef g():\n    return undefined_name\nf()",
    "np.ones(3) @ np.ones(4)",
    "x = (1,",
    "if True:\nx = 1",
    "compile('x = (', '<s>', 'exec')",
    "%timeit -n",
    "import warnings\nwarnings.warn('careful')",
    "raise KeyboardInterrupt",
    "raise SystemExit(3)",
]


def test_an_error_in_the_learners_own_code_looks_as_without_tapelab():
    """The same cells in a kernel that never imported tapelab: the same outputs, frame for frame (KeyboardInterrupt
    and SystemExit are not Exceptions: the handler never sees them)."""
    with_tapelab = run_cells("import numpy as np\nimport tapelab as tf", *LEARNER_ERRORS)
    without = run_cells("import numpy as np", *LEARNER_ERRORS)
    cell_file = re.compile(r"ipykernel_\d+")  # (a warning names the kernel's file for the cell)
    assert [cell_file.sub("", t) for t in with_tapelab] == [cell_file.sub("", t) for t in without]
    assert "Traceback" in with_tapelab[2] and "SyntaxError" in with_tapelab[4] and "careful" in with_tapelab[8]


def test_errors_in_code_tapelab_calls_back_keep_the_learners_frames():
    traced = "@tf.function\ndef g(x):\n    return 1 / 0\ng(tf.ones(2))"
    layer = ("class Mine(tf.keras.layers.Layer):\n    def call(self, x):\n"
             "        return tf.matmul(x, tf.ones((4, 3)))\n"
             "model = tf.keras.Sequential([Mine()])\nmodel.compile(optimizer='sgd', loss='mse')\n"
             "model.fit(tf.ones((8, 2)), tf.ones((8, 3)), epochs=1, verbose=0)")
    warned = "x = tf.Variable(1.0)\nwith tf.GradientTape() as tape:\n    pass\nprint(tape.gradient(x * 2, x))"
    outputs = run_cells("import tapelab as tf", traced, layer, warned)
    assert "----> 3     return 1 / 0" in outputs[1] and "tapelab/engine/function.py" in outputs[1]
    assert "hidden" not in outputs[1] and "ZeroDivisionError: division by zero" in outputs[1]
    assert "----> 3         return tf.matmul(x, tf.ones((4, 3)))" in outputs[2] and NOTE in outputs[2]
    assert "tapelab/linalg.py" not in outputs[2] and "InvalidArgumentError: matmul" in outputs[2]
    # a warning still points at the learner's line
    assert "UserWarning: gradient(): the target" in outputs[3] and "  print(tape.gradient(x * 2, x))" in outputs[3]


def test_a_chained_tapelab_error_hides_tapelab_frames_in_each_part():
    cell = ("import numpy as np\nx = tf.Variable([0.0, 1.0], name='x')\n"
            "with tf.debugging.enable_check_numerics(), np.errstate(divide='ignore', invalid='ignore'):\n"
            "    with tf.GradientTape():\n        with tf.GradientTape() as inner:\n"
            "            y = tf.reduce_sum(tf.sqrt(x) * 0.0 + x)\n        inner.gradient(y, x)")
    (text,) = run_cells("import tapelab as tf", cell)[1:]
    cause = "InvalidArgumentError: check_numerics: divide produced NaN in its output (forward pass)"
    main = "InvalidArgumentError: check_numerics: the gradient of sqrt for its input 0 contains NaN or Inf"
    assert text.index(cause) < text.index("direct cause") < text.index("inner.gradient(y, x)") < text.index(main)
    assert "tapelab/" not in text and "numpy/" not in text and text.count("inside tapelab hidden") == 1


def test_debugging_after_the_error_goes_into_tapelab():
    """%debug, and %pdb's post-mortem, start in the frame that raised: tapelab's, as without the trimming."""
    scripted = ("import io\nfrom IPython.core.debugger import Pdb\nout = io.StringIO()\n"
                "get_ipython().InteractiveTB.pdb = Pdb(stdin=io.StringIO('where\\nquit\\n'), stdout=out)")
    outputs = run_cells("import tapelab as tf", MATMUL, scripted, "%debug", "print(out.getvalue())",
                        scripted + "\n%pdb on", MATMUL, "%pdb off\nprint(out.getvalue())")
    for debugged in outputs[4], outputs[7]:
        assert "> /" in debugged and "tapelab/linalg.py" in debugged.split("> /", 1)[1].split("\n")[0]
        assert "raise InvalidArgumentError(" in debugged
    assert NOTE in outputs[6]


def test_the_handler_is_installed_once_and_never_over_another():
    ours = run_cells("import tapelab as tf\nhandler = get_ipython().CustomTB",
                     "import importlib\nimport tapelab\nimportlib.reload(tapelab)\n"
                     "print(get_ipython().CustomTB is handler, get_ipython().custom_exceptions)", MATMUL)
    assert ours[1] == "True (<class 'Exception'>,)\n" and ours[2].count(NOTE) == 1
    theirs = run_cells("get_ipython().set_custom_exc((ValueError,), lambda *args, **kwargs: print('theirs'))",
                       "import tapelab as tf", MATMUL)
    assert theirs[2] == "theirs\n"


def test_a_failure_inside_the_handler_shows_ipythons_own_traceback():
    outputs = run_cells("import tapelab as tf\nimport tapelab.lessons.tracebacks\n"
                        "tapelab.lessons.tracebacks.learner_traceback = lambda *args: 1 / 0", MATMUL,
                        "print(get_ipython().custom_exceptions)")
    assert "tapelab/linalg.py" in outputs[1] and MESSAGE in outputs[1] and "Custom TB" not in outputs[1]
    assert outputs[2] == "(<class 'Exception'>,)\n"  # (IPython would have removed a handler that raised)


def test_a_script_keeps_pythons_traceback():
    code = f"import sys\nimport tapelab as tf\nprint('IPython' in sys.modules)\n{MATMUL}"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 1 and run.stdout == "False\n"
    assert "tapelab/linalg.py" in run.stderr and "raise InvalidArgumentError(" in run.stderr and MESSAGE in run.stderr
