"""Random tape programs against TensorFlow: hypothesis drew them once; TF's results are in a fixture.

``fixtures/make_tf_programs.py`` (run with TensorFlow) drew about 800 programs: float32 sources of 0-d, empty
and broadcasting shapes holding 0, -0, +-inf, NaN, huge and tiny values, then a chain of ops from the
table. It recorded TF's result and the gradient of its sum with respect to each source. Here the same
programs run with ``tf = tapelab`` through the generator's own interpreter, and everything must agree:
shapes, values (NaN where TF has NaN, infinities with their signs), and which gradients are ``None``.
float32 values are compared to 1e-4 relative (TF's Eigen kernels and numpy round transcendental
functions differently in the last bits; a wrong rule is off by far more).
"""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import tapelab

FIXTURES = Path(__file__).parents[1] / "fixtures"
FIXTURE = json.loads((FIXTURES / "tf_programs.json").read_text(encoding="utf-8"))
_spec = importlib.util.spec_from_file_location("make_tf_programs", FIXTURES / "make_tf_programs.py")
GENERATOR = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GENERATOR)
RTOL, ATOL = 1e-4, 1e-5


def _array(values):
    return np.array([float(v) for v in values], dtype=np.float64)


def _close(expected, actual):
    """Equal where NaN and infinities are, close elsewhere (relative to the larger of the two)."""
    e, a = _array(expected), _array(actual)
    if e.shape != a.shape:
        return False
    special = ~np.isfinite(e) | ~np.isfinite(a)
    if not np.array_equal(np.isnan(e), np.isnan(a)) or not np.array_equal(e[special & ~np.isnan(e)],
                                                                             a[special & ~np.isnan(a)]):
        return False
    finite = ~special
    scale = np.maximum(np.abs(e[finite]), np.abs(a[finite]))
    return bool(np.all(np.abs(e[finite] - a[finite]) <= ATOL + RTOL * scale))


def _describe(program):
    sources = ", ".join(f"{tuple(s['shape'])} {s['values']}" for s in program["sources"])
    steps = "; ".join(f"%{i + len(program['sources'])} = {s['op']}({', '.join(f'%{a}' for a in s['args'])}"
                      f"{''.join(f', {k}={v}' for k, v in s.get('params', {}).items())})"
                      for i, s in enumerate(program["steps"]))
    return f"sources {sources}\n  {steps}"


@pytest.mark.parametrize("index", range(len(FIXTURE["programs"])))
def test_random_program_matches_tensorflow(index):
    case = FIXTURE["programs"][index]
    program, expected = case["program"], case["tf"]
    got = GENERATOR.run_program(tapelab, np, program)
    where = _describe(program)
    if "error" in expected or "error" in got:
        assert got.get("error") == expected.get("error"), f"{where}\nTF {expected}\ntapelab {got}"
        return
    assert got["shape"] == expected["shape"], f"{where}\nshape: TF {expected['shape']}, tapelab {got['shape']}"
    assert _close(expected["value"], got["value"]), f"{where}\nvalue: TF {expected['value']}\ntapelab {got['value']}"
    for k, (e, g) in enumerate(zip(expected["grads"], got["grads"])):
        assert (e is None) == (g is None), f"{where}\ngradient {k}: TF {e}, tapelab {g}"
        if e is not None:
            assert _close(e, g), f"{where}\ngradient {k}: TF {e}\ntapelab {g}"


def test_the_programs_reach_the_edges():
    """The drawn programs cover what they are for: every op, 0-d and empty shapes, inf and NaN inputs."""
    programs = [c["program"] for c in FIXTURE["programs"]]
    used = {s["op"] for p in programs for s in p["steps"]}
    everything = set(GENERATOR.UNARY) | set(GENERATOR.BINARY) | set(GENERATOR.REDUCE) | set(GENERATOR.ALONG)
    assert used == everything, everything - used
    shapes = {tuple(s["shape"]) for p in programs for s in p["sources"]}
    assert {(), (0,), (2, 0)} <= shapes
    values = {v for p in programs for s in p["sources"] for v in s["values"] if isinstance(v, str)}
    assert values == {"inf", "-inf", "nan"}
