"""The engine's modules import one way: no module imports, at any depth or inside a function, a module that
imports it back; and none imports tapelab.viz (tapes print and draw through ``recording.display``)."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tapelab"
ENGINE = ["errors", "learner", "dtypes", "nest", "recording", "tensor", "primitives", "numerics", "tape", "ops",
          "math", "nn", "linalg", "random", "function", "custom", "gradcheck", "debugging", "config", "unsupported"]


def imports_of(module):
    """The tapelab modules ``module`` imports anywhere in its file (top level and inside functions)."""
    found = set()
    for node in ast.walk(ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tapelab"):
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found.update(n.split(".")[1] for n in names if n.startswith("tapelab.") and n.count(".") >= 1)
    return found - {module}


def test_engine_modules_import_one_way():
    graph = {m: imports_of(m) & set(ENGINE) for m in ENGINE}
    order, done, path = [], set(), []

    def visit(m):
        if m in path:
            raise AssertionError(f"import cycle: {' -> '.join(path[path.index(m):] + [m])}")
        if m not in done:
            path.append(m)
            for dep in sorted(graph[m]):
                visit(dep)
            path.pop()
            done.add(m)
            order.append(m)

    for m in ENGINE:
        visit(m)
    assert order.index("recording") < order.index("tensor") < order.index("tape") < order.index("ops")


def test_the_engine_never_imports_viz():
    for m in ENGINE:
        assert "viz" not in imports_of(m), f"tapelab/{m}.py imports tapelab.viz: go through recording.display"
