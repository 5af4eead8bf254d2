"""What the tests against Keras's fixtures share: load a ``fixtures/keras_*.json``, run one of its programs with
tapelab and compare with what Keras gave (the same structure and values; floats to ``rel``/``abs``; an error of
the same type), and check the fixture still holds the generator's programs."""

import json
import math
from pathlib import Path

import numpy as np

import tapelab as tl
from tests.fixtures import keras_programs

FIXTURES = Path(__file__).parents[1] / "fixtures"


def cases(name):
    """``{id: case}`` of ``fixtures/<name>.json``."""
    fixture = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return {case["id"]: case for case in fixture["cases"]}


def assert_same(expected, actual, where="result", rel=1e-4, abs=1e-5):  # noqa: A002 (math.isclose's words)
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and sorted(actual) == sorted(expected), (where, sorted(actual))
        for key in expected:
            assert_same(expected[key], actual[key], f"{where}[{key!r}]", rel, abs)
    elif isinstance(expected, list):
        assert isinstance(actual, (list, tuple)) and len(actual) == len(expected), (where, actual)
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_same(e, a, f"{where}[{i}]", rel, abs)
    elif isinstance(expected, float):
        assert math.isclose(expected, actual, rel_tol=rel, abs_tol=abs), (where, expected, actual)
    else:
        assert expected == actual, (where, expected, actual)


def check(case, generator, refused=None, **tolerance):
    """Run ``case`` (from ``generator``'s fixture) with tapelab and compare it with Keras's; ``refused``: the error
    type tapelab raises on purpose where Keras computes."""
    tl.keras.layers.clear_session()
    tl.random.set_seed(0)
    got = keras_programs.run(case["code"], tl, tl.keras, np, generator.HELPERS)
    expected = case["keras"]
    if refused is not None:
        assert expected["kind"] == "value", "Keras raises here now: drop the case from the refused ones"
        assert got["kind"] == "error" and got["type"] == refused, got
    elif expected["kind"] == "error":
        assert got["kind"] == "error", f"Keras raised {expected['type']}; tapelab returned {got.get('result')}"
        assert got["type"] == expected["type"], got
    else:
        assert got["kind"] == "value", got
        assert_same(expected["result"], got["result"], **tolerance)


def assert_current(cases_by_id, generator):
    """The fixture holds the generator's programs, in order (else: run the generator again)."""
    assert [(c["id"], c["code"]) for c in cases_by_id.values()] == [
        (name, generator.textwrap.dedent(code).strip("\n")) for name, code in generator.PROGRAMS]
