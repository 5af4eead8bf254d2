"""Messages name tapelab's functions the way the learner's code imported it (tf.cast after `import tapelab as tf`)."""

import subprocess
import sys
import textwrap

import pytest

import tapelab
from tapelab.engine.learner import package_alias, spell

MIXED_DTYPES = "x = tl_name.constant(1.5) + tl_name.constant(2)"


def _error_in(namespace, code):
    with pytest.raises(Exception) as info:
        exec(compile(code, "<learner>", "exec"), namespace)
    return str(info.value)


@pytest.mark.parametrize("alias", ["tf", "tl", "tapelab"])
def test_a_message_uses_the_learners_alias(alias):
    message = _error_in({alias: tapelab}, MIXED_DTYPES.replace("tl_name", alias))
    assert f"e.g. {alias}.cast(x, {alias}.float32)" in message


def _script_error(tmp_path, code):
    script = tmp_path / "script.py"
    script.write_text(code)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert result.returncode != 0, result.stdout
    return result.stderr


def test_a_script_run_by_python_sees_its_alias(tmp_path):
    assert "tf.cast(x, tf.float32)" in _script_error(tmp_path, "import tapelab as tf\n" + MIXED_DTYPES.replace(
        "tl_name", "tf"))


def test_without_a_name_for_the_package_the_message_is_neutral(tmp_path):
    stderr = _script_error(tmp_path, "from tapelab import constant\nconstant(1.5) + constant(2)\n")
    assert "e.g. cast(x, float32)." in stderr and "tl." not in stderr


def test_a_function_is_spelled_by_its_module_and_its_locals_are_never_snapshotted():
    code = textwrap.dedent("""
        import weakref
        def train():
            x = tf.Variable(1.0)
            alive = weakref.ref(x)
            try:
                tf.exp(tf.constant(1))
            except tf.InvalidArgumentError as err:
                message = str(err)
            del x  # reading the frame's f_locals (CPython < 3.13) would have kept x alive in a snapshot
            return message, alive() is None
        message, freed = train()
    """)
    namespace = {"tf": tapelab}
    exec(compile(code, "<learner>", "exec"), namespace)
    assert "tf.cast(x, tf.float32)" in namespace["message"] and namespace["freed"]


def test_warnings_and_runtime_errors_are_spelled_too():
    namespace = {"tf": tapelab}
    message = _error_in(namespace, "tf.gradients(tf.constant(1.0), tf.constant(1.0))")
    assert message.startswith("tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape")
    code = "x = tf.Variable(3)\nwith tf.GradientTape() as t:\n    y = x * 2\nt.gradient(y, x)"
    with pytest.warns(UserWarning, match=r"tf\.cast\(x, tf\.float32\)"):
        exec(compile(code, "<learner>", "exec"), namespace)


def test_spell_leaves_other_text_alone():
    assert spell("no package names here") == "no package names here"
    assert package_alias() == "tapelab"  # this test module imports it under its own name

