"""tl.data.TextLineDataset: the lines of local files, as TF 2.21 reads them (text_line_* contract cases).

tapelab has no string tensors: a line is a ``Text`` (the bytes TF's tf.string element's ``.numpy()`` gives), a batch
of lines a numpy array of bytes (docs/differences.md)."""

import gzip
import zlib

import numpy as np
import pytest

import tapelab as tl
from tapelab.data import Text, TextArray


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, data in {"a": b"one\r\ntwo\n\nthree  \nlast", "b": b"b1\nb2\n", "c": b"c1\nc2\nc3\nc4\n", "empty": b"",
                       "utf8": "h\u00e9llo\n".encode()}.items():
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_bytes(data)
    paths["gzip"] = tmp_path / "g.txt.gz"
    paths["gzip"].write_bytes(gzip.compress(b"g1\ng2\n"))
    paths["zlib"] = tmp_path / "z.txt.z"
    paths["zlib"].write_bytes(zlib.compress(b"z1\nz2\n"))
    return {k: str(v) for k, v in paths.items()}


def test_one_element_per_line_without_its_line_end(files):
    ds = tl.data.TextLineDataset(files["a"])
    lines = list(ds)
    assert lines == [b"one", b"two", b"", b"three  ", b"last"]  # "\r\n" ends a line too; no line end at the end
    assert all(isinstance(line, Text) for line in lines)
    assert [line.numpy().decode() for line in lines] == ["one", "two", "", "three  ", "last"]
    assert type(lines[0].numpy()) is bytes and repr(lines[0]) == "b'one'" and lines[0].shape == ()
    assert list(ds.as_numpy_iterator()) == lines and type(next(ds.as_numpy_iterator())) is bytes
    assert int(ds.cardinality()) == tl.data.UNKNOWN_CARDINALITY
    with pytest.raises(TypeError, match="unknown"):
        len(ds)
    assert list(tl.data.TextLineDataset([files["empty"], files["utf8"]])) == ["h\u00e9llo".encode()]
    assert list(tl.data.TextLineDataset([])) == []


def test_several_files_one_after_another_or_interleaved(files):
    both = tl.data.TextLineDataset([files["a"], files["b"]], buffer_size=10)
    assert list(both) == [b"one", b"two", b"", b"three  ", b"last", b"b1", b"b2"]
    three = tl.data.TextLineDataset([files["a"], files["b"], files["c"]], num_parallel_reads=2)
    # TF's order: two files at a time, a line from each in turn; c takes b's place when b runs out
    assert list(three) == [b"one", b"b1", b"two", b"b2", b"", b"three  ", b"c1", b"last", b"c2", b"c3", b"c4"]


def test_compressed_files(files):
    assert list(tl.data.TextLineDataset(files["gzip"], compression_type="GZIP")) == [b"g1", b"g2"]
    assert list(tl.data.TextLineDataset(files["zlib"], compression_type="ZLIB")) == [b"z1", b"z2"]
    assert list(tl.data.TextLineDataset(files["a"], compression_type="")) == list(tl.data.TextLineDataset(files["a"]))
    with pytest.raises(tl.errors.InvalidArgumentError, match="not GZIP-compressed"):
        list(tl.data.TextLineDataset(files["a"], compression_type="GZIP"))
    bad = tl.data.TextLineDataset(files["a"], compression_type="BZ2")  # (as TF: refused when read)
    with pytest.raises(tl.errors.InvalidArgumentError, match="compression_type 'BZ2'"):
        list(bad)


def test_the_transformations_work_on_lines(files):
    ds = tl.data.TextLineDataset(files["a"])
    assert list(ds.filter(lambda line: line != b"")) == [b"one", b"two", b"three  ", b"last"]
    assert list(ds.skip(1).take(2)) == [b"two", b""]
    assert [int(n) for n in ds.map(lambda line: len(line.numpy()))] == [3, 3, 0, 7, 4]
    assert list(ds.map(lambda line: line.upper())) == [b"ONE", b"TWO", b"", b"THREE  ", b"LAST"]
    batches = list(ds.batch(2))
    assert isinstance(batches[0], TextArray) and batches[0].shape == (2,)
    assert batches[0].numpy().dtype == object and batches[0].numpy().tolist() == [b"one", b"two"]
    assert [b.numpy().tolist() for b in batches] == [[b"one", b"two"], [b"", b"three  "], [b"last"]]
    assert isinstance(batches[0][0], Text) and [line.numpy() for line in batches[0]] == [b"one", b"two"]
    assert list(ds.batch(2).unbatch()) == list(ds)
    assert [n.numpy().tolist() for n in ds.enumerate().map(lambda i, line: i)] == [0, 1, 2, 3, 4]
    numbers = tl.data.TextLineDataset(files["c"]).map(lambda line: float(line[1:])).batch(4)
    np.testing.assert_array_equal(next(iter(numbers)).numpy(), np.float32([1, 2, 3, 4]))
    assert sorted(ds.shuffle(10, seed=1)) == sorted(ds)


def test_what_has_no_tapelab_dtype_says_so(files):
    ds = tl.data.TextLineDataset(files["a"])
    with pytest.raises(tl.UnsupportedError, match="no string dtype"):
        assert ds.element_spec is None  # (raises)
    with pytest.raises(AttributeError, match="tf.string"):
        assert next(iter(ds)).dtype is None  # (raises)
    with pytest.raises(TypeError, match="filenames must be a file name"):
        tl.data.TextLineDataset(3)
    with pytest.raises(FileNotFoundError):
        list(tl.data.TextLineDataset(files["a"] + ".missing"))
