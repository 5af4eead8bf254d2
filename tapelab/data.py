"""``tl.data``: input pipelines shaped like ``tf.data.Dataset``, on plain numpy.

    train_ds = tl.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(10000, seed=0).batch(32)
    for images, labels in train_ds:        # tensors: images (32, 28, 28, 1) float32, labels (32,) uint8
        ...
    len(train_ds)                          # 250 batches for 8,000 digits

A Dataset is a recipe: each ``for`` loop over it runs the recipe from the start (a new shuffle each time,
as TF's ``reshuffle_each_iteration=True``). Elements are numpy arrays underneath and tensors when you
iterate; nothing here is recorded on a tape. ``shuffle`` uses TF's algorithm (a buffer of ``buffer_size``
elements, each output drawn at random from it), with tapelab's random numbers: seeded runs repeat, but the
order is not TF's. ``prefetch`` and ``cache`` keep the API and change nothing (everything is in memory).
"""

import gzip
import itertools
import math
import os
import threading
import zlib

import numpy as np

from tapelab import random_streams
from tapelab.engine import dtypes, nest
from tapelab.engine.errors import InvalidArgumentError, UnsupportedAttributeError, UnsupportedError
from tapelab.engine.function import TensorSpec
from tapelab.engine.learner import spell
from tapelab.engine.tensor import Tensor, TensorShape, convert_to_tensor, to_numpy

_peek = threading.local()  # element_spec is looking at a first element
AUTOTUNE = -1  # tf.data.AUTOTUNE: "pick a buffer size for me" (any value works: prefetch changes nothing here)
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


class Dataset:
    """A sequence of elements (tensors, or tuples / dicts of them) built by chaining transformations.

    Make one with :meth:`from_tensor_slices`, :meth:`from_generator` or :meth:`range`; transform it with
    ``shuffle``, ``batch``, ``map``, ``filter``, ``take``, ``skip``, ``repeat``; iterate over it with ``for``.

    >>> ds = tl.data.Dataset.range(5).map(lambda x: x * 2).batch(2)
    >>> [batch.numpy().tolist() for batch in ds]
    [[0, 2], [4, 6], [8]]
    >>> len(ds)
    3
    """

    def __init__(self, elements, length, name, batch=False, spec=None):
        self._elements = elements  # () -> an iterator of elements (numpy leaves in the element's structure)
        self._length = length  # a count, INFINITE_CARDINALITY or UNKNOWN_CARDINALITY
        self._name = name  # TF's class name, for repr: _BatchDataset, _ShuffleDataset ...
        self._batch = batch  # False: not batched; else the batch axis's size in element_spec (None: it varies)
        self._spec = spec  # the element_spec, where it is declared (from_generator's output_signature)

    def _then(self, elements, length, name):
        """A dataset made from this one by a transformation that keeps its elements (batched or not, their spec)."""
        return Dataset(elements, length, name, self._batch, self._spec)

    # --- sources ------------------------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """One element per row of ``tensors`` (an array, or a tuple / dict of arrays with the same first size):
        ``from_tensor_slices((x, y))`` yields ``(x[i], y[i])``."""
        tensors = _arrays(tensors)
        leaves = nest.flatten(tensors)
        _check_slices(leaves)
        n = leaves[0].shape[0]
        if isinstance(tensors, (tuple, dict)):
            return Dataset(lambda: (nest.pack_like(tensors, [a[i] for a in leaves]) for i in range(n)), n,
                           "_TensorSliceDataset")
        array = leaves[0]
        return Dataset(lambda: iter(array), n, "_TensorSliceDataset")

    @staticmethod
    def from_tensors(tensors, name=None):
        """A dataset of one element: ``tensors`` itself."""
        element = _arrays(tensors)
        return Dataset(lambda: iter([element]), 1, "_TensorDataset")

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None,
                       name=None):
        """Elements from calling ``generator(*args)`` afresh for each pass; ``output_signature`` (a structure of
        ``tl.TensorSpec``) or ``output_types`` gives their dtypes. The length is unknown."""
        _check_generator(generator, output_signature, output_types)
        wanted = output_signature if output_signature is not None else output_types
        specs = nest.flatten(wanted)

        def elements():
            for item in generator(*(args or ())):
                yield _generated(item, wanted, specs)

        declared = all(isinstance(spec, TensorSpec) for spec in specs)
        return Dataset(elements, UNKNOWN_CARDINALITY, "_FlatMapDataset", spec=wanted if declared else None)

    @staticmethod
    def range(*args, output_type=dtypes.int64, name=None):
        """``range(stop)``, ``range(start, stop[, step])``: integers as int64 tensors, like Python's range."""
        numbers = range(*[int(a) for a in args])
        kind = np.dtype(dtypes.as_dtype(output_type).as_numpy_dtype).type
        return Dataset(lambda: (kind(i) for i in numbers), len(numbers), "_RangeDataset")

    @staticmethod
    def zip(*datasets, name=None):
        """Elements of several datasets side by side: ``zip(a, b)`` yields ``(a_i, b_i)``, as long as the shortest."""
        if len(datasets) == 1 and isinstance(datasets[0], (tuple, list)):
            datasets = tuple(datasets[0])
        for d in datasets:
            _check_dataset("zip", d)
        lengths = [d._length for d in datasets]
        known = [n for n in lengths if n >= 0]
        length = min(known) if known else (INFINITE_CARDINALITY if all(n == INFINITE_CARDINALITY for n in lengths)
                                          else UNKNOWN_CARDINALITY)
        if UNKNOWN_CARDINALITY in lengths:
            length = UNKNOWN_CARDINALITY
        return Dataset(lambda: zip(*[d._elements() for d in datasets]), length, "_ZipDataset",
                       _common_batch(datasets))

    # --- transformations --------------------------------------------------------------------------------------
    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """Randomise the order: keep a buffer of ``buffer_size`` elements and output one of them at random each
        time, refilling its place from the input. A buffer as big as the dataset shuffles it completely;
        a small one only mixes neighbours. ``seed`` makes the order repeat from run to run."""
        buffer_size = _positive_int("shuffle", "buffer_size", buffer_size, allow_autotune=False)
        from tapelab import random

        seeds = random._streams.seeds(seed)  # (TF's: the global seed, and the op seed given or drawn)
        passes = random_streams.Words(*seeds)  # each pass draws its two seeds from here, as TF's seed generator

        def elements():
            if not reshuffle_each_iteration:
                words = random_streams.Words(*seeds)  # (every pass the same order)
            else:
                source = passes.copy() if getattr(_peek, "on", False) else passes  # (a look is not a pass)
                words = random_streams.Words(source(), source())
            return _shuffled(self._elements(), buffer_size, words)

        return self._then(elements, self._length, "_ShuffleDataset")

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        """Stack ``batch_size`` consecutive elements into one (a new first axis); the last batch may be smaller,
        unless ``drop_remainder=True``."""
        batch_size = _positive_int("batch", "batch_size", batch_size)

        def elements():
            source = self._elements()
            while True:
                rows = list(itertools.islice(source, batch_size))
                if not rows or (drop_remainder and len(rows) < batch_size):
                    return
                yield _stack(rows)

        n = self._length
        length = n if n < 0 else (n // batch_size if drop_remainder else math.ceil(n / batch_size))
        return Dataset(elements, length, "_BatchDataset", batch_size if drop_remainder else None)

    def unbatch(self, name=None):
        """Split each element along its first axis (the inverse of ``batch``)."""
        def elements():
            for element in self._elements():
                leaves = nest.flatten(element)
                if any(np.ndim(a) == 0 for a in leaves):
                    raise ValueError("unbatch: the elements are single numbers (0-d), with no batch axis to split; "
                                     "unbatch undoes batch(n)")
                for i in range(len(leaves[0])):
                    yield nest.pack_like(element, [a[i] for a in leaves])

        return Dataset(elements, UNKNOWN_CARDINALITY, "_UnbatchDataset")

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """Apply ``map_func`` to each element (as tensors; a tuple element is passed as separate arguments,
        ``map(lambda x, y: (x / 255, y))``)."""
        if not callable(map_func):
            raise TypeError(f"map: expects a function of an element, got {map_func!r}")

        def elements():
            for element in self._elements():
                out = map_func(*_as_tensors(element)) if isinstance(element, tuple) else map_func(_as_tensors(element))
                yield nest.pack_like(out, [_text_or_array(v) for v in nest.flatten(out)])

        return Dataset(elements, self._length, "_MapDataset", self._batch)  # (its spec: what map_func gives)

    def filter(self, predicate, name=None):
        """Keep the elements for which ``predicate`` (called like ``map``'s function) gives True."""
        def elements():
            for element in self._elements():
                args = _as_tensors(element)
                keep = predicate(*args) if isinstance(element, tuple) else predicate(args)
                value = to_numpy(convert_to_tensor(keep))
                if value.dtype != np.bool_ or value.ndim:
                    raise TypeError(f"filter: the predicate must return one bool, got {value.dtype} of shape "
                                    f"{value.shape}")
                if value:
                    yield element

        return self._then(elements, UNKNOWN_CARDINALITY, "_FilterDataset")

    def take(self, count, name=None):
        """The first ``count`` elements (all of them for -1)."""
        count = int(count)
        n = self._length
        length = n if count < 0 else (count if n == INFINITE_CARDINALITY else min(n, count) if n >= 0 else n)
        return self._then(lambda: itertools.islice(self._elements(), None if count < 0 else count), length,
                       "_TakeDataset")

    def skip(self, count, name=None):
        """Everything after the first ``count`` elements (-1 skips all)."""
        count = int(count)
        n = self._length
        length = n if n < 0 else (0 if count < 0 else max(0, n - count))
        start, stop = (0, 0) if count < 0 else (count, None)  # (-1: nothing is left)
        return self._then(lambda: itertools.islice(self._elements(), start, stop), length, "_SkipDataset")

    def repeat(self, count=None, name=None):
        """The dataset ``count`` times over (forever without ``count``: stop with ``take``)."""
        count = -1 if count is None else int(count)

        def elements():
            passes = itertools.count() if count < 0 else range(count)
            for _ in passes:
                empty = True
                for element in self._elements():
                    empty = False
                    yield element
                if empty:  # nothing to repeat (TF: an empty dataset, not an endless loop)
                    return

        n = self._length
        length = (INFINITE_CARDINALITY if count < 0 and n != 0 else n if n < 0 else n * max(count, 0)
                  if count >= 0 else 0)
        return self._then(elements, length, "_RepeatDataset")

    def enumerate(self, start=0, name=None):
        """``(index, element)`` pairs, the index an int64 counting from ``start``."""
        return Dataset(lambda: ((np.int64(i), e) for i, e in enumerate(self._elements(), int(start))), self._length,
                       "_EnumerateDataset", self._batch)  # (the index is a scalar: no batch axis)

    def concatenate(self, dataset, name=None):
        """This dataset's elements, then ``dataset``'s."""
        _check_dataset("concatenate", dataset)
        a, b = self._length, dataset._length
        length = a + b if a >= 0 and b >= 0 else INFINITE_CARDINALITY if INFINITE_CARDINALITY in (a, b) \
            else UNKNOWN_CARDINALITY
        return Dataset(lambda: itertools.chain(self._elements(), dataset._elements()), length, "_ConcatenateDataset",
                       _common_batch((self, dataset)))

    def prefetch(self, buffer_size, name=None):
        """Kept for TF's API: prepares nothing ahead (everything is in memory already); returns the same elements."""
        _positive_int("prefetch", "buffer_size", buffer_size)
        return self._then(self._elements, self._length, "_PrefetchDataset")

    def cache(self, filename="", name=None):
        """Kept for TF's API: returns the same elements (they are numpy arrays in memory already)."""
        return self._then(self._elements, self._length, "_CacheDataset")

    # --- reading ---------------------------------------------------------------------------------------------
    def __iter__(self):
        for element in self._elements():
            yield _as_tensors(element)

    def as_numpy_iterator(self):
        """The elements as numpy arrays (and numpy scalars), in the element's structure."""
        for element in self._elements():
            yield nest.pack_like(element, [bytes(a) if isinstance(a, bytes) else np.asarray(a)[()] if np.ndim(a) == 0
                                           else np.asarray(a) for a in nest.flatten(element)])

    def cardinality(self):
        """The number of elements as an int64 tensor (-1: infinite, -2: unknown, as TF)."""
        return Tensor(np.asarray(self._length, np.int64))

    def __len__(self):
        if self._length == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite (repeat() without a count); use take(n) to stop it.")
        if self._length == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown (after filter or from_generator); count it by "
                            "iterating, or use cardinality().")
        return self._length

    def __bool__(self):
        return True

    @property
    def element_spec(self):
        """The structure, shapes and dtypes of one element (``TensorSpec``s; a batch axis is None unless the
        batches were made with ``drop_remainder=True``), read from a first element (or as ``from_generator``
        declared it)."""
        if self._spec is not None:
            return self._spec
        _peek.on = True  # (a shuffle does not count this look as one of its passes)
        try:
            first = next(iter(self._elements()))
        except StopIteration:
            raise ValueError("element_spec: the dataset is empty, so its elements' shapes are unknown here") from None
        finally:
            _peek.on = False
        if any(_is_text(a) for a in nest.flatten(first)):
            raise UnsupportedError("tf.string element_spec", message=(
                "element_spec: these elements are lines of text, tf.string tensors in TensorFlow; tapelab has no "
                "string dtype, so no TensorSpec describes them. Each line is Python bytes (a batch of lines a "
                "numpy array of bytes): map them to numbers first, e.g. ds.map(lambda line: float(line))."))
        return nest.pack_like(first, [  # (a scalar has no batch axis: the batch was reduced, or it is an index)
            TensorSpec(np.shape(a) if self._batch is False or np.ndim(a) == 0 else (self._batch,) + np.shape(a)[1:],
                       dtypes.as_dtype(np.asarray(a).dtype)) for a in nest.flatten(first)])

    def __repr__(self):
        return f"<{self._name} length={self._length if self._length >= 0 else 'unknown'}>"


def _common_batch(datasets):
    """The batch axis of datasets joined side by side or one after another: theirs if they agree, else None
    (batched, sizes differ), else not batched."""
    batches = {d._batch for d in datasets}
    if batches == {False}:
        return False
    return batches.pop() if len(batches) == 1 else None


def _shuffled(source, buffer_size, words):
    """TF's shuffle: a ring buffer of ``buffer_size`` elements, filled from the input; each output is the entry at a
    random offset (``word % filled``) from the oldest, which then takes its place; the next input fills the gap."""
    buffer = [None] * buffer_size
    start = end = 0  # the buffer holds the elements start .. end - 1 (positions modulo buffer_size)
    for element in itertools.chain(source, [_END]):
        if element is not _END:
            buffer[end % buffer_size] = element
            end += 1
            if end - start < buffer_size:
                continue
        while end > start and (element is _END or end - start == buffer_size):
            pick = (start + words() % (end - start)) % buffer_size
            first = start % buffer_size
            yield buffer[pick]
            buffer[pick] = buffer[first]
            start += 1
            if element is not _END:
                break


_END = object()


def _stack(rows):
    """Stack elements of one structure into one batched element, with a clear error when shapes differ."""
    columns = zip(*[nest.flatten(row) for row in rows])
    stacked = []
    for column in columns:
        shapes = {np.shape(a) for a in column}
        if len(shapes) > 1:
            raise InvalidArgumentError(spell(
                f"batch: elements of different shapes {sorted(shapes)} cannot be stacked into one batch; make them "
                "the same shape first (e.g. map a resize or pad over the dataset)."))
        if all(isinstance(a, bytes) for a in column):  # lines of text: a numpy array of bytes, as TF's .numpy()
            lines = np.empty(len(column), object)
            lines[:] = [Text(a) for a in column]
            stacked.append(lines)
        else:
            stacked.append(np.stack(column))
    return nest.pack_like(rows[0], stacked)


def _arrays(structure):
    """Tuples and dicts are structures (as in tf.data); anything else, a list too, becomes one numpy array."""
    if isinstance(structure, tuple):
        return type(structure)(*[_arrays(s) for s in structure]) if hasattr(structure, "_fields") else tuple(
            _arrays(s) for s in structure)
    if isinstance(structure, dict):
        return {k: _arrays(v) for k, v in structure.items()}
    # a copy, as TF's: changing the caller's array later does not change the dataset
    return structure.copy() if isinstance(structure, np.ndarray) else to_numpy(convert_to_tensor(structure)).copy()


def _as_tensors(element):
    return nest.pack_like(element, [Text(a) if isinstance(a, bytes) else TextArray.of(a) if _is_text(a) else
                                    Tensor(np.asarray(a)) for a in nest.flatten(element)])


def _is_text(a):
    return isinstance(a, bytes) or isinstance(a, np.ndarray) and a.dtype == object and a.size and all(
        isinstance(x, bytes) for x in a.flat)


def _text_or_array(value):
    """What a ``map`` function returned, as a dataset keeps it: text as bytes, anything else as a numpy array."""
    if isinstance(value, bytes):
        return Text(value)
    if isinstance(value, np.ndarray) and _is_text(value):
        return np.asarray(value)
    return to_numpy(convert_to_tensor(value))


def _positive_int(where, what, value, allow_autotune=True):
    if allow_autotune and value == AUTOTUNE and what == "buffer_size":
        return value
    if isinstance(value, Tensor):
        value = value.numpy()
    if int(value) != value:
        raise InvalidArgumentError(f"{where}: {what} must be a whole number, got {value!r}" + (
            ". It is how many elements go into one batch, e.g. .batch(32)." if where == "batch" else "."))
    if value <= 0:
        raise InvalidArgumentError(spell(
            f"{where}: {what} must be greater than zero, got {value!r}" + (
                ". It is how many elements go into one batch, e.g. .batch(32)." if where == "batch" else ".")))
    return int(value)


def _check_slices(leaves):
    """``from_tensor_slices``'s components (``leaves``) each have a first axis, all of the same size."""
    if not leaves:
        raise ValueError("from_tensor_slices: nothing to slice; give an array, or a tuple / dict of arrays")
    if any(a.ndim == 0 for a in leaves):
        raise ValueError(spell(f"from_tensor_slices: every component needs a first axis to slice along; got "
                               f"shapes {[a.shape for a in leaves]}. For one element use Dataset.from_tensors."))
    sizes = {a.shape[0] for a in leaves}
    if len(sizes) > 1:
        raise ValueError(spell(
            f"from_tensor_slices: the components have different numbers of rows, shapes "
            f"{[a.shape for a in leaves]}; they must pair up row by row (e.g. x_train with y_train, not "
            "y_test)."))


def _check_generator(generator, output_signature, output_types):
    """``from_generator`` takes the generator function itself and the dtypes of what it yields."""
    if not callable(generator):
        raise TypeError(spell("from_generator: give the generator function itself (from_generator(gen, ...)), "
                              "not gen(): each pass over the dataset calls it again."))
    if output_signature is None and output_types is None:
        raise TypeError("from_generator: give output_signature=(tl.TensorSpec(shape=..., dtype=...), ...) (or "
                        "output_types=) so the elements' dtypes are known")


def _generated(item, wanted, specs):
    """One element a generator yielded, as arrays of the declared dtypes in the declared structure (``wanted``:
    the output_signature or output_types; ``specs``: its leaves); a shape the signature rules out is refused."""
    try:
        values = nest.flatten_up_to(wanted, item) if isinstance(wanted, (tuple, dict)) else [item]
    except (TypeError, ValueError, KeyError):
        raise InvalidArgumentError(
            f"from_generator: the generator yielded {item!r:.80}, which does not have the structure "
            f"output_signature gives ({len(specs)} value(s): {wanted}). Yield one value per TensorSpec, "
            "in the same tuple or dict.") from None
    converted = []
    for spec, value in zip(specs, values):
        dtype = spec.dtype if isinstance(spec, TensorSpec) else dtypes.as_dtype(spec)
        array = np.asarray(value, dtype.as_numpy_dtype)
        if isinstance(spec, TensorSpec) and not spec.is_compatible_with(Tensor(array)):
            raise InvalidArgumentError(
                f"from_generator: the generator yielded shape {array.shape} where output_signature "
                f"says {spec}. Yield arrays of that shape, or widen the signature (None for a size "
                "that varies).")
        converted.append(array)
    return nest.pack_like(wanted, converted) if isinstance(wanted, (tuple, dict)) else converted[0]


class Text(bytes):
    """One line of a :class:`TextLineDataset`: the bytes TF's ``tf.string`` tensor holds, printed as TF prints its
    ``.numpy()`` (``b'first line'``). ``.numpy()`` gives the plain bytes, as TF's does, so
    ``line.numpy().decode()`` is the text; ``shape`` is ``()``.

    tapelab has no string tensors: the ops of ``tf.strings`` are left to TensorFlow, but ``map`` and ``filter``
    run Python, so ``ds.map(lambda line: float(line))`` or ``lambda line: [float(v) for v in line.split(b",")]``
    turn text into numbers (what ``tf.strings.to_number`` and ``tf.strings.split`` do in TF)."""

    __slots__ = ()
    ndim = 0

    def numpy(self):
        return bytes(self)

    @property
    def shape(self):
        return TensorShape(())

    @property
    def dtype(self):
        raise UnsupportedAttributeError("tf.string", message=(
            "a line of a TextLineDataset has no tapelab dtype: it is TF's tf.string, and tapelab has no string "
            "tensors. The line is Python bytes (line.numpy().decode() is the text): turn it into numbers in a map, "
            "e.g. ds.map(lambda line: float(line))."))


class TextArray(np.ndarray):
    """A batch of lines of a :class:`TextLineDataset` (``batch(n)``): a numpy array of bytes, as TF's ``.numpy()`` of
    a ``tf.string`` batch; ``.numpy()`` gives the plain array, an element is a :class:`Text`."""

    @classmethod
    def of(cls, array):
        return np.asarray(array, dtype=object).view(cls)

    def numpy(self):
        return self.view(np.ndarray)

    def __getitem__(self, index):
        item = super().__getitem__(index)
        return Text(item) if isinstance(item, bytes) else item

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __repr__(self):
        return repr(self.view(np.ndarray))

    __str__ = __repr__


_COMPRESSIONS = {"": None, "NONE": None, "GZIP": gzip.decompress, "ZLIB": zlib.decompress}


class TextLineDataset(Dataset):
    """The lines of text files: one element per line, without its line end (``\\n`` or ``\\r\\n``), the files
    one after another (``num_parallel_reads=k``: ``k`` files at a time, their lines taken in turn, as TF interleaves
    them). ``compression_type``: ``None`` or ``""``, ``"GZIP"`` or ``"ZLIB"``.

    Each element is a :class:`Text`: the bytes of the line, as TF's ``tf.string`` element's ``.numpy()``, so
    ``for line in ds: print(line.numpy().decode())`` works as in TF. ``map``, ``filter``, ``batch`` (a numpy array of
    bytes), ``take``, ``skip``, ``shuffle``, ``zip`` work on them; ``element_spec`` raises (tapelab has no string
    dtype). The length is unknown until read, as TF's.
    """

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        files = [filenames] if isinstance(filenames, (str, bytes, os.PathLike)) else filenames
        if isinstance(files, Tensor) or not isinstance(files, (list, tuple)) or not all(
                isinstance(f, (str, bytes, os.PathLike)) for f in files):
            raise TypeError(f"TextLineDataset: filenames must be a file name (a str) or a list of them, got "
                            f"{filenames!r:.100}.")
        files = [os.fsdecode(f) for f in files]
        kind = "" if compression_type is None else str(compression_type).upper()
        if buffer_size is not None:
            _positive_int("TextLineDataset", "buffer_size", buffer_size, allow_autotune=False)
        parallel = 1 if num_parallel_reads in (None, AUTOTUNE) else _positive_int(
            "TextLineDataset", "num_parallel_reads", num_parallel_reads, allow_autotune=False)
        if num_parallel_reads == AUTOTUNE:
            parallel = len(files) or 1

        def lines_of(path):
            if kind not in _COMPRESSIONS:
                raise InvalidArgumentError(f"TextLineDataset: unsupported compression_type {compression_type!r}; "
                                           "give None (plain text), 'GZIP' or 'ZLIB'.")
            with open(path, "rb") as fh:  # (a missing file: FileNotFoundError when the dataset is read, as TF's)
                data = fh.read()
            if _COMPRESSIONS[kind] is not None:
                try:
                    data = _COMPRESSIONS[kind](data)
                except (OSError, EOFError, zlib.error) as error:
                    raise InvalidArgumentError(f"TextLineDataset: {path} is not {kind}-compressed text ({error}); "
                                               "check compression_type.") from None
            lines = data.split(b"\n")
            if lines[-1] == b"":  # (a last line end starts no new line)
                lines.pop()
            for line in lines:
                yield Text(line[:-1] if line.endswith(b"\r") else line)

        def elements():
            if parallel == 1:
                return itertools.chain.from_iterable(lines_of(path) for path in files)
            return _interleaved([lines_of(path) for path in files], parallel)

        super().__init__(elements, UNKNOWN_CARDINALITY, "TextLineDatasetV2")


def _interleaved(sources, cycle):
    """TF's interleave of ``cycle`` sources at a time, one element from each in turn; a source that runs out gives
    its place to the next one, which gives its first element on its next turn."""
    waiting = iter(sources)
    slots = [next(waiting, None) for _ in range(cycle)]
    while any(slot is not None for slot in slots):
        for i, slot in enumerate(slots):
            if slot is None:
                continue
            try:
                yield next(slot)
            except StopIteration:
                slots[i] = next(waiting, None)


def _check_dataset(where, value):
    if not isinstance(value, Dataset):
        raise TypeError(f"{where}: expects tl.data.Dataset objects, got {type(value).__name__}")


__all__ = ["AUTOTUNE", "Dataset", "INFINITE_CARDINALITY", "TextLineDataset", "UNKNOWN_CARDINALITY"]
