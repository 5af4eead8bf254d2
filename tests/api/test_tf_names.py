"""Every public name of tapelab's TF-shaped modules exists in TensorFlow 2.21 with the same meaning.

"The same meaning" as far as names can tell: the same kind (module, class, function, value) and, for a
function or a class, arguments TF has too, the positional ones in TF's order. TF's names and signatures
are recorded in ``fixtures/tf_contract.json``; what they do is checked against TF by
``test_tf_contract.py`` and ``test_tf_programs.py``. ``docs/tf_api.md`` lists every name with its status.
"""

import importlib.util
import inspect
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("make_api_table", ROOT / "docs" / "make_api_table.py")
API = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(API)
TF_NAMES, TF_VERSION = API.tf_names()

PARAMS = [(m, name) for m in API.MIRRORS for name, _ in API.public(m)]


def _parameters(obj):
    try:
        params = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return None
    return [p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != "self"]


@pytest.mark.parametrize("module_name, name", PARAMS, ids=[f"{m}.{n}" for m, n in PARAMS])
def test_public_name_exists_in_tensorflow_with_the_same_meaning(module_name, name):
    obj = getattr(importlib.import_module(module_name), name)
    if (module_name, name) in API.TAPELAB_ONLY:
        return  # (listed with its reason in docs/tf_api.md)
    tf_path = API.MIRRORS[module_name]
    tf = TF_NAMES[tf_path].get(name)
    assert tf is not None, f"{module_name}.{name} has no TF counterpart {tf_path}.{name}: rename it, or list it in " \
                           "docs/make_api_table.py's TAPELAB_ONLY with the reason"
    if API.is_left_to_tensorflow(obj):
        return  # a stand-in: any use raises UnsupportedError (tested in test_tf_api.py)
    kind = API.kind_of(obj)
    if (module_name, name) in API.ARGUMENTS_DIFFER:
        return
    assert kind == tf["kind"] or {kind, tf["kind"]} == {"class", "function"}, (
        f"{module_name}.{name} is a {kind}, TF's {tf_path}.{name} a {tf['kind']}")
    if kind in ("function", "class") and tf["params"] and not {"args", "kwargs"} & set(tf["params"]):
        mine = _parameters(obj.__init__ if inspect.isclass(obj) else obj)
        if mine is None:
            return
        theirs = tf["params"]
        missing = [p.name for p in mine if p.name not in theirs]
        assert not missing, f"{module_name}.{name}: arguments {missing} are not TF's ({theirs})"
        positional = [p.name for p in mine if p.kind == p.POSITIONAL_OR_KEYWORD and p.default is p.empty]
        assert positional == theirs[:len(positional)], (
            f"{module_name}.{name}: required arguments {positional} are not TF's first ones {theirs}")


def test_the_api_table_in_the_docs_is_current():
    text = (ROOT / "docs" / "tf_api.md").read_text(encoding="utf-8")
    assert text == API.table(), "docs/tf_api.md is out of date: run python docs/make_api_table.py"
    for module_name, tf_path in API.MIRRORS.items():
        for name, _ in API.public(module_name):
            assert f"| `{tf_path}.{name}` |" in text


def test_tapelab_only_names_are_public_and_not_in_tensorflow():
    for (module_name, name), reason in API.TAPELAB_ONLY.items():
        assert name in importlib.import_module(module_name).__all__, (module_name, name)
        assert reason
