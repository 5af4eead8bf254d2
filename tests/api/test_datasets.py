"""Datasets: seed-001 regression data, batching, and the MNIST loader (no internet: file:// and loopback)."""

import errno
import functools
import http.server
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import tapelab as tl
from tapelab.datasets import mnist

SAMPLE_BYTES = mnist.SAMPLE.read_bytes()


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """No TAPELAB_MNIST, and an empty cache directory: what a fresh, offline machine sees."""
    monkeypatch.delenv("TAPELAB_MNIST", raising=False)
    cache = tmp_path / "cache"
    monkeypatch.setenv("TAPELAB_DATA_DIR", str(cache))
    return cache


def small_npz(path, n_train=30, n_test=10, seed=0):
    """A small valid mnist.npz made of real sample digits."""
    (x, y), (xt, yt) = mnist.load_data(mnist.SAMPLE, verbose=False)
    np.savez_compressed(path, x_train=x[:n_train], y_train=y[:n_train], x_test=xt[:n_test], y_test=yt[:n_test])
    return Path(path)


# --- linear regression -----------------------------------------------------------------------
def test_linear_regression_matches_seed_001():
    X, Y = tl.datasets.linear_regression()
    assert X.shape == Y.shape == (1000,) and X.dtype == Y.dtype == np.float32
    np.testing.assert_array_equal(Y, np.float32(5) * X + np.float32(2))
    assert abs(X.mean()) < 0.1 and abs(X.std() - 1) < 0.1  # N(0, 1)
    X2, _ = tl.datasets.linear_regression()
    tl.random.set_seed(0)  # the same numbers as seed 001's code: tl.random.set_seed(s); tl.random.normal([1000])
    np.testing.assert_array_equal(X, tl.random.normal([1000]).numpy())
    X3, _ = tl.datasets.linear_regression(seed=1)
    assert np.array_equal(X, X2) and not np.array_equal(X, X3)
    Xn, Yn = tl.datasets.linear_regression(n=500, weight=-1.0, bias=0.5, noise=0.1, seed=3)
    resid = Yn - (-Xn + 0.5)
    assert Xn.shape == (500,) and 0.08 < resid.std() < 0.12
    with pytest.raises(ValueError, match="positive integer"):
        tl.datasets.linear_regression(n=0)


# --- batches -----------------------------------------------------------------------------------
def test_batches_keep_the_last_partial_batch_and_cover_every_row_once():
    x, y = np.arange(10) * 10, np.arange(10)
    b = tl.datasets.batches(x, y, batch_size=4, seed=0)
    assert len(b) == 3
    parts = list(b)
    assert [len(xb) for xb, _ in parts] == [4, 4, 2]
    rows = np.concatenate([yb for _, yb in parts])
    assert sorted(rows.tolist()) == list(range(10)) and rows.tolist() != list(range(10))
    assert all(np.array_equal(xb, yb * 10) for xb, yb in parts)  # x and y stay paired


def test_batches_shuffle_is_seeded_and_changes_between_epochs():
    x = np.arange(100)
    first = [xb.tolist() for xb in tl.datasets.batches(x, batch_size=30, seed=5)]
    again = [xb.tolist() for xb in tl.datasets.batches(x, batch_size=30, seed=5)]
    assert first == again
    b = tl.datasets.batches(x, batch_size=30, seed=5)
    epoch1, epoch2 = [np.concatenate(list(b)) for _ in range(2)]
    assert not np.array_equal(epoch1, epoch2)
    tl.random.set_seed(1)
    a = np.concatenate(list(tl.datasets.batches(x, batch_size=30)))
    tl.random.set_seed(1)
    assert np.array_equal(a, np.concatenate(list(tl.datasets.batches(x, batch_size=30))))


def test_batches_options_and_errors():
    x = np.arange(10)
    assert [b.tolist() for b in tl.datasets.batches(x, batch_size=4, shuffle=False)] == [
        [0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [len(b) for b in tl.datasets.batches(x, batch_size=4, drop_remainder=True)] == [4, 4]
    with pytest.raises(ValueError, match="x has 10 rows but y has 9"):
        tl.datasets.batches(x, np.arange(9))
    with pytest.raises(ValueError, match="batch_size"):
        tl.datasets.batches(x, batch_size=0)


def test_batches_without_shuffle_leave_the_global_generator_alone_and_lists_work():
    tl.random.set_seed(3)
    expected = tl.random.normal([3]).numpy()
    tl.random.set_seed(3)
    assert [b.tolist() for b in tl.datasets.batches(np.arange(5), batch_size=2, shuffle=False)] == [[0, 1], [2, 3], [4]]
    assert np.array_equal(tl.random.normal([3]).numpy(), expected)
    parts = list(tl.datasets.batches(list(range(10)), [10 * i for i in range(10)], batch_size=4, seed=0))
    assert all(np.array_equal(yb, 10 * xb) for xb, yb in parts)
    assert sorted(np.concatenate([xb for xb, _ in parts]).tolist()) == list(range(10))


def test_download_to_an_unusable_folder_is_a_download_error(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(mnist.DownloadError, match="could not save"):
        mnist.download("http://127.0.0.1:9/mnist.npz", tmp_path / "file" / "sub" / "mnist.npz", quiet=True)


# --- MNIST: where the data comes from ----------------------------------------------------------
def test_offline_fallback_to_the_shipped_sample_says_so(clean_env, capsys):
    (x_train, y_train), (x_test, y_test) = mnist.load_data()
    assert x_train.shape == (8000, 28, 28) and y_train.shape == (8000,)
    assert x_test.shape == (2000, 28, 28) and y_test.shape == (2000,)
    assert x_train.dtype == y_train.dtype == np.uint8 and x_train.max() == 255
    assert sorted(np.unique(y_train).tolist()) == list(range(10))
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "shipped sample" in out and "--download" in out
    assert mnist.locate() == (mnist.SAMPLE, "sample")
    mnist.load_data(verbose=False)
    assert capsys.readouterr().out == ""


def test_shipped_sample_is_the_documented_file():
    assert mnist.sha256_of(mnist.SAMPLE) == mnist.SAMPLE_SHA256
    readme = (mnist.SAMPLE.parent / "README.md").read_text()
    assert "Creative Commons Attribution-Share Alike 3.0" in readme and "Juan Cazala" in readme
    notice = (Path(__file__).parents[2] / "NOTICE").read_text()
    assert "Yann LeCun" in notice and "MIT" in notice


def test_explicit_path_and_env_var(clean_env, tmp_path, monkeypatch, capsys):
    mine = small_npz(tmp_path / "mine.npz", n_train=30)
    (x, y), (xt, yt) = mnist.load_data(mine)
    assert x.shape == (30, 28, 28) and xt.shape == (10, 28, 28)
    env_file = small_npz(tmp_path / "env.npz", n_train=40)
    monkeypatch.setenv("TAPELAB_MNIST", str(env_file))
    assert mnist.load_data()[0][0].shape == (40, 28, 28)
    assert mnist.load_data(mine)[0][0].shape == (30, 28, 28)  # an explicit path beats the env var
    assert capsys.readouterr().out == ""  # no sample message
    monkeypatch.setenv("TAPELAB_MNIST", str(tmp_path / "nope.npz"))
    with pytest.raises(FileNotFoundError, match=r"TAPELAB_MNIST=.*nope\.npz.*does not exist"):
        mnist.load_data()
    with pytest.raises(FileNotFoundError, match=r"missing\.npz"):
        mnist.load_data(tmp_path / "missing.npz")


def test_cache_hit(clean_env, monkeypatch, capsys):
    clean_env.mkdir()
    cached = small_npz(clean_env / "mnist.npz", n_train=50)
    # the cache is checked against the full set's sha256; point that at this small stand-in file
    monkeypatch.setattr(mnist, "SHA256", mnist.sha256_of(cached))
    assert mnist.locate() == (cached, "cache")
    (x, _), _ = mnist.load_data()
    assert x.shape == (50, 28, 28)
    assert capsys.readouterr().out == ""


def test_cache_with_the_wrong_checksum_names_the_file_and_the_fix(clean_env):
    clean_env.mkdir()
    cached = small_npz(clean_env / "mnist.npz")  # a valid npz, but not the real MNIST file
    with pytest.raises(mnist.MnistFileError) as err:
        mnist.load_data()
    msg = str(err.value)
    assert str(cached) in msg and mnist.SHA256 in msg and "--download" in msg and "Delete it" in msg


@pytest.mark.parametrize("damage", ["truncated", "garbage", "single array", "missing keys", "wrong layout"])
def test_corrupt_files_get_a_clear_error(tmp_path, damage):
    bad = tmp_path / "mnist.npz"
    if damage == "truncated":
        bad.write_bytes(SAMPLE_BYTES[: len(SAMPLE_BYTES) // 2])
        expected = "corrupt or truncated"
    elif damage == "garbage":
        bad.write_bytes(b"<html>404 not found</html>")
        expected = "corrupt or truncated"
    elif damage == "single array":
        with open(bad, "wb") as f:
            np.save(f, np.zeros((2, 28, 28), np.uint8))  # an .npy, not an .npz
        expected = "holds a single ndarray, not named arrays"
    elif damage == "missing keys":
        np.savez(bad, x_train=np.zeros((2, 28, 28), np.uint8))
        expected = r"lacks the arrays \['y_train', 'x_test', 'y_test'\]"
    else:
        np.savez(bad, x_train=np.zeros((2, 784), np.float32), y_train=np.zeros(2, np.uint8),
                 x_test=np.zeros((1, 28, 28), np.uint8), y_test=np.zeros(1, np.uint8))
        expected = "does not have the MNIST layout"
    with pytest.raises(mnist.MnistFileError, match=expected) as err:
        mnist.load_data(bad)
    assert str(bad) in str(err.value) and "--download" in str(err.value)


def test_truncated_cache_file(clean_env):
    clean_env.mkdir()
    (clean_env / "mnist.npz").write_bytes(SAMPLE_BYTES[:1000])
    with pytest.raises(mnist.MnistFileError, match="sha256"):
        mnist.load_data()


# --- MNIST: downloading (file:// and a loopback HTTP server; never the internet) ---------------
def test_download_from_a_file_url_verifies_the_checksum(tmp_path, capsys):
    source = small_npz(tmp_path / "source.npz")
    digest = mnist.sha256_of(source)
    dest = tmp_path / "cache" / "mnist.npz"
    assert mnist.download(source.as_uri(), dest, sha256=digest) == dest
    assert dest.read_bytes() == source.read_bytes()
    assert "sha256 verified" in capsys.readouterr().out

    other = tmp_path / "other" / "mnist.npz"
    with pytest.raises(mnist.DownloadError, match=f"has sha256 {digest}, expected {'0' * 64}"):
        mnist.download(source.as_uri(), other, sha256="0" * 64)
    assert list(other.parent.iterdir()) == []  # nothing half-written left behind


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def http_server(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_download_over_http_then_load_from_the_cache(http_server, clean_env, monkeypatch):
    root, base = http_server
    served = small_npz(root / "mnist.npz", n_train=60)
    digest = mnist.sha256_of(served)
    mnist.download(f"{base}/mnist.npz", sha256=digest, quiet=True)  # default destination: the cache
    assert (clean_env / "mnist.npz").is_file()
    monkeypatch.setattr(mnist, "SHA256", digest)
    assert mnist.load_data()[0][0].shape == (60, 28, 28)
    with pytest.raises(mnist.DownloadError, match="HTTP 404"):
        mnist.download(f"{base}/missing.npz", clean_env / "x.npz", sha256=digest)


def _closed_port_url():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens here now: connecting fails at once, like a machine without network
    return f"http://127.0.0.1:{port}/mnist.npz"


def test_download_without_network_fails_cleanly(tmp_path):
    dest = tmp_path / "mnist.npz"
    with pytest.raises(mnist.DownloadError) as err:
        mnist.download(_closed_port_url(), dest, timeout=5)
    msg = str(err.value)
    assert "could not download" in msg and "network" in msg and str(dest) in msg and "sample" in msg
    assert not dest.exists() and list(tmp_path.iterdir()) == []


def test_download_to_a_full_disk_blames_the_disk_not_the_network(tmp_path, monkeypatch):
    source = small_npz(tmp_path / "source.npz")
    dest = tmp_path / "cache" / "mnist.npz"
    real_fdopen = os.fdopen

    class FullDisk:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, block):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(mnist.os, "fdopen", lambda fd, mode: FullDisk(real_fdopen(fd, mode)))
    with pytest.raises(mnist.DownloadError) as err:
        mnist.download(source.as_uri(), dest, sha256=None, quiet=True)
    msg = str(err.value)
    assert "No space left on device" in msg and "disk" in msg and "network" not in msg and str(dest) in msg
    assert list(dest.parent.iterdir()) == []  # the partial file is removed


def _cli(*args, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    env.pop("TAPELAB_MNIST", None)
    return subprocess.run([sys.executable, "-m", "tapelab.datasets.mnist", *args], capture_output=True, text=True,
                          env=env, timeout=60)


def test_command_line_download_offline_exits_non_zero_with_a_message(tmp_path):
    result = _cli("--download", "--url", _closed_port_url(), "--dest", str(tmp_path / "mnist.npz"))
    assert result.returncode == 1
    assert "error: mnist: could not download" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "mnist.npz").exists()


def test_command_line_download_and_where(http_server, tmp_path):
    root, base = http_server
    digest = mnist.sha256_of(small_npz(root / "mnist.npz"))
    env = {"TAPELAB_DATA_DIR": str(tmp_path / "cache")}
    result = _cli("--download", "--url", f"{base}/mnist.npz", "--sha256", digest, env_extra=env)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "cache" / "mnist.npz").is_file() and "sha256 verified" in result.stdout
    again = _cli("--download", "--url", f"{base}/mnist.npz", "--sha256", digest, env_extra=env)
    assert again.returncode == 0 and "already there" in again.stdout
    where = _cli(env_extra=env)
    assert where.returncode == 0 and "(cache)" in where.stdout
