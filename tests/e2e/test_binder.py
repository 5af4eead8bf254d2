"""Binder: binder/ agrees with pyproject.toml, and a simulated Binder build runs every lesson.

repo2docker (what mybinder.org runs) builds the image from ``binder/`` alone when that folder exists: it
installs ``apt.txt`` with apt, ``requirements.txt`` with pip (possibly before the repository is copied in),
runs ``postBuild`` from the repository's root, and ignores ``pyproject.toml``. So the two can drift apart;
the first tests below catch that. ``test_binder_build_simulation`` then does what repo2docker does, in a fresh
virtual environment, from ``binder/`` alone, with no network but PyPI's, and executes every lesson there.
It takes a few minutes; ``pytest -m "not binder"`` leaves it out.
"""

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import textwrap
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
LESSON_BUDGET_S = 60  # every lesson runs top to bottom in under a minute on a 2-core machine

# Files that would make repo2docker pick another buildpack (conda, pipenv, R, Julia, nix, Docker), which these
# checks do not understand.
OTHER_BUILDPACK_FILES = ["environment.yml", "Pipfile", "Pipfile.lock", "Dockerfile", "setup.py", "pyproject.toml",
                         "install.R", "DESCRIPTION", "Project.toml", "REQUIRE", "default.nix"]


# ---- reading the two sides -----------------------------------------------------------------------------------------

def pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def pyproject_requirements():
    """pyproject's runtime dependencies and its "lab" extra, by canonical name."""
    project = pyproject()["project"]
    lines = project.get("dependencies", []) + project.get("optional-dependencies", {}).get("lab", [])
    return {canonicalize_name(r.name): r for r in map(Requirement, lines)}


def _strip_comment(line):
    return line.split(" #", 1)[0].split("\t#", 1)[0].strip() if not line.lstrip().startswith("#") else ""


def binder_requirements():
    """binder/requirements.txt by canonical name; pip options and local paths are rejected (see the message)."""
    reqs = {}
    for n, line in enumerate((BINDER / "requirements.txt").read_text(encoding="utf-8").splitlines(), 1):
        line = _strip_comment(line)
        if not line:
            continue
        if line.startswith(("-", ".", "/")) or "file:" in line:
            pytest.fail(
                f"binder/requirements.txt line {n}: {line!r}. Keep it to plain requirements from PyPI: an option or "
                "a local path (`-e .`, `.`) makes repo2docker install it only after copying the whole repository "
                "(no cached layer), and older repo2docker versions fail on it. tapelab itself is installed by "
                "binder/postBuild."
            )
        req = Requirement(line)
        reqs[canonicalize_name(req.name)] = req
    return reqs


def postbuild_pip_installs():
    """What binder/postBuild installs with pip: ``(local, named)`` with local the extras sets of ``.`` installs."""
    local, named = [], {}
    for line in (BINDER / "postBuild").read_text(encoding="utf-8").splitlines():
        words = shlex.split(line, comments=True)
        if "pip" not in words or "install" not in words[words.index("pip"):]:
            continue
        args = words[words.index("install", words.index("pip")) + 1:]
        for arg in args:
            if arg in (";", "&&", "||", "|"):
                break
            if arg.startswith("-"):
                if arg in ("-r", "--requirement", "-c", "--constraint", "-e", "--editable"):
                    pytest.fail(f"binder/postBuild: `{line.strip()}` uses {arg}, which this test does not follow; "
                                "install `.[lab]` and list dependencies in pyproject.toml / requirements.txt instead")
                continue
            if arg == "." or arg.startswith(".["):
                local.append(Requirement("tapelab" + arg[1:]).extras)
            else:
                req = Requirement(arg)
                named[canonicalize_name(req.name)] = req
    return local, named


def _nearby_versions(spec):
    """Versions at, just above and just below every version a specifier set mentions (and 0 and a huge one)."""
    found = {Version("0"), Version("99999")}
    for s in spec:
        try:
            v = Version(s.version.removesuffix(".*"))
        except InvalidVersion:  # "===" arbitrary strings
            continue
        release = list(v.release)
        found |= {v, Version(".".join(map(str, release + [0, 0, 0, 1])))}
        nonzero = [i for i, part in enumerate(release) if part]
        if nonzero:
            below = release[:nonzero[-1] + 1]
            below[-1] -= 1
            found.add(Version(".".join(map(str, below + [999999]))))
    return found


def compatible(a, b):
    """Whether some version satisfies both specifier sets (checked at every version either set names, +- a hair)."""
    a, b = SpecifierSet(str(a)), SpecifierSet(str(b))
    return any(a.contains(v, prereleases=True) and b.contains(v, prereleases=True)
               for v in _nearby_versions(a) | _nearby_versions(b))


# ---- binder/ and pyproject.toml agree ------------------------------------------------------------------------------

def test_compatible_finds_overlaps_and_gaps():
    assert compatible(">=1.24", ">=1.26")
    assert compatible(">=1.24", "==1.26.4")
    assert compatible(">=3.7", "~=3.8")
    assert compatible("<2", "<1.5")
    assert compatible(">1.0", "<1.0.1")
    assert not compatible(">=2", "<2")
    assert not compatible(">=1.24", "==1.23.5")
    assert not compatible("~=3.8", ">=4")
    assert not compatible("==1.2.*", ">=1.3")


def test_binder_folder_uses_only_files_these_checks_understand():
    present = [name for name in OTHER_BUILDPACK_FILES if (BINDER / name).exists()]
    assert not present, (
        f"binder/ contains {present}: repo2docker would then build with another buildpack, which "
        "tests/e2e/test_binder.py does not check. Use apt.txt, requirements.txt, runtime.txt and postBuild."
    )
    for name in ("apt.txt", "requirements.txt", "postBuild"):
        assert (BINDER / name).is_file(), f"binder/{name} is missing"


def test_every_pyproject_dependency_is_installed_by_binder():
    wanted, listed = pyproject_requirements(), binder_requirements()
    missing = sorted(str(wanted[name]) for name in wanted.keys() - listed.keys())
    assert not missing, (
        f"pyproject.toml needs {missing} (runtime or `lab` extra), but binder/requirements.txt does not list them: "
        "add them there with a compatible version."
    )
    local, _ = postbuild_pip_installs()
    assert any("lab" in extras for extras in local), (
        "binder/postBuild must install tapelab itself with its lab extra (`python -m pip install --no-cache-dir "
        f"'.[lab]'`); it installs the repository with extras {local or 'never'}."
    )


def test_binder_installs_nothing_pyproject_does_not_declare():
    declared = pyproject_requirements()
    _, named = postbuild_pip_installs()
    extra = sorted(str(r) for name, r in {**binder_requirements(), **named}.items() if name not in declared)
    assert not extra, (
        f"binder/ installs {extra}, which pyproject.toml does not declare (runtime dependencies or the `lab` extra). "
        "A lesson that needs it would break outside Binder: add it to pyproject.toml, or remove it from binder/."
    )


def test_binder_versions_are_compatible_with_pyproject():
    declared = pyproject_requirements()
    _, named = postbuild_pip_installs()
    clashes = [f"{name}: pyproject {declared[name].specifier or 'any'} vs binder {r.specifier or 'any'}"
               for name, r in {**binder_requirements(), **named}.items()
               if name in declared and not compatible(declared[name].specifier, r.specifier)]
    assert not clashes, "no version satisfies both pyproject.toml and binder/: " + "; ".join(clashes)


def test_binder_python_satisfies_requires_python():
    runtime = BINDER / "runtime.txt"
    if not runtime.exists():
        pytest.skip("no binder/runtime.txt: repo2docker uses its default Python")
    text = runtime.read_text(encoding="utf-8").strip()
    assert text.startswith("python-"), f"binder/runtime.txt says {text!r}; expected e.g. 'python-3.11'"
    version = Version(text.removeprefix("python-"))
    requires = SpecifierSet(pyproject()["project"]["requires-python"])
    assert requires.contains(version), f"binder/runtime.txt asks for Python {version}, but pyproject needs {requires}"


def test_binder_installs_graphviz_and_downloads_mnist():
    apt = [_strip_comment(line) for line in (BINDER / "apt.txt").read_text(encoding="utf-8").splitlines()]
    assert "graphviz" in apt, "binder/apt.txt must install Debian's graphviz (the system `dot` the lessons draw with)"
    postbuild = BINDER / "postBuild"
    text = postbuild.read_text(encoding="utf-8")
    assert text.startswith("#!"), "binder/postBuild needs a shebang line (repo2docker executes it)"
    assert os.access(postbuild, os.X_OK), "binder/postBuild must be executable: chmod +x binder/postBuild"
    assert "python -m tapelab.datasets.mnist --download" in text, "binder/postBuild must download the full MNIST"


def test_readme_binder_badge_opens_jupyterlab_on_the_lessons():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"https://mybinder\.org/v2/[^\s()\[\]`'\"<>]+", readme)
    assert links, "README.md has no mybinder.org launch link"
    for link in links:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)
        assert query.get("urlpath") == ["lab/tree/notebooks"], f"{link}: should open JupyterLab on notebooks/"
    assert (ROOT / "notebooks").is_dir()


# ---- the simulated Binder build ------------------------------------------------------------------------------------

def _repo_copy(dest):
    """Copy what a clone would hold: tracked files plus new files not ignored by .gitignore (not .venv, caches)."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                                capture_output=True, check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: copy the tree without the usual litter
        shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(
            ".git", ".venv", "__pycache__", "*.egg-info", "build", "dist", ".*_cache", ".hypothesis"))
        return dest
    for name in filter(None, listed):
        src = ROOT / name
        if src.is_file():  # a tracked file deleted in the work tree is not copied
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def _pip_cache_dir():
    if os.environ.get("PIP_CACHE_DIR"):
        return os.environ["PIP_CACHE_DIR"]
    if sys.platform == "darwin":
        return str(Path.home() / "Library" / "Caches" / "pip")
    if sys.platform == "win32":
        return str(Path(os.environ.get("LOCALAPPDATA", Path.home())) / "pip" / "Cache")
    return str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pip")


def _index_url():
    return (os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple/").rstrip("/") + "/"


def _require_pypi():
    url = _index_url() + "pip/"
    try:
        with urllib.request.urlopen(url, timeout=20) as response:
            response.read(1)
    except OSError as e:
        pytest.fail(
            f"The Binder simulation installs binder/requirements.txt from PyPI, but {url} cannot be reached "
            f"({getattr(e, 'reason', e)}). Run it where PyPI is reachable (CI is), or leave it out with "
            '`pytest -m "not binder"`.'
        )


def _offline_env(venv, home, dead_proxy):
    """The environment of a fresh Binder build: its own venv and HOME, the shared pip cache, and no network but the
    package index (everything else goes through a proxy address where nothing listens, so it is refused at once)."""
    dev_bin = str(Path(sys.executable).parent)  # the developer's .venv/bin, when the tests run inside it
    path = [str(venv / "bin")] + [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != dev_bin]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TAPELAB_", "JUPYTER", "PYTHON", "PIP_NO_CACHE", "VIRTUAL_ENV", "CONDA", "MPL"))
           and k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "ipythondir")}
    index_hosts = {urllib.parse.urlsplit(_index_url()).hostname, "pypi.org", "files.pythonhosted.org"}
    original_proxy = os.environ.get("https_proxy") or os.environ.get("HTTPS_PROXY")
    if original_proxy:  # pip keeps the proxy it needs; everything else gets the dead one
        env["PIP_PROXY"] = original_proxy
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        env[name] = dead_proxy
    env["no_proxy"] = env["NO_PROXY"] = ",".join(sorted(h for h in index_hosts if h))
    env.update(PATH=os.pathsep.join(path), HOME=str(home), VIRTUAL_ENV=str(venv), PIP_CACHE_DIR=_pip_cache_dir(),
               PYTHONDONTWRITEBYTECODE="1")
    return env


def _run(step, cmd, timeout, **kwargs):
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kwargs)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"Binder simulation, {step}: still running after {timeout} s\n{e.stdout or ''}{e.stderr or ''}")
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        pytest.fail(f"Binder simulation, {step}: exit code {done.returncode}\n--- stdout\n{done.stdout[-6000:]}\n"
                    f"--- stderr\n{done.stderr[-6000:]}")
    return done, seconds


RUN_LESSONS = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    import nbformat
    from nbclient import NotebookClient

    timeout, results = int(sys.argv[1]), []
    for path in map(Path, sys.argv[2:]):
        nb = nbformat.read(path, as_version=4)
        kernel = nb.metadata.get("kernelspec", {}).get("name", "python3")
        resources = {"metadata": {"path": str(path.parent)}}
        client = NotebookClient(nb, timeout=timeout, kernel_name=kernel, resources=resources)
        start, error = time.perf_counter(), None
        try:
            client.execute()
        except Exception as e:  # CellExecutionError (a cell raised), CellTimeoutError, DeadKernelError
            error = f"{type(e).__name__}: {e}"
        results.append({"notebook": path.name, "seconds": round(time.perf_counter() - start, 2), "error": error})
    print("RESULTS " + json.dumps(results))
""")


@pytest.mark.binder
def test_binder_build_simulation(tmp_path):
    """Build a fresh environment from binder/ the way repo2docker does, without network for the MNIST download,
    then execute every lesson in it (each under the lesson budget, no errors)."""
    _require_pypi()
    times = {}
    repo = _repo_copy(tmp_path / "repo")
    home, venv = tmp_path / "home", tmp_path / "venv"
    home.mkdir()
    base_python = getattr(sys, "_base_executable", None) or sys.executable  # the Python the dev venv was made from
    _, times["venv"] = _run("creating the virtual environment", [base_python, "-m", "venv", str(venv)], 120)

    with socket.socket() as dead:  # bound but never listening: connections to it are refused
        dead.bind(("127.0.0.1", 0))
        env = _offline_env(venv, home, f"http://127.0.0.1:{dead.getsockname()[1]}")

        # 1. requirements.txt (repo2docker adds --no-cache-dir; here pip's cache is shared to keep the test quick)
        _, times["requirements.txt"] = _run(
            "pip install -r binder/requirements.txt",
            [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-r", "binder/requirements.txt"],
            900, cwd=repo, env=env)

        # 2. postBuild, exactly as committed: installs tapelab[lab], tries the MNIST download, must not fail
        built, times["postBuild"] = _run("binder/postBuild", ["bash", "binder/postBuild"], 600, cwd=repo, env=env)
        log = built.stdout + built.stderr
        assert "could not download" in log, f"postBuild's MNIST download should have failed without a network:\n{log}"
        assert not (home / ".cache" / "tapelab" / "mnist.npz").exists()
        assert built.stdout.strip().splitlines()[-1].endswith("(sample)"), (
            f"after a failed download load_data() should read the shipped sample:\n{built.stdout}")
        python = str(venv / "bin" / "python")
        where, _ = _run("import tapelab", [python, "-c", "import tapelab; print(tapelab.__file__)"], 60, cwd=home,
                        env=env)
        assert Path(where.stdout.strip()).is_relative_to(venv), f"tapelab came from {where.stdout}, not the new venv"

        # 3. every lesson, in the new environment, from its own folder (as JupyterLab runs it)
        lessons = sorted((repo / "notebooks").glob("*.ipynb"))
        assert lessons, "no notebooks in notebooks/"
        script = tmp_path / "run_lessons.py"
        script.write_text(RUN_LESSONS, encoding="utf-8")
        ran, times["lessons"] = _run(
            "executing the lessons",
            [str(venv / "bin" / "python"), str(script), str(LESSON_BUDGET_S), *map(str, lessons)],
            LESSON_BUDGET_S * len(lessons) + 120, cwd=repo / "notebooks", env=env)

    results = json.loads(ran.stdout.split("RESULTS ", 1)[1])
    report = "\n".join(
        f"  {r['notebook']}: {r['seconds']:.1f} s" + (f"  FAILED {r['error'][:3000]}" if r["error"] else "")
        for r in results)
    print(f"Binder simulation: {sum(times.values()):.0f} s in all ("
          + ", ".join(f"{k} {v:.0f} s" for k, v in times.items()) + ")\n" + report)
    assert [r["notebook"] for r in results] == [p.name for p in lessons]
    failed = [r for r in results if r["error"] or r["seconds"] >= LESSON_BUDGET_S]
    assert not failed, f"lessons that failed or took {LESSON_BUDGET_S} s or more in the Binder environment:\n{report}"
