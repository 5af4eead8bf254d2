"""How much a picture may hold, and where viz.js is: what the DOT writer, the renderer and the browser all read.

A leaf (it imports nothing of tapelab's), so :mod:`tapelab.viz.render` and :mod:`tapelab.viz.browser` share
these without importing each other: render imports browser (only when a picture is drawn there), never back.
"""

import pathlib
import re

VIZJS = pathlib.Path(__file__).parent / "vizjs" / "viz.js"  # Graphviz in WebAssembly (scripts/fetch_vizjs.py)
MAX_OPS = 100  # default cap on drawn op nodes (collapsed scopes count as one)
# past this many nodes viz.js would keep the page blank for many seconds (measured: benchmarks/README.md)
MAX_NODES = 10_000
NODE = re.compile(r'^\s*"[^"]*" \[', re.M)  # a node statement of DOT text (an edge's line has "a" -> "b")


def check_size(source, what="draw"):
    """Refuse DOT text with more nodes than the browser lays out in seconds, saying what to draw instead (here,
    not in :mod:`tapelab.viz.browser`: checking needs no widget library)."""
    nodes = len(NODE.findall(source))
    if nodes > MAX_NODES:
        raise ValueError(
            f"{what}: this picture has about {nodes:,} nodes, too many to lay out in the browser (Graphviz there "
            f"takes many seconds past {MAX_NODES:,}). Draw fewer ops: a smaller max_ops (the default, {MAX_OPS}, "
            f"draws only the last {MAX_OPS} ops, those nearest the target), or collapse=True (each name scope as one "
            "box); or install Graphviz for the kernel (apt-get install graphviz, or pip install graphviz-pure). "
            "print(tape) lists every op."
        )
