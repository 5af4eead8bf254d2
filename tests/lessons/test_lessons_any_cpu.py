"""The lessons' stored outputs hold on any CPU: nbval re-runs every lesson with other numeric kernels forced.

float32 sums come out differently in their last bits depending on the matrix-multiply kernel OpenBLAS picks
for the CPU, on how many threads share the work, and on which SIMD loops numpy dispatches to; five epochs of
training turn that into a different last digit of an accuracy. A stored output that shows such digits passes
only on the machine that made it. The normal test run compares the lessons with this machine's own kernels;
this test runs them again with OpenBLAS forced to its generic kernel for the architecture (x86-64: Prescott,
arm64: ARMV8), another number of BLAS threads, and numpy's SIMD targets above its baseline switched off, and
nbval compares every output with the stored one, under the same rules.
"""

import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
GENERIC_KERNEL = {"x86_64": "Prescott", "amd64": "Prescott", "aarch64": "ARMV8", "arm64": "ARMV8"}


def other_kernels():
    """Environment variables that make numpy and OpenBLAS compute with other kernels than they would here."""
    machine = platform.machine().lower()
    if machine not in GENERIC_KERNEL:
        pytest.skip(f"no generic OpenBLAS kernel known for {machine}")
    threads = os.environ.get("OPENBLAS_NUM_THREADS") or "1"  # (import tapelab sets one BLAS thread by itself)
    dispatch = getattr(np._core._multiarray_umath, "__cpu_dispatch__", [])  # numpy's SIMD targets above baseline
    return {"OPENBLAS_CORETYPE": GENERIC_KERNEL[machine],
            "OPENBLAS_NUM_THREADS": "2" if threads == "1" else "1",
            "NPY_DISABLE_CPU_FEATURES": " ".join(dispatch)}


def test_every_lesson_gives_its_stored_outputs_with_other_numeric_kernels():
    forced = other_kernels()
    cmd = [sys.executable, "-m", "pytest", "-o", "addopts=", "-p", "no:cacheprovider", "-q", "--nbval",
           "--nbval-current-env", f"--nbval-sanitize-with={ROOT / 'notebooks' / 'sanitize.cfg'}",
           str(ROOT / "notebooks")]
    result = subprocess.run(cmd, cwd=ROOT, env=dict(os.environ, **forced), capture_output=True, text=True,
                            timeout=1800)
    assert result.returncode == 0, (
        f"with {forced} the lessons' outputs differ from the stored ones (or a lesson failed). Print what is stable, "
        f"or compare with a tolerance, in any cell whose output depends on float32 rounding:\n{result.stdout[-6000:]}")
