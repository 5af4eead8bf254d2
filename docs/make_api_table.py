"""Write ``docs/tf_api.md``: every public name of tapelab's TF-shaped modules, against TensorFlow 2.21's.

    python docs/make_api_table.py            # rewrite docs/tf_api.md
    python docs/make_api_table.py --check    # exit 1 if the file is out of date (tests/api/test_tf_names.py does this)

TensorFlow's names come from ``tests/fixtures/tf_contract.json`` (recorded from real TensorFlow by
``tests/fixtures/make_tf_contract.py``); TensorFlow itself is not needed here.
"""

import importlib
import inspect
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "tf_api.md"

# tapelab module -> the TF namespace it mirrors
MIRRORS = {
    "tapelab": "tf", "tapelab.math": "tf.math", "tapelab.nn": "tf.nn", "tapelab.linalg": "tf.linalg",
    "tapelab.random": "tf.random", "tapelab.config": "tf.config", "tapelab.engine.errors": "tf.errors",
    "tapelab.debugging": "tf.debugging", "tapelab.engine.dtypes": "tf.dtypes", "tapelab.keras": "tf.keras",
    "tapelab.keras.layers": "tf.keras.layers", "tapelab.keras.losses": "tf.keras.losses",
    "tapelab.keras.optimizers": "tf.keras.optimizers",
    "tapelab.keras.metrics": "tf.keras.metrics", "tapelab.keras.models": "tf.keras.models",
    "tapelab.keras.activations": "tf.keras.activations", "tapelab.keras.initializers": "tf.keras.initializers",
    "tapelab.keras.utils": "tf.keras.utils", "tapelab.keras.backend": "tf.keras.backend", "tapelab.data": "tf.data",
    "tapelab.keras.callbacks": "tf.keras.callbacks", "tapelab.keras.regularizers": "tf.keras.regularizers",
    "tapelab.keras.random": "tf.keras.random",
}

# public names TF does not have (or has elsewhere): what each is for
TAPELAB_ONLY = {
    ("tapelab", "viz"): "the tape drawn (Graphviz) and stepped backward (the stepper): what tapelab is for",
    ("tapelab", "plots"): "loss curves and progress bars for the lessons (matplotlib, tqdm)",
    ("tapelab", "check_gradients"): "compares the tape's gradients with finite differences",
    ("tapelab", "GradientCheck"): "what check_gradients returns",
    ("tapelab", "OPS"): "the table of primitives: each op's forward, gradient rules and formulas",
    ("tapelab", "TracingError"): "a traced tensor used as a Python value (TF: OperatorNotAllowedInGraphError)",
    ("tapelab", "UnsupportedError"): "what tapelab leaves to TensorFlow raises (a NotImplementedError)",
    ("tapelab", "InvalidArgumentError"): "TF's tf.errors.InvalidArgumentError, also at the top level",
    ("tapelab", "ConcreteFunction"): "TF's tf.types.experimental.ConcreteFunction: one traced signature",
    ("tapelab", "Function"): "TF's tf.types.experimental.PolymorphicFunction: what tl.function returns",
    ("tapelab", "datasets"): "the MNIST sample and small datasets of the lessons (TF: tf.keras.datasets)",
    ("tapelab", "layers"): "TF's tf.keras.layers, also at the top level",
    ("tapelab.engine.errors", "UnsupportedError"): "what tapelab leaves to TensorFlow raises (a NotImplementedError)",
    ("tapelab.engine.errors", "UnsupportedAttributeError"): "UnsupportedError for a missing attribute (hasattr: False)",
    ("tapelab.engine.errors", "LeakedTensorError"): "a traced graph's tensor used outside it (TF: a TypeError)",
    ("tapelab.keras.metrics", "accuracy"): "the fraction of argmax predictions that match the labels (Keras 2 had it)",
    ("tapelab.keras.metrics", "evaluate_accuracy"): "a model's accuracy on a dataset, in batches (the lessons use it)",
    ("tapelab.keras.losses", "mean_squared_error"): "Keras 2's name for MSE (Keras 3: keras.losses.MSE)",
    ("tapelab.keras", "saving"): "Keras 3's keras.saving (import keras), whose register_keras_serializable TF has as "
                                 "tf.keras.utils.register_keras_serializable",
    ("tapelab.keras.callbacks", "LiveLossPlot"): "fit(plot=True)'s live plot of the loss, as a callback",
    ("tapelab.keras.callbacks", "LiveFlowPlot"): "fit(flow=True)'s live plot of each layer's gradient norm, as a "
                                                 "callback",
}

# names TF has whose arguments tapelab spells differently: why
ARGUMENTS_DIFFER = {
    ("tapelab", "DType"): "TF's constructor takes an internal type number; tapelab's the name (learners use "
                          "tl.float32)",
    ("tapelab.engine.dtypes", "DType"): "as tapelab.DType",
    ("tapelab.data", "Dataset"): "TF's constructor takes an internal variant tensor; make datasets with "
                                 "from_tensor_slices, from_generator or range, as in TF",
}


def tf_names():
    fixture = json.loads((ROOT / "tests" / "fixtures" / "tf_contract.json").read_text(encoding="utf-8"))
    return fixture["names"], fixture["tensorflow_version"]


def kind_of(obj):
    if inspect.ismodule(obj) or type(obj).__name__ == "SimpleNamespace" or type(obj).__name__ == "_Experimental":
        return "module"
    if inspect.isclass(obj):
        return "class"
    return "function" if callable(obj) else "value"


def is_left_to_tensorflow(obj):
    return type(obj).__name__ == "Unsupported"


def public(module_name):
    module = importlib.import_module(module_name)
    return [(name, getattr(module, name)) for name in module.__all__]


def summary(obj):
    doc = inspect.getdoc(obj) if not is_left_to_tensorflow(obj) else None
    if obj is None or doc is None or inspect.ismodule(obj) and not doc:
        return ""
    line = doc.strip().split("\n\n")[0].replace("\n", " ")
    return line.replace("|", "\\|")


def rows():
    """``(module, tf path, name, status, note)`` for every public name of the mirrored modules."""
    names, _ = tf_names()
    out = []
    for module_name, tf_path in MIRRORS.items():
        for name, obj in public(module_name):
            if is_left_to_tensorflow(obj):
                status, note = "left to TensorFlow", repr(obj).strip("<>").split(": left to")[0]
            elif (module_name, name) in TAPELAB_ONLY:
                status, note = "tapelab's own", TAPELAB_ONLY[module_name, name]
            elif name in names[tf_path]:
                status, note = "implemented", summary(obj)
            else:
                status, note = "not in TensorFlow", summary(obj)
            out.append((module_name, tf_path, name, status, note))
    return out


def table():
    names, version = tf_names()
    lines = [
        "# tapelab's TensorFlow API",
        "",
        "Generated by `python docs/make_api_table.py` from tapelab's modules and the names of TensorFlow "
        f"{version} recorded in `tests/fixtures/tf_contract.json`; `tests/api/test_tf_names.py` checks that this file "
        "is current and that every name tapelab has means what TensorFlow's does (same kind, same arguments).",
        "",
        "- **implemented**: runs as in TensorFlow (values, dtypes and errors are checked against TF in "
        "`tests/api/test_tf_contract.py` and `tests/api/test_tf_programs.py`);",
        "- **left to TensorFlow**: tapelab teaches autodiff and does not implement it; using it raises "
        "`tapelab.UnsupportedError`, which says so and gives the tapelab way where there is one;",
        "- **tapelab's own**: teaching tools TensorFlow does not have (or has under another name).",
        "",
        "Differences tapelab keeps on purpose are listed in [differences.md](differences.md).",
        "",
    ]
    all_rows = rows()
    for module_name, tf_path in MIRRORS.items():
        mine = [r for r in all_rows if r[0] == module_name]
        implemented = sum(r[3] == "implemented" for r in mine)
        lines += [f"## `{tf_path}` (tapelab: `{module_name}`)", "",
                  f"{implemented} of TensorFlow's {len(names[tf_path])} public names in `{tf_path}` are implemented.",
                  "", "| name | status | note |", "|---|---|---|"]
        lines += [f"| `{tf_path}.{name}` | {status} | {note} |" for _, _, name, status, note in mine]
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    sys.path.insert(0, str(ROOT))
    text = table()
    if "--check" in argv:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            sys.exit("docs/tf_api.md is out of date: run python docs/make_api_table.py")
        return
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
