"""tapelab's modules import one way. No module imports, at any depth or inside a function, a module that imports
it back; the engine (``tapelab/engine/``) imports nothing above it; and nothing below ``viz/`` and ``lessons/``
imports them (a tape prints and draws through ``recording.display``, which ``tapelab.viz`` fills in)."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "tapelab"


def module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(module):
    """The tapelab modules ``module`` imports anywhere in its file (top level and inside functions). A package's
    ``__init__`` is not counted as imported by its own modules (Python runs it first, whatever they import)."""
    found = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "tapelab":
            for alias in node.names:  # `from tapelab.keras import layers`: the module tapelab.keras.layers
                name = f"{node.module}.{alias.name}"
                found.add(name if name in MODULES else node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in MODULES)
    return {m for m in found if m in MODULES and m != module and not module.startswith(m + ".")} - {"tapelab"}


GRAPH = {m: imports_of(m) for m in MODULES}


OLD_PATHS = {"tapelab.exercises": "lessons"}  # (where lessons saved before the move import their self-check)


def layer(module):
    """``engine``, ``viz``, ``lessons``, ``keras`` or ``api`` (tapelab's TF namespaces at the top)."""
    if module in OLD_PATHS:
        return OLD_PATHS[module]
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ("engine", "viz", "lessons", "keras") else "api"


def test_no_module_imports_one_that_imports_it_back():
    done, path = set(), []

    def visit(m):
        if m in path:
            raise AssertionError(f"import cycle: {' -> '.join(path[path.index(m):] + [m])}")
        if m not in done:
            path.append(m)
            for dep in sorted(GRAPH[m]):
                visit(dep)
            path.pop()
            done.add(m)

    for m in MODULES:
        visit(m)


# which layers each layer may import (itself always): the engine nothing above it, the TF namespaces the engine,
# Keras both, the pictures the engine (they read its record), the lessons' helpers anything but the package root
ALLOWED = {
    "engine": {"engine"},
    "api": {"engine", "api", "keras"},  # (tl.data's Dataset is fed to fit(); tapelab/__init__ re-exports it all)
    "keras": {"engine", "api", "keras", "lessons"},  # (fit(plot=True) draws with tl.plots)
    "viz": {"engine", "viz"},
    "lessons": {"engine", "api", "keras", "viz", "lessons"},  # (FlowPlot draws what viz.flow measures)
}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != "tapelab"))
def test_each_layer_imports_only_the_layers_below_it(module):
    above = {dep for dep in GRAPH[module] if layer(dep) not in ALLOWED[layer(module)]}
    assert not above, f"{module} ({layer(module)}) imports {sorted(above)}: a layer imports only what lies below it"


def test_the_engine_never_imports_viz():
    for m in MODULES:
        if layer(m) == "engine":
            assert not {d for d in GRAPH[m] if layer(d) == "viz"}, f"{m} imports tapelab.viz: use recording.display"


def test_the_walk_sees_function_level_imports():  # (a late import inside a function is an import too)
    assert "tapelab.lessons.plots" in GRAPH["tapelab.keras.models"]
