"""``keras.layers.Embedding``: a table of learned vectors, one row per integer id (a word, a user, a category).

    embed = tl.keras.layers.Embedding(1000, 16)        # 1000 ids, a vector of 16 numbers each
    vectors = embed(ids)                                # ids (batch, steps) -> (batch, steps, 16)

The layer is one ``gather`` of the table's rows (``embeddings[ids]``), so its gradient is the gather's: the
incoming gradient of each position is added into the row of its id (a scatter-add, ``unsorted_segment_sum``), and
rows no id picked get zero. An id used twice in a batch gets both positions' gradients.
"""

import numpy as np

from tapelab import array_ops
from tapelab import math as tmath
from tapelab.engine import dtypes
from tapelab.engine.errors import InvalidArgumentError, UnsupportedError
from tapelab.engine.primitives import OPS
from tapelab.engine.tape import run
from tapelab.engine.tensor import convert_to_tensor
from tapelab.keras import initializers, regularizers
from tapelab.keras.layers import Layer


class Embedding(Layer):
    """A lookup table, like ``keras.layers.Embedding``: ``embeddings`` has shape (``input_dim``, ``output_dim``)
    and the output at each integer id is its row: ids of any shape (...) -> (..., ``output_dim``).

    ``input_dim`` is the number of ids (the largest id plus one). The table starts uniform in [-0.05, 0.05]
    (Keras's ``"uniform"``). ``mask_zero=True`` is accepted while no id is 0; Keras would then pass on a mask that
    makes the layers after it skip the padded steps, which tapelab leaves out (see :meth:`call`).

    >>> tl.random.set_seed(0)
    >>> embed = tl.keras.layers.Embedding(10, 4)
    >>> embed(tl.constant([[1, 2, 3], [4, 5, 9]])).shape
    TensorShape([2, 3, 4])
    >>> embed.embeddings.shape
    TensorShape([10, 4])
    """

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", embeddings_regularizer=None,
                 embeddings_constraint=None, mask_zero=False, weights=None, **kwargs):
        for what, value in (("input_dim", input_dim), ("output_dim", output_dim)):
            if isinstance(value, bool) or int(value) != value or value < 1:
                raise ValueError(f"Embedding: {what} must be a positive integer, got {value!r}. input_dim is the "
                                 "number of ids (the largest id + 1), output_dim the length of each id's vector.")
        if embeddings_constraint is not None:
            raise UnsupportedError("Embedding(embeddings_constraint=...)", "leave it out, or apply the constraint "
                                   "after each step: layer.embeddings.assign(...)")
        super().__init__(**kwargs)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        if isinstance(embeddings_initializer, str) and embeddings_initializer.lower() == "uniform":
            embeddings_initializer = "random_uniform"  # (Keras's short name for RandomUniform(-0.05, 0.05))
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.mask_zero = bool(mask_zero)
        self.embeddings = None
        self._initial_weights = weights

    def build(self, input_shape=None):
        self.embeddings = self.add_weight(shape=(self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer, name="embeddings")
        if self._initial_weights is not None:
            self.set_weights(self._initial_weights)
            self._initial_weights = None

    def call(self, inputs):
        ids = self._ids(convert_to_tensor(inputs))
        return run(OPS["gather"], (self.embeddings, ids), axis=0)  # embeddings[ids]: one row per id

    def compute_mask(self, inputs, mask=None):
        """Keras's mask (``ids != 0``) with ``mask_zero=True``, else None; tapelab's layers do not read it."""
        if not self.mask_zero:
            return None
        return tmath.not_equal(convert_to_tensor(inputs), 0)

    def _ids(self, x):
        """The ids as int32, checked: integers (or floats holding whole numbers, which Keras casts), in range."""
        values = x._value
        if x.dtype.is_floating:
            if not np.all(np.isfinite(values)) or np.any(values != np.round(values)):
                bad = values[~(np.isfinite(values) & (values == np.round(values)))].ravel()[0]
                raise TypeError(
                    f"{self.name}: Embedding looks up integer ids, got {x.dtype.name} inputs with the value {bad}, "
                    "which is not a whole number. Give it the integer ids (e.g. word indices from a tokenizer, "
                    "x.astype('int32')); to feed real numbers into a network use a Dense layer instead.")
            x = array_ops.cast(x, dtypes.int32)  # (as Keras does: float ids such as 3.0 name the row 3)
        elif not x.dtype.is_integer:
            raise TypeError(f"{self.name}: Embedding looks up integer ids, got inputs of dtype {x.dtype.name}. "
                            "Convert them to integers first, e.g. tl.cast(ids, tl.int32).")
        values = x._value
        bad = (values < 0) | (values >= self.input_dim)
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            raise InvalidArgumentError(
                f"{self.name}: id {values[where]} at index {list(where)} is not in [0, {self.input_dim}): this "
                f"table has input_dim={self.input_dim} rows, one per id 0..{self.input_dim - 1}. Make input_dim "
                "the number of distinct ids (the largest id + 1, e.g. the vocabulary size), or map the ids into "
                "that range (an unknown word to a reserved id such as 1).")
        if self.mask_zero and values.size and (values == 0).any() and (values != 0).any():
            raise UnsupportedError(
                f"{self.name}: Embedding(mask_zero=True) on ids with padding (id 0)", message=(
                    f"{self.name}: Embedding(mask_zero=True) got ids that contain 0, the padding id. Keras would "
                    "pass on a mask (ids != 0) that makes the layers after it (LSTM, GRU, SimpleRNN, "
                    "GlobalAveragePooling1D, the loss) skip the padded steps; tapelab leaves Keras's masking out, so "
                    "its results would differ there. Use mask_zero=False (the padded steps then count like any "
                    "other, which is what the layer computes), or weight the steps yourself with "
                    "tl.cast(ids != 0, tl.float32)."))
        return x

    def __repr__(self):
        return f"<tapelab.keras.layers.Embedding '{self.name}' {self.input_dim} -> {self.output_dim}>"


__all__ = ["Embedding"]
