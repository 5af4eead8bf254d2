"""``tl.config.threading``: how many threads numpy's BLAS (OpenBLAS, MKL) runs the matrix products on.

OpenBLAS starts one thread per core it sees, and its idle threads spin-wait for work. A lesson's products (a
batch of 32 digits through a 784 x 128 layer) are too small to gain from a second thread, and on a shared machine
the spinning threads fight for the CPUs: with one other busy process on 2 cores, an MNIST epoch took 6.5-7 s with
two BLAS threads and 0.6 s with one. Binder and JupyterHub pods see all of a node's cores and may use only one or
two of them. So ``import tapelab`` sets numpy's BLAS to one thread (with ``threadpoolctl``), unless you chose:

- ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` or ``MKL_NUM_THREADS`` set: tapelab leaves BLAS alone;
- ``TAPELAB_NUM_THREADS=N``: N threads (0: tapelab's default), whatever the others say;
- in a notebook, TensorFlow's own call (0 goes back to what tapelab picked at import):

    >>> tl.config.threading.set_intra_op_parallelism_threads(1)
    >>> tl.config.threading.get_intra_op_parallelism_threads()
    1
    >>> tl.config.threading.set_intra_op_parallelism_threads(0)

``benchmarks/bench_threads.py`` measures the epoch and the products with one thread and with more.
"""

import math
import os
import sys
import warnings
from pathlib import Path

from tapelab.engine.learner import (
    spell,  # (messages spell tl. as the learner's code does: tf. after `import tapelab as tf`)
)

LESSON_THREADS = 1  # what the lessons' batch-32 products gain from (benchmarks/bench_threads.py)
BLAS_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_PYODIDE = sys.platform == "emscripten"  # numpy there runs in the browser, on one thread: nothing to limit
_inter_op = 0  # stored only: numpy has no pool of threads running ops side by side
_user_count = None  # the user's BLAS threads, read before tapelab's first change (set_...(0) returns there)


# ---- the CPUs this process may use ---------------------------------------------------------------------------------

def cgroup_cpu_limit(root="/"):
    """The CPUs this process's cgroup quota allows, rounded up (a quota of 1.5 CPUs gives 2), or ``None`` if no
    quota is set or there are no cgroup files (not Linux). ``root``: the directory holding ``proc/`` and ``sys/``.

    A container sees every core of its node, and ``os.cpu_count()`` counts them all; the quota is what the
    scheduler really gives it. cgroup v2: ``cpu.max`` ("quota period", or "max" for none) of the process's cgroup
    and of each parent, since a parent's quota binds its children too: the smallest wins. cgroup v1:
    ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us`` (-1: none), the same way.
    """
    root = Path(root)
    try:
        lines = (root / "proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    limits = []
    for line in lines:  # "0::/path" (v2) or "4:cpu,cpuacct:/path" (v1)
        _, controllers, path = line.split(":", 2)
        if not controllers:
            base, read = root / "sys/fs/cgroup", _read_cpu_max
        elif "cpu" in controllers.split(","):
            base, read = root / "sys/fs/cgroup/cpu", _read_cfs_quota
        else:
            continue
        parts = [p for p in path.split("/") if p]
        # from the process's cgroup up to the mount's root; a container without its own cgroup namespace sees a
        # path from the host's root that does not exist under its mount: the missing levels are skipped
        for depth in range(len(parts), -1, -1):
            limit = read(base.joinpath(*parts[:depth]))
            if limit is not None:
                limits.append(limit)
    return math.ceil(min(limits)) if limits else None


def _read_cpu_max(folder):
    try:
        quota, period = (folder / "cpu.max").read_text().split()
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):  # no file at this level, or not "quota period"
        return None


def _read_cfs_quota(folder):
    try:
        quota = int((folder / "cpu.cfs_quota_us").read_text())
        period = int((folder / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None


def affinity_cpus():
    """The CPUs the scheduler may run this process on (``taskset``, a container's cpuset)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def usable_cpus(root="/"):
    """The CPUs this process may really use: its CPU affinity, capped by its cgroup quota."""
    return min(affinity_cpus(), cgroup_cpu_limit(root) or math.inf)


# ---- what tapelab sets ---------------------------------------------------------------------------------------------

def _own_setting():
    """``TAPELAB_NUM_THREADS`` as a count; ``None`` if unset or 0 (tapelab's default), with a warning if not a count."""
    value = os.environ.get("TAPELAB_NUM_THREADS", "").strip()
    if not value:
        return None
    try:
        count = int(value)
    except ValueError:
        count = -1
    if count < 0:
        warnings.warn(f"TAPELAB_NUM_THREADS={value!r} is not a number of threads: ignored, tapelab's default "
                      "applies. Set a whole number, e.g. TAPELAB_NUM_THREADS=1 (0 or unset: tapelab's default).",
                      UserWarning, stacklevel=4)
        return None
    return count or None


def _chosen():
    """The BLAS threads tapelab picks by itself, or ``None`` where the user's BLAS variables stand."""
    own = _own_setting()
    if own is not None:
        return own
    if any(os.environ.get(name) for name in BLAS_VARIABLES):  # (OpenBLAS takes an empty one as unset too)
        return None
    return min(LESSON_THREADS, usable_cpus())


def _set_blas_threads(count, asked_by):
    usable = usable_cpus()
    if count > usable:
        quota = cgroup_cpu_limit()
        why = f"its CPU affinity allows {affinity_cpus()}" + ("" if quota is None else f", its cgroup quota {quota}")
        warnings.warn(spell(f"{asked_by}: this process may use {usable} CPU{'s' * (usable > 1)} ({why}). More BLAS "
                            "threads than that take turns on the same CPUs, and OpenBLAS's idle threads spin-wait for "
                            f"each other, so numpy's products get slower, not faster. {count} threads set anyway."),
                      UserWarning, stacklevel=3)
    _threadpoolctl().threadpool_limits(count, user_api="blas")


def _threadpoolctl():
    try:
        import threadpoolctl
    except ImportError:
        raise ModuleNotFoundError("tl.config.threading needs threadpoolctl, a tapelab dependency that is missing "
                                  "here: pip install threadpoolctl") from None
    return threadpoolctl


def limit_at_import():
    """What ``import tapelab`` does (see the module's docstring)."""
    if _PYODIDE:
        return
    count = _chosen()
    if count is None:
        return  # the user set BLAS's threads: never overridden (and threadpoolctl is not even loaded)
    # (this sets the BLAS libraries loaded now, numpy's; one loaded later, such as scipy's own OpenBLAS, keeps its
    # default: the lessons use numpy's)
    try:  # (only TAPELAB_NUM_THREADS can ask for more threads than the CPUs the process may use, and warn)
        _set_blas_threads(count, f"TAPELAB_NUM_THREADS={count}")
    except ModuleNotFoundError:
        pass  # without threadpoolctl tapelab works as before, BLAS on its own default


# ---- TensorFlow's API ----------------------------------------------------------------------------------------------

def _check_count(function, num_threads):
    if isinstance(num_threads, bool) or not hasattr(num_threads, "__index__"):
        raise TypeError(spell(f"tl.config.threading.{function}({num_threads!r}): the number of threads must be a "
                              "whole number (an int), e.g. 1; 0 lets tapelab choose."))
    if num_threads < 0:
        raise ValueError(spell(f"tl.config.threading.{function}({num_threads!r}): the number of threads cannot be "
                               "negative. Pass 1 or more, or 0 to let tapelab choose."))
    return int(num_threads)


def set_intra_op_parallelism_threads(num_threads):
    """Run numpy's BLAS (the matrix products inside an op) on ``num_threads`` threads. 0 goes back to tapelab's
    choice at import (one thread, or your ``TAPELAB_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS``...). More threads than
    the process may use (its CPU affinity, its container's CPU quota) are set, with a warning."""
    global _user_count
    count = _check_count("set_intra_op_parallelism_threads", num_threads)
    if _PYODIDE:
        return
    chosen = _chosen()
    if chosen is None and _user_count is None:  # (the first change to the count the user's variables chose)
        _user_count = get_intra_op_parallelism_threads()
    _set_blas_threads(count or chosen or _user_count, f"tl.config.threading.set_intra_op_parallelism_threads({count})")


def get_intra_op_parallelism_threads():
    """The threads numpy's BLAS runs on now (TensorFlow returns 0 until set; tapelab tells the real count): 1 by
    default, as ``import tapelab`` sets it, since a lesson's small products gain nothing from more and spinning
    BLAS threads slow a shared machine down; otherwise what you set (see ``help(tl.config.threading)``)."""
    if _PYODIDE:
        return 1
    pools = _threadpoolctl().threadpool_info()
    return max((p["num_threads"] for p in pools if p["user_api"] == "blas"), default=1)  # numpy's (and any other)


def set_inter_op_parallelism_threads(num_threads):
    """Accepted and stored, for TensorFlow code that calls it: numpy runs one op at a time, with no pool of
    threads running independent ops side by side, so nothing else changes."""
    global _inter_op
    _inter_op = _check_count("set_inter_op_parallelism_threads", num_threads)


def get_inter_op_parallelism_threads():
    """What :func:`set_inter_op_parallelism_threads` stored (0, as in TensorFlow, until then)."""
    return _inter_op


__all__ = ["get_inter_op_parallelism_threads", "get_intra_op_parallelism_threads", "set_inter_op_parallelism_threads",
           "set_intra_op_parallelism_threads"]
