"""Test-wide settings (tests/ and the nbval-checked lessons in notebooks/).

The lessons' stored outputs were made with the shipped 10,000-digit MNIST sample. A developer who
downloaded the full set would get other numbers, so tests (and the notebook kernels they start,
which inherit this environment) never look in the user's cache. Likewise a developer's TAPELAB_DOT (which
Graphviz draws) is not the tests': those that need one set it themselves.
"""

import atexit
import os
import shutil
import tempfile

import numpy as np
import pytest

os.environ.pop("TAPELAB_MNIST", None)
os.environ.pop("TAPELAB_DOT", None)
os.environ["TAPELAB_DATA_DIR"] = _data_dir = tempfile.mkdtemp(prefix="tapelab-test-data-")
atexit.register(shutil.rmtree, _data_dir, ignore_errors=True)  # gone when pytest exits


@pytest.fixture(autouse=True)
def _doctest_names(request, doctest_namespace, monkeypatch):
    """Docstring examples (run by --doctest-modules) write `tl` and `np`, as the docs do, and run in a
    temporary directory so an example that saves a file leaves nothing behind."""
    import tapelab

    doctest_namespace.update(tl=tapelab, np=np)
    if type(request.node).__name__ == "DoctestItem":
        monkeypatch.chdir(request.getfixturevalue("tmp_path"))
