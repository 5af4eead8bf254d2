"""numpy's BLAS threads: ``import tapelab`` limits them unless the user chose, ``tl.config.threading`` changes them.

The import-time tests run real Python processes (a process's BLAS pool starts with it) and read what
threadpoolctl reports for OpenBLAS there. The cgroup reader reads real files in a temporary directory tree laid
out as ``/proc`` and ``/sys/fs/cgroup`` are. Expected counts come from ``os.sched_getaffinity`` and from the same
process without tapelab, never from this machine's core count.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

import tapelab as tl
from tapelab import threads

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "TAPELAB_NUM_THREADS")
AFFINITY = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()

REPORT = """
import json, sys, warnings
warnings.simplefilter("always")
{before}
import tapelab as tl
loaded = "threadpoolctl" in sys.modules
from threadpoolctl import threadpool_info
{after}
pools = [p["num_threads"] for p in threadpool_info() if p["internal_api"] == "openblas"]
print(json.dumps({{"openblas": pools, "loaded_threadpoolctl": loaded}}))
"""


def run(env=None, before="", after="", tapelab=True):
    """Run a fresh Python with the thread variables cleared, then ``env``; what it reports and its stderr."""
    clean = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    code = REPORT.format(before=textwrap.dedent(before), after=textwrap.dedent(after))
    if not tapelab:
        code = code.replace("import tapelab as tl", "import numpy")
    done = subprocess.run([sys.executable, "-c", code], env={**clean, **(env or {})}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    if not report["openblas"]:
        pytest.skip("numpy's BLAS here is not OpenBLAS")
    return report, done.stderr


# ---- at import -----------------------------------------------------------------------------------------------------

def test_import_sets_openblas_to_one_thread_when_nothing_is_set():
    report, stderr = run()
    assert report["openblas"] == [1] * len(report["openblas"]) and report["loaded_threadpoolctl"]
    assert "Warning" not in stderr


@pytest.mark.parametrize("variable", ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"])
def test_a_thread_count_the_user_set_is_left_alone(variable):
    report, _ = run({variable: "2"})
    without_tapelab, _ = run({variable: "2"}, tapelab=False)
    assert report["openblas"] == without_tapelab["openblas"]  # what OpenBLAS made of the variable on its own
    assert not report["loaded_threadpoolctl"]  # tapelab did not even look
    if variable != "MKL_NUM_THREADS":  # (OpenBLAS reads the other two; it never starts more threads than CPUs)
        assert report["openblas"][0] == min(2, AFFINITY)


def test_tapelab_num_threads_sets_the_count_and_wins_over_the_blas_variables():
    report, stderr = run({"TAPELAB_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "1"})
    assert report["openblas"][0] == 2
    assert ("TAPELAB_NUM_THREADS=2: this process may use" in stderr) == (threads.usable_cpus() < 2)


@pytest.mark.parametrize("value", ["0", "", "two"])
def test_tapelab_num_threads_zero_or_empty_is_the_default_and_a_bad_value_warns(value):
    report, stderr = run({"TAPELAB_NUM_THREADS": value})
    assert report["openblas"][0] == 1
    assert ("TAPELAB_NUM_THREADS='two' is not a number of threads" in stderr) == (value == "two")


def test_under_pyodide_import_leaves_blas_alone():
    # what Pyodide reports (read at import); sysconfig reads the real platform's build settings first
    report, _ = run(before="import sysconfig; sysconfig.get_config_vars(); sys.platform = 'emscripten'",
                    after="assert tl.config.threading.get_intra_op_parallelism_threads() == 1")
    without_tapelab, _ = run(tapelab=False)
    assert report["openblas"] == without_tapelab["openblas"] and not report["loaded_threadpoolctl"]


# ---- tl.config.threading -------------------------------------------------------------------------------------------

def test_set_changes_the_count_and_zero_goes_back_to_tapelabs_choice():
    report, _ = run(after="""
        t = tl.config.threading
        assert t.get_intra_op_parallelism_threads() == 1
        t.set_intra_op_parallelism_threads(2)
        assert t.get_intra_op_parallelism_threads() == 2
        t.set_intra_op_parallelism_threads(0)
        """)
    assert report["openblas"][0] == 1


def test_zero_goes_back_to_the_users_own_count():
    report, _ = run({"OPENBLAS_NUM_THREADS": "2"}, after="""
        t = tl.config.threading
        users = t.get_intra_op_parallelism_threads()
        t.set_intra_op_parallelism_threads(1)
        assert t.get_intra_op_parallelism_threads() == 1
        t.set_intra_op_parallelism_threads(0)
        assert t.get_intra_op_parallelism_threads() == users
        """)
    assert report["openblas"][0] == min(2, AFFINITY)


@pytest.fixture
def restore_threads():
    yield
    tl.config.threading.set_intra_op_parallelism_threads(0)


def test_more_threads_than_usable_cpus_are_set_with_a_warning_that_says_why(restore_threads):
    usable = threads.usable_cpus()
    with pytest.warns(UserWarning, match=rf"set_intra_op_parallelism_threads\({usable + 1}\): this process may use "
                                         rf"{usable} CPUs? \(its CPU affinity allows {AFFINITY}.*spin-wait"):
        tl.config.threading.set_intra_op_parallelism_threads(usable + 1)
    assert tl.config.threading.get_intra_op_parallelism_threads() == usable + 1


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs os.sched_setaffinity (Linux)")
def test_the_usable_cpus_follow_the_affinity():
    report, stderr = run(before="import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})",
                         after="""
        assert tl.config.threading.get_intra_op_parallelism_threads() == 1
        assert tl.threads.usable_cpus() == 1
        tl.config.threading.set_intra_op_parallelism_threads(2)
        """)
    assert report["openblas"][0] == 2
    assert "this process may use 1 CPU (its CPU affinity allows 1" in stderr


@pytest.mark.parametrize("function", ["set_intra_op_parallelism_threads", "set_inter_op_parallelism_threads"])
@pytest.mark.parametrize("bad, error, says", [
    (-1, ValueError, "cannot be negative. Pass 1 or more, or 0"),
    (2.0, TypeError, r"must be a whole number \(an int\), e.g. 1; 0 lets tapelab choose"),
    ("2", TypeError, "must be a whole number"),
    (True, TypeError, "must be a whole number"),
    (None, TypeError, "must be a whole number"),
])
def test_bad_counts_raise_an_error_naming_the_function_and_the_value(function, bad, error, says):
    before = tl.config.threading.get_intra_op_parallelism_threads()
    with pytest.raises(error, match=rf"config\.threading\.{function}\({bad!r}\): the number of threads {says}"):
        getattr(tl.config.threading, function)(bad)
    assert tl.config.threading.get_intra_op_parallelism_threads() == before


def test_inter_op_threads_are_stored_only():
    before = tl.config.threading.get_intra_op_parallelism_threads()
    assert tl.config.threading.get_inter_op_parallelism_threads() == 0  # TF's "the system picks"
    tl.config.threading.set_inter_op_parallelism_threads(3)
    try:
        assert tl.config.threading.get_inter_op_parallelism_threads() == 3
        assert tl.config.threading.get_intra_op_parallelism_threads() == before
    finally:
        tl.config.threading.set_inter_op_parallelism_threads(0)


def test_threading_is_a_real_attribute_of_config():
    assert hasattr(tl.config, "threading") and tl.config.threading is threads
    assert not hasattr(tl.config.threading, "set_memory_growth")


# ---- the cgroup quota, from real files -----------------------------------------------------------------------------

def lay_out(root, files):
    """Write ``files`` ({relative path: text}) under ``root``; return ``root``."""
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def test_cgroup_v2_takes_the_smallest_quota_up_the_tree_rounded_up(tmp_path):
    root = lay_out(tmp_path, {
        "proc/self/cgroup": "0::/kubepods/pod1/learner\n",
        "sys/fs/cgroup/kubepods/cpu.max": "400000 100000\n",  # the node's pods: 4 CPUs
        "sys/fs/cgroup/kubepods/pod1/cpu.max": "150000 100000\n",  # this pod: 1.5 CPUs
        "sys/fs/cgroup/kubepods/pod1/learner/cpu.max": "max 100000\n",  # the container: no quota of its own
    })
    assert threads.cgroup_cpu_limit(root) == 2
    (root / "sys/fs/cgroup/kubepods/cpu.max").write_text("50000 100000\n")  # a parent's half CPU binds the child
    assert threads.cgroup_cpu_limit(root) == 1


def test_cgroup_v2_max_everywhere_is_no_quota(tmp_path):
    root = lay_out(tmp_path, {"proc/self/cgroup": "0::/user.slice/session\n",
                              "sys/fs/cgroup/user.slice/cpu.max": "max 100000\n",
                              "sys/fs/cgroup/user.slice/session/cpu.max": "max 100000\n"})
    assert threads.cgroup_cpu_limit(root) is None


def test_cgroup_v1_quota_and_period(tmp_path):
    root = lay_out(tmp_path, {
        "proc/self/cgroup": "11:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n",
        "sys/fs/cgroup/cpu/docker/abc/cpu.cfs_quota_us": "250000\n",
        "sys/fs/cgroup/cpu/docker/abc/cpu.cfs_period_us": "100000\n",
    })
    assert threads.cgroup_cpu_limit(root) == 3
    (root / "sys/fs/cgroup/cpu/docker/abc/cpu.cfs_quota_us").write_text("-1\n")
    assert threads.cgroup_cpu_limit(root) is None


def test_a_container_that_sees_the_hosts_cgroup_path_reads_its_own_mount(tmp_path):
    # no cgroup namespace: /proc/self/cgroup names the host's path, /sys/fs/cgroup is the container's own cgroup
    root = lay_out(tmp_path, {"proc/self/cgroup": "0::/system.slice/docker-abc.scope\n",
                              "sys/fs/cgroup/cpu.max": "100000 100000\n"})
    assert threads.cgroup_cpu_limit(root) == 1


def test_missing_cgroup_files_mean_no_quota(tmp_path):
    assert threads.cgroup_cpu_limit(tmp_path) is None  # no /proc at all (not Linux)
    root = lay_out(tmp_path, {"proc/self/cgroup": "0::/a\n4:cpu:/a\n"})  # no cgroup files
    assert threads.cgroup_cpu_limit(root) is None
    lay_out(root, {"sys/fs/cgroup/cpu/a/cpu.cfs_quota_us": "100000\n"})  # a quota without its period
    assert threads.cgroup_cpu_limit(root) is None


def test_usable_cpus_are_the_affinity_capped_by_the_quota(tmp_path):
    assert threads.usable_cpus(tmp_path) == AFFINITY
    root = lay_out(tmp_path, {"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/cpu.max": "100000 100000\n"})
    assert threads.usable_cpus(root) == 1
    (root / "sys/fs/cgroup/cpu.max").write_text(f"{100000 * (AFFINITY + 8)} 100000\n")
    assert threads.usable_cpus(root) == AFFINITY
