"""The TensorFlow features tapelab leaves to TensorFlow, each a stand-in that says so when it is used.

tapelab teaches how automatic differentiation works; text, ragged, sparse and complex tensors, saved
models, file and image ops, Python functions inside graphs and TensorArrays are TensorFlow's business.
``import tapelab as tf`` code that reaches one stops with :class:`tapelab.engine.errors.UnsupportedError`,
which names the feature and, where there is one, the tapelab way.
"""

from types import SimpleNamespace

from tapelab.engine.errors import Unsupported

_TEXT = "turn text into numbers first (e.g. a vocabulary: one integer id per word)."
_LIST = "collect the tensors in a Python list and tl.stack them (a loop unrolls while tl.function traces)."
_PYTHON = "call the Python function directly: tapelab runs eagerly (inside tl.function it runs once, while tracing)."
_SAVE = "keep the Variables' values with numpy: np.save('w.npy', v.numpy()), later v.assign(np.load('w.npy'))."

strings = Unsupported("tl.strings", "text tensors", _TEXT)
string = Unsupported("tl.string", "text tensors", _TEXT)
ragged = Unsupported("tl.ragged", "ragged tensors: rows of different lengths",
                     "pad the rows to one length (tl.pad) and keep a mask of the real entries.")
RaggedTensor = Unsupported("tl.RaggedTensor", "rows of different lengths",
                           "pad the rows to one length (tl.pad) and keep a mask of the real entries.")
sparse = Unsupported("tl.sparse", "sparse tensors", "use a dense tensor with zeros (tl.zeros, tl.pad).")
SparseTensor = Unsupported("tl.SparseTensor", "sparse tensors", "use a dense tensor with zeros (tl.zeros, tl.pad).")
complex64 = Unsupported("tl.complex64", "complex numbers", "split a complex value into two float tensors.")
complex128 = Unsupported("tl.complex128", "complex numbers", "split a complex value into two float tensors.")
saved_model = Unsupported("tl.saved_model", "saving models to disk", _SAVE)
io = Unsupported("tl.io", "reading and decoding files", "read data with numpy (np.load, np.loadtxt) and pass arrays.")
image = Unsupported("tl.image", "image ops", "write the image op with tensor arithmetic, or use numpy for data.")
py_function = Unsupported("tl.py_function", "Python code inside a graph", _PYTHON)
numpy_function = Unsupported("tl.numpy_function", "Python code inside a graph", _PYTHON)
TensorArray = Unsupported("tl.TensorArray", "a list of tensors inside a graph", _LIST)
autograph = Unsupported("tl.autograph", "rewriting Python control flow into graph ops",
                        "write the graph's choices with tl.cond (a branch) or tl.where (elementwise).")
distribute = Unsupported("tl.distribute", "training on several devices", "train on the one CPU, as it is.")
tpu = Unsupported("tl.tpu", "TPUs", "tapelab runs every op on the CPU, in numpy.")
lite = Unsupported("tl.lite", "TensorFlow Lite", None)
summary = Unsupported("tl.summary", "TensorBoard logs", "plot with tl.plots (matplotlib) in the notebook.")
train = Unsupported("tl.train", "checkpoints and TF 1's training API", _SAVE)


class TraceType:
    """The base of a custom tracing type (``tl.types.experimental.TraceType``): an object whose class defines
    ``__tf_tracing_type__`` returning one makes ``tl.function`` retrace only when that value changes."""

    def is_subtype_of(self, other):
        return self == other

    def most_specific_common_supertype(self, others):
        return self if all(self == other for other in others) else None


types = SimpleNamespace(experimental=SimpleNamespace(TraceType=TraceType))

__all__ = ["strings", "string", "ragged", "RaggedTensor", "sparse", "SparseTensor", "complex64", "complex128",
           "saved_model", "io", "image", "py_function", "numpy_function", "TensorArray", "autograph", "distribute",
           "tpu", "lite", "summary", "train"]
