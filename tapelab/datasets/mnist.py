"""MNIST handwritten digits, with ``keras.datasets.mnist.load_data``'s return shape.

    (x_train, y_train), (x_test, y_test) = tl.datasets.mnist.load_data()
    # x: uint8 (n, 28, 28) in 0..255; y: uint8 (n,) in 0..9

Where the data comes from, first match wins:

1. ``load_data(path=...)``;
2. the file named by the environment variable ``TAPELAB_MNIST``;
3. the cache: ``$TAPELAB_DATA_DIR/mnist.npz`` (default ``~/.cache/tapelab/mnist.npz``), which
   ``python -m tapelab.datasets.mnist --download`` fills with the full 70,000 digits (sha256-checked);
4. otherwise the 10,000-digit sample shipped inside tapelab (8,000 train / 2,000 test), with a
   one-line message saying so. See ``tapelab/datasets/README.md`` for its provenance and licence.

The download (one file, one sha256) is the standard library's. pooch, which SciPy and scikit-image use for
this, was weighed and not taken: it would replace about 20 of these lines (its own messages would still
have to be turned into the ones below) with four more packages (requests among them), and it reads
http, ftp and sftp URLs only, not the ``file://`` copy of mnist.npz a teacher can hand out.
"""

import argparse
import hashlib
import os
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
import zlib
from pathlib import Path

import numpy as np

URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz"  # Keras's copy
SHA256 = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"
SAMPLE = Path(__file__).with_name("mnist_sample.npz")
SAMPLE_SHA256 = "752fd9b0f62d11d7b16dc2f8f893663d92e63150e75055f003121154ae6b677a"
KEYS = ("x_train", "y_train", "x_test", "y_test")
SAMPLE_MESSAGE = (
    "tapelab: full MNIST not found, using the shipped sample (8,000 train / 2,000 test digits); "
    "run `python -m tapelab.datasets.mnist --download` for all 70,000."
)
FIX = (
    "Delete it and run `python -m tapelab.datasets.mnist --download` to fetch a fresh copy, or set "
    "TAPELAB_MNIST to a good mnist.npz."
)


class MnistFileError(OSError):
    """An mnist.npz that is missing, unreadable, truncated or has the wrong checksum."""


class DownloadError(OSError):
    """The download failed (no network, HTTP error, or the bytes did not match the expected sha256)."""


def data_dir():
    """The cache directory: ``$TAPELAB_DATA_DIR``, else ``~/.cache/tapelab``."""
    return Path(os.environ.get("TAPELAB_DATA_DIR") or Path.home() / ".cache" / "tapelab").expanduser()


def cache_path():
    """Where ``--download`` puts the full set and where ``load_data`` looks for it."""
    return data_dir() / "mnist.npz"


def locate(path=None):
    """Which file ``load_data(path)`` would read, and why: ``(Path, "path" | "env" | "cache" | "sample")``."""
    if path is not None:
        return Path(path).expanduser(), "path"
    env = os.environ.get("TAPELAB_MNIST")
    if env:
        return Path(env).expanduser(), "env"
    cached = cache_path()
    if cached.exists():
        return cached, "cache"
    return SAMPLE, "sample"


def load_data(path=None, verbose=True):
    """Load MNIST as ``(x_train, y_train), (x_test, y_test)``: uint8 images (n, 28, 28), uint8 labels (n,).

    ``path`` (or ``$TAPELAB_MNIST``) names an ``mnist.npz`` in the standard layout; a file named
    there must exist. Without either, the cached full set is used if present (its sha256 is
    checked), else the shipped sample, announced by one line on stdout (``verbose=False`` hides it).
    A corrupt or truncated file raises :class:`MnistFileError` naming the file and the fix.

    >>> (x_train, y_train), (x_test, y_test) = tl.datasets.mnist.load_data(verbose=False)
    >>> x_train.dtype, x_train.shape[1:], int(y_train.max())
    (dtype('uint8'), (28, 28), 9)
    """
    file, source = locate(path)
    if source in ("path", "env"):
        _check_named(file, source, path)
    if source == "cache":
        _check_cached(file)
    data = _read(file)
    if source == "sample" and verbose:
        print(SAMPLE_MESSAGE)
    return (data["x_train"], data["y_train"]), (data["x_test"], data["y_test"])


def _check_named(file, source, path):
    """A file the learner named (``path=`` or ``$TAPELAB_MNIST``) must exist: no quiet fall-back to the sample."""
    if not file.is_file():
        how = f"load_data(path={str(path)!r})" if source == "path" else f"TAPELAB_MNIST={os.environ['TAPELAB_MNIST']}"
        raise FileNotFoundError(
            f"mnist: {how} names {file}, which does not exist. Give the path of an mnist.npz file "
            "(keys x_train, y_train, x_test, y_test), or leave it unset to use the cache or the shipped sample."
        )


def _check_cached(file):
    """The cached file is the full MNIST download (its sha256), not a corrupt or truncated copy."""
    digest = sha256_of(file)
    if digest != SHA256:
        raise MnistFileError(
            f"mnist: the cached file {file} has sha256 {digest}, but the full MNIST mnist.npz has {SHA256} "
            f"(the file is corrupt, truncated or not MNIST). {FIX}"
        )


def _read(file):
    """Read and check an mnist.npz; every failure names the file and says how to fix it."""
    data = _arrays(file)
    for split in ("train", "test"):
        _check_layout(file, split, data[f"x_{split}"], data[f"y_{split}"])
        data[f"y_{split}"] = data[f"y_{split}"].astype(np.uint8)
    return data


def _arrays(file):
    """The four arrays of an mnist.npz, read through our own file handle."""
    try:
        with open(file, "rb") as f:  # our own handle: np.load leaks its own when the file is not an npz
            loaded = np.load(f, allow_pickle=False)
            if not isinstance(loaded, np.lib.npyio.NpzFile):
                raise ValueError(f"it holds a single {type(loaded).__name__}, not named arrays")
            with loaded as npz:
                missing = [k for k in KEYS if k not in npz.files]
                if missing:
                    raise MnistFileError(
                        f"mnist: {file} is an .npz file but lacks the arrays {missing} (it has "
                        f"{sorted(npz.files)}). An mnist.npz holds x_train, y_train, x_test, y_test. {FIX}"
                    )
                data = {k: npz[k] for k in KEYS}
    except MnistFileError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error, KeyError) as e:
        raise MnistFileError(
            f"mnist: cannot read {file}: it is corrupt or truncated ({type(e).__name__}: {e}). {FIX}"
        ) from None
    return data


def _check_layout(file, split, x, y):
    """One split's images are uint8 (n, 28, 28) with n labels in 0..9."""
    if x.dtype != np.uint8 or x.ndim != 3 or x.shape[1:] != (28, 28) or y.ndim != 1 or len(y) != len(x):
        raise MnistFileError(
            f"mnist: {file} does not have the MNIST layout: x_{split} is {x.dtype} {x.shape} and y_{split} "
            f"{y.dtype} {y.shape}; expected uint8 (n, 28, 28) images and n labels. {FIX}"
        )
    if y.size and (y.min() < 0 or y.max() > 9):
        raise MnistFileError(f"mnist: {file} has labels outside 0..9 in y_{split}. {FIX}")


def sha256_of(file, chunk=1 << 20):
    """The sha256 hex digest of a file."""
    h = hashlib.sha256()
    with open(file, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def download(url=URL, dest=None, sha256=SHA256, timeout=60, quiet=False):
    """Download the full ``mnist.npz`` to ``dest`` (default: the cache), checking its sha256.

    The bytes go to a temporary file next to ``dest`` and are moved into place only when the
    checksum matches, so an interrupted or wrong download never leaves a bad cache file. Raises
    :class:`DownloadError` (no network, HTTP error, a full or read-only disk, checksum mismatch).
    Returns the path.
    """
    dest = Path(dest).expanduser() if dest is not None else cache_path()
    fd, tmp = _part_file(dest)
    try:
        with os.fdopen(fd, "wb") as out:
            digest, size, expected = _fetch(url, out, dest, timeout)
        _check_download(url, dest, digest, size, expected, sha256)
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    if not quiet:
        print(f"mnist: saved {dest} ({dest.stat().st_size:,} bytes, sha256 verified)")
    return dest


def _part_file(dest):
    """A new temporary file beside ``dest`` for the download, as ``(fd, path)``; made with ``dest``'s folder."""
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        return tempfile.mkstemp(prefix=".mnist-", suffix=".part", dir=dest.parent)
    except OSError as e:
        raise DownloadError(
            f"mnist: could not save the download next to {dest}: {e.strerror or e}. Is the folder read-only, or "
            "is the path wrong? Choose another folder (dest=, --dest, or TAPELAB_DATA_DIR)."
        ) from None


def _fetch(url, out, dest, timeout):
    """Copy ``url`` into the open file ``out``: ``(sha256 hex digest, bytes written, Content-Length or None)``.
    A failure is a :class:`DownloadError` that says whether the network or the disk gave up."""
    h = hashlib.sha256()
    size = 0
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            expected = response.headers.get("Content-Length") if hasattr(response, "headers") else None
            for block in iter(lambda: response.read(1 << 16), b""):
                _write(out, block, dest)
                h.update(block)
                size += len(block)
    except DownloadError:
        raise
    except urllib.error.HTTPError as e:
        raise DownloadError(
            f"mnist: could not download {url}: the server answered HTTP {e.code} {e.reason}. Check the URL "
            f"(--url); or copy an mnist.npz to {dest} yourself."
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = getattr(e, "reason", e)
        raise DownloadError(
            f"mnist: could not download {url}: {reason}. Is there a network connection? Without one, "
            f"copy an mnist.npz to {dest} (or set TAPELAB_MNIST to its path); until then load_data() "
            "uses the 10,000-digit sample shipped with tapelab."
        ) from None
    return h.hexdigest(), size, expected


def _write(out, block, dest):
    try:
        out.write(block)
    except OSError as e:  # the disk, not the network
        raise DownloadError(
            f"mnist: could not save the download next to {dest}: {e.strerror or e}. Is the disk "
            "full or the folder read-only? Free some space, or choose another folder (dest=, "
            "--dest, or TAPELAB_DATA_DIR)."
        ) from None


def _check_download(url, dest, digest, size, expected, sha256):
    """The whole file came (as many bytes as the server announced) and it is the one wanted (its sha256)."""
    if expected is not None and int(expected) != size:
        raise DownloadError(f"mnist: the download from {url} stopped after {size} of {expected} bytes; try again.")
    if sha256 is not None and digest != sha256:
        raise DownloadError(
            f"mnist: the file downloaded from {url} has sha256 {digest}, expected {sha256}: it is corrupt or "
            f"not the MNIST file. Nothing was saved to {dest}; try again, or check the URL."
        )


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tapelab.datasets.mnist", description="Fetch or locate MNIST.")
    parser.add_argument("--download", action="store_true", help="download the full mnist.npz into the cache")
    parser.add_argument("--url", default=URL, help="where to download from (default: Keras's copy)")
    parser.add_argument("--dest", default=None, help=f"where to save it (default: {cache_path()})")
    parser.add_argument("--sha256", default=SHA256, help="expected sha256 of the download")
    parser.add_argument("--force", action="store_true", help="download even if a verified copy is already there")
    args = parser.parse_args(argv)
    if not args.download:
        file, source = locate()
        print(f"load_data() would read {file} ({source})")
        return 0
    dest = Path(args.dest).expanduser() if args.dest else cache_path()
    if not args.force and dest.is_file() and sha256_of(dest) == args.sha256:
        print(f"mnist: {dest} is already there (sha256 verified)")
        return 0
    try:
        download(args.url, dest, args.sha256)
    except DownloadError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
